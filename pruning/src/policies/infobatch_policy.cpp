#include "infobatch_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../plan_builder.h"
#include "winnow/error.h"

namespace winnow {

#if defined(__SSE2__)
namespace {
// For a 4-bit mask: its bits spread into four bytes (little-endian, as
// x86 is), and its number of set bits.
constexpr std::uint32_t kCodeBytes[16] = {
    0x00000000, 0x00000001, 0x00000100, 0x00000101, 0x00010000, 0x00010001, 0x00010100, 0x00010101,
    0x01000000, 0x01000001, 0x01000100, 0x01000101, 0x01010000, 0x01010001, 0x01010100, 0x01010101};
constexpr std::uint8_t kBitCount[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};

// The kept entries of four samples i..i+3, packed to the front, for 32-bit
// entries with the weight code in bit 31: indexed by (kept mask) | (kept
// candidate mask << 4), each slot holds its lane (added to i) and its code.
// One 16-byte store then replaces four dependent scalar stores.
struct PackedLanes {
  alignas(16) std::uint32_t lanes[256][4];
};
constexpr PackedLanes make_packed_lanes() {
  PackedLanes table{};
  for (unsigned index = 0; index < 256; ++index) {
    const unsigned kept = index & 15u;
    const unsigned weighted = index >> 4;
    unsigned slot = 0;
    for (unsigned lane = 0; lane < 4; ++lane) {
      if ((kept >> lane) & 1u) {
        table.lanes[index][slot++] = lane | (((weighted >> lane) & 1u) << 31);
      }
    }
  }
  return table;
}
constexpr PackedLanes kPackedLanes = make_packed_lanes();
}  // namespace
#endif

double read_prune_ratio(ParamReader& reader, const PolicySpec& spec, double fallback) {
  const double r = reader.number("r", fallback);
  WINNOW_THROW_IF_NOT(r >= 0.0 && r < 1.0,
                      "policy '{}': prune ratio r must be in [0, 1), got {} (r is the share "
                      "of below-mean samples skipped; r -> 1 makes the weight 1/(1-r) explode)",
                      spec.to_string(), r);
  return r;
}

double read_saving_budget(ParamReader& reader, const PolicySpec& spec, double fallback) {
  const double save = reader.number("save", fallback);
  WINNOW_THROW_IF_NOT(save >= 0.0 && save <= kMaxSavingBudget,
                      "policy '{}': saving budget save must be in [0, {}], got {} (the share of "
                      "the whole run's forward samples to skip)",
                      spec.to_string(), kMaxSavingBudget, save);
  return save;
}

float candidate_threshold(const ScoreTable& scores) {
  return static_cast<float>(scores.mean());
}

std::uint64_t count_below(const ScoreTable& scores, float threshold) {
  const float* s = scores.data();
  std::uint64_t count = 0;
  for (std::uint64_t i = 0; i < scores.size(); ++i) count += s[i] < threshold ? 1 : 0;
  return count;
}

std::uint64_t count_candidates(const ScoreTable& scores) {
  return count_below(scores, candidate_threshold(scores));
}

InfoBatchPolicy::InfoBatchPolicy(const PolicySpec& spec, std::uint64_t /*num_samples*/) {
  const bool ratio_given = spec.params.count("r") > 0;
  WINNOW_THROW_IF_NOT(!ratio_given || spec.params.count("save") == 0,
                      "policy '{}': give either r (a fixed prune ratio) or save (a saving "
                      "budget), not both",
                      spec.to_string());
  ParamReader reader(spec);
  r_ = read_prune_ratio(reader, spec, 0.5);
  budget_ = !ratio_given;
  if (budget_) save_ = read_saving_budget(reader, spec, kDefaultSaving);
  reader.finish();
}

PolicySpec InfoBatchPolicy::spec() const {
  if (budget_) return PolicySpec{"infobatch", {{"save", format_number(save_)}}};
  return PolicySpec{"infobatch", {{"r", format_number(r_)}}};
}

namespace {

// Each candidate is kept with probability about 1 - r (the paper's Eq. 3): a
// 32-bit draw below the returned bound (2^32 when r = 0 keeps every
// candidate; one generator step gives two draws). Its weight is the inverse
// of that exact probability, 2^32 / bound, so rounding 1 - r to 32 bits
// leaves the weighted sum unbiased.
std::uint64_t keep_draws_below(double r) {
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ldexp(1.0 - r, 32)));
}

// The candidate threshold and prune ratio that skip `share` of all samples
// in expectation: below the mean with r = share * N / |candidates| while that
// r stays within `max_ratio`; otherwise the threshold rises to the score that
// makes share * N / max_ratio samples candidates. With no sample below the
// mean it prunes nothing, as a fixed ratio would.
struct Aim {
  float threshold;
  double r;
};
Aim aim_at_share(const ScoreTable& scores, double share, double max_ratio) {
  const std::uint64_t n = scores.size();
  const double wanted = share * static_cast<double>(n);
  const float mean = candidate_threshold(scores);
  const auto below_mean = static_cast<double>(count_below(scores, mean));
  // All scores equal (no losses seen): nothing is known to be well learned.
  if (wanted <= 0.0 || below_mean == 0.0) return {mean, 0.0};
  if (wanted <= max_ratio * below_mean) return {mean, wanted / below_mean};
  const auto rank =
      std::min<std::uint64_t>(n - 1, static_cast<std::uint64_t>(std::ceil(wanted / max_ratio)) - 1);
  std::vector<float> sorted(scores.data(), scores.data() + n);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank),
                   sorted.end());
  // Strictly below the next float up: the sample at `rank` (and its ties) join.
  const float threshold = std::nextafter(sorted[rank], std::numeric_limits<float>::infinity());
  const auto candidates = static_cast<double>(count_below(scores, threshold));
  return {threshold, std::min(max_ratio, wanted / candidates)};
}

}  // namespace

void InfoBatchPolicy::plan(const ScoreTable& scores, Rng& rng, EpochPlan& plan) {
  const Aim aim =
      budget_ ? aim_at_share(scores, share_, kMaxRatio) : Aim{candidate_threshold(scores), r_};
  plan_below(scores, aim.threshold, aim.r, rng, plan);
}

void InfoBatchPolicy::plan_below(const ScoreTable& scores, float candidate_below, double r,
                                 Rng& rng, EpochPlan& plan) {
  const std::uint64_t n = scores.size();
  const float* s = scores.data();
  const std::uint64_t keep_below = keep_draws_below(r);
  const double keep = std::ldexp(static_cast<double>(keep_below), -32);

  std::uint64_t candidates = 0;
  // The loop is branch-free: whether a sample is a candidate is a coin flip
  // to the CPU. Weight code 1 marks kept candidates.
  const std::uint64_t kept = detail::stage_plan(plan, 1, [&](auto staging) {
    // Locals, not captures: a byte store through `codes` may alias anything
    // reached by reference (the generator's state included), which the
    // compiler would then reload for every sample.
    std::uint8_t* codes = staging.codes;
    auto* packed = staging.packed;
    const float* scores_of = s;
    const float threshold = candidate_below;
    const std::uint64_t below = keep_below;
    Rng local = rng;
    std::uint64_t count = 0;
    std::uint64_t kept_count = 0;
    auto visit = [&](std::uint64_t i, std::uint32_t draw) {
      const unsigned candidate = scores_of[i] < threshold ? 1u : 0u;
      const unsigned kept_candidate = candidate & (draw < below ? 1u : 0u);
      codes[i] = static_cast<std::uint8_t>(kept_candidate);
      packed[kept_count] = staging.pack(i, static_cast<std::uint8_t>(kept_candidate));
      kept_count += (candidate ^ 1u) | kept_candidate;
      count += candidate;
    };
    std::uint64_t i = 0;
#if defined(__SSE2__)
    // Four samples at a time: the comparisons in SSE2 (part of every x86-64),
    // with the same draws in the same order as the scalar loop below, so
    // every machine makes the same plan; it makes a large plan faster than the
    // scalar loop alone (docs/benchmarks.md, "The sampler").
    const __m128 threshold4 = _mm_set1_ps(threshold);
    const bool keep_every_candidate = below > UINT32_MAX;
    // Unsigned draw < below, as a signed comparison of both with the top bit flipped.
    const __m128i flip = _mm_set1_epi32(INT32_MIN);
    const __m128i below4 =
        _mm_set1_epi32(static_cast<std::int32_t>(static_cast<std::uint32_t>(below) ^ 0x80000000u));
    // 32-bit entries with the code in bit 31 (every plan of up to 2^31
    // samples) take the lane table; i + lane then never carries into bit 31.
    constexpr bool narrow = sizeof(*packed) == sizeof(std::uint32_t);
    const bool lane_table = narrow && staging.shift == 31;
    for (; i + 4 <= n; i += 4) {
      const std::uint64_t first = local.next();
      const std::uint64_t second = local.next();
      const __m128i draws =
          _mm_set_epi64x(static_cast<long long>(second), static_cast<long long>(first));
      const auto candidate = static_cast<unsigned>(
          _mm_movemask_ps(_mm_cmplt_ps(_mm_loadu_ps(scores_of + i), threshold4)));
      const unsigned lucky = keep_every_candidate
                                 ? 15u
                                 : static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(
                                       _mm_cmplt_epi32(_mm_xor_si128(draws, flip), below4))));
      const unsigned kept_candidate = candidate & lucky;
      const unsigned advance = (~candidate | kept_candidate) & 15u;
      const std::uint32_t code_bytes = kCodeBytes[kept_candidate];
      std::memcpy(codes + i, &code_bytes, sizeof code_bytes);
      if (lane_table) {
        if constexpr (narrow) {
          // Slots past the kept ones are written too; the next samples'
          // entries overwrite them (kept_count + 4 <= i + 4 <= n: in room).
          const __m128i lanes = _mm_load_si128(reinterpret_cast<const __m128i*>(
              kPackedLanes.lanes[advance | (kept_candidate << 4)]));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(packed + kept_count),
                           _mm_add_epi32(_mm_set1_epi32(static_cast<std::int32_t>(i)), lanes));
        }
        kept_count += kBitCount[advance];
      } else {
        for (unsigned j = 0; j < 4; ++j) {
          packed[kept_count] =
              staging.pack(i + j, static_cast<std::uint8_t>((kept_candidate >> j) & 1u));
          kept_count += (advance >> j) & 1u;
        }
      }
      count += kBitCount[candidate];
    }
#endif
    for (; i + 2 <= n; i += 2) {  // one generator step gives two 32-bit draws
      const std::uint64_t bits = local.next();
      visit(i, static_cast<std::uint32_t>(bits));
      visit(i + 1, static_cast<std::uint32_t>(bits >> 32));
    }
    if (i < n) visit(i, static_cast<std::uint32_t>(local.next()));
    candidates = count;
    rng = local;
    return kept_count;
  });
  // Without candidates every weight is 1, which needs no per-sample codes.
  plan.palette = {1.0f};
  if (candidates > 0) plan.palette.push_back(static_cast<float>(1.0 / keep));
  detail::finish_plan(plan, rng, kept);
  plan.candidates = candidates;
}

}  // namespace winnow
