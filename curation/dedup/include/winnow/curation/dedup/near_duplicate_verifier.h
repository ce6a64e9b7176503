// Verifying near-duplicate candidates with a content-level similarity: the
// index proposes candidates by embedding cosine; a verifier compares the
// contents with a measure that survives typical re-submission edits. Images:
// max over small shifts of the Pearson correlation of the pixels; text:
// overlap of codepoint shingles, with a Jaccard floor.
// Details: docs/curation.md#near-duplicate-verifiers
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "winnow/curation/core/manifest_record.h"
#include "winnow/curation/dedup/text_sketch.h"

namespace winnow::curation::dedup {

class NearDuplicateVerifier {
 public:
  virtual ~NearDuplicateVerifier() = default;
  // e.g. "image-pearson(max_shift=1)".
  virtual std::string name() const = 0;
  // Pairs with similarity() >= threshold() are near duplicates.
  virtual double threshold() const = 0;
  // The threshold for one pair, where a verifier compares some pairs by
  // another measure (ColourImageNearDuplicateVerifier); threshold() otherwise.
  virtual double threshold_for(const ManifestRecord& /*a*/, const ManifestRecord& /*b*/) const {
    return threshold();
  }
  // Similarity of two records' contents in [-1, 1] (images) or [0, 1] (text).
  // Throws winnow::Error naming the keys when the records cannot be compared.
  virtual double similarity(const ManifestRecord& a, const ManifestRecord& b) const = 0;
};

struct ImageVerifierOptions {
  int max_shift = 1;
  // Default chosen from bench_near_duplicates (docs/curation.md, "Near
  // duplicates"; the figures: docs/benchmarks.md, "Pixels").
  double threshold = 0.99;
};

class ImageNearDuplicateVerifier final : public NearDuplicateVerifier {
 public:
  explicit ImageNearDuplicateVerifier(ImageVerifierOptions options = {});
  std::string name() const override;
  double threshold() const override { return options_.threshold; }
  double similarity(const ManifestRecord& a, const ManifestRecord& b) const override;

  // The measure on raw images of the same size.
  static double shifted_pearson(const std::uint8_t* a, const std::uint8_t* b, std::size_t width,
                                std::size_t height, int max_shift);

 private:
  ImageVerifierOptions options_;
};

// Two texts are near duplicates when the smaller shares at least `threshold`
// of its shingles with the other (the overlap coefficient |A&B| / min(|A|,|B|))
// and their Jaccard is at least `min_jaccard`. The overlap survives a sentence
// appended to or cut from a paragraph, which Jaccard alone does not; the
// Jaccard floor keeps a short text from matching a long one that merely
// contains it. With min_jaccard == threshold the rule is Jaccard >= threshold
// (the overlap is never below the Jaccard). Measured on man-page prose:
// docs/curation.md, "Text near duplicates".
struct TextVerifierOptions {
  int shingle = 5;           // codepoints per shingle
  double threshold = 0.8;    // overlap coefficient
  double min_jaccard = 0.5;  // Jaccard floor
};

class TextNearDuplicateVerifier final : public NearDuplicateVerifier {
 public:
  explicit TextNearDuplicateVerifier(TextVerifierOptions options = {});
  std::string name() const override;
  double threshold() const override { return options_.threshold; }
  // The overlap coefficient when the Jaccard reaches min_jaccard, else the
  // Jaccard (then below threshold, since min_jaccard <= threshold).
  double similarity(const ManifestRecord& a, const ManifestRecord& b) const override;
  // At least similarity() of a text whose shingles() are `shingles` and a
  // text sketched as `other` (TextSketch): the same formula on the most
  // shingles the two can share. Below threshold(), the pair is surely not a
  // near duplicate.
  double similarity_at_most(const std::vector<std::uint64_t>& shingles,
                            const TextSketch& other) const;
  const TextVerifierOptions& options() const { return options_; }

  // Sorted, unique shingle hashes of a text.
  static std::vector<std::uint64_t> shingles(const std::string& text, int n);
  static double jaccard(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b);
  // |a & b| / min(|a|, |b|) (1 when either is empty and the other too).
  static double overlap(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b);

 private:
  // The rule on counts: `common` shingles shared by sets of `a` and `b`.
  double similarity_of(std::size_t common, std::size_t a, std::size_t b) const;

  TextVerifierOptions options_;
};

// Width and height of a pixels record: the given ones, or a square side when
// neither is given and the pixel count is a perfect square. Throws otherwise.
void image_shape(const ManifestRecord& record, std::size_t& width, std::size_t& height);

}  // namespace winnow::curation::dedup
