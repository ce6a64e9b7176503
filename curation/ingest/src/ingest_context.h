// IngestContext: what an ingest batch reads and updates, the pipeline's store,
// indexes, caches and threads (IngestPipeline owns them; IngestBatch and
// the chunk preparation use them).
#pragma once

#include "winnow/curation/dedup/near_duplicate_verifier.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/curation/ingest/ingester.h"
#include "winnow/curation/dataset/label_names.h"
#include "winnow/curation/core/thread_pool.h"
#include "winnow/index/vector_index.h"
#include "winnow/store/metadata_store.h"

#include "winnow/curation/dataset/lookup/accepted_labels.h"
#include "winnow/curation/bulk/job_positions.h"
#include "winnow/curation/dataset/lookup/stored_content_cache.h"
#include "winnow/curation/dataset/lookup/stored_sample_filter.h"
#include "winnow/curation/dataset/lookup/stored_text_sketches.h"

namespace winnow::curation::ingest {

struct IngestContext {
  store::MetadataStore& store;
  // The judged samples: accepted and label_issue. A label issue is a
  // near-duplicate candidate (so that a re-submitted copy of a flagged sample
  // is its duplicate rather than a new sample judged again) and a label
  // voter, but counts for nothing in a gain (accepted_labels.flagged tells
  // which neighbours are label issues).
  index::VectorIndex& index;
  const embed::Embedder& embedder;
  const CurationConfig& config;
  const dedup::NearDuplicateVerifier& image_verifier;  // colour, else grey
  const dedup::TextNearDuplicateVerifier& text_verifier;
  LabelNames& label_names;
  AcceptedLabelCache& accepted_labels;
  // The stored samples' content hashes and keys, caught up before the batch:
  // the store is asked about one only when the filter may hold it.
  const StoredSampleFilter& stored_samples;
  // Parsing and decoding, embedding, the index searches and the verification
  // of stored candidates run on it; decisions stay on the calling thread, in
  // order.
  const ThreadPool& pool;
  // A bulk job's ids by position, when the records come with prior
  // neighbour lists (winnow.dask); null otherwise, and the lists are ignored.
  bulk::JobPositions* job = nullptr;
  // Stored contents read for verification, kept across batches (the
  // pipeline's; null: every candidate is read from the store).
  StoredContentCache* stored_contents = nullptr;
  // Sketches of the stored texts, which rule candidates out unread (the
  // pipeline's; null: every candidate is verified).
  StoredTextSketches* text_sketches = nullptr;
};

}  // namespace winnow::curation::ingest
