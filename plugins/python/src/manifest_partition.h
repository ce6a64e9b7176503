// ManifestPartition: a part of a manifest as winnow.dask's workers hand it to
// the one writer: its entries parsed (records' files read and decoded), their
// content hashes and their embeddings computed by the dataset's embedder
// (bulk::JobRecord::embedding), so that the writer's ordinary
// ingest (Ingester::ingest_batch) only decides and writes.
//
// A Curator is the read-only half of a dataset's curation, built from its
// stored config: the embedder, how image files are read, the verifiers. It
// is what a worker needs, without the store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "winnow/curation/bulk/job_record.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/curation/config/dataset_config.h"
#include "winnow/curation/dedup/colour_image_verifier.h"
#include "winnow/curation/dedup/near_duplicate_verifier.h"
#include "winnow/curation/readers/manifest_reader.h"

namespace winnow::python {

struct ManifestPartition {
  std::vector<curation::readers::ManifestEntry> entries;  // complete: record or rejection
  // What the job adds to each entry, by entry: its embedding, then its job
  // position and prior neighbours (set_prior_neighbours).
  std::vector<curation::bulk::JobRecord> jobs;
  // Lines of the manifest the part spans, blank ones too: line numbers in
  // `entries` count from the part's start, and the writer adds the lines of
  // the parts before it.
  std::size_t lines = 0;
  std::string embedder;  // spec of the embedder that computed the embeddings
};

// The partition as bytes (CBOR), for Dask to move between processes, and back.
// from_bytes throws winnow::Error when the bytes are not such a partition.
std::string to_bytes(const ManifestPartition& partition);
ManifestPartition partition_from_bytes(std::string_view bytes);

// The part of a record a near-duplicate verifier reads (kind, text, pixels
// and their shape, colour) as bytes (CBOR), and back: what winnow.dask's
// cluster shuffle carries so that the workers verify the pairs of their
// neighbour lists. Empty for a record with no near-duplicate check.
// verification_record throws winnow::Error on bytes that are not such a content.
std::string verification_content(const curation::ManifestRecord& record);
curation::ManifestRecord verification_record(std::string_view bytes);

// Entry `entry` of the partition as a record; throws winnow::Error "WHAT:
// entry E is no record of the partition" when it is out of range or a rejection.
const curation::ManifestRecord& record_of_entry(const ManifestPartition& partition,
                                                std::int64_t entry, std::string_view what);

// Prior neighbour lists of some of a partition's entries, as winnow.dask's
// phase 2 hands them over (row-major arrays the caller checked): row r is the
// list of entry entries[r], positions and similarities [rows, k] (-1: no
// neighbour), complete [rows]; verified_similarities and verified_thresholds
// [rows, verdicts] (NaN padded; absent when verdicts is 0).
struct PriorNeighbourRows {
  std::size_t rows = 0;
  std::size_t k = 0;
  std::size_t verdicts = 0;
  const std::int64_t* entries = nullptr;
  const std::int64_t* positions = nullptr;
  const float* similarities = nullptr;
  const bool* complete = nullptr;
  const double* verified_similarities = nullptr;
  const double* verified_thresholds = nullptr;
};

// Places the partition's records in a bulk job (entry i at job position
// first_position + i), then gives each listed entry its prior neighbours, row
// by row; throws winnow::Error at the first entry that is no record (the rows
// before it keep theirs).
void set_prior_neighbours(ManifestPartition& partition, std::int64_t first_position,
                          const PriorNeighbourRows& rows);

class Curator {
 public:
  // `config_json`: the dataset's config as stored (CurationConfig::to_json).
  explicit Curator(const std::string& config_json);

  // Reads `text`, the lines of a manifest part (whole lines), as `winnow
  // ingest` reads a manifest: relative paths resolved against `base_dir`,
  // image files decoded as the dataset reads them; `starts_manifest`: the
  // part begins at the file's first byte (the binary sniff is its alone).
  // Then hashes and embeds every record, on `threads` threads (1: this one).
  // A record the embedder refuses keeps no embedding: the writer embeds it
  // again and rejects it with the embedder's own reason.
  ManifestPartition read(std::string text, const std::string& name, const std::string& base_dir,
                         bool starts_manifest, int threads) const;

  const std::string& config_json() const { return config_json_; }
  const curation::CurationConfig& config() const { return config_; }
  const curation::embed::Embedder& embedder() const { return *embedder_; }
  const curation::dedup::NearDuplicateVerifier& image_verifier() const { return *image_verifier_; }
  const curation::dedup::NearDuplicateVerifier& text_verifier() const { return *text_verifier_; }

 private:
  std::string config_json_;
  curation::CurationConfig config_;
  std::unique_ptr<curation::embed::Embedder> embedder_;
  std::unique_ptr<curation::dedup::ColourImageNearDuplicateVerifier> image_verifier_;
  std::unique_ptr<curation::dedup::TextNearDuplicateVerifier> text_verifier_;
};

}  // namespace winnow::python
