// Embedder families that live in plugins, loaded on first use: torchscript
// (plugins/torch, libwinnow_torchscript.so), which needs LibTorch, whose
// loading would slow the start of every process. A plugin holds its adapter alone
// and takes curation's symbols (the embedder registry, Embedder,
// winnow::Error) from the process that loads it: the `winnow` program
// exports them, and winnow's Python module makes its own global first.
#pragma once

#include <filesystem>
#include <functional>

namespace winnow::curation::embed {

// Where the plugins are: called once, when a spec first names a plugin
// family, even if $WINNOW_PLUGIN_DIR names the folder, since it may also
// ready the process for them (the Python module's does).
using EmbedderPluginDir = std::function<std::filesystem::path()>;

// Makes make_embedder load a family's plugin when a spec names it: from
// $WINNOW_PLUGIN_DIR if set, else from `dir()`. A family whose plugin file is
// not there stays unknown (make_embedder then says so); one that is there
// but cannot be loaded throws, naming the file and the loader's reason.
void use_embedder_plugins(EmbedderPluginDir dir);

}  // namespace winnow::curation::embed
