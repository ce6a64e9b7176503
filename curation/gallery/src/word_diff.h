// Two texts side by side with the words that differ marked: a text
// near-duplicate pair in the gallery.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "winnow/curation/core/html_text.h"

namespace winnow::curation::gallery {

// Both texts as escaped HTML, the words outside their longest common
// subsequence of words in <mark>; first the left's, then the right's. Texts
// over kMaxDiffWords words each are compared on their first kMaxDiffWords.
std::pair<std::string, std::string> marked_word_diff(std::string_view left, std::string_view right);

inline constexpr std::size_t kMaxDiffWords = 600;

}  // namespace winnow::curation::gallery
