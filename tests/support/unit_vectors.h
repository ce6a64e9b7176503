// unit_vectors: n random unit vectors of d floats (Gaussian, then
// L2-normalised), row-major, the same for the same seed.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

namespace winnow::test {

inline std::vector<float> unit_vectors(std::size_t n, std::size_t d, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  std::vector<float> v(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    float norm = 0;
    for (std::size_t j = 0; j < d; ++j) norm += (v[i * d + j] = g(rng)) * v[i * d + j];
    for (std::size_t j = 0; j < d; ++j) v[i * d + j] /= std::sqrt(norm);
  }
  return v;
}

}  // namespace winnow::test
