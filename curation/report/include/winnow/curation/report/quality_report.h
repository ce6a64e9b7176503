// The annotation-pipeline quality report: reads one dataset's store (samples,
// annotations, contributors, ingest batches, label-issue events, image
// quality) and builds the JSON of docs/report-schema.md: dataset figures and agreement
// coefficients, Dawid-Skene accuracy and confusion per annotator (worst
// first), the cleanlab-style class table, the most confused class pairs,
// growth per ingest batch and the image-quality issues per source and class
// (image_quality_section.h). Optionally writes the per-sample export (one
// JSON line per labelled or annotated sample) in the same pass.
//
// Degenerate datasets (no samples, no annotations, one annotator, one class)
// still get a report: each statistic that cannot be computed is null with a
// `*_note` saying why.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "winnow/curation/labels/dawid_skene.h"
#include "winnow/store/metadata_store.h"

namespace winnow::curation::report {

inline constexpr int kReportSchemaVersion = 1;

struct QualityReportOptions {
  labels::DawidSkeneOptions dawid_skene;
  std::size_t max_confused_pairs = 20;
  // Annotator name -> cost per label (winnow report --annotators POOL.csv):
  // each annotator's cost_per_label and cost_spent. Empty: not reported.
  std::map<std::string, double> annotator_costs;
  std::string generated_at;               // ISO-8601 UTC; empty: now
  std::ostream* sample_export = nullptr;  // when set, the per-sample export goes here
  // Called as each step starts ("reading samples", "Dawid-Skene", ...), with
  // the steps done so far and their number: for a progress line.
  std::function<void(const std::string& step, std::size_t done, std::size_t total)> progress;
};

// Reads the store from one snapshot (a read transaction, unless the caller
// already holds one) and returns the report. Throws winnow::Error on a store
// failure or inconsistent rows.
nlohmann::json build_quality_report(store::MetadataStore& store,
                                    const QualityReportOptions& options = {});

// Writes the per-sample export only (the schema's "Per-sample export"):
// builds the report with `out` as its sample_export and drops the JSON.
void write_sample_export(store::MetadataStore& store, std::ostream& out,
                         QualityReportOptions options = {});

}  // namespace winnow::curation::report
