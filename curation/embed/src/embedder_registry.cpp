#include "embedder_registry.h"

#include <map>
#include <mutex>
#include <utility>

namespace winnow::curation::embed {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, EmbedderMaker> makers;
  EmbedderFamilyFinder finder;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_embedder(const std::string& name, EmbedderMaker make) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.makers[name] = std::move(make);
}

void set_embedder_family_finder(EmbedderFamilyFinder find) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.finder = std::move(find);
}

std::unique_ptr<Embedder> make_registered_embedder(const std::string& spec,
                                                   const EmbedderOptions& options) {
  const std::string name = spec.substr(0, spec.find_first_of("(:"));
  Registry& r = registry();
  auto find_maker = [&]() -> EmbedderMaker {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.makers.find(name);
    return it == r.makers.end() ? EmbedderMaker{} : it->second;
  };
  EmbedderMaker make = find_maker();
  if (!make) {
    EmbedderFamilyFinder finder;
    {
      std::lock_guard<std::mutex> lock(r.mutex);
      finder = r.finder;
    }
    // Outside the lock: the finder registers the family itself.
    if (!finder || !finder(name)) return nullptr;
    make = find_maker();
    if (!make) return nullptr;
  }
  return make(spec, options);
}

}  // namespace winnow::curation::embed
