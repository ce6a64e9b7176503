// A command's output written to a file the user named (--out): the whole
// text, its writing checked to the end.
#pragma once

#include <string>

namespace winnow::cli {

// Writes `text` to `path` (created or truncated); throws winnow::Error (io)
// naming the file and `what` it holds when it cannot be opened or the write
// or close fails (a full disk).
void write_output_file(const std::string& path, const std::string& text, const char* what);

}  // namespace winnow::cli
