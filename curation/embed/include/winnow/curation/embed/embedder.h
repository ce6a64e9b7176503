// Embedders: turn a record into a fixed-length float vector for the index.
//
// Specs (make_embedder) follow winnow's one spec grammar (docs/specs.md): keys in
// any order, whitespace around tokens ignored:
//   provided                 the manifest's `embedding` (L2-normalised copy);
//                            dim from EmbedderOptions::input_dim or provided(dim=D)
//   pixels(...)              grey-level images (pixels records, or image
//                            files decoded and resized to width x height by
//                            the reader): optional average pooling of
//                            pool x pool blocks, centring (subtract the image's
//                            mean), optional seeded Gaussian random projection
//                            to `dim` dimensions, L2 normalisation. Keys:
//                            width, height (default from EmbedderOptions),
//                            pool (default 1), fourier=F (default 0: off;
//                            else the magnitudes of the 2-D DFT at row
//                            frequencies [0,F) x column frequencies (-F,F)
//                            without DC, which a translation leaves almost
//                            unchanged), dim (default: no projection),
//                            seed (default 1)
//   hashed-ngrams(n=3,dim=256,seed=0)
//                            text: every n-codepoint n-gram of the UTF-8 text
//                            is hashed (XXH3-64 with `seed`) to a bucket
//                            (hash mod dim) and a sign (top bit); the counts
//                            are L2-normalised. Texts shorter than n count as
//                            one n-gram.
//   torchscript:PATH         any TorchScript module mapping a float batch of
//                            grey images [B, 1, H, W] (values 0-1) to
//                            vectors [B, D]; only when the LibTorch adapter
//                            (plugins/torch, winnow_torchscript_embedder) is
//                            linked and registered (see register_embedder)
// embed() throws winnow::Error naming the record's key when the record cannot
// be embedded (wrong content kind, wrong size, constant image, empty text...);
// the pipeline turns that into a rejection.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "winnow/curation/core/manifest_record.h"
#include "winnow/error.h"

namespace winnow::curation::embed {

// What embed() throws for a record whose kind of content the embedder does
// not take (text for an image embedder, say): the dataset's configuration,
// not the record, is what refuses it, so the ingest leaves its key free for
// a later import (`--redo` once `init` fixed the embedder).
class ContentKindError : public Error {
 public:
  explicit ContentKindError(const std::string& message)
      : Error(message, __func__, __FILE__, __LINE__, ErrorKind::invalid_input) {}
};

class Embedder {
 public:
  virtual ~Embedder() = default;
  // Canonical spec, e.g. "pixels(width=28,height=28,pool=2,dim=64,seed=1)".
  virtual std::string spec() const = 0;
  virtual std::size_t dim() const = 0;
  // The grey working image an image embedder takes (image files are decoded
  // and resized to it, image_resize.h); 0 x 0 for embedders of other content.
  struct ImageSize {
    std::size_t width = 0;
    std::size_t height = 0;
  };
  virtual ImageSize image_size() const { return {}; }
  // Writes dim() floats (unit L2 norm) to `out`.
  virtual void embed(const ManifestRecord& record, float* out) const = 0;
  // Whether embed() may run on several threads at once (the ingest's pool);
  // an embedder that cannot is called on one thread.
  virtual bool thread_safe() const { return true; }

  std::vector<float> embed(const ManifestRecord& record) const;
};

struct EmbedderOptions {
  std::size_t input_dim = 0;  // provided: expected embedding length
  std::size_t width = 0;      // pixels: image width when the spec does not say
  std::size_t height = 0;     // pixels: image height when the spec does not say
};

// Throws winnow::Error naming the bad part of the spec.
std::unique_ptr<Embedder> make_embedder(const std::string& spec,
                                        const EmbedderOptions& options = {});

// A family of embedders that lives outside curation (e.g. the TorchScript one,
// which needs LibTorch): make_embedder hands it every spec whose name (the
// text before '(' or ':') is `name`. Registering a name twice replaces it.
using EmbedderMaker =
    std::function<std::unique_ptr<Embedder>(const std::string& spec, const EmbedderOptions&)>;
void register_embedder(const std::string& name, EmbedderMaker make);

// Asked by make_embedder for a family that is not registered, before it gives
// up: a finder may register the family then (the `winnow` program loads its
// LibTorch plugin this way, only for datasets that use it) and returns whether
// it did. It throws winnow::Error when the family's plugin exists but cannot
// be loaded. One finder per process; setting another replaces it.
using EmbedderFamilyFinder = std::function<bool(const std::string& name)>;
void set_embedder_family_finder(EmbedderFamilyFinder find);

}  // namespace winnow::curation::embed
