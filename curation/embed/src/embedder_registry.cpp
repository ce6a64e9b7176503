#include "embedder_registry.h"

#include <map>
#include <mutex>
#include <utility>

namespace winnow::curation::embed {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, EmbedderMaker> makers;
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

std::unique_ptr<Embedder> make_registered_embedder(const std::string& spec,
                                                   const EmbedderOptions& options) {
  const std::string name = spec.substr(0, spec.find_first_of("(:"));
  EmbedderMaker make;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.makers.find(name);
    if (it == r.makers.end()) return nullptr;
    make = it->second;
  }
  return make(spec, options);
}

}  // namespace winnow::curation::embed
