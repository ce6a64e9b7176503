// The TorchScript embedder as a plugin of the `winnow` program, loaded with
// dlopen only when a dataset's embedder is torchscript (cli/torchscript_plugin_loader.cpp):
// every other command then starts without loading LibTorch. The plugin holds
// the adapter alone; curation's symbols (the embedder registry, Embedder,
// winnow::Error) are the program's own, which it exports for this.
#include "winnow/torch/torchscript_embedder.h"

extern "C" __attribute__((visibility("default"))) void winnow_register_embedder_plugin() {
  winnow::register_torchscript_embedder();
}
