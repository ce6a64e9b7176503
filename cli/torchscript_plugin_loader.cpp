#include "torchscript_plugin_loader.h"

#include <filesystem>

#include "winnow/curation/embed/embedder_plugins.h"

namespace winnow::cli {

void use_embedder_plugins() {
  curation::embed::use_embedder_plugins([] {
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::path program = fs::read_symlink("/proc/self/exe", error);
    return error ? fs::path() : program.parent_path().parent_path() / "lib" / "winnow";
  });
}

}  // namespace winnow::cli
