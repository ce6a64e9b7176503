#include "flat_block_search.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WINNOW_INDEX_HAVE_X86 1
#else
#define WINNOW_INDEX_HAVE_X86 0
#endif

#include "winnow/error.h"

// The Fortran BLAS entry point; FAISS links the BLAS library (OpenBLAS on the
// reference machine) and declares it the same way.
extern "C" int sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                      const int* k, const float* alpha, const float* a, const int* lda,
                      const float* b, const int* ldb, const float* beta, float* c,
                      const int* ldc);

namespace winnow::index::detail {
namespace {

// Rows of the base per sgemm: a 256-query block of scores is then 256 KB, and
// stays in the core's L2 cache for the scan that follows.
constexpr std::size_t kBaseBlock = 256;
constexpr std::size_t kQueryBlock = 256;

// The k best (score, row) pairs of one query. Pairs that beat the current
// threshold are appended to a buffer; when it holds kSlack * k pairs, the k
// best are kept (nth_element) and the threshold becomes the k-th best score.
// That is cheaper than a heap update per pair: most of a scan's candidates
// come early, when the threshold is still low.
class TopK {
 public:
  void reset(std::size_t k) {
    k_ = k;
    kept_.clear();
    kept_.reserve(kSlack * k);
    threshold_ = -std::numeric_limits<float>::infinity();
  }
  float threshold() const { return threshold_; }

  void push(float score, std::int64_t row) {
    kept_.emplace_back(score, row);
    if (kept_.size() == kSlack * k_) shrink();
  }

  // Best first into k slots, padded with -1 / -infinity; ties go to the
  // lower row.
  void write(float* scores, std::int64_t* labels) {
    shrink();
    std::sort(kept_.begin(), kept_.end(), Better());
    for (std::size_t r = 0; r < k_; ++r) {
      scores[r] = r < kept_.size() ? kept_[r].first : -std::numeric_limits<float>::infinity();
      labels[r] = r < kept_.size() ? kept_[r].second : -1;
    }
  }

 private:
  static constexpr std::size_t kSlack = 4;

  struct Better {
    bool operator()(const std::pair<float, std::int64_t>& a,
                    const std::pair<float, std::int64_t>& b) const {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    }
  };

  // Keeps the k best pairs; from then on only scores above the k-th best can
  // enter (an equal score comes from a later row and would lose the tie).
  void shrink() {
    if (kept_.size() < k_) return;
    std::nth_element(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(k_ - 1),
                     kept_.end(), Better());
    kept_.resize(k_);
    threshold_ = kept_[k_ - 1].first;
  }

  std::size_t k_ = 0;
  float threshold_ = 0.0f;
  std::vector<std::pair<float, std::int64_t>> kept_;
};

// Offers scores[0, n) (rows first_row + j) to the heap.
void scan_portable(const float* scores, std::size_t n, std::int64_t first_row, TopK& top) {
  for (std::size_t j = 0; j < n; ++j) {
    if (scores[j] > top.threshold()) top.push(scores[j], first_row + static_cast<std::int64_t>(j));
  }
}

#if WINNOW_INDEX_HAVE_X86
// 32 scores per step, compared with the threshold 8 at a time; only a step
// with a score above it looks at single scores. The threshold only rises, so
// it stays in a register until a push may have changed it.
__attribute__((target("avx2"))) void scan_avx2(const float* scores, std::size_t n,
                                                 std::int64_t first_row, TopK& top) {
  __m256 threshold = _mm256_set1_ps(top.threshold());
  std::size_t j = 0;
  for (; j + 32 <= n; j += 32) {
    const __m256 above0 = _mm256_cmp_ps(_mm256_loadu_ps(scores + j), threshold, _CMP_GT_OQ);
    const __m256 above1 = _mm256_cmp_ps(_mm256_loadu_ps(scores + j + 8), threshold, _CMP_GT_OQ);
    const __m256 above2 = _mm256_cmp_ps(_mm256_loadu_ps(scores + j + 16), threshold, _CMP_GT_OQ);
    const __m256 above3 = _mm256_cmp_ps(_mm256_loadu_ps(scores + j + 24), threshold, _CMP_GT_OQ);
    const __m256 any = _mm256_or_ps(_mm256_or_ps(above0, above1), _mm256_or_ps(above2, above3));
    if (_mm256_movemask_ps(any) == 0) continue;
    auto mask = static_cast<std::uint32_t>(_mm256_movemask_ps(above0)) |
                static_cast<std::uint32_t>(_mm256_movemask_ps(above1)) << 8 |
                static_cast<std::uint32_t>(_mm256_movemask_ps(above2)) << 16 |
                static_cast<std::uint32_t>(_mm256_movemask_ps(above3)) << 24;
    while (mask != 0) {
      const std::size_t i = j + static_cast<std::size_t>(__builtin_ctz(mask));
      mask &= mask - 1;
      if (scores[i] > top.threshold()) top.push(scores[i], first_row + static_cast<std::int64_t>(i));
    }
    threshold = _mm256_set1_ps(top.threshold());
  }
  scan_portable(scores + j, n - j, first_row + static_cast<std::int64_t>(j), top);
}
#endif

using ScanKernel = void (*)(const float*, std::size_t, std::int64_t, TopK&);

ScanKernel scan_kernel() {
  static const ScanKernel kernel = [] {
#if WINNOW_INDEX_HAVE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) return &scan_avx2;
#endif
    return &scan_portable;
  }();
  return kernel;
}

int as_blas_int(std::size_t v) {
  WINNOW_THROW_IF_NOT(v <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                      "flat search: size {} exceeds the BLAS integer range", v);
  return static_cast<int>(v);
}

}  // namespace

void flat_block_search(const float* base, std::size_t n, std::size_t d, const float* queries,
                       std::size_t num_queries, std::size_t k, float* scores,
                       std::int64_t* labels) {
  const ScanKernel scan = scan_kernel();
  std::vector<float> block(std::min(kQueryBlock, num_queries) * std::min(kBaseBlock, n));
  std::vector<TopK> tops(std::min(kQueryBlock, num_queries));
  const int di = as_blas_int(d);
  const float one = 1.0f, zero = 0.0f;
  for (std::size_t q0 = 0; q0 < num_queries; q0 += kQueryBlock) {
    const std::size_t nq = std::min(kQueryBlock, num_queries - q0);
    for (std::size_t q = 0; q < nq; ++q) tops[q].reset(k);
    for (std::size_t b0 = 0; b0 < n; b0 += kBaseBlock) {
      const std::size_t nb = std::min(kBaseBlock, n - b0);
      // Column-major C (nb x nq) = base_block (d x nb)^T * queries (d x nq):
      // row-major, block[q * nb + j] = <query q, base row b0 + j>.
      const int nbi = as_blas_int(nb), nqi = as_blas_int(nq);
      sgemm_("T", "N", &nbi, &nqi, &di, &one, base + b0 * d, &di, queries + q0 * d, &di, &zero,
             block.data(), &nbi);
      for (std::size_t q = 0; q < nq; ++q) {
        scan(block.data() + q * nb, nb, static_cast<std::int64_t>(b0), tops[q]);
      }
    }
    for (std::size_t q = 0; q < nq; ++q) {
      tops[q].write(scores + (q0 + q) * k, labels + (q0 + q) * k);
    }
  }
}

}  // namespace winnow::index::detail
