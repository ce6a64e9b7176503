#include "embedder_plugins.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "winnow/curation/embed/embedder.h"
#include "winnow/error.h"

namespace winnow::cli {
namespace {

namespace fs = std::filesystem;

fs::path plugin_dir() {
  if (const char* dir = std::getenv("WINNOW_PLUGIN_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  std::error_code error;
  const fs::path program = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : program.parent_path().parent_path() / "lib" / "winnow";
}

// Loads lib<file>.so and runs its registration; false when there is no such
// plugin (this winnow was built without it).
bool load_plugin(const std::string& family, const std::string& file) {
  const fs::path path = plugin_dir() / file;
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return false;
  // RTLD_LOCAL: LibTorch's symbols stay the plugin's; it finds curation's in
  // the program, which exports them.
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

void use_embedder_plugins() {
  curation::embed::set_embedder_family_finder([](const std::string& name) {
    if (name == "torchscript") return load_plugin(name, "libwinnow_torchscript.so");
    return false;
  });
}

}  // namespace winnow::cli
