// CuratedSamples: what a training run reads of a dataset. The samples of some
// statuses (accepted unless told) as they are now or as they were at a fixed
// revision (store/sample_history.h), each with its store id (the sampler's
// id), its label and class index, and its content decoded as winnow decodes
// it: pixel arrays and image files as grey or RGB pixels at a stated size,
// texts as strings. Each also says whether a person's verdict decided it (its
// label is then trusted). The list is read once, at one revision, so a run
// that reopens it (a spawned data-loader worker) sees the same samples.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "winnow/store/sample_status.h"

namespace winnow::store {
class MetadataStore;
}  // namespace winnow::store

namespace winnow::curation {

struct CuratedSampleOptions {
  // The statuses taken, e.g. {accepted, label_issue} to train on flagged
  // samples too (down-weighted: winnow.CuratedDataset.sampler).
  std::vector<store::SampleStatus> statuses = {store::SampleStatus::accepted};
  std::optional<std::int64_t> revision;  // none: the dataset's current revision
};

struct CuratedSample {
  std::int64_t id = 0;  // the store's id
  std::string key;
  std::optional<std::int64_t> label;  // the store's label, as it was at the revision
  int class_index = -1;               // into class_names(); -1: unlabelled
  store::SampleStatus status = store::SampleStatus::accepted;  // at the revision
  bool reviewed = false;  // a person's verdict (winnow review) came before the revision
};

// The size a sample's pixels are given at (area resampling, stretched).
struct PixelShape {
  std::size_t width = 28;
  std::size_t height = 28;
  bool colour = false;  // RGB, 3 channels; else grey, 1
};

struct TrainingContent {
  bool is_text = false;
  std::string text;                  // is_text
  std::vector<std::uint8_t> pixels;  // otherwise: height x width x channels, row-major
  std::size_t width = 0, height = 0, channels = 0;
};

class CuratedSamples {
 public:
  // Reads the samples of `db` (opened to read only). Throws winnow::Error
  // naming the database for a revision past the current one or no status.
  explicit CuratedSamples(const std::string& db, const CuratedSampleOptions& options = {});
  ~CuratedSamples();
  CuratedSamples(const CuratedSamples&) = delete;
  CuratedSamples& operator=(const CuratedSamples&) = delete;

  const std::string& path() const { return db_; }
  std::int64_t revision() const { return revision_; }  // the revision read
  const CuratedSampleOptions& options() const { return options_; }
  std::size_t size() const { return samples_.size(); }
  const CuratedSample& at(std::size_t i) const { return samples_.at(i); }
  // The labels' names: numeric labels by value, then names in order. A
  // sample's class_index is its label's place here.
  const std::vector<std::string>& class_names() const { return class_names_; }

  // Sample i's content (from any thread). An image file set aside since the
  // revision (its stored content dropped) is read from the file its ingest
  // event names. Throws winnow::Error naming the sample when the store keeps
  // no content for it otherwise (a pixel array or text set aside since), or
  // when its file is gone or is not an image winnow decodes.
  TrainingContent content(std::size_t i, const PixelShape& shape) const;

 private:
  std::string db_;
  CuratedSampleOptions options_;
  std::unique_ptr<store::MetadataStore> store_;
  mutable std::mutex store_mutex_;  // content() may be called from several threads
  std::int64_t revision_ = 0;
  std::vector<CuratedSample> samples_;
  std::vector<std::string> class_names_;
};

}  // namespace winnow::curation
