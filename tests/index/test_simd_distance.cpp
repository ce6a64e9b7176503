#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/simd_distance.h"

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

TEST_CASE("inner_products_many equals inner_product bit for bit, whatever the queries beside",
          "[simd]") {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const std::size_t d : {8u, 24u, 32u, 40u, 64u, 128u, 136u, 784u, 37u}) {
    const std::size_t n = 11;
    std::vector<float> base(n * d);
    for (float& x : base) x = normal(rng);
    for (std::size_t m = 1; m <= 9; ++m) {
      std::vector<std::vector<float>> queries(m, std::vector<float>(d));
      std::vector<const float*> query_ptrs;
      for (auto& query : queries) {
        for (float& x : query) x = normal(rng);
        query_ptrs.push_back(query.data());
      }
      std::vector<std::vector<float>> out(m, std::vector<float>(n, -1.0f));
      std::vector<float*> out_ptrs;
      for (auto& row : out) out_ptrs.push_back(row.data());
      inner_products_many(query_ptrs.data(), m, base.data(), n, d, out_ptrs.data());
      for (std::size_t j = 0; j < m; ++j) {
        for (std::size_t i = 0; i < n; ++i) {
          INFO("d " << d << ", " << m << " queries, query " << j << ", row " << i);
          // Bitwise, not approximately: search results must not depend on batching.
          const float one = inner_product(queries[j].data(), base.data() + i * d, d);
          CHECK(std::memcmp(&out[j][i], &one, sizeof one) == 0);
        }
      }
    }
  }
}

TEST_CASE("first_above finds the first score over the threshold from any start", "[simd]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (std::size_t n = 0; n <= 40; ++n) {
    std::vector<float> scores(n);
    for (float& x : scores) x = u(rng);
    if (n > 3) scores[n / 2] = std::numeric_limits<float>::quiet_NaN();  // never passes
    for (const float threshold : {0.5f, 0.9f, 2.0f}) {
      for (std::size_t from = 0; from <= n; ++from) {
        std::size_t expected = from;
        while (expected < n && !(scores[expected] > threshold)) ++expected;
        INFO("n " << n << ", from " << from << ", threshold " << threshold);
        CHECK(first_above(scores.data(), from, n, threshold) == expected);
      }
    }
  }
}
