#pragma once
// Small string helpers shared by the readers and writers of scripts and messages.

#include <cmath>
#include <cstdio>
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

// s with ASCII letters in lower case (names that ignore case: device types, host names).
inline std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// A number as a message quotes it, to `digits` significant digits ("1e+20", "9.99989e-321").
inline std::string numberForMessage(double v, int digits = 15)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

// A byte as messages show one that cannot be printed ("0x0a").
inline std::string byteCode(unsigned char c)
{
    char code[8];
    std::snprintf(code, sizeof code, "0x%02x", c);
    return code;
}

// Text for a terminal: every byte below 0x20 (a line break included) and 0x7f as \x1b, so that
// a name or a script's text in a message cannot move the cursor, recolour or retitle the
// terminal, or start a line of its own.
inline std::string printableText(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    for (const char ch : s) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7f) {
            char code[8];
            std::snprintf(code, sizeof code, "\\x%02x", c);
            out += code;
        } else {
            out += ch;
        }
    }
    return out;
}

// A value a message quotes back, cut to its first 60 characters ("...") so that a megabyte of
// wrong input does not become a megabyte of error message.
inline std::string quotedValue(std::string_view s)
{
    constexpr std::size_t kShown = 60;
    if (s.size() <= kShown)
        return "\"" + std::string(s) + "\"";
    std::size_t cut = kShown - 3;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)   // not inside a UTF-8 character
        --cut;
    return "\"" + std::string(s.substr(0, cut)) + "...\"";
}

// v with `places` decimals ("19.155"), or in exponent form with four significant digits
// ("1.718e+62") from a billion up, where fixed notation would print dozens of digits (an
// iteration over a link of 1e-300 GB/s).
inline std::string decimal(double v, int places)
{
    char buf[64];
    if (std::isfinite(v) && std::abs(v) >= 1e9)
        std::snprintf(buf, sizeof buf, "%.4g", v);
    else
        std::snprintf(buf, sizeof buf, "%.*f", places, v);
    return buf;
}

} // namespace hapmoe
