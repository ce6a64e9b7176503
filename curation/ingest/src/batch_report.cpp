#include "winnow/curation/ingest/batch_report.h"

#include "winnow/curation/core/status_counts_json.h"

namespace winnow::curation::ingest {

nlohmann::json to_json(const BatchReport& r) {
  nlohmann::json j = {{"batch", r.batch_id},
                      {"file", r.name},
                      {"skipped", r.skipped},
                      {"counts", counts_json(r.counts)},
                      {"seconds", r.seconds}};
  if (!r.skipped && r.seconds > 0) j["samples_per_second"] = double(r.counts.total()) / r.seconds;
  put_rejections(j, r.rejections, r.counts[store::SampleStatus::rejected] + r.rejected_not_stored);
  if (r.rejected_not_stored > 0) j["rejected_not_stored"] = r.rejected_not_stored;
  if (!r.skipped) j["index_saved"] = r.index_saved;
  if (!r.index_save_error.empty()) j["index_save_error"] = r.index_save_error;
  if (!r.skipped) {
    j["labels_rejudged"] = {{"rejudged", r.labels_rejudged.rejudged},
                            {"newly_flagged", r.labels_rejudged.newly_flagged},
                            {"cleared", r.labels_rejudged.cleared},
                            {"abstained", r.labels_rejudged.abstained}};
    if (!r.label_check.is_null()) j["label_check"] = r.label_check;
    j["label_conflicts"] = r.label_conflicts;
    const AnnotationRoundCounts& a = r.annotation_rounds;
    if (a.items + a.unchanged > 0) {
      j["annotation_rounds"] = {{"items", a.items},
                                {"added", a.added},
                                {"unchanged", a.unchanged},
                                {"replaced", a.replaced},
                                {"relabelled", a.relabelled}};
    }
    const BatchPhaseSeconds& p = r.phases;
    j["seconds_by_phase"] = {{"read", p.read},
                             {"prepare_first_block", p.prepare_first_block},
                             {"decide", p.decide},
                             {"wait_for_pool", p.wait_for_pool},
                             {"pool_prepare", p.pool_prepare},
                             {"rejudge_labels", p.rejudge_labels},
                             {"commit", p.commit},
                             {"save_index", p.save_index}};
  }
  return j;
}

}  // namespace winnow::curation::ingest
