#pragma once
// Small string helpers shared by the readers and writers of scripts and messages.

#include <string>
#include <string_view>
#include <vector>

namespace hapmoe {

// The parts with `sep` between them ("a b c" for {"a", "b", "c"} and " ").
inline std::string join(const std::vector<std::string>& parts, std::string_view sep = " ")
{
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i)
            out += sep;
        out += parts[i];
    }
    return out;
}

} // namespace hapmoe
