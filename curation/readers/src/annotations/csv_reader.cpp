#include "winnow/curation/readers/annotations/csv_reader.h"

#include <utility>

#include "winnow/error.h"

namespace winnow::curation::readers {

namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

bool is_line_end(char c) {
  return c == '\n' || c == '\r';
}

}  // namespace

CsvReader::CsvReader(std::string_view text, std::string name)
    : text_(text), name_(std::move(name)) {
  const std::size_t nul = text_.find('\0');
  if (nul != std::string_view::npos) {
    std::size_t line = 1;
    for (std::size_t i = 0; i < nul; ++i) line += text_[i] == '\n';
    WINNOW_THROW("{}: line {}: a NUL byte: this is not a CSV text file", name_, line);
  }
  if (text_.substr(0, kByteOrderMark.size()) == kByteOrderMark) pos_ = kByteOrderMark.size();
}

bool CsvReader::next(std::vector<std::string>& fields) {
  fields.clear();
  // Blank lines (LF, CRLF or a lone CR) hold no record.
  while (pos_ < text_.size() && is_line_end(text_[pos_])) {
    if (text_[pos_] == '\n') ++line_;
    ++pos_;
  }
  if (pos_ >= text_.size()) return false;
  record_line_ = line_;
  while (true) {
    std::string& field = fields.emplace_back();
    if (pos_ < text_.size() && text_[pos_] == '"') {
      read_quoted(field);
    } else {
      const std::size_t end = text_.find_first_of(",\r\n", pos_);
      const std::size_t stop = end == std::string_view::npos ? text_.size() : end;
      field.assign(text_.substr(pos_, stop - pos_));
      pos_ = stop;
    }
    if (pos_ >= text_.size()) return true;
    const char c = text_[pos_++];
    if (c == ',') continue;
    if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') ++pos_;  // CRLF
    if (text_[pos_ - 1] == '\n') ++line_;
    return true;
  }
}

void CsvReader::read_quoted(std::string& field) {
  const std::size_t opened = line_;
  ++pos_;  // the opening quote
  while (true) {
    const std::size_t quote = text_.find('"', pos_);
    WINNOW_THROW_IF_NOT(quote != std::string_view::npos,
                        "{}: line {}: a quoted field opened here is never closed", name_, opened);
    for (std::size_t i = pos_; i < quote; ++i) line_ += text_[i] == '\n';
    field.append(text_.substr(pos_, quote - pos_));
    pos_ = quote + 1;
    if (pos_ < text_.size() && text_[pos_] == '"') {  // "" is one quote
      field += '"';
      ++pos_;
      continue;
    }
    WINNOW_THROW_IF_NOT(pos_ >= text_.size() || text_[pos_] == ',' || is_line_end(text_[pos_]),
                        "{}: line {}: text after the closing quote of a field (a quote inside a "
                        "quoted field is written twice: \"\")",
                        name_, line_);
    return;
  }
}

int header_column(const std::vector<std::string>& header, std::string_view name) {
  for (std::size_t c = 0; c < header.size(); ++c) {
    if (header[c] == name) return static_cast<int>(c);
  }
  return -1;
}

std::string cell_at(const std::vector<std::string>& fields, int column) {
  return column >= 0 && static_cast<std::size_t>(column) < fields.size()
             ? fields[static_cast<std::size_t>(column)]
             : std::string();
}

}  // namespace winnow::curation::readers
