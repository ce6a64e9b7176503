// The embedder of a dataset made without --embedder: winnow chooses it by
// the first content the dataset is given, with the best measured default for
// that kind (docs/curation.md, "Embedders"), and may choose again while the
// dataset holds no embedded sample (a batch wholly refused, or annotations
// only). An explicit --embedder is never changed.
#pragma once

#include <optional>
#include <string>

#include "winnow/curation/core/manifest_record.h"

namespace winnow::curation {

// The default embedder for a kind of content: pixel arrays (at their size,
// `width` x `height`, when given; else 28 x 28), image files (`path`
// records) or text; with `dim` > 0 (records that bring their own embedding
// of that length), provided(dim=dim).
std::string default_embedder_for(ContentKind kind, std::size_t dim = 0, std::size_t width = 0,
                                 std::size_t height = 0);

// What a batch brings: its first content record's kind, the length of its
// embedding (0: none given) and, for pixel arrays, their size.
struct BatchContent {
  ContentKind kind = ContentKind::pixels;
  std::size_t embedding_dim = 0;
  std::size_t width = 0, height = 0;  // a pixels record's size (0: not given)
};

// The content of the first records of a JSON Lines manifest that have any
// (at most the first 1,000 lines are read; their files are not); nothing
// when none of them has content or the file cannot be read (the ingest
// itself then says why). `follow_link`: open the manifest through a symbolic
// link (a user's own; the daemon's inbox manifests never are).
std::optional<BatchContent> manifest_content(const std::string& path, bool follow_link = true);

// Before a batch of `content` into the dataset at `db_path`: when its
// embedder was chosen by winnow (CurationConfig::embedder_auto) and no
// sample holds an embedding yet, records default_embedder_for(content) as
// its embedder. Returns the embedder chosen, or nothing when it stays.
// Throws winnow::Error when the database cannot be read or written.
std::optional<std::string> choose_embedder(const std::string& db_path, const BatchContent& content);

}  // namespace winnow::curation
