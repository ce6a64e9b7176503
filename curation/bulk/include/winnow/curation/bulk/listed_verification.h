// The near-duplicate verdicts a bulk job's workers give a record's prior
// neighbour list (winnow.dask, docs/distributed-curation.md): the verifier of
// the record's check on its leading listed records, those at or above the
// check's candidate gate, as the ingest's finder would verify them. The
// writer then takes a listed candidate's verdict instead of loading its
// content and verifying it again (IngestBatch::near_duplicate).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "winnow/curation/dedup/near_duplicate_verifier.h"
#include "winnow/curation/config/dataset_config.h"
#include "winnow/curation/bulk/job_record.h"
#include "winnow/curation/core/manifest_record.h"

namespace winnow::curation::bulk {

// The record at a job position, or nullptr when it is not at hand.
using ListedRecordLookup = std::function<const ManifestRecord*(std::int64_t position)>;

// Fills list.verified_similarities and verified_thresholds for the listed
// records from the front of the list down to the candidate gate, at most
// `max_verdicts` of them; a rank left without a verdict (its record not at
// hand, or the verifier threw on the pair: the writer verifies it again and
// meets the same error) is NaN. A record with no near-duplicate check, or no
// listed record above the gate, gets no verdicts.
void verify_listed(const ManifestRecord& record, PriorNeighbours& list,
                   const ListedRecordLookup& listed, const CurationConfig& config,
                   const dedup::NearDuplicateVerifier& image_verifier,
                   const dedup::NearDuplicateVerifier& text_verifier, std::size_t max_verdicts);

}  // namespace winnow::curation::bulk
