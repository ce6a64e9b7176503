// The registered (external) embedder families behind register_embedder.
#pragma once

#include <memory>
#include <string>

#include "winnow/curation/embed/embedder.h"

namespace winnow::curation::embed {

// The embedder of a registered family for `spec`, or nullptr when the spec's
// name is not registered.
std::unique_ptr<Embedder> make_registered_embedder(const std::string& spec,
                                                   const EmbedderOptions& options);

}  // namespace winnow::curation::embed
