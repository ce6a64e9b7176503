// Embedder families that live in plugins beside the `winnow` program, loaded
// on first use: torchscript (plugins/torch, libwinnow_torchscript.so), which
// needs LibTorch, whose loading costs every process about 0.4 s.
#pragma once

namespace winnow::cli {

// Makes make_embedder load a family's plugin when a spec names it: from
// $WINNOW_PLUGIN_DIR if set, else from ../lib/winnow/ beside the program
// (the build tree and an installed tree both have that layout).
void use_embedder_plugins();

}  // namespace winnow::cli
