// The `winnow` program's embedder plugins (curation/embed/embedder_plugins.h):
// lib/winnow/ beside the program's bin/ (the build tree and an installed
// tree both have that layout), or $WINNOW_PLUGIN_DIR.
#pragma once

namespace winnow::cli {

void use_embedder_plugins();

}  // namespace winnow::cli
