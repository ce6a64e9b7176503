// The fused loss step's CUDA kernel against its host loop: the same outputs,
// bit for bit, and the same count of invalid observations. Exits 77 (ctest:
// skipped) where no CUDA device can be used.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "fused_loss_step.h"
#include "winnow/pruning/random.h"

namespace {

template <typename T>
T* upload(const std::vector<T>& host) {
  T* device = nullptr;
  if (cudaMalloc(&device, host.size() * sizeof(T)) != cudaSuccess) return nullptr;
  cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return device;
}

template <typename T>
std::vector<T> download(const T* device, std::size_t count) {
  std::vector<T> host(count);
  cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost);
  return host;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// One step of `count` observations over `n` samples; returns the failures.
int check(std::int64_t n, std::int64_t count, float momentum, bool allow_negative,
          std::uint64_t seed) {
  winnow::Rng rng(seed);
  std::vector<float> weights(n), scores(n), losses(count);
  std::vector<std::int64_t> ids(count);
  for (auto& w : weights) w = rng.uniform() < 0.5 ? 1.0f : 2.0f;
  for (auto& s : scores) s = static_cast<float>(rng.uniform() * 3.0);
  // Distinct ids (a plan never repeats one), a few out of range, a few bad losses.
  std::vector<std::int64_t> order(n);
  for (std::int64_t i = 0; i < n; ++i) order[i] = i;
  for (std::int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
  for (std::int64_t i = 0; i < count; ++i) {
    ids[i] = order[i];
    losses[i] = static_cast<float>(rng.uniform() * 4.0);
    const double u = rng.uniform();
    if (u < 0.01) {
      ids[i] = n + static_cast<std::int64_t>(rng.below(10));
    } else if (u < 0.02) {
      ids[i] = -1;
    } else if (u < 0.03) {
      losses[i] = std::numeric_limits<float>::quiet_NaN();
    } else if (u < 0.04) {
      losses[i] = -losses[i];
    }
  }

  std::vector<float> host_scores = scores, host_weighted(count), host_gathered(count);
  unsigned long long host_invalid = 0;
  winnow::detail::FusedLossStep host{losses.data(),
                                     ids.data(),
                                     count,
                                     weights.data(),
                                     host_scores.data(),
                                     n,
                                     momentum,
                                     allow_negative,
                                     host_weighted.data(),
                                     host_gathered.data(),
                                     &host_invalid};
  winnow::detail::run_fused_loss_step_on_host(host);

  float* d_losses = upload(losses);
  std::int64_t* d_ids = upload(ids);
  float* d_weights = upload(weights);
  float* d_scores = upload(scores);
  float* d_weighted = upload(std::vector<float>(count));
  float* d_gathered = upload(std::vector<float>(count));
  unsigned long long* d_invalid = upload(std::vector<unsigned long long>(1, 0));
  winnow::detail::FusedLossStep device{d_losses,   d_ids,      count,    d_weights,
                                       d_scores,   n,          momentum, allow_negative,
                                       d_weighted, d_gathered, d_invalid};
  winnow::detail::launch_fused_loss_step(device, nullptr);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("FAILED: the kernel did not run\n");
    return 1;
  }
  int failures = 0;
  auto expect = [&](bool ok, const char* what) {
    if (!ok) {
      std::printf("FAILED (n=%lld, count=%lld, momentum=%g): %s\n", static_cast<long long>(n),
                  static_cast<long long>(count), momentum, what);
      ++failures;
    }
  };
  expect(same_bits(download(d_scores, n), host_scores), "scores differ from the host loop's");
  expect(same_bits(download(d_weighted, count), host_weighted), "weighted losses differ");
  expect(same_bits(download(d_gathered, count), host_gathered), "gathered weights differ");
  expect(download(d_invalid, 1)[0] == host_invalid, "invalid counts differ");
  expect(host_invalid > 0, "the data should hold invalid observations");
  for (void* p :
       {static_cast<void*>(d_losses), static_cast<void*>(d_ids), static_cast<void*>(d_weights),
        static_cast<void*>(d_scores), static_cast<void*>(d_weighted),
        static_cast<void*>(d_gathered), static_cast<void*>(d_invalid)}) {
    cudaFree(p);
  }
  return failures;
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no usable CUDA device (%s)\n",
                status != cudaSuccess ? cudaGetErrorString(status) : "none found");
    return 77;
  }
  int failures = 0;
  failures += check(1000, 700, 0.0f, false, 1);
  failures += check(100000, 60000, 0.0f, false, 2);
  failures += check(100000, 60000, 0.9f, false, 3);
  failures += check(3000000, 2000000, 0.5f, true, 4);  // more than one grid's worth
  std::printf(failures == 0 ? "passed\n" : "%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
