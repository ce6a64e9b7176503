// Helpers for the store tests: a temporary directory per test and sample
// records made from a number.
#pragma once

#include <string>

#include <fmt/format.h>

#include "support/temp_dir.h"
#include "winnow/store/sample_record.h"

namespace winnow::test {

// Sample `i`: key "sample-<i>", hash "hash-<i>", label i % 10, one annotation.
inline store::NewSample make_sample(long long i, const std::string& source = "crawl") {
  store::NewSample sample;
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
