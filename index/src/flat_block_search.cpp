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

#if WINNOW_INDEX_HAVE_X86
// Fused AVX-512 search: the inner products of 32 queries (two registers of
// 16) with 4 base rows at a time are accumulated in 8 registers and compared
// with the queries' thresholds right there, so no score matrix is zeroed,
// written and read back, and the base is read in place (only the queries are
// packed, into dim-major panels of 32). At the pipeline's 65 dimensions it
// takes about 13% less time than the sgemm path (docs/benchmarks.md). Scores
// are summed in another order than sgemm's, so they may differ from it in the
// last bits.
constexpr std::size_t kFusedQueries = 32;  // queries per panel (two zmm registers)
constexpr std::size_t kFusedRows = 4;      // base rows per step
constexpr std::size_t kFusedBaseBlock = 256;  // base rows kept in L1/L2 across all panels

// Offers the scores of one base row to the queries whose lanes are set in
// `above` (bit i: lane i of the panel) and updates their thresholds.
__attribute__((target("avx512f"))) inline void offer_row(std::uint32_t above, const float* row_scores,
                                                         std::int64_t row, TopK* tops,
                                                         float* thresholds) {
  while (above != 0) {
    const unsigned lane = static_cast<unsigned>(__builtin_ctz(above));
    above &= above - 1;
    if (row_scores[lane] > tops[lane].threshold()) {
      tops[lane].push(row_scores[lane], row);
      thresholds[lane] = tops[lane].threshold();
    }
  }
}

// Bit i set: score lane i (of 32) is above its query's threshold.
__attribute__((target("avx512f"))) inline std::uint32_t lanes_above(__m512 lo, __m512 hi,
                                                                   __m512 thr_lo, __m512 thr_hi) {
  return static_cast<std::uint32_t>(_mm512_cmp_ps_mask(lo, thr_lo, _CMP_GT_OQ)) |
         static_cast<std::uint32_t>(_mm512_cmp_ps_mask(hi, thr_hi, _CMP_GT_OQ)) << 16;
}

__attribute__((target("avx512f"))) void fused_search_avx512(const float* base, std::size_t n,
                                                            std::size_t d, const float* queries,
                                                            std::size_t num_queries, std::size_t k,
                                                            float* scores, std::int64_t* labels) {
  const std::size_t panels = (num_queries + kFusedQueries - 1) / kFusedQueries;
  // panel p, dimension j: queries p * 32 .. p * 32 + 31 (zero past the last).
  std::vector<float> packed(panels * d * kFusedQueries, 0.0f);
  // Thresholds of padded lanes are +infinity: nothing ever beats them.
  std::vector<float> thresholds(panels * kFusedQueries, std::numeric_limits<float>::infinity());
  std::vector<TopK> tops(panels * kFusedQueries);
  for (std::size_t q = 0; q < num_queries; ++q) {
    float* panel = packed.data() + (q / kFusedQueries) * d * kFusedQueries;
    for (std::size_t j = 0; j < d; ++j) panel[j * kFusedQueries + q % kFusedQueries] = queries[q * d + j];
    tops[q].reset(k);
    thresholds[q] = tops[q].threshold();
  }
  alignas(64) float row_scores[kFusedRows][kFusedQueries];
  for (std::size_t b0 = 0; b0 < n; b0 += kFusedBaseBlock) {
    const std::size_t b1 = std::min(n, b0 + kFusedBaseBlock);
    for (std::size_t p = 0; p < panels; ++p) {
      const float* panel = packed.data() + p * d * kFusedQueries;
      float* thr = thresholds.data() + p * kFusedQueries;
      TopK* top = tops.data() + p * kFusedQueries;
      __m512 thr_lo = _mm512_loadu_ps(thr), thr_hi = _mm512_loadu_ps(thr + 16);
      std::size_t r = b0;
      for (; r + kFusedRows <= b1; r += kFusedRows) {
        const float* x0 = base + r * d;
        const float* x1 = x0 + d;
        const float* x2 = x1 + d;
        const float* x3 = x2 + d;
        __m512 a0l = _mm512_setzero_ps(), a0h = a0l, a1l = a0l, a1h = a0l, a2l = a0l, a2h = a0l,
               a3l = a0l, a3h = a0l;
        for (std::size_t j = 0; j < d; ++j) {
          const __m512 ql = _mm512_loadu_ps(panel + j * kFusedQueries);
          const __m512 qh = _mm512_loadu_ps(panel + j * kFusedQueries + 16);
          const __m512 v0 = _mm512_set1_ps(x0[j]), v1 = _mm512_set1_ps(x1[j]);
          const __m512 v2 = _mm512_set1_ps(x2[j]), v3 = _mm512_set1_ps(x3[j]);
          a0l = _mm512_fmadd_ps(v0, ql, a0l);
          a0h = _mm512_fmadd_ps(v0, qh, a0h);
          a1l = _mm512_fmadd_ps(v1, ql, a1l);
          a1h = _mm512_fmadd_ps(v1, qh, a1h);
          a2l = _mm512_fmadd_ps(v2, ql, a2l);
          a2h = _mm512_fmadd_ps(v2, qh, a2h);
          a3l = _mm512_fmadd_ps(v3, ql, a3l);
          a3h = _mm512_fmadd_ps(v3, qh, a3h);
        }
        const std::uint32_t m0 = lanes_above(a0l, a0h, thr_lo, thr_hi),
                            m1 = lanes_above(a1l, a1h, thr_lo, thr_hi),
                            m2 = lanes_above(a2l, a2h, thr_lo, thr_hi),
                            m3 = lanes_above(a3l, a3h, thr_lo, thr_hi);
        if ((m0 | m1 | m2 | m3) == 0) continue;  // the common case
        // Rows in order, so that of equal scores the lower row stays.
        _mm512_store_ps(row_scores[0], a0l);
        _mm512_store_ps(row_scores[0] + 16, a0h);
        _mm512_store_ps(row_scores[1], a1l);
        _mm512_store_ps(row_scores[1] + 16, a1h);
        _mm512_store_ps(row_scores[2], a2l);
        _mm512_store_ps(row_scores[2] + 16, a2h);
        _mm512_store_ps(row_scores[3], a3l);
        _mm512_store_ps(row_scores[3] + 16, a3h);
        const std::uint32_t masks[kFusedRows] = {m0, m1, m2, m3};
        for (std::size_t i = 0; i < kFusedRows; ++i) {
          offer_row(masks[i], row_scores[i], static_cast<std::int64_t>(r + i), top, thr);
        }
        thr_lo = _mm512_loadu_ps(thr);
        thr_hi = _mm512_loadu_ps(thr + 16);
      }
      for (; r < b1; ++r) {  // the block's last rows, one at a time
        const float* x = base + r * d;
        __m512 al = _mm512_setzero_ps(), ah = al;
        for (std::size_t j = 0; j < d; ++j) {
          const __m512 v = _mm512_set1_ps(x[j]);
          al = _mm512_fmadd_ps(v, _mm512_loadu_ps(panel + j * kFusedQueries), al);
          ah = _mm512_fmadd_ps(v, _mm512_loadu_ps(panel + j * kFusedQueries + 16), ah);
        }
        const std::uint32_t m = lanes_above(al, ah, thr_lo, thr_hi);
        if (m == 0) continue;
        _mm512_store_ps(row_scores[0], al);
        _mm512_store_ps(row_scores[0] + 16, ah);
        offer_row(m, row_scores[0], static_cast<std::int64_t>(r), top, thr);
        thr_lo = _mm512_loadu_ps(thr);
        thr_hi = _mm512_loadu_ps(thr + 16);
      }
    }
  }
  for (std::size_t q = 0; q < num_queries; ++q) tops[q].write(scores + q * k, labels + q * k);
}

bool have_avx512f() {
  static const bool have = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return have;
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
#if WINNOW_INDEX_HAVE_X86
  if (have_avx512f()) {
    fused_search_avx512(base, n, d, queries, num_queries, k, scores, labels);
    return;
  }
#endif
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
