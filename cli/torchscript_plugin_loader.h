// Where the `winnow` program loads its embedder plugins from
// (curation/embed/embedder_plugins.h): when a spec names torchscript,
// lib/winnow/libwinnow_torchscript.so is loaded with dlopen from lib/winnow/
// beside the program's bin/ (the build tree and an installed tree both have
// that layout), or from $WINNOW_PLUGIN_DIR; no other command loads LibTorch.
#pragma once

namespace winnow::cli {

void use_embedder_plugins();

}  // namespace winnow::cli
