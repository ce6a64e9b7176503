// A scope in which FAISS's OpenMP loops run on the calling thread alone
// (private to winnow_index).
//
// Work whose result would depend on how OpenMP splits it (HNSW insertion,
// the k-means of an IVF cell split) runs in such a scope, so that winnow's
// decisions never depend on the thread count or on timing. The caller's
// setting comes back when the scope ends, also when the work throws.
#pragma once

#include <omp.h>

namespace winnow::index::detail {

class OneOmpThread {
 public:
  OneOmpThread() : before_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneOmpThread() { omp_set_num_threads(before_); }
  OneOmpThread(const OneOmpThread&) = delete;
  OneOmpThread& operator=(const OneOmpThread&) = delete;

 private:
  int before_;
};

}  // namespace winnow::index::detail
