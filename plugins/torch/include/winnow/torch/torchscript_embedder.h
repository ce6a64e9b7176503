// TorchScriptEmbedder: curation's Embedder backed by any TorchScript module,
// so a model trained on the accepted data can become the embedder of the
// dataset it was trained on (co-evolution: `winnow init --embedder
// torchscript:model.pt`, then `winnow rejudge`).
//
// The module takes a float batch of grey images [B, 1, H, W] with values in
// [0, 1] and returns vectors [B, D]; the embedder L2-normalises them. D is
// found by running the module once on a zero image when it is loaded.
//
// Specs: torchscript:PATH (H x W from EmbedderOptions, else 28 x 28) or
// torchscript(path=PATH,width=W,height=H).
#pragma once

#include <memory>
#include <string>

#include "winnow/curation/embed/embedder.h"

namespace winnow {

// Throws winnow::Error naming the file when it cannot be loaded or does not
// map [1, 1, H, W] to [1, D].
std::unique_ptr<curation::embed::Embedder> make_torchscript_embedder(
    const std::string& spec, const curation::embed::EmbedderOptions& options = {});

// Makes `torchscript` specs known to curation::make_embedder (call once,
// before any dataset is opened; `winnow` does it at start when built with
// LibTorch).
void register_torchscript_embedder();

}  // namespace winnow
