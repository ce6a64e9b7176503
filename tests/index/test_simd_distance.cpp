#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "winnow/index/simd_distance.h"

using namespace winnow::index;

TEST_CASE("inner_product matches a double-precision reference for all lengths", "[simd]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::size_t d = 0; d <= 131; ++d) {
    // Offset by one float so that the loads are unaligned.
    std::vector<float> a(d + 1);
    std::vector<float> b(d + 1);
    for (std::size_t i = 0; i <= d; ++i) {
      a[i] = u(rng);
      b[i] = u(rng);
    }
    double ref = 0.0;
    for (std::size_t i = 1; i <= d; ++i) {
      ref += static_cast<double>(a[i]) * b[i];
    }
    INFO("d = " << d);
    CHECK(inner_product(a.data() + 1, b.data() + 1, d) == Approx(ref).margin(1e-4));
    CHECK(inner_product_portable(a.data() + 1, b.data() + 1, d) == Approx(ref).margin(1e-4));
  }
}

TEST_CASE("the dispatched kernel is the one reported", "[simd]") {
  const std::string isa = inner_product_isa();
  CHECK((isa == "avx2+fma" || isa == "portable"));
  CHECK((isa == "portable") == (inner_product_kernel() == &inner_product_portable));
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    CHECK(isa == "avx2+fma");
  }
#endif
}

TEST_CASE("inner_products scores every row", "[simd]") {
  const std::size_t d = 37;
  const std::size_t n = 5;
  std::vector<float> base(n * d);
  std::vector<float> q(d);
  for (std::size_t i = 0; i < base.size(); ++i) {
    base[i] = static_cast<float>(i % 7) - 3.0f;
  }
  for (std::size_t j = 0; j < d; ++j) {
    q[j] = static_cast<float>(j % 3);
  }
  std::vector<float> out(n);
  inner_products(q.data(), base.data(), n, d, out.data());
  for (std::size_t i = 0; i < n; ++i) {
    double ref = 0.0;
    for (std::size_t j = 0; j < d; ++j) {
      ref += static_cast<double>(q[j]) * base[i * d + j];
    }
    CHECK(out[i] == Approx(ref));
  }
}
