// CsvReader: the records of CSV text (RFC 4180), one at a time, with the line
// each starts on, for `winnow import-annotations`, `winnow review`'s verdict
// files and annotate-next's annotator pool.
//
// Fields are separated by ',' and records by LF or CRLF. A field in double
// quotes may hold commas, line breaks and quotes written twice (""). A UTF-8
// byte order mark at the start is skipped, and so are blank lines. A quote
// inside an unquoted field is kept as text (as spreadsheets write it). What
// cannot be read as CSV throws winnow::Error (invalid_input) naming the input
// and the line: a quoted field never closed (which would swallow the rest of
// the file), text after a closing quote, a NUL byte (a binary file).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace winnow::curation::readers {

class CsvReader {
 public:
  // `text` must outlive the reader; `name` (a file name) appears in errors.
  CsvReader(std::string_view text, std::string name);

  // The next record's fields into `fields`; false after the last record.
  bool next(std::vector<std::string>& fields);

  // The 1-based line the record last returned by next() starts on.
  std::size_t line() const { return record_line_; }
  const std::string& name() const { return name_; }

 private:
  // Reads the quoted field starting at the opening quote at pos_ into `field`.
  void read_quoted(std::string& field);

  std::string_view text_;
  std::string name_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;  // of text_[pos_]
  std::size_t record_line_ = 0;
};

// A header row's column named `name`: its position, -1 when absent (the
// first when named twice).
int header_column(const std::vector<std::string>& header, std::string_view name);
// A record's cell at `column`: "" when the column is absent (-1) or the
// record is shorter than the header.
std::string cell_at(const std::vector<std::string>& fields, int column);

}  // namespace winnow::curation::readers
