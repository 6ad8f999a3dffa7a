#pragma once
// Small string helpers shared by the readers and writers of scripts and messages.

#include <cmath>
#include <cstdio>
#include <cstdlib>
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

// A value a message says was given ("got ..."): the fewest digits, at least six, that read back
// as the value itself, so that a value just outside a bound (1000000.5 against at most 1e+06)
// does not print as the bound.
inline std::string valueForMessage(double v)
{
    char buf[40];
    for (int digits = 6; digits < 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (std::strtod(buf, nullptr) == v)
            return buf;
    }
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// A byte as messages show one that cannot be printed ("0x0a").
inline std::string byteCode(unsigned char c)
{
    char code[8];
    std::snprintf(code, sizeof code, "0x%02x", c);
    return code;
}

// The control character of UTF-8 text at byte i, and its length in bytes (0 when there is
// none): C0 (below 0x20) and DEL, the C1 controls U+0080 to U+009F (NEL, CSI, ...), and the
// line and paragraph separators U+2028 and U+2029, which some terminals and editors take as
// line breaks. Tabs and line breaks are controls too; callers that allow them say so.
inline std::size_t controlLength(std::string_view s, std::size_t i)
{
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f)
        return 1;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 && static_cast<unsigned char>(s[i + 1]) <= 0x9f)
        return 2;
    if (c == 0xe2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80
        && (static_cast<unsigned char>(s[i + 2]) == 0xa8 || static_cast<unsigned char>(s[i + 2]) == 0xa9))
        return 3;
    return 0;
}

// How a message names the control character at byte i: "0x0a", or "U+0085" for one of more bytes.
inline std::string controlName(std::string_view s, std::size_t i)
{
    char code[12];
    const std::size_t n = controlLength(s, i);
    const auto b = [&](std::size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(s[i + k])); };
    if (n == 2)
        std::snprintf(code, sizeof code, "U+%04X", ((b(0) & 0x1fu) << 6) | (b(1) & 0x3fu));
    else if (n == 3)
        std::snprintf(code, sizeof code, "U+%04X", ((b(0) & 0x0fu) << 12) | ((b(1) & 0x3fu) << 6) | (b(2) & 0x3fu));
    else
        std::snprintf(code, sizeof code, "0x%02x", b(0));
    return code;
}

// `s` without its control characters (controlLength): a name made from a file name or other
// text nobody typed as a name (a script called "tr\u2028ain.sh") is one the readers take.
inline std::string withoutControls(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        if (const std::size_t n = controlLength(s, i); n > 0) {
            i += n;
            continue;
        }
        out += s[i++];
    }
    return out;
}

// The position, from 1, of the character that starts at byte i of UTF-8 text, as a message
// counts characters ("at character 3" in "中文\u0085").
inline std::size_t characterAt(std::string_view s, std::size_t i)
{
    std::size_t n = 1;
    for (std::size_t k = 0; k < i && k < s.size(); ++k)
        n += (static_cast<unsigned char>(s[k]) & 0xC0) != 0x80;
    return n;
}

// Text for a terminal: every control character (controlLength; a line break included) as
// \x1b or \u0085, so that a name or a script's text in a message cannot move the cursor,
// recolour or retitle the terminal, or start a line of its own.
inline std::string printableText(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = controlLength(s, i);
        if (n == 0) {
            out += s[i++];
            continue;
        }
        std::string name = controlName(s, i);
        out += n == 1 ? "\\x" + name.substr(2) : "\\u" + name.substr(2);
        i += n;
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
