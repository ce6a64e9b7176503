#include "kernels/flat_block_search.h"

#include <algorithm>
#include <limits>
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
                      const float* b, const int* ldb, const float* beta, float* c, const int* ldc);

namespace winnow::index::detail {
namespace {

// The k best (score, row) pairs of every query of a batch. Each query's pairs
// are a binary heap with the worst pair at the root, so its k-th best score
// (the threshold a new score must beat) is one load away and a better pair
// replaces the root in log2(k) steps. Both search paths offer each query's
// rows in increasing order: a score equal to the threshold comes from a
// later row than the pair holding it and loses the tie, so only scores
// strictly above threshold(q) are pushed.
class BatchTopK {
 public:
  BatchTopK(std::size_t num_queries, std::size_t k)
      : k_(k), sizes_(num_queries, 0), heaps_(num_queries * k) {}

  float threshold(std::size_t q) const {
    return sizes_[q] < k_ ? -std::numeric_limits<float>::infinity() : heaps_[q * k_].score;
  }

  // Requires score > threshold(q).
  void push(std::size_t q, float score, std::int64_t row) {
    Entry* heap = heaps_.data() + q * k_;
    std::size_t& size = sizes_[q];
    if (size < k_) {
      heap[size++] = {score, row};
      std::push_heap(heap, heap + size, Better());
    } else {
      replace_root(heap, {score, row});
    }
  }

  // Query q's pairs best first into k slots, padded with -1 / -infinity.
  void write(std::size_t q, float* scores, std::int64_t* labels) {
    Entry* heap = heaps_.data() + q * k_;
    const std::size_t size = sizes_[q];
    std::sort(heap, heap + size, Better());
    for (std::size_t r = 0; r < k_; ++r) {
      scores[r] = r < size ? heap[r].score : -std::numeric_limits<float>::infinity();
      labels[r] = r < size ? heap[r].row : -1;
    }
  }

 private:
  struct Entry {
    float score;
    std::int64_t row;
  };
  // Higher score first; of equal scores the lower row. As the heap's order
  // this puts the worst pair at the root.
  struct Better {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.score > b.score || (a.score == b.score && a.row < b.row);
    }
  };

  // Replaces the worst pair with `entry` and sifts it down: one pass, where
  // std::pop_heap + std::push_heap would take two.
  void replace_root(Entry* heap, Entry entry) const {
    const Better better;
    std::size_t i = 0;
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= k_) break;
      if (child + 1 < k_ && better(heap[child], heap[child + 1])) ++child;  // the worse child
      if (!better(entry, heap[child])) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = entry;
  }

  std::size_t k_;
  std::vector<std::size_t> sizes_;
  std::vector<Entry> heaps_;  // query q: heaps_[q * k_, q * k_ + sizes_[q])
};

// ---------------------------------------------------------------------------
// sgemm path: one sgemm per (query block, base block), then a scan of each
// query's row of scores.

// Rows of the base per sgemm: a 256-query block of scores is then 256 KB, and
// stays in the core's L2 cache for the scan that follows.
constexpr std::size_t kBaseBlock = 256;
constexpr std::size_t kQueryBlock = 256;

// Offers scores[0, n) (rows first_row + j) to query q.
void scan_portable(const float* scores, std::size_t n, std::int64_t first_row, BatchTopK& top,
                   std::size_t q) {
  for (std::size_t j = 0; j < n; ++j) {
    if (scores[j] > top.threshold(q))
      top.push(q, scores[j], first_row + static_cast<std::int64_t>(j));
  }
}

#if WINNOW_INDEX_HAVE_X86
// 32 scores per step, compared with the threshold 8 at a time; only a step
// with a score above it looks at single scores. The threshold only rises, so
// it stays in a register until a push may have changed it.
__attribute__((target("avx2"))) void scan_avx2(const float* scores, std::size_t n,
                                               std::int64_t first_row, BatchTopK& top,
                                               std::size_t q) {
  __m256 threshold = _mm256_set1_ps(top.threshold(q));
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
      if (scores[i] > top.threshold(q))
        top.push(q, scores[i], first_row + static_cast<std::int64_t>(i));
    }
    threshold = _mm256_set1_ps(top.threshold(q));
  }
  scan_portable(scores + j, n - j, first_row + static_cast<std::int64_t>(j), top, q);
}
#endif

using ScanKernel = void (*)(const float*, std::size_t, std::int64_t, BatchTopK&, std::size_t);

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

void sgemm_search(const float* base, std::size_t n, std::size_t d, const float* queries,
                  std::size_t num_queries, std::size_t k, float* scores, std::int64_t* labels) {
  const ScanKernel scan = scan_kernel();
  std::vector<float> block(std::min(kQueryBlock, num_queries) * std::min(kBaseBlock, n));
  BatchTopK top(num_queries, k);
  const int di = as_blas_int(d);
  const float one = 1.0f, zero = 0.0f;
  for (std::size_t q0 = 0; q0 < num_queries; q0 += kQueryBlock) {
    const std::size_t nq = std::min(kQueryBlock, num_queries - q0);
    for (std::size_t b0 = 0; b0 < n; b0 += kBaseBlock) {
      const std::size_t nb = std::min(kBaseBlock, n - b0);
      // Column-major C (nb x nq) = base_block (d x nb)^T * queries (d x nq):
      // row-major, block[q * nb + j] = <query q0 + q, base row b0 + j>.
      const int nbi = as_blas_int(nb), nqi = as_blas_int(nq);
      sgemm_("T", "N", &nbi, &nqi, &di, &one, base + b0 * d, &di, queries + q0 * d, &di, &zero,
             block.data(), &nbi);
      for (std::size_t q = 0; q < nq; ++q) {
        scan(block.data() + q * nb, nb, static_cast<std::int64_t>(b0), top, q0 + q);
      }
    }
  }
  for (std::size_t q = 0; q < num_queries; ++q) top.write(q, scores + q * k, labels + q * k);
}

// ---------------------------------------------------------------------------
// Fused AVX-512 path: the queries are packed into dimension-major panels of
// 16 * Regs (one zmm register holds 16 queries' values of one dimension);
// each base row's value is broadcast and multiplied into Regs accumulators,
// so Rows base rows x one panel take Rows * Regs accumulators and, per
// dimension, Regs + Rows loads for Rows * Regs FMAs. The base is read in
// place, no score matrix is zeroed, written and read back, and each score is
// compared with its query's threshold while still in a register.
//
// Blocking (docs/benchmarks.md, "Flat search"): 6 rows x 64
// queries (24 accumulators + 4 query registers + 1 broadcast: 29 of the 32
// zmm registers, GCC keeps them all in registers) does more multiply-adds per
// second than the earlier 4 x 32 (8 accumulators, 6 loads per 8 FMAs), if
// less than independent FMA chains could.
// Packing the base too (so that the broadcasts read one stream) gained
// nothing at d = 256 and lost at d = 65, where packing 55,000 rows per
// 256-query call costs more than it saves; 12 x 32 makes GCC spill the query
// registers.
//
// Each (row, query) score is summed over the dimensions in order with one
// FMA per dimension, whatever the blocking; the sgemm path sums in another
// order, so the two may differ in the last bits.

#if WINNOW_INDEX_HAVE_X86
constexpr std::size_t kFusedBaseBlock = 256;  // base rows kept in L2 across all panels

// The inner products of Rows base rows (x: row-major, d apart) with one panel
// (panel[j * 16 * Regs + lane]) are summed in registers and compared with the
// panel's thresholds (thr, a copy of thr_mem); only rows with a lane above its
// threshold leave the registers. Rows are offered in order, so that of equal
// scores the lower row stays.
template <std::size_t Rows, std::size_t Regs>
__attribute__((target("avx512f"), always_inline)) inline void score_rows(
    const float* x, std::size_t d, std::int64_t first_row, const float* panel,
    std::size_t first_query, __m512 (&thr)[Regs], float* thr_mem, BatchTopK& top) {
  constexpr std::size_t kWidth = 16 * Regs;
  __m512 acc[Rows][Regs];
#pragma GCC unroll 16
  for (std::size_t i = 0; i < Rows; ++i) {
#pragma GCC unroll 4
    for (std::size_t g = 0; g < Regs; ++g) acc[i][g] = _mm512_setzero_ps();
  }
  for (std::size_t j = 0; j < d; ++j) {
    __m512 q[Regs];
#pragma GCC unroll 4
    for (std::size_t g = 0; g < Regs; ++g) q[g] = _mm512_loadu_ps(panel + j * kWidth + 16 * g);
#pragma GCC unroll 16
    for (std::size_t i = 0; i < Rows; ++i) {
      const __m512 v = _mm512_set1_ps(x[i * d + j]);
#pragma GCC unroll 4
      for (std::size_t g = 0; g < Regs; ++g) acc[i][g] = _mm512_fmadd_ps(v, q[g], acc[i][g]);
    }
  }
  std::uint64_t masks[Rows];
  std::uint64_t any = 0;
#pragma GCC unroll 16
  for (std::size_t i = 0; i < Rows; ++i) {
    masks[i] = 0;
#pragma GCC unroll 4
    for (std::size_t g = 0; g < Regs; ++g) {
      masks[i] |= static_cast<std::uint64_t>(_mm512_cmp_ps_mask(acc[i][g], thr[g], _CMP_GT_OQ))
                  << (16 * g);
    }
    any |= masks[i];
  }
  if (any == 0) return;  // the common case
  // Stored with constant indices, so that the accumulators stay registers.
  alignas(64) float row_scores[Rows][kWidth];
#pragma GCC unroll 16
  for (std::size_t i = 0; i < Rows; ++i) {
#pragma GCC unroll 4
    for (std::size_t g = 0; g < Regs; ++g) _mm512_store_ps(row_scores[i] + 16 * g, acc[i][g]);
  }
  for (std::size_t i = 0; i < Rows; ++i) {
    std::uint64_t above = masks[i];
    while (above != 0) {
      const auto lane = static_cast<std::size_t>(__builtin_ctzll(above));
      above &= above - 1;
      // The mask was taken before the earlier rows' pushes; recheck.
      if (row_scores[i][lane] > thr_mem[lane]) {
        top.push(first_query + lane, row_scores[i][lane], first_row + static_cast<std::int64_t>(i));
        thr_mem[lane] = top.threshold(first_query + lane);
      }
    }
  }
#pragma GCC unroll 4
  for (std::size_t g = 0; g < Regs; ++g) thr[g] = _mm512_loadu_ps(thr_mem + 16 * g);
}

template <std::size_t Rows, std::size_t Regs>
__attribute__((target("avx512f"))) void fused_search_avx512(const float* base, std::size_t n,
                                                            std::size_t d, const float* queries,
                                                            std::size_t num_queries, std::size_t k,
                                                            float* scores, std::int64_t* labels) {
  constexpr std::size_t kWidth = 16 * Regs;
  const std::size_t panels = (num_queries + kWidth - 1) / kWidth;
  // panel p, dimension j: queries p * kWidth + lane (zero past the last).
  std::vector<float> packed(panels * d * kWidth, 0.0f);
  for (std::size_t q = 0; q < num_queries; ++q) {
    float* panel = packed.data() + (q / kWidth) * d * kWidth;
    for (std::size_t j = 0; j < d; ++j) panel[j * kWidth + q % kWidth] = queries[q * d + j];
  }
  BatchTopK top(num_queries, k);
  // The thresholds of padded lanes are +infinity: nothing ever beats them.
  std::vector<float> thresholds(panels * kWidth, std::numeric_limits<float>::infinity());
  for (std::size_t q = 0; q < num_queries; ++q) thresholds[q] = top.threshold(q);
  constexpr std::size_t kBlock = kFusedBaseBlock / Rows * Rows;
  for (std::size_t b0 = 0; b0 < n; b0 += kBlock) {
    const std::size_t b1 = std::min(n, b0 + kBlock);
    for (std::size_t p = 0; p < panels; ++p) {
      const float* panel = packed.data() + p * d * kWidth;
      float* thr_mem = thresholds.data() + p * kWidth;
      __m512 thr[Regs];
      for (std::size_t g = 0; g < Regs; ++g) thr[g] = _mm512_loadu_ps(thr_mem + 16 * g);
      std::size_t r = b0;
      for (; r + Rows <= b1; r += Rows) {
        score_rows<Rows, Regs>(base + r * d, d, static_cast<std::int64_t>(r), panel, p * kWidth,
                               thr, thr_mem, top);
      }
      for (; r < b1; ++r) {  // the last block's last rows, one at a time
        score_rows<1, Regs>(base + r * d, d, static_cast<std::int64_t>(r), panel, p * kWidth, thr,
                            thr_mem, top);
      }
    }
  }
  for (std::size_t q = 0; q < num_queries; ++q) top.write(q, scores + q * k, labels + q * k);
}

bool have_avx512f() {
  static const bool have = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return have;
}
#endif

}  // namespace

bool fused_avx512_available() {
#if WINNOW_INDEX_HAVE_X86
  return have_avx512f();
#else
  return false;
#endif
}

void flat_block_search(const float* base, std::size_t n, std::size_t d, const float* queries,
                       std::size_t num_queries, std::size_t k, float* scores, std::int64_t* labels,
                       FlatSearchKernel kernel) {
  if (num_queries == 0 || k == 0) return;
  if (kernel == FlatSearchKernel::automatic) {
    kernel = fused_avx512_available() ? FlatSearchKernel::fused_avx512 : FlatSearchKernel::sgemm;
  }
  if (kernel == FlatSearchKernel::sgemm) {
    sgemm_search(base, n, d, queries, num_queries, k, scores, labels);
    return;
  }
  WINNOW_THROW_IF_NOT(fused_avx512_available(),
                      "flat search: the fused AVX-512 kernel needs a CPU with AVX-512F");
#if WINNOW_INDEX_HAVE_X86
  // 64-query panels (6 rows x 4 registers of accumulators) sum the most per
  // load; up to 32 queries, 32-query panels (8 x 2) waste fewer lanes.
  if (num_queries > 32) {
    fused_search_avx512<6, 4>(base, n, d, queries, num_queries, k, scores, labels);
  } else {
    fused_search_avx512<8, 2>(base, n, d, queries, num_queries, k, scores, labels);
  }
#endif
}

}  // namespace winnow::index::detail
