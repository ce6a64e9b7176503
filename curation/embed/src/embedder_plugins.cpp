#include "winnow/curation/embed/embedder_plugins.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "winnow/curation/embed/embedder.h"
#include "winnow/error.h"

namespace winnow::curation::embed {
namespace {

namespace fs = std::filesystem;

// Loads `path` and runs its registration; false when there is no such file
// (this winnow was built without the plugin).
bool load_plugin(const std::string& family, const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return false;
  // RTLD_LOCAL: LibTorch's symbols stay the plugin's; it finds curation's in
  // the process.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    WINNOW_THROW("the {} embedder plugin '{}' cannot be loaded: {}", family, path.string(),
                 why != nullptr ? why : "unknown error");
  }
  using Register = void (*)();
  auto* register_family =
      reinterpret_cast<Register>(::dlsym(handle, "winnow_register_embedder_plugin"));
  WINNOW_THROW_IF_NOT(register_family != nullptr,
                      "the {} embedder plugin '{}' has no winnow_register_embedder_plugin", family,
                      path.string());
  register_family();  // the handle stays open: the registered maker lives in it
  return true;
}

}  // namespace

void use_embedder_plugins(EmbedderPluginDir dir) {
  // The directory is asked once, on first use, and kept.
  struct Found {
    std::once_flag once;
    fs::path dir;
  };
  auto found = std::make_shared<Found>();
  set_embedder_family_finder([dir = std::move(dir), found](const std::string& name) {
    if (name != "torchscript") return false;
    std::call_once(found->once, [&] {
      found->dir = dir();  // called even when the environment names the folder: it may ready us
      const char* env = std::getenv("WINNOW_PLUGIN_DIR");
      if (env != nullptr && *env != '\0') found->dir = env;
    });
    return load_plugin(name, found->dir / "libwinnow_torchscript.so");
  });
}

}  // namespace winnow::curation::embed
