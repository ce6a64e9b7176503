#include "kernels/simd_distance.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WINNOW_INDEX_HAVE_X86 1
#else
#define WINNOW_INDEX_HAVE_X86 0
#endif

namespace winnow::index {
namespace {

#if WINNOW_INDEX_HAVE_X86
__attribute__((target("avx2,fma"))) float inner_product_avx2(const float* a, const float* b,
                                                             std::size_t d) {
  __m256 acc0 = _mm256_setzero_ps();
  __m256 acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps();
  __m256 acc3 = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), acc3);
  }
  for (; i + 8 <= d; i += 8) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  }
  const __m256 acc = _mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3));
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  float result = _mm_cvtss_f32(sum);
  for (; i < d; ++i) {
    result += a[i] * b[i];
  }
  return result;
}

// Four queries against one vector, each value computed with exactly the
// operations of inner_product_avx2 (same accumulators, same order of adds),
// so it is bit-identical to four calls. d must be a multiple of 8 (no
// scalar tail). The vector's chunks are loaded once for the four queries:
// 1.25 loads per FMA instead of 2, the bound of the one-query kernel.
// The four accumulators of a pair are built two at a time (acc0 and acc1,
// then acc2 and acc3) to fit the 16 registers.
__attribute__((target("avx2,fma"))) inline void inner_product4_avx2(const float* const* q,
                                                                    const float* b, std::size_t d,
                                                                    float* out) {
  const std::size_t main_end = d / 32 * 32;
  __m256 t0, t1, t2, t3;  // acc0 + acc1 of each query
  {
    __m256 a00 = _mm256_setzero_ps(), a01 = _mm256_setzero_ps();
    __m256 a10 = _mm256_setzero_ps(), a11 = _mm256_setzero_ps();
    __m256 a20 = _mm256_setzero_ps(), a21 = _mm256_setzero_ps();
    __m256 a30 = _mm256_setzero_ps(), a31 = _mm256_setzero_ps();
    for (std::size_t i = 0; i < main_end; i += 32) {
      const __m256 b0 = _mm256_loadu_ps(b + i);
      const __m256 b1 = _mm256_loadu_ps(b + i + 8);
      a00 = _mm256_fmadd_ps(_mm256_loadu_ps(q[0] + i), b0, a00);
      a01 = _mm256_fmadd_ps(_mm256_loadu_ps(q[0] + i + 8), b1, a01);
      a10 = _mm256_fmadd_ps(_mm256_loadu_ps(q[1] + i), b0, a10);
      a11 = _mm256_fmadd_ps(_mm256_loadu_ps(q[1] + i + 8), b1, a11);
      a20 = _mm256_fmadd_ps(_mm256_loadu_ps(q[2] + i), b0, a20);
      a21 = _mm256_fmadd_ps(_mm256_loadu_ps(q[2] + i + 8), b1, a21);
      a30 = _mm256_fmadd_ps(_mm256_loadu_ps(q[3] + i), b0, a30);
      a31 = _mm256_fmadd_ps(_mm256_loadu_ps(q[3] + i + 8), b1, a31);
    }
    for (std::size_t i = main_end; i < d; i += 8) {  // the one-query kernel's tail goes to acc0
      const __m256 b0 = _mm256_loadu_ps(b + i);
      a00 = _mm256_fmadd_ps(_mm256_loadu_ps(q[0] + i), b0, a00);
      a10 = _mm256_fmadd_ps(_mm256_loadu_ps(q[1] + i), b0, a10);
      a20 = _mm256_fmadd_ps(_mm256_loadu_ps(q[2] + i), b0, a20);
      a30 = _mm256_fmadd_ps(_mm256_loadu_ps(q[3] + i), b0, a30);
    }
    t0 = _mm256_add_ps(a00, a01);
    t1 = _mm256_add_ps(a10, a11);
    t2 = _mm256_add_ps(a20, a21);
    t3 = _mm256_add_ps(a30, a31);
  }
  __m256 a02 = _mm256_setzero_ps(), a03 = _mm256_setzero_ps();
  __m256 a12 = _mm256_setzero_ps(), a13 = _mm256_setzero_ps();
  __m256 a22 = _mm256_setzero_ps(), a23 = _mm256_setzero_ps();
  __m256 a32 = _mm256_setzero_ps(), a33 = _mm256_setzero_ps();
  for (std::size_t i = 0; i < main_end; i += 32) {
    const __m256 b2 = _mm256_loadu_ps(b + i + 16);
    const __m256 b3 = _mm256_loadu_ps(b + i + 24);
    a02 = _mm256_fmadd_ps(_mm256_loadu_ps(q[0] + i + 16), b2, a02);
    a03 = _mm256_fmadd_ps(_mm256_loadu_ps(q[0] + i + 24), b3, a03);
    a12 = _mm256_fmadd_ps(_mm256_loadu_ps(q[1] + i + 16), b2, a12);
    a13 = _mm256_fmadd_ps(_mm256_loadu_ps(q[1] + i + 24), b3, a13);
    a22 = _mm256_fmadd_ps(_mm256_loadu_ps(q[2] + i + 16), b2, a22);
    a23 = _mm256_fmadd_ps(_mm256_loadu_ps(q[2] + i + 24), b3, a23);
    a32 = _mm256_fmadd_ps(_mm256_loadu_ps(q[3] + i + 16), b2, a32);
    a33 = _mm256_fmadd_ps(_mm256_loadu_ps(q[3] + i + 24), b3, a33);
  }
  const __m256 acc[4] = {
      _mm256_add_ps(t0, _mm256_add_ps(a02, a03)), _mm256_add_ps(t1, _mm256_add_ps(a12, a13)),
      _mm256_add_ps(t2, _mm256_add_ps(a22, a23)), _mm256_add_ps(t3, _mm256_add_ps(a32, a33))};
  for (int j = 0; j < 4; ++j) {  // the one-query kernel's horizontal sum
    __m128 sum = _mm_add_ps(_mm256_castps256_ps128(acc[j]), _mm256_extractf128_ps(acc[j], 1));
    sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
    sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
    out[j] = _mm_cvtss_f32(sum);
  }
}

// Base vector by base vector, every query against it: a base vector is read
// from memory once for all m queries (which stay in L1 for small m).
__attribute__((target("avx2,fma"))) void inner_products_many_avx2(const float* const* queries,
                                                                  std::size_t m, const float* base,
                                                                  std::size_t n, std::size_t d,
                                                                  float* const* out) {
  const std::size_t grouped = m / 4 * 4;
  for (std::size_t i = 0; i < n; ++i) {
    const float* b = base + i * d;
    for (std::size_t j = 0; j < grouped; j += 4) {
      float four[4];
      inner_product4_avx2(queries + j, b, d, four);
      out[j][i] = four[0];
      out[j + 1][i] = four[1];
      out[j + 2][i] = four[2];
      out[j + 3][i] = four[3];
    }
    for (std::size_t j = grouped; j < m; ++j) out[j][i] = inner_product_avx2(queries[j], b, d);
  }
}
#endif

InnerProductKernel select_kernel() {
#if WINNOW_INDEX_HAVE_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return &inner_product_avx2;
  }
#endif
  return &inner_product_portable;
}

}  // namespace

float inner_product_portable(const float* a, const float* b, std::size_t d) {
  float s0 = 0.0f;
  float s1 = 0.0f;
  float s2 = 0.0f;
  float s3 = 0.0f;
  std::size_t i = 0;
  for (; i + 4 <= d; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < d; ++i) {
    s0 += a[i] * b[i];
  }
  return (s0 + s1) + (s2 + s3);
}

InnerProductKernel inner_product_kernel() {
  static const InnerProductKernel kernel = select_kernel();
  return kernel;
}

float inner_product(const float* a, const float* b, std::size_t d) {
  return inner_product_kernel()(a, b, d);
}

const char* inner_product_isa() {
  return inner_product_kernel() == &inner_product_portable ? "portable" : "avx2+fma";
}

void inner_products(const float* query, const float* base, std::size_t n, std::size_t d,
                    float* out) {
  const InnerProductKernel kernel = inner_product_kernel();
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = kernel(query, base + i * d, d);
  }
}

void inner_products_many(const float* const* queries, std::size_t m, const float* base,
                         std::size_t n, std::size_t d, float* const* out) {
#if WINNOW_INDEX_HAVE_X86
  // The four-query kernel has no scalar tail: other dimensions take the
  // one-query kernel, which is what it must equal anyway.
  if (inner_product_kernel() == &inner_product_avx2 && d % 8 == 0) {
    inner_products_many_avx2(queries, m, base, n, d, out);
    return;
  }
#endif
  for (std::size_t j = 0; j < m; ++j) inner_products(queries[j], base, n, d, out[j]);
}

std::size_t first_above(const float* scores, std::size_t from, std::size_t n, float threshold) {
  std::size_t i = from;
#if defined(__SSE2__)  // the x86-64 baseline: no dispatch needed
  const __m128 bar = _mm_set1_ps(threshold);
  for (; i + 8 <= n; i += 8) {
    const int low = _mm_movemask_ps(_mm_cmpgt_ps(_mm_loadu_ps(scores + i), bar));
    const int high = _mm_movemask_ps(_mm_cmpgt_ps(_mm_loadu_ps(scores + i + 4), bar));
    if ((low | high) != 0) return i + static_cast<std::size_t>(__builtin_ctz(low | (high << 4)));
  }
#endif
  for (; i < n; ++i) {
    if (scores[i] > threshold) return i;
  }
  return n;
}

}  // namespace winnow::index
