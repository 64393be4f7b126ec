// Tables for people: the one layout of every table the core and the command print.
#pragma once

#include <string>
#include <vector>

namespace tensoracle {

// Rows of cells as text lines: each cell through escape_for_terminal (names and reasons are not
// ours to let a terminal act on), every column but the last padded to its widest cell plus two
// spaces, trailing spaces removed, each line ending in '\n'.
std::string aligned_rows(std::vector<std::vector<std::string>> const& rows);

} // namespace tensoracle
