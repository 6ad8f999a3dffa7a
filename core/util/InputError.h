#pragma once
// Errors in user input (files, scripts, command-line values). Every reader throws
// InputError with the file, the JSON path (or line) and what was expected, so that the
// CLI can print one clear line and exit with code 2 and the GUI can show a message.

#include <stdexcept>
#include <string>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace hapmoe {

class InputError : public std::runtime_error {
public:
    // file: path of the input ("" when not from a file); where: JSON path such as
    // "cluster.nodes[3].count" or "line 12"; message: what was expected and what was found.
    InputError(std::string file, std::string where, std::string message);

    const std::string& file() const noexcept { return m_file; }
    const std::string& where() const noexcept { return m_where; }
    const std::string& detail() const noexcept { return m_detail; }

private:
    std::string m_file;
    std::string m_where;
    std::string m_detail;
};

// The flags to name when a product of parallel sizes does not fit (TP*CP*PP not dividing the
// devices): those given above 1, joined as "--tp/--pp", else the first.
std::string responsibleFlags(std::initializer_list<std::pair<const char*, int>> sizes);

// Non-fatal findings of a reader (an unknown key, a migrated version). Readers append
// human-readable lines; callers print or show them.
using Warnings = std::vector<std::string>;

} // namespace hapmoe
