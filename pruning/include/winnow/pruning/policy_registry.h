// PolicyRegistry: makes policies by name. Built-in policies are registered on
// first use; plugins add their own with PolicyRegistry::instance().add(...)
// or WINNOW_REGISTER_POLICY, without touching pruning/.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "winnow/pruning/policy.h"
#include "winnow/pruning/policy_spec.h"

namespace winnow {

using PolicyFactory =
    std::function<std::unique_ptr<Policy>(const PolicySpec& spec, std::uint64_t num_samples)>;

class PolicyRegistry {
 public:
  static PolicyRegistry& instance();

  // Throws if `name` is already taken.
  void add(const std::string& name, const std::string& summary, PolicyFactory factory);
  // Throws, listing the known names, when the spec names no policy.
  std::unique_ptr<Policy> make(const PolicySpec& spec, std::uint64_t num_samples) const;
  std::vector<std::string> names() const;
  std::string summary(const std::string& name) const;

 private:
  PolicyRegistry();
  struct Entry {
    std::string summary;
    PolicyFactory factory;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

// make_policy("infobatch(r=0.3)", N)
std::unique_ptr<Policy> make_policy(const std::string& spec, std::uint64_t num_samples);

}  // namespace winnow

#define WINNOW_REGISTER_POLICY_CONCAT_(a, b) a##b
#define WINNOW_REGISTER_POLICY_NAME_(line) \
  WINNOW_REGISTER_POLICY_CONCAT_(winnow_policy_registration_, line)
// Registers a policy class constructible as Class(const PolicySpec&, uint64_t).
#define WINNOW_REGISTER_POLICY(Class, name, summary)                           \
  static const bool WINNOW_REGISTER_POLICY_NAME_(__LINE__) = [] {              \
    ::winnow::PolicyRegistry::instance().add(                                  \
        name, summary, [](const ::winnow::PolicySpec& spec, std::uint64_t n) { \
          return std::unique_ptr<::winnow::Policy>(new Class(spec, n));        \
        });                                                                    \
    return true;                                                               \
  }()
