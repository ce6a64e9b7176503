#include "winnow/curation/dataset/lookup/stored_sample_filter.h"

#include "winnow/curation/dedup/content_hash.h"

namespace winnow::curation {

void StoredSampleFilter::catch_up(store::MetadataStore& store) {
  store.for_each_sample_identity(last_id_, [this](const store::MetadataStore::SampleIdentity& s) {
    content_hashes_.add(dedup::hash64(s.content_hash));
    keys_.add(dedup::hash64(s.external_key));
    last_id_ = s.id;
  });
}

void StoredSampleFilter::clear() {
  content_hashes_.clear();
  keys_.clear();
  last_id_ = 0;
}

}  // namespace winnow::curation
