// A small, fast, portable random generator private to winnow.
//
// Plans must be a function of (seed, epoch, scores) on every platform and
// standard library, so winnow never uses std:: distributions (their output is
// implementation-defined) nor any global generator.
#pragma once

#include <cstdint>

namespace winnow {

// 128-bit product for Lemire's bounded draw (a GCC/Clang extension).
__extension__ using uint128 = unsigned __int128;

// SplitMix64: used to expand one 64-bit seed into a well-mixed state.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman and Vigna): 256 bits of state, passes BigCrush.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    std::uint64_t sm = seed;
    for (auto& word : s_) word = splitmix64(sm);
  }

  // A generator for one (seed, epoch, stream) triple; streams keep the
  // different random decisions of one epoch independent of each other.
  static Rng for_epoch(std::uint64_t seed, std::uint64_t epoch, std::uint64_t stream = 0) {
    std::uint64_t mix = seed;
    std::uint64_t a = splitmix64(mix);
    mix = a ^ (epoch * 0xD1B54A32D192ED03ULL);
    std::uint64_t b = splitmix64(mix);
    mix = b ^ (stream * 0x8CB92BA72F3D8DD7ULL);
    return Rng(splitmix64(mix));
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform integer in [0, bound), bound > 0 (Lemire's multiply-shift with
  // rejection, so there is no modulo bias).
  std::uint64_t below(std::uint64_t bound) {
    uint128 m = static_cast<uint128>(next()) * bound;
    auto low = static_cast<std::uint64_t>(m);
    if (low < bound) {
      const std::uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        m = static_cast<uint128>(next()) * bound;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace winnow
