#include "winnow/index/simd_distance.h"

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

}  // namespace winnow::index
