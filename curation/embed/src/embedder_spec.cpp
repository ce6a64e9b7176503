#include "winnow/curation/embed/embedder_spec.h"

namespace winnow::curation::embed {
namespace {

constexpr const char* kWhat = "embedder spec";
// Nine digits, the bound embedder specs always had: a size that large is a typo.
constexpr std::uint64_t kMaxSize = 999'999'999;

}  // namespace

EmbedderSpec::EmbedderSpec(const std::string& spec)
    : spec_(spec), reader_(Spec::parse(spec, kWhat), kWhat, spec) {}

std::size_t EmbedderSpec::take_size(const std::string& key, std::size_t fallback) {
  return static_cast<std::size_t>(reader_.integer(key, fallback, kMaxSize));
}

std::string EmbedderSpec::take_string(const std::string& key, const std::string& fallback) {
  return reader_.string(key, fallback);
}

void EmbedderSpec::check_no_extra() const {
  reader_.finish();
}

}  // namespace winnow::curation::embed
