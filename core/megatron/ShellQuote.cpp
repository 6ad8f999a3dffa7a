#include "megatron/ShellQuote.h"

#include <algorithm>
#include <cctype>

namespace hapmoe {

namespace {

bool safeChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_./:=,+@%-").find(c) != std::string_view::npos;
}

} // namespace

std::string ShellQuote::single(std::string_view value)
{
    std::string out = "'";
    for (char c : value) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    out += '\'';
    return out;
}

bool ShellQuote::isQuoted(std::string_view v)
{
    return v.size() >= 2 && ((v.front() == '\'' && v.back() == '\'') || (v.front() == '"' && v.back() == '"'));
}

std::string ShellQuote::unquoted(std::string_view v)
{
    return std::string(isQuoted(v) ? v.substr(1, v.size() - 2) : v);
}

bool ShellQuote::isSafe(std::string_view value)
{
    return std::all_of(value.begin(), value.end(), safeChar);
}

std::string ShellQuote::word(std::string_view value)
{
    if (!value.empty() && isSafe(value) && value.front() != '=')
        return std::string(value);
    return single(value);
}

std::string ShellQuote::value(std::string_view value)
{
    // Only ${NAME} and ${NAME:-} references stay live; anything else that bash would interpret inside
    // double quotes ($, `, ", \) is escaped.
    bool hasReference = false;
    std::string out = "\"";
    for (std::size_t i = 0; i < value.size(); ++i) {
        const char c = value[i];
        if (c == '$' && i + 1 < value.size() && value[i + 1] == '{') {
            const std::size_t close = value.find('}', i + 2);
            // ${NAME}, or ${NAME:-} (empty when unset, which set -u allows)
            std::string_view name = close == std::string_view::npos ? std::string_view() : value.substr(i + 2, close - i - 2);
            if (name.size() > 2 && name.substr(name.size() - 2) == ":-")
                name.remove_suffix(2);
            if (close != std::string_view::npos && isValidName(name)) {
                out += value.substr(i, close - i + 1);
                i = close;
                hasReference = true;
                continue;
            }
        }
        if (c == '$' || c == '`' || c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    out += '"';
    return hasReference ? out : word(value);
}

bool ShellQuote::isValidName(std::string_view name)
{
    if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool ShellQuote::isValidLabel(std::string_view label)
{
    return !label.empty() && label.size() <= 64 && label.front() != '-'
        && std::all_of(label.begin(), label.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
           });
}

bool ShellQuote::isReference(std::string_view word)
{
    return word.size() > 3 && word.substr(0, 2) == "${" && word.back() == '}' && isValidName(word.substr(2, word.size() - 3));
}

} // namespace hapmoe
