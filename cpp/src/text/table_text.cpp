// The layout of tables (table_text.hpp).
#include "text/table_text.hpp"

#include "text/utf8_text.hpp"

#include <algorithm>
#include <cstddef>

namespace tensoracle {

std::string aligned_rows(std::vector<std::vector<std::string>> const& given) {
    std::vector<std::vector<std::string>> rows;
    rows.reserve(given.size());
    for (auto const& row : given) {
        std::vector<std::string>& escaped = rows.emplace_back();
        for (std::string const& cell : row) {
            escaped.push_back(escape_for_terminal(cell));
        }
    }
    std::vector<std::size_t> widths;
    for (auto const& row : rows) {
        widths.resize(std::max(widths.size(), row.size()), 0);
        for (std::size_t column = 0; column < row.size(); ++column) {
            widths[column] = std::max(widths[column], row[column].size());
        }
    }
    std::string text;
    for (auto const& row : rows) {
        std::string line;
        for (std::size_t column = 0; column < row.size(); ++column) {
            line += row[column];
            if (column + 1 < row.size()) {
                line.append(widths[column] - row[column].size() + 2, ' ');
            }
        }
        line.erase(line.find_last_not_of(' ') + 1);
        text += line + '\n';
    }
    return text;
}

} // namespace tensoracle
