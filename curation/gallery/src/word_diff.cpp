#include "word_diff.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

namespace winnow::curation::gallery {

namespace {

// The text cut into words, each with the white space after it.
std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t at = 0;
  while (at < text.size() && words.size() < kMaxDiffWords) {
    std::size_t end = at;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    words.push_back(text.substr(at, end - at));
    at = end;
  }
  return words;
}

std::string_view trimmed(std::string_view word) {
  while (!word.empty() && std::isspace(static_cast<unsigned char>(word.back()))) {
    word.remove_suffix(1);
  }
  return word;
}

std::string marked(const std::vector<std::string_view>& words, const std::vector<bool>& common) {
  std::string html;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (common[i]) {
      html += html_escape(words[i]);
    } else {
      const std::string_view word = trimmed(words[i]);
      html += "<mark>" + html_escape(word) + "</mark>" + html_escape(words[i].substr(word.size()));
    }
  }
  return html;
}

}  // namespace

std::pair<std::string, std::string> marked_word_diff(std::string_view left,
                                                     std::string_view right) {
  const std::vector<std::string_view> a = words_of(left), b = words_of(right);
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::uint16_t> lcs((n + 1) * (m + 1), 0);
  const auto at = [&](std::size_t i, std::size_t j) -> std::uint16_t& {
    return lcs[i * (m + 1) + j];
  };
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      at(i, j) = trimmed(a[i]) == trimmed(b[j]) ? static_cast<std::uint16_t>(at(i + 1, j + 1) + 1)
                                                : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  std::vector<bool> in_a(n, false), in_b(m, false);
  for (std::size_t i = 0, j = 0; i < n && j < m;) {
    if (trimmed(a[i]) == trimmed(b[j])) {
      in_a[i++] = in_b[j++] = true;
    } else if (at(i + 1, j) >= at(i, j + 1)) {
      ++i;
    } else {
      ++j;
    }
  }
  std::string left_html = marked(a, in_a), right_html = marked(b, in_b);
  // The words past kMaxDiffWords, unmarked.
  std::size_t a_len = 0, b_len = 0;
  for (std::string_view w : a) a_len += w.size();
  for (std::string_view w : b) b_len += w.size();
  left_html += html_escape(left.substr(a_len));
  right_html += html_escape(right.substr(b_len));
  return {left_html, right_html};
}

}  // namespace winnow::curation::gallery
