// Helpers for the store tests: a temporary directory per test and sample
// records made from a number.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "winnow/store/sample_record.h"

namespace winnow::test {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        (std::filesystem::path(base != nullptr ? base : "/tmp") / "winnow-store-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary directory from " + pattern);
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Sample `i`: key "sample-<i>", hash "hash-<i>", label i % 10, one annotation.
inline NewSample make_sample(long long i, const std::string& source = "crawl") {
  NewSample sample;
  sample.external_key = fmt::format("sample-{}", i);
  sample.content_hash = fmt::format("hash-{}", i);
  sample.label = i % 10;
  sample.source = source;
  sample.annotations.push_back({fmt::format("annotator-{}", i % 3), i % 10});
  sample.decision.reason = "new content";
  sample.decision.details_json = R"({"near_dup_threshold": 0.98})";
  return sample;
}

}  // namespace winnow::test
