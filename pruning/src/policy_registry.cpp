#include "winnow/pruning/policy_registry.h"

#include <fmt/ranges.h>

#include "policies/builtin_policies.h"
#include "winnow/error.h"

namespace winnow {

void Policy::set_state(const std::vector<float>& state) {
  WINNOW_THROW_IF_NOT(state.empty(), "policy '{}' keeps no state, but {} values were given",
                      spec().to_string(), state.size());
}

PolicyRegistry& PolicyRegistry::instance() {
  static PolicyRegistry registry;
  return registry;
}

// Built-ins are registered here rather than by static initialisers, which a
// static library's linker would silently drop.
PolicyRegistry::PolicyRegistry() {
  register_builtin_policies(*this);
}

void PolicyRegistry::add(const std::string& name, const std::string& summary,
                         PolicyFactory factory) {
  std::lock_guard<std::mutex> lock(mutex_);
  WINNOW_THROW_IF_NOT(factory != nullptr, "policy '{}': null factory", name);
  WINNOW_THROW_IF_NOT(entries_.emplace(name, Entry{summary, std::move(factory)}).second,
                      "a policy named '{}' is already registered", name);
}

std::unique_ptr<Policy> PolicyRegistry::make(const PolicySpec& spec,
                                             std::uint64_t num_samples) const {
  PolicyFactory factory;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries_.find(spec.name);
    if (it == entries_.end()) {
      std::vector<std::string> known;
      for (const auto& [name, entry] : entries_) known.push_back(name);
      WINNOW_THROW("unknown policy '{}'; known policies: {}", spec.name, fmt::join(known, ", "));
    }
    factory = it->second.factory;
  }
  return factory(spec, num_samples);
}

std::vector<std::string> PolicyRegistry::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [name, entry] : entries_) out.push_back(name);
  return out;
}

std::string PolicyRegistry::summary(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = entries_.find(name);
  WINNOW_THROW_IF_NOT(it != entries_.end(), "unknown policy '{}'", name);
  return it->second.summary;
}

std::unique_ptr<Policy> make_policy(const std::string& spec, std::uint64_t num_samples) {
  return PolicyRegistry::instance().make(PolicySpec::parse(spec), num_samples);
}

}  // namespace winnow
