#include "util/InputError.h"

namespace hapmoe {

namespace {

// A part of a message cut to a readable length: an input can put a whole value into its
// error ("got \"$(( ((((...\"" of 200 KB, a number of 100,000 digits), which helps no one.
// The start and the end are kept, cut between UTF-8 characters, and the message says how
// much is left out.
std::string bounded(std::string text)
{
    constexpr std::size_t kMax = 2048, kHead = 1024, kTail = 256;
    if (text.size() <= kMax)
        return text;
    auto continuation = [&](std::size_t i) { return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; };
    // A UTF-8 character has at most three continuation bytes: no further back-off (text that
    // is not UTF-8 is cut where it falls).
    std::size_t head = kHead, tail = text.size() - kTail;
    for (int k = 0; k < 3 && continuation(head); ++k)
        --head;
    for (int k = 0; k < 3 && continuation(tail); ++k)
        ++tail;
    std::size_t leftOut = 0;   // characters, not bytes: UTF-8 continuation bytes are not counted
    for (std::size_t i = head; i < tail; ++i)
        leftOut += continuation(i) ? 0 : 1;
    return text.substr(0, head) + " ... (" + std::to_string(leftOut) + " characters left out) ... " + text.substr(tail);
}

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
    : std::runtime_error(compose(bounded(file), bounded(where), bounded(message)))
    , m_file(bounded(std::move(file)))
    , m_where(bounded(std::move(where)))
    , m_detail(bounded(std::move(message)))
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
