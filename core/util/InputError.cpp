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

} // namespace hapmoe
