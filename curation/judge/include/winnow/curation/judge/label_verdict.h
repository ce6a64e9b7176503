// The kNN label verdict and the decision that records a changed one, shared by
// ingest (record_decision.cpp), `winnow rejudge` (rejudge.cpp) and the
// re-judging after each batch (stale_labels.cpp).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "winnow/curation/labels/label_quality.h"
#include "winnow/store/sample_record.h"

namespace winnow::curation::judge {

// Whether the kNN vote flags a label: flagged over at least
// min_label_neighbours labelled neighbours, once the label has label_k other
// accepted samples (`support`; otherwise a class that arrives late could
// never get in). The label is a label issue only where the vote judges its
// class on the dataset (labels::LabelEvidence); elsewhere the check abstains.
inline bool knn_flags_label(const labels::LabelQualityResult& q, std::int64_t support,
                            int min_label_neighbours, int label_k) {
  return q.flagged && q.neighbours >= static_cast<std::size_t>(min_label_neighbours) &&
         support >= label_k;
}

// The "label_quality" object of a re-judged sample's details; `suggested` is
// the name of q.suggested_label.
nlohmann::json label_quality_details(const labels::LabelQualityResult& q, std::int64_t support,
                                     int min_label_neighbours, const std::string& suggested);

// "label quality 0.033 < 0.08 over 30 neighbours" (">=" when not flagged).
std::string label_quality_why(const labels::LabelQualityResult& q, bool flagged);

// "the label check abstains on this class (lift 0.050 < 0.25), where label
// quality 0.033 < 0.08 over 30 neighbours would flag it".
std::string abstained_label_why(const labels::LabelQualityResult& q, double class_lift,
                                double min_lift);

// The decision for a verdict that changed: flagged ("{why} (suggested S)
// {suffix}", label_issue) or cleared ("label issue cleared: {why} {suffix}",
// accepted), with `details`.
store::Decision changed_label_decision(bool flagged, const std::string& why,
                                       const std::string& suggested, const std::string& suffix,
                                       const nlohmann::json& details);

}  // namespace winnow::curation::judge
