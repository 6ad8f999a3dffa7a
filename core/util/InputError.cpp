#include "util/InputError.h"

namespace hapmoe {

namespace {
std::string compose(const std::string& file, const std::string& where, const std::string& message)
{
    std::string out;
    if (!file.empty())
        out += file + ": ";
    if (!where.empty())
        out += where + ": ";
    out += message;
    return out;
}
} // namespace

InputError::InputError(std::string file, std::string where, std::string message)
    : std::runtime_error(compose(file, where, message))
    , m_file(std::move(file))
    , m_where(std::move(where))
    , m_detail(std::move(message))
{
}

std::string responsibleFlags(std::initializer_list<std::pair<const char*, int>> sizes)
{
    std::string out;
    for (const auto& [flag, v] : sizes)
        if (v > 1)
            out += (out.empty() ? "" : "/") + std::string(flag);
    return out.empty() && sizes.size() > 0 ? std::string(sizes.begin()->first) : out;
}

} // namespace hapmoe
