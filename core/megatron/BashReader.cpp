#include "megatron/BashReader.h"

#include "megatron/ShellArithmetic.h"
#include "megatron/ShellQuote.h"

#include "util/InputError.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fnmatch.h>
#include <regex.h>
#include <functional>
#include <optional>
#include <set>
#include <utility>
#include <sstream>
#include <unordered_set>

// Expansion follows the bash manual (GNU Bash Reference Manual, sections 3.1.2 Quoting,
// 3.5.3 Shell Parameter Expansion, 3.5.5 Arithmetic Expansion, 3.5.7 Word Splitting,
// 6.7 Arrays), restricted to what needs no process: nothing is ever executed.

namespace hapmoe {

namespace {

constexpr int kMaxDepth = 24;   // nesting of expansions; deeper input is hostile or broken
// Size bounds far above what a launch script holds (a data-path list of a thousand files is
// about 100 KB): beyond them a script is hostile or broken, and reading on would only exhaust
// memory.
constexpr std::size_t kMaxValueBytes = std::size_t(16) << 20;       // one variable or array
constexpr std::size_t kMaxArrayElements = std::size_t(1) << 20;     // one array
constexpr std::size_t kMaxExpandedBytes = std::size_t(256) << 20;   // all expansions of a script
constexpr std::size_t kMaxArguments = std::size_t(1) << 18;         // of one call, or set --
// Each element a list expands to ("$@", "${A[@]}") counts this much toward kMaxExpandedBytes
// besides its text: the reader keeps a word and its reads for it, some 70 bytes, so a list
// of a million one-byte elements expanded again and again would otherwise hold gigabytes
// within the bound.
constexpr std::size_t kElementCost = 32;
constexpr std::size_t npos = std::string::npos;

// Function calls: bash sets no depth limit (FUNCNEST is unset), but a call nested this deep
// in a launch script is a recursion the text does not end; and the commands read in calls,
// all told, stop far above any launch script's.
constexpr std::size_t kMaxCallDepth = 64;
constexpr std::size_t kMaxCalledCommands = 100000;
// Subshells inside one another, calls and pipelines included: far past any launch script's.
constexpr std::size_t kMaxSubshellDepth = 64;
// Commands read from eval texts, all told: an eval that runs itself twice would double at each
// level (far past any launch script's).
constexpr std::size_t kMaxEvalCommands = 100000;
// And the bytes of their texts: an eval whose text holds itself twice doubles it at each level.
constexpr std::size_t kMaxEvalBytes = 16u << 20;
constexpr std::size_t kMaxRanText = 8u << 20;   // BashReader::ranText

bool isNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isName(std::string_view s) { return !s.empty() && isNameStart(s[0]) && std::all_of(s.begin(), s.end(), isNameChar); }

// NAME for a word that is all the elements of an array, "${NAME[@]}" or ${NAME[@]}, else "".
std::string allElementsOf(std::string_view word)
{
    if (word.size() >= 2 && word.front() == '"' && word.back() == '"')
        word = word.substr(1, word.size() - 2);
    if (word.size() < 6 || word.substr(0, 2) != "${" || word.substr(word.size() - 4) != "[@]}")
        return {};
    const std::string_view name = word.substr(2, word.size() - 6);
    if (!isName(name))
        return {};
    return std::string(name);
}

// Whether an arithmetic expression assigns (manual 6.5: = *= /= %= += -= <<= >>= &= ^= |=,
// ++ and --), as against comparing (== != <= >=).
bool arithmeticAssigns(std::string_view e)
{
    for (std::size_t i = 0; i < e.size(); ++i) {
        // ++ or -- next to a name increments it (x++, --x); between numbers it is two signs
        // (5--3 is 5 - -3).
        if ((e[i] == '+' || e[i] == '-') && i + 1 < e.size() && e[i + 1] == e[i]) {
            std::size_t b = i;
            while (b > 0 && (e[b - 1] == ' ' || e[b - 1] == '\t')) --b;
            std::size_t s = b;
            while (s > 0 && isNameChar(e[s - 1])) --s;
            const bool nameBefore = s < b && isNameStart(e[s]);
            std::size_t a = i + 2;
            while (a < e.size() && (e[a] == ' ' || e[a] == '\t')) ++a;
            const bool nameAfter = a < e.size() && isNameStart(e[a]);
            if (nameBefore || nameAfter)
                return true;
            ++i;
            continue;
        }
        if (e[i] != '=')
            continue;
        if (i + 1 < e.size() && e[i + 1] == '=') {
            ++i;   // ==
            continue;
        }
        const char before = i > 0 ? e[i - 1] : '\0';
        if (before == '!')
            continue;
        if ((before == '<' || before == '>') && !(i > 1 && e[i - 2] == before))
            continue;   // <= or >=, not <<= or >>=
        return true;
    }
    return false;
}
// The escapes of printf's format and of %b (manual 4.2, echo -e): \a \b \e \f \n \r \t \v,
// backslash, quotes, \? \NNN (octal) and \xHH; in %b also \0NNN, and \c ends the output (false).
bool appendEscape(const std::string& s, std::size_t& i, std::string& out, bool argument)
{
    const char c = s[i];
    auto digits = [&](std::size_t from, std::size_t most, int base) {
        std::size_t end = from;
        while (end < s.size() && end - from < most
               && (base == 8 ? (s[end] >= '0' && s[end] <= '7') : std::isxdigit(static_cast<unsigned char>(s[end]))))
            ++end;
        return end;
    };
    static const std::string simple = "abefnrtv";
    static const std::string values = "\a\b\x1b\f\n\r\t\v";
    if (const std::size_t k = simple.find(c); k != std::string::npos) {
        out += values[k];
        ++i;
    } else if (c == '\\' || c == '"' || c == '\'' || c == '?') {
        out += c;
        ++i;
    } else if (c >= '0' && c <= '7') {
        const std::size_t from = argument && c == '0' ? i + 1 : i;
        const std::size_t end = digits(from, 3, 8);
        out += static_cast<char>(end > from ? std::stoi(s.substr(from, end - from), nullptr, 8) : 0);
        i = end;
    } else if (c == 'x' && digits(i + 1, 2, 16) > i + 1) {
        const std::size_t end = digits(i + 1, 2, 16);
        out += static_cast<char>(std::stoi(s.substr(i + 1, end - i - 1), nullptr, 16));
        i = end;
    } else if (c == 'c' && argument) {
        return false;
    } else {
        out += '\\';   // not an escape: the backslash stays
    }
    return true;
}

// printf FORMAT [ARGUMENT ...] as bash's builtin formats it (manual 4.2): the format is used
// again while arguments are left; a missing argument is "" or 0. %d %i %o %u %x %X %c %s %b
// %f %F %e %E %g %G with flags, width and precision (also *); a number may be 0x.., 0.. (octal)
// or 'C (the character's code). False for what is not evaluated here (%q, %(...)T, an
// argument that is not a number where one is wanted), and with tooLarge set for a width or
// precision, or an output, beyond maxBytes (a value no launch script holds: %.999999999f would
// take a gigabyte and a minute to write).
bool formatPrintf(const std::string& format, std::span<const std::string> args, std::string& out, std::size_t maxBytes,
                  bool& tooLarge)
{
    tooLarge = false;
    std::size_t next = 0;
    auto argument = [&]() -> const std::string* { return next < args.size() ? &args[next++] : nullptr; };
    auto integer = [](const std::string* a, long long& v) {
        if (!a || a->empty()) {
            v = 0;
            return true;
        }
        if ((*a)[0] == '\'' || (*a)[0] == '"') {
            v = a->size() > 1 ? static_cast<unsigned char>((*a)[1]) : 0;
            return true;
        }
        errno = 0;
        char* end = nullptr;
        v = std::strtoll(a->c_str(), &end, 0);
        return errno == 0 && end && *end == '\0' && end != a->c_str();
    };
    do {
        const std::size_t used = next;
        for (std::size_t i = 0; i < format.size();) {
            const char c = format[i];
            if (c == '\\' && i + 1 < format.size()) {
                ++i;
                appendEscape(format, i, out, false);
                continue;
            }
            if (c != '%') {
                out += c;
                ++i;
                continue;
            }
            if (i + 1 < format.size() && format[i + 1] == '%') {
                out += '%';
                i += 2;
                continue;
            }
            // %[flags][width][.precision]conversion
            std::string spec = "%";
            std::size_t j = i + 1;
            while (j < format.size() && std::string("-+ #0").find(format[j]) != std::string::npos)
                spec += format[j++];
            // A width or precision: its size (saturated past maxBytes) for the check below.
            // A negative width from * pads on the left, a negative precision is none (C's printf).
            auto number = [&](std::size_t& size, bool isPrecision) -> bool {
                size = 0;
                if (j < format.size() && format[j] == '*') {
                    long long v = 0;
                    if (!integer(argument(), v))
                        return false;
                    if (v < 0)
                        v = isPrecision ? 0 : (v < -static_cast<long long>(maxBytes) ? static_cast<long long>(maxBytes) + 1 : -v);
                    size = v > static_cast<long long>(maxBytes) ? maxBytes + 1 : static_cast<std::size_t>(v);
                    spec += std::to_string(v);
                    ++j;
                    return true;
                }
                while (j < format.size() && std::isdigit(static_cast<unsigned char>(format[j]))) {
                    size = std::min(maxBytes + 1, size * 10 + static_cast<std::size_t>(format[j] - '0'));   // leading zeros add nothing
                    spec += format[j++];
                }
                return true;
            };
            std::size_t width = 0, precision = 0;
            if (!number(width, false))
                return false;
            if (j < format.size() && format[j] == '.') {
                spec += format[j++];
                if (!number(precision, true))
                    return false;
            }
            while (j < format.size() && std::string("hlLqjzt").find(format[j]) != std::string::npos)
                ++j;   // length modifiers: accepted and ignored, as bash does
            if (j >= format.size())
                return false;
            const char conversion = format[j];
            i = j + 1;
            // A width pads every conversion to its size, a precision a number's digits (of %s
            // and %b it only cuts): past maxBytes the value is refused before it is written.
            const bool numeric = std::string_view("diouxXfFeEgG").find(conversion) != std::string_view::npos;
            if (width > maxBytes || (numeric && precision > maxBytes))
                return !(tooLarge = true);
            std::vector<char> buffer(64);
            auto emit = [&](auto value) {
                const int n = std::snprintf(buffer.data(), buffer.size(), spec.c_str(), value);
                if (n < 0)
                    return false;
                if (static_cast<std::size_t>(n) >= buffer.size()) {
                    buffer.resize(static_cast<std::size_t>(n) + 1);
                    std::snprintf(buffer.data(), buffer.size(), spec.c_str(), value);
                }
                out.append(buffer.data(), static_cast<std::size_t>(n));
                return out.size() <= maxBytes || !(tooLarge = true);
            };
            if (conversion == 'd' || conversion == 'i') {
                long long v = 0;
                if (!integer(argument(), v) || !(spec += "lld", emit(v)))
                    return false;
            } else if (conversion == 'o' || conversion == 'u' || conversion == 'x' || conversion == 'X') {
                long long v = 0;
                if (!integer(argument(), v) || !(spec += std::string("ll") + conversion, emit(static_cast<unsigned long long>(v))))
                    return false;
            } else if (std::string("fFeEgG").find(conversion) != std::string::npos) {
                const std::string* a = argument();
                double v = 0;
                if (a && !a->empty()) {
                    char* end = nullptr;
                    v = std::strtod(a->c_str(), &end);
                    if (!end || *end != '\0')
                        return false;
                }
                spec += conversion;
                if (!emit(v))
                    return false;
            } else if (conversion == 's' || conversion == 'c' || conversion == 'b') {
                const std::string* a = argument();
                std::string value = a ? *a : std::string();
                if (conversion == 'c')
                    value = value.substr(0, 1);
                if (conversion == 'b') {
                    std::string expanded;
                    bool more = true;
                    for (std::size_t k = 0; k < value.size() && more;) {
                        if (value[k] == '\\' && k + 1 < value.size()) {
                            ++k;
                            more = appendEscape(value, k, expanded, true);
                        } else {
                            expanded += value[k++];
                        }
                    }
                    value = std::move(expanded);
                    if (!more) {
                        out += value;   // \c: nothing more is printed
                        return out.size() <= maxBytes || !(tooLarge = true);
                    }
                }
                spec += 's';
                if (!emit(value.c_str()))
                    return false;
            } else {
                return false;   // %q, %(...)T, %n: not evaluated here
            }
        }
        if (out.size() > maxBytes)
            return !(tooLarge = true);   // a long format used again for each of many arguments
        if (next == used)
            break;   // the format took no argument: once
    } while (next < args.size());
    return true;
}

bool isIfsBlank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// Field splitting (manual 3.5.7) on the characters of IFS: its blanks (space, tab, newline)
// run together and are dropped at the ends of the text; every other character of it ends a
// field, together with the blanks around it, so that "a,,b" on "," gives a, "" and b and a
// trailing "," no empty field. IFS empty: nothing splits.
class FieldSplitter {
public:
    explicit FieldSplitter(std::string ifs) : m_ifs(std::move(ifs)) {}
    bool delimits(char c) const { return m_ifs.find(c) != std::string::npos; }
    // A character open to splitting.
    void split(char c)
    {
        if (!delimits(c)) {
            keep(std::string_view(&c, 1), true);
        } else if (isIfsBlank(c)) {
            if (m_have) {
                endField();
                m_afterBlank = true;   // a delimiter other than a blank may still follow: one delimiter
            }
        } else {
            if (m_have)
                endField();
            else if (!m_afterBlank)
                m_fields.emplace_back();   // ",a" or "a,,b": an empty field
            m_afterBlank = false;
        }
    }
    // Text not open to splitting (quoted, or a value kept as text); `counts`: it makes a field
    // even when empty ("" or an element of "$@").
    void keep(std::string_view text, bool counts)
    {
        m_cur += text;
        m_have = m_have || counts || !text.empty();
        m_afterBlank = false;
    }
    // The boundary between two elements of an unquoted $* or ${A[@]}: the field so far ends;
    // an empty element makes none.
    void softBreak()
    {
        if (m_have)
            endField();
        m_afterBlank = false;
    }
    // The boundary between two elements of "$@": the field so far ends, the next one begins.
    void breakField()
    {
        if (m_have)
            m_fields.push_back(m_cur);
        m_cur.clear();
        m_have = true;
        m_afterBlank = false;
    }
    std::vector<std::string> finish(bool force)
    {
        if (m_have || (force && m_fields.empty()))
            m_fields.push_back(m_cur);
        return std::move(m_fields);
    }

private:
    void endField()
    {
        m_fields.push_back(m_cur);
        m_cur.clear();
        m_have = false;
    }
    std::string m_ifs;
    std::vector<std::string> m_fields;
    std::string m_cur;
    bool m_have = false;
    bool m_afterBlank = false;
};

// Whether `subject` matches the pattern of BashReader::expandPattern, as bash matches case
// patterns and [[ == ]] (manual 3.5.8.1): with the extended forms @( ) !( ) *( ) +( ) ?( ),
// which bash turns on for [[ ]] and scripts turn on with `shopt -s extglob`, and a backslash
// at the end matching itself.
// The pattern as fnmatch must be given it: a backslash at the end (an odd run of them) matches
// itself, so it is escaped.
std::string withTrailingBackslashEscaped(std::string pattern)
{
    std::size_t slashes = 0;
    for (auto it = pattern.rbegin(); it != pattern.rend() && *it == '\\'; ++it)
        ++slashes;
    if (slashes % 2 == 1)
        pattern += '\\';
    return pattern;
}

bool matchesPattern(const std::string& pattern, const std::string& subject, bool extended)
{
    return fnmatch(withTrailingBackslashEscaped(pattern).c_str(), subject.c_str(), extended ? FNM_EXTMATCH : 0) == 0;
}

// The pattern with "*" before or after it (a trailing odd backslash kept as a literal one),
// which matches a text exactly when the pattern matches some prefix (after) or suffix (before)
// of it: one match tells a loop over the text's prefixes or suffixes whether any can match.
std::string anyPrefixPattern(const std::string& pattern) { return withTrailingBackslashEscaped(pattern) + '*'; }
std::string anySuffixPattern(const std::string& pattern) { return "*" + pattern; }

// How many characters every text the pattern matches has, when that is fixed: no "*" and no
// extended group, each literal (a backslash-escaped one too), "?" and [...] one character.
// A "[" without its "]" is a literal. None when the length varies.
std::optional<std::size_t> fixedPatternLength(const std::string& pattern, bool extended)
{
    std::size_t length = 0;
    for (std::size_t k = 0; k < pattern.size(); ++k, ++length) {
        const char c = pattern[k];
        if (c == '*')
            return std::nullopt;
        if (extended && k + 1 < pattern.size() && pattern[k + 1] == '(' && std::string_view("@!+?*").find(c) != std::string_view::npos)
            return std::nullopt;
        if (c == '\\' && k + 1 < pattern.size()) {
            ++k;
        } else if (c == '[') {
            // "]" right after "[" or "[!" / "[^" belongs to the set.
            std::size_t close = k + 1;
            if (close < pattern.size() && (pattern[close] == '!' || pattern[close] == '^'))
                ++close;
            if (close < pattern.size() && pattern[close] == ']')
                ++close;
            while (close < pattern.size() && pattern[close] != ']') {
                if (pattern[close] == '[' && close + 1 < pattern.size() && std::string_view(":.=").find(pattern[close + 1]) != std::string_view::npos) {
                    const std::size_t classEnd = pattern.find(std::string(1, pattern[close + 1]) + "]", close + 2);
                    if (classEnd == std::string::npos)
                        break;
                    close = classEnd + 2;
                    continue;
                }
                ++close;
            }
            if (close < pattern.size())
                k = close;   // one character of the set; else a literal "["
        }
    }
    return length;
}

// A word that is all one decimal integer ("12", "-3"), as test's -eq and friends read it.
bool wholeInteger(const std::string& s, long long& v)
{
    try {
        std::size_t used = 0;
        v = std::stoll(s, &used);
        return used == s.size();
    } catch (const std::exception&) {
        return false;
    }
}

bool validName(std::string_view s)
{
    if (s.empty() || !isNameStart(s[0]))
        return false;
    return std::all_of(s.begin(), s.end(), isNameChar);
}

std::size_t skipDollarGroup(const std::string& s, std::size_t i);

// Quotes, ${ } and $( ) inside one another are skipped by functions that call one another:
// past this depth the text is refused (BashReader::read says so) before the stack runs out.
constexpr int kMaxQuoteNesting = 1000;
constexpr int kMaxCompoundNesting = 1000;   // { }, ( ), if, loops, case (tokenize)
// Not a std::exception, so that no catch of those on the way (a number that does not
// parse, an arithmetic expansion) takes it for its own: BashReader::read turns it into the
// script's error.
struct NestingTooDeep {};
thread_local int t_quoteNesting = 0;
struct QuoteNesting {
    QuoteNesting()
    {
        if (++t_quoteNesting > kMaxQuoteNesting) {
            t_quoteNesting = 0;   // the throw unwinds every level without running their destructors' decrement twice
            throw NestingTooDeep{};
        }
    }
    ~QuoteNesting()
    {
        if (t_quoteNesting > 0)
            --t_quoteNesting;
    }
    QuoteNesting(const QuoteNesting&) = delete;
    QuoteNesting& operator=(const QuoteNesting&) = delete;
};

// The name a word assigns (NAME=..., NAME+=..., NAME[index]=...), or "" for any other word.
// The last part of a path: "/usr/bin/bash" -> "bash".
std::string baseName(const std::string& path)
{
    const std::size_t slash = path.rfind('/');
    return slash == npos ? path : path.substr(slash + 1);
}

std::string assignedName(const std::string& t)
{
    std::size_t k = 0;
    if (t.empty() || !isNameStart(t[0]))
        return {};
    while (k < t.size() && isNameChar(t[k])) ++k;
    std::size_t e = k;
    if (e < t.size() && t[e] == '[') {
        const std::size_t close = t.find(']', e);
        if (close == npos) return {};
        e = close + 1;
    }
    if (e < t.size() && t[e] == '+') ++e;
    return e < t.size() && t[e] == '=' ? t.substr(0, k) : std::string();
}

// s[i] == '\'': position after the closing quote, or npos.
std::size_t skipSingle(const std::string& s, std::size_t i)
{
    const std::size_t j = s.find('\'', i + 1);
    return j == npos ? npos : j + 1;
}

std::size_t skipBacktick(const std::string& s, std::size_t i)
{
    for (std::size_t j = i + 1; j < s.size(); ++j) {
        if (s[j] == '\\')
            ++j;
        else if (s[j] == '`')
            return j + 1;
    }
    return npos;
}

std::size_t skipDouble(const std::string& s, std::size_t i)
{
    const QuoteNesting nesting;
    std::size_t j = i + 1;
    while (j < s.size()) {
        const char c = s[j];
        if (c == '\\') {
            j += 2;
        } else if (c == '"') {
            return j + 1;
        } else if (c == '$' && j + 1 < s.size() && (s[j + 1] == '{' || s[j + 1] == '(')) {
            j = skipDollarGroup(s, j);
            if (j == npos)
                return npos;
        } else if (c == '`') {
            j = skipBacktick(s, j);
            if (j == npos)
                return npos;
        } else {
            ++j;
        }
    }
    return npos;
}

// Whether s holds the reserved word `word` at j: after a blank or an operator and before a
// blank, an operator or the end.
bool reservedAt(const std::string& s, std::size_t j, std::string_view word)
{
    if (s.compare(j, word.size(), word) != 0)
        return false;
    auto separates = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')'; };
    return (j == 0 || separates(s[j - 1])) && (j + word.size() >= s.size() || separates(s[j + word.size()]));
}

// s[i] == '$' followed by '{' or '(': position after the matching close. Inside $( ) a
// `case ... in ... esac` is followed, so that the ")" ending each of its pattern lists
// ("a) ...;;") does not close the substitution (manual 3.5.4: bash parses the command).
std::size_t skipDollarGroup(const std::string& s, std::size_t i)
{
    const QuoteNesting nesting;
    const char open = s[i + 1];
    const char close = open == '{' ? '}' : ')';
    int depth = 1;
    // The case blocks open inside: the depth they are at, and whether a pattern list is
    // being read (after `in`, and after each ";;", ";&" or ";;&").
    struct OpenCase {
        int depth;
        bool afterIn;
        bool pattern;
    };
    std::vector<OpenCase> cases;
    std::size_t j = i + 2;
    while (j < s.size()) {
        const char c = s[j];
        if (c == '\\') {
            j += 2;
            continue;
        }
        if (open == '(') {
            // "case" as a command (after "$(", a separator or an opening "(" or "{"), not as an
            // argument ($(echo case in point)).
            auto commandStart = [&] {
                std::size_t b = j;
                while (b > i + 2 && (s[b - 1] == ' ' || s[b - 1] == '\t')) --b;
                return b == i + 2 || std::string_view(";&|(\n{").find(s[b - 1]) != std::string_view::npos;
            };
            if (reservedAt(s, j, "case") && commandStart()) {
                cases.push_back({depth, false, false});
                j += 4;
                continue;
            }
            if (!cases.empty() && cases.back().depth == depth) {
                OpenCase& k = cases.back();
                if (!k.afterIn && reservedAt(s, j, "in")) {
                    k.afterIn = k.pattern = true;
                    j += 2;
                    continue;
                }
                if (k.afterIn && reservedAt(s, j, "esac")) {
                    cases.pop_back();
                    j += 4;
                    continue;
                }
                if (k.pattern && (c == '(' || c == ')')) {
                    k.pattern = c == '(';   // "(a)": the optional "(" before a pattern list
                    ++j;
                    continue;
                }
                if (k.afterIn && !k.pattern && c == ';' && j + 1 < s.size() && (s[j + 1] == ';' || s[j + 1] == '&')) {
                    k.pattern = true;
                    j += s[j + 1] == ';' && j + 2 < s.size() && s[j + 2] == '&' ? 3 : 2;
                    continue;
                }
            }
        }
        if (c == '\'') {
            // A quote inside $( ) or ${ } quotes the word it is in; an unmatched one (as in
            // "${X:-it's}", which bash accepts inside double quotes) is a plain character.
            const std::size_t close = skipSingle(s, j);
            j = close == npos ? j + 1 : close;
        } else if (c == '"') {
            j = skipDouble(s, j);
        } else if (c == '`') {
            j = skipBacktick(s, j);
        } else if (c == '$' && j + 1 < s.size() && (s[j + 1] == '{' || s[j + 1] == '(')) {
            j = skipDollarGroup(s, j);
        } else {
            if (c == open)
                ++depth;
            else if (c == close && --depth == 0)
                return j + 1;
            ++j;
        }
        if (j == npos)
            return npos;
    }
    return npos;
}

// $'...' (ANSI-C quoting): s[i] == '$', s[i+1] == '\''. Returns the end and the text.
std::size_t readAnsiC(const std::string& s, std::size_t i, std::string& out)
{
    std::size_t j = i + 2;
    while (j < s.size()) {
        const char c = s[j];
        if (c == '\'')
            return j + 1;
        if (c == '\\' && j + 1 < s.size()) {
            const char e = s[j + 1];
            switch (e) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'r': out += '\r'; break;
            case '\\': out += '\\'; break;
            case '\'': out += '\''; break;
            case '"': out += '"'; break;
            default: out += '\\'; out += e; break;
            }
            j += 2;
            continue;
        }
        out += c;
        ++j;
    }
    return npos;
}

// "${A[@]}", "${@}", or a slice of them ("${A[@]:1}"): inside double quotes each yields one
// word per element, and no word at all when there is none.
bool onlyListExpansion(const std::string& inner)
{
    if (inner.size() < 4 || inner.rfind("${", 0) != 0 || skipDollarGroup(inner, 0) != inner.size())
        return false;
    std::size_t k = 2;
    if (inner[k] == '@') {
        ++k;
    } else {
        while (k < inner.size() && isNameChar(inner[k])) ++k;
        if (k == 2 || inner.compare(k, 3, "[@]") != 0)
            return false;
        k += 3;
    }
    if (inner[k] == '}')
        return k + 1 == inner.size();
    return inner[k] == ':' && k + 1 < inner.size() && std::string("-=+?").find(inner[k + 1]) == npos;
}

int countNewlines(std::string_view s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

const std::set<std::string>& reservedWords()
{
    static const std::set<std::string> words = {"then", "else", "do", "done", "{", "}", "!", "time", "in"};
    return words;
}

// "a", "a and b", "a, b and c".
std::string joinNames(const std::vector<std::string>& names)
{
    std::string out;
    for (std::size_t a = 0; a < names.size(); ++a)
        out += (a == 0 ? "" : a + 1 == names.size() ? " and " : ", ") + names[a];
    return out;
}

// What ends a branch of a case block (manual 3.2.5.2).
bool isCaseTerminator(std::string_view s) { return s == ";;" || s == ";&" || s == ";;&"; }

// The "(" and ")" of a subshell are commands of their own (tokenize()); an unquoted word never
// is a bare parenthesis, since one always ends a word.
bool isSubshellOpen(const auto& cmd) { return cmd.words.size() == 1 && cmd.words.front().text == "("; }
bool isSubshellClose(const auto& cmd) { return cmd.words.size() == 1 && cmd.words.front().text == ")"; }

// Reserved words after which a command begins: where "(" opens a subshell and `case` a block.
bool opensCommand(std::string_view s)
{
    return s == "if" || s == "elif" || s == "then" || s == "else" || s == "do" || s == "while" || s == "until" || s == "!"
        || s == "{" || s == "time";
}

} // namespace

// How many { groups a command opens (+) or closes (-) with the reserved words it starts with
// ("{", "then {", "}", "function NAME {"): where a function body ends.
int BashReader::braceDepthChange(const RawCommand& cmd)
{
    static const std::set<std::string> leading = {"if", "elif", "while", "until", "then", "else", "do", "!", "time"};
    int change = 0;
    for (std::size_t w = 0; w < cmd.words.size() && !cmd.words[w].array_assign; ++w) {
        const std::string& t = cmd.words[w].text;
        if (t == "{")
            ++change;
        else if (t == "}")
            --change;
        else if (t == "function")
            ++w;   // and its name
        else if (!leading.count(t))
            break;
    }
    return change;
}

std::size_t BashReader::subshellEnd(std::span<const RawCommand> commands, std::size_t open)
{
    int depth = 1;
    for (std::size_t close = open + 1; close < commands.size(); ++close) {
        if (isSubshellOpen(commands[close]))
            ++depth;
        else if (isSubshellClose(commands[close]) && --depth == 0)
            return close;
    }
    return commands.size();
}

std::size_t BashReader::groupEnd(const RawCommand& first, std::span<const RawCommand> commands, std::size_t open)
{
    std::size_t close = open;
    for (int depth = braceDepthChange(first); depth > 0;) {
        if (++close >= commands.size())
            return commands.size();
        depth += braceDepthChange(commands[close]);
    }
    return close;
}

BashReader::BashReader(std::string fileName) : m_file(std::move(fileName)) {}

void BashReader::setArguments(std::vector<std::string> arguments)
{
    m_argumentsGiven = true;
    m_scriptFrame.function = m_file;
    m_scriptFrame.args = std::move(arguments);
}

void BashReader::setEnvironment(const std::map<std::string, std::string>& environment)
{
    for (const auto& [name, value] : environment)
        if (name != "OPTIND")   // bash sets it to 1 whatever the environment says
            m_vars[name] = value;
}

const BashReader::Frame* BashReader::positionalFrame() const
{
    return !m_frames.empty() ? &m_frames.back() : m_argumentsGiven ? &m_scriptFrame : nullptr;
}

BashReader::Frame* BashReader::positionalFrame()
{
    return !m_frames.empty() ? &m_frames.back() : m_argumentsGiven ? &m_scriptFrame : nullptr;
}

void BashReader::chargeExpansion(std::size_t bytes, int line)
{
    m_expandedBytes += bytes;
    if (m_expandedBytes > kMaxExpandedBytes)
        throw InputError(m_file, "line " + std::to_string(line),
                         "the script's variable expansions add up to more than 256 MiB; a launch script that "
                         "large is not read (is a value doubled again and again, or a long list expanded many "
                         "times?)");
}

bool BashReader::patternWorkLeft(std::size_t characters, int line, const std::string& body)
{
    // About a second of matching on this machine: far beyond what a launch script's
    // patterns on host lists and paths take (a pattern on a 200-character value tried at
    // every start and end is 1.3 million characters).
    constexpr std::uint64_t kMaxPatternWork = 2'000'000'000;
    m_patternWork += characters;
    if (m_patternWork <= kMaxPatternWork)
        return true;
    if (!m_patternWorkWarned)
        warn(line, "${" + body + "}: the script's pattern matching on long values takes too long to follow (" + "more than "
                       + std::to_string(kMaxPatternWork / 1'000'000'000) + " billion characters matched); this and "
                       + "later pattern expansions keep their values as they are");
    m_patternWorkWarned = true;
    return false;
}

void BashReader::checkValueSize(const std::string& name, std::size_t bytes, std::size_t elements, int line) const
{
    if (bytes > kMaxValueBytes || elements > kMaxArrayElements)
        throw InputError(m_file, "line " + std::to_string(line),
                         name + " grows past " + (elements > kMaxArrayElements ? "1,048,576 elements" : "16 MiB")
                             + "; a launch script's values are far smaller, so the script is not read");
}

void BashReader::checkArgumentCount(const std::string& what, std::size_t count, int line) const
{
    if (count > kMaxArguments)
        throw InputError(m_file, "line " + std::to_string(line),
                         what + " more than 262,144 arguments; a launch script's are far fewer, so the script is not "
                         "read (do its calls pass \"$@\" on twice?)");
}

void BashReader::warn(int line, const std::string& message)
{
    std::string text = "line " + std::to_string(line) + ": " + message;
    if (m_warningsHeld == 0)   // a finding of the script's, not one held for a command or a test
        m_warningAt.emplace(text, m_commands.size());
    if (std::find(m_warnings.begin(), m_warnings.end(), text) == m_warnings.end())
        m_warnings.push_back(std::move(text));
}

void BashReader::warnOnce(const std::string& key, int line, const std::string& message)
{
    if (std::find(m_warnedKeys.begin(), m_warnedKeys.end(), key) != m_warnedKeys.end())
        return;
    m_warnedKeys.push_back(key);
    warn(line, message);
}

void BashReader::noteEnvRead(const std::string& what)
{
    if (what.empty() || (what[0] != '$' && m_unsetByScript.count(what)))
        return;
    m_envReads.add(what);
}

void BashReader::noteEnvDefault(const std::string& name, const std::string& text)
{
    if (name.empty() || !isNameStart(name[0]) || m_unsetByScript.count(name))
        return;
    std::vector<std::string>& texts = m_envDefaults[name];
    if (std::find(texts.begin(), texts.end(), text) == texts.end())
        texts.push_back(text);
}

void BashReader::noteEnvSwitch(const std::string& name, const std::string& words)
{
    const std::size_t first = words.find_first_not_of(" \t\n");
    if (name.empty() || !isNameStart(name[0]) || m_unsetByScript.count(name) || first == std::string::npos)
        return;
    const std::string text = words.substr(first, words.find_last_not_of(" \t\n") + 1 - first);
    std::vector<std::string>& texts = m_envSwitches[name];
    if (std::find(texts.begin(), texts.end(), text) == texts.end())
        texts.push_back(text);
    // Goes with the value as its reads do (ShellCommand::value_reads).
    m_valueReads.add("+" + name);
}

void BashReader::noteRan(std::span<const RawWord> words)
{
    if (m_evalDepth > 0 || m_ranText.size() > kMaxRanText || words.empty())
        return;
    for (const RawWord& w : words) {
        m_ranText += w.text;
        for (const std::string& e : w.elements) {
            m_ranText += ' ';
            m_ranText += e;
        }
        m_ranText += ' ';
    }
    m_ranText.back() = '\n';
}

std::vector<WordReads> BashReader::fieldReads(const std::string& raw, const std::vector<std::string>& fields,
                                              const std::vector<std::string>& reads) const
{
    // "$@" and $N of a call whose arguments' reads are known: each its own.
    std::string_view word = raw;
    if (word.size() >= 2 && word.front() == '"' && word.back() == '"')
        word = word.substr(1, word.size() - 2);
    if (word.size() >= 4 && word.substr(0, 2) == "${" && word.back() == '}')
        word = word.substr(2, word.size() - 3);
    else if (word.size() >= 2 && word.front() == '$')
        word = word.substr(1);
    else
        word = {};
    if (const Frame* frame = positionalFrame(); frame && !word.empty() && frame->arg_reads.size() == frame->args.size()) {
        if (word == "@" && frame->args == fields)
            return frame->arg_reads;
        if (std::all_of(word.begin(), word.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) && word.size() < 6
            && fields.size() == 1) {
            const std::size_t n = static_cast<std::size_t>(std::stoul(std::string(word)));
            if (n >= 1 && n <= frame->args.size() && frame->args[n - 1] == fields.front())
                return {frame->arg_reads[n - 1]};
        }
    }
    const auto elements = m_elementReads.find(allElementsOf(raw));
    if (elements != m_elementReads.end() && elements->second->size() == fields.size())
        if (const auto array = m_arrays.find(elements->first); array != m_arrays.end() && array->second == fields)
            return *elements->second;
    const auto shared = reads.empty() ? nullptr : std::make_shared<const std::vector<std::string>>(reads);
    return std::vector<WordReads>(fields.size(), WordReads{shared, fields.size() == 1, nullptr});
}

void BashReader::noteValueRead(const std::string& name)
{
    if (m_unsetByScript.count(name))
        return;
    m_valueReads.add(name);
}

void BashReader::noteNameRead(const std::string& name, bool isSet)
{
    if (name.empty() || !isNameStart(name[0]))
        return;
    if (!isSet) {
        noteEnvRead(name);
        noteValueRead(name);
        // Set only in a branch a test skipped (skippedByTest()): that branch would have set it.
        if (auto it = m_valueDerived.find(name); it != m_valueDerived.end())
            for (const std::string& what : it->second)
                if (what.starts_with(kSkippedMark))
                    noteValueRead(what);
        return;
    }
    if (auto it = m_envDerived.find(name); it != m_envDerived.end())
        for (const std::string& what : it->second)
            noteEnvRead(what);
    if (auto it = m_valueDerived.find(name); it != m_valueDerived.end())
        for (const std::string& what : it->second)
            noteValueRead(what);
}

bool BashReader::derivesFromItself(const std::string& name) const
{
    const auto it = m_valueDerived.find(name);
    return it != m_valueDerived.end() && std::find(it->second.begin(), it->second.end(), name) != it->second.end();
}

void BashReader::addEnv(std::vector<std::string>& to, const std::vector<std::string>& from)
{
    if (from.size() <= 8 || (to.size() + from.size()) * from.size() <= 4096) {   // a few: a look along the list
        for (const std::string& what : from)
            if (std::find(to.begin(), to.end(), what) == to.end())
                to.push_back(what);
        return;
    }
    // Thousands of names: by hash. The room is made first, so the names in `to` stay put.
    to.reserve(to.size() + from.size());
    std::unordered_set<std::string_view> have(to.begin(), to.end());
    for (const std::string& what : from)
        if (!have.count(what)) {
            to.push_back(what);
            have.insert(to.back());
        }
}

std::string BashReader::describeEnv(const std::vector<std::string>& reads) const
{
    // Names the script sets only as a default (DRY_RUN=${DRY_RUN:-1}) apart from those it
    // never sets.
    std::vector<std::string> args, vars, defaulted, statuses;
    for (const std::string& what : reads)
        (what[0] == '$' ? args : what[0] == '!' ? statuses : m_vars.count(what) || m_arrays.count(what) ? defaulted : vars)
            .push_back(what[0] == '!' ? what.substr(2) : what);
    std::string out;
    if (!args.empty())
        out = joinNames(args) + ", from the script's own arguments";
    if (!vars.empty())
        out += (out.empty() ? "" : ", and on ") + joinNames(vars) + ", which the script does not set (its environment)";
    if (!defaulted.empty())
        out += (out.empty() ? "" : ", and on ") + joinNames(defaulted)
            + (defaulted.size() == 1 ? ", which the script takes from its environment where it is set"
                                     : ", which the script takes from its environment where they are set");
    if (!statuses.empty())
        out += (out.empty() ? "the exit status of " : ", and on the exit status of ") + joinNames(statuses);
    return out;
}

std::vector<std::string> BashReader::exportedVariables() const
{
    std::vector<std::string> out;
    for (const std::string& name : m_exportOrder) {
        std::string value;
        // An array is never put in a command's environment (manual 6.7, "Arrays").
        if (!m_arrays.count(name) && lookup(name, value))
            out.push_back(name + "=" + value);
    }
    return out;
}

bool BashReader::lookup(const std::string& name, std::string& value) const
{
    // $1 ... of a call, or the script's own when they are given; "0" is the script's name.
    if (positionalFrame() && !name.empty() && name != "0"
        && std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        const std::vector<std::string>& args = positionalFrame()->args;
        const std::size_t n = name.size() > 9 ? npos : std::stoul(name);
        if (n == 0 || n > args.size())
            return false;
        value = args[n - 1];
        return true;
    }
    if (auto it = m_vars.find(name); it != m_vars.end()) {
        value = it->second;
        return true;
    }
    if (auto it = m_arrays.find(name); it != m_arrays.end()) {
        value = it->second.empty() ? std::string() : it->second.front();
        return true;
    }
    // Bash sets OPTIND to 1 when it starts a script (manual 5.2), for getopts.
    if (name == "OPTIND" && !m_unsetByScript.count(name)) {
        value = "1";
        return true;
    }
    // And IFS to blank, tab and newline (manual 5.2), whatever the environment holds.
    if (name == "IFS" && !m_unsetByScript.count(name)) {
        value = " \t\n";
        return true;
    }
    return false;
}

std::vector<BashReader::RawCommand> BashReader::tokenize(std::string_view input, bool noteFlagLines, const std::string* nested,
                                                      int outerLine)
{
    const std::string text(input);
    const std::size_t n = text.size();
    std::vector<RawCommand> commands;
    RawCommand cur;
    int line = 1;
    std::size_t i = 0;
    // A finding at line `at` of the text: the script's line; in a nested text the line where
    // the script writes `word` and `next` when it does so once (a variable's value run as commands,
    // srun ... sh -c "${run_cmd}"), else the line of the command that runs the text and the
    // line in the text (srun ... bash -c "..." spans lines).
    auto warnAt = [&](int at, const std::string& message, std::string_view word = {}, std::string_view next = {}) {
        if (!nested)
            warn(at, message);
        else if (const int written = uniqueLineInScript(word, next))
            warn(written, message);
        else
            warn(outerLine, message + " (line " + std::to_string(at) + " of " + *nested + "'s text)");
    };
    // The here-documents whose lines follow the current line: delimiter, strip leading tabs,
    // expand (delimiter not quoted), the index the command that reads it has in `commands`.
    struct HereDocument {
        std::string delimiter;
        bool strip = false;
        bool expand = true;
        std::size_t command = 0;
    };
    std::vector<HereDocument> heredocs;
    int redirectedFd = -1;   // the number glued before the next redirection (3<<<); -1: none

    std::string forgetAfter;   // X=<PATH> on the command being read: X, forgotten after it
    auto endCommand = [&](std::string separator) {
        if (cur.words.empty() && isCaseTerminator(separator)) {
            // The end of a case branch on a line of its own: kept as a command (";;") so
            // that run() sees where the branch ends.
            cur.words.push_back(RawWord{separator, false, {}});
            cur.line = line;
        }
        // X=<PATH>: the variable the placeholder was for is forgotten after the command
        // (below, where the redirection is read).
        std::string name = std::exchange(forgetAfter, std::string());
        if (!cur.words.empty()) {
            cur.separator = name.empty() ? std::move(separator) : std::string(";");
            commands.push_back(std::move(cur));
        }
        if (!name.empty()) {
            RawCommand forget;
            forget.words = {RawWord{std::move(name), false, {}}};
            forget.forget = true;
            forget.line = line;
            forget.separator = std::move(separator);
            commands.push_back(std::move(forget));
        }
        cur = RawCommand{};
    };
    auto fail = [&](int at, const std::string& what) {
        throw InputError(m_file, "line " + std::to_string(at), what);
    };
    // The subshells and case blocks open where the text is, innermost last: a ")" closes the
    // innermost subshell, unless a case block inside it waits for the end of a pattern list
    // ("small|tiny)"); a "(" before a pattern list is the pattern's optional one.
    struct Open {
        bool subshell = false;
        int line = 0;
        bool pattern = false;   // case: a pattern list comes next
    };
    std::vector<Open> open;
    // Where a command begins: nothing read yet, or only reserved words such as `then` or `!`.
    auto atCommandStart = [&] {
        return std::all_of(cur.words.begin(), cur.words.end(),
                           [](const RawWord& word) { return !word.array_assign && opensCommand(word.text); });
    };
    // Inside a [[ ]] test: a "[[" read and no "]]" after it.
    auto inDoubleBracket = [&] {
        for (auto it = cur.words.rbegin(); it != cur.words.rend(); ++it) {
            if (it->text == "]]")
                return false;
            if (it->text == "[[")
                return true;
        }
        return false;
    };
    // The "(" of a subshell, a command of its own after the reserved words before it.
    auto openSubshell = [&] {
        if (!cur.words.empty())
            endCommand("");
        cur.line = line;
        cur.words.push_back(RawWord{"(", false, {}});
        endCommand("(");
        open.push_back(Open{true, line, false});
    };

    // The extended patterns @( ) !( ) *( ) +( ) ?( ) are words of their own kind inside [[ ]],
    // and everywhere after `shopt -s extglob` (manual 3.5.8.1): their "|" and parentheses
    // belong to the word.
    bool extglob = false;
    for (std::size_t at = text.find("shopt"); at != npos && !extglob; at = text.find("shopt", at + 5)) {
        const std::string lineText = text.substr(at, text.find('\n', at) - at);
        extglob = lineText.find("-s") != npos && lineText.find("extglob") != npos;
    }
    auto extendedPattern = [&](std::size_t at) -> std::size_t {
        if (at + 1 >= n || text[at + 1] != '(' || std::string_view("@!*+?").find(text[at]) == std::string_view::npos
            || !(extglob || inDoubleBracket()))
            return npos;
        int depth = 0;
        for (std::size_t j = at + 1; j < n; ++j) {
            const char c = text[j];
            if (c == '\\') {
                ++j;
            } else if (c == '\'' || c == '"') {
                const std::size_t e = c == '\'' ? skipSingle(text, j) : skipDouble(text, j);
                if (e == npos)
                    return npos;
                j = e - 1;
            } else if (c == '\n') {
                return npos;
            } else if (c == '(') {
                ++depth;
            } else if (c == ')' && --depth == 0) {
                return j + 1;
            }
        }
        return npos;
    };

    // Reads one word starting at i; stops at blanks and operators. Returns its raw text.
    // regex: the pattern after "=~" in [[ ]] (manual 3.2.5.2), one word whose parentheses,
    // "|" and blanks inside parentheses belong to it; it ends at a blank or an unmatched ")".
    auto readWord = [&](bool insideArray, bool regex = false) -> std::string {
        std::string word;
        const int startLine = line;
        int depth = 0;
        while (i < n) {
            const char c = text[i];
            if (regex) {
                if ((c == ' ' || c == '\t' || c == '\r' || c == '\n') && depth == 0)
                    break;
                if (c == '(' || c == ')') {
                    if (c == ')' && depth == 0)
                        break;
                    depth += c == '(' ? 1 : -1;
                    word += c;
                    ++i;
                    continue;
                }
                if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<'
                    || c == '>') {
                    word += c;
                    line += c == '\n';
                    ++i;
                    continue;
                }
            } else if (const std::size_t e = extendedPattern(i); e != npos) {
                word += text.substr(i, e - i);
                i = e;
                continue;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<'
                       || c == '>' || c == ')' || c == '(') {
                break;
            }
            if (c == '\\') {
                if (i + 1 < n && text[i + 1] == '\n') {   // line continuation
                    i += 2;
                    ++line;
                    continue;
                }
                word += text.substr(i, 2);
                i += 2;
                continue;
            }
            std::size_t j = i + 1;
            if (c == '\'') {
                j = skipSingle(text, i);
                if (j == npos) fail(startLine, "unterminated single quote");
            } else if (c == '"') {
                j = skipDouble(text, i);
                if (j == npos) fail(startLine, "unterminated double quote");
            } else if (c == '`') {
                j = skipBacktick(text, i);
                if (j == npos) fail(startLine, "unterminated backtick");
            } else if (c == '$' && i + 1 < n && (text[i + 1] == '{' || text[i + 1] == '(')) {
                j = skipDollarGroup(text, i);
                if (j == npos) fail(startLine, std::string("unterminated $") + text[i + 1]);
            } else if (c == '$' && i + 1 < n && text[i + 1] == '\'') {
                std::string ignored;
                j = readAnsiC(text, i, ignored);
                if (j == npos) fail(startLine, "unterminated $' quote");
            }
            const std::string part = text.substr(i, j - i);
            line += countNewlines(part);
            word += part;
            i = j;
        }
        return word;
    };

    auto skipHeredocs = [&] {
        for (const HereDocument& doc : heredocs) {
            std::string body;
            while (i < n) {
                std::size_t eol = text.find('\n', i);
                if (eol == npos) eol = n;
                std::string l = text.substr(i, eol - i);
                if (!l.empty() && l.back() == '\r') l.pop_back();
                if (doc.strip) l.erase(0, l.find_first_not_of('\t') == npos ? l.size() : l.find_first_not_of('\t'));
                i = eol < n ? eol + 1 : n;
                ++line;
                if (l == doc.delimiter) break;
                body += l + "\n";
            }
            if (doc.command < commands.size())
                commands[doc.command].input = RawCommand::HereInput{std::move(body), false, doc.expand};
        }
        heredocs.clear();
    };

    while (i < n) {
        const char c = text[i];
        if (c == ' ' || c == '\t' || c == '\r') {
            ++i;
            continue;
        }
        if (c == '\\' && i + 1 < n && text[i + 1] == '\n') {
            i += 2;
            ++line;
            continue;
        }
        if (c == '\n' && inDoubleBracket()) {
            ++line;   // [[ a &&<newline> b ]]: a newline inside the test is a blank (manual 3.2.5.2)
            ++i;
            continue;
        }
        if (c == '\n') {
            endCommand("\n");
            ++line;
            ++i;
            if (!heredocs.empty())
                skipHeredocs();
            continue;
        }
        if (c == '#') {
            while (i < n && text[i] != '\n') ++i;
            continue;
        }
        // The pattern after "=~" inside [[ ]] is one word: "[[ $MODEL =~ ^(llama|mixtral)$ ]]"
        // opens no subshell and ends no command.
        if (!cur.words.empty() && cur.words.back().text == "=~" && inDoubleBracket()) {
            RawWord pattern;
            pattern.text = readWord(false, true);
            if (!pattern.text.empty()) {
                cur.words.push_back(std::move(pattern));
                continue;
            }
        }
        // Inside [[ ]] "(" and ")" group its tests (manual 3.2.5.2): words of the test.
        if ((c == '(' || c == ')') && inDoubleBracket()) {
            cur.words.push_back(RawWord{std::string(1, c), false, {}});
            ++i;
            continue;
        }
        if (c == '(' && !open.empty() && !open.back().subshell && open.back().pattern) {
            ++i;   // "(small|tiny)": the optional "(" of a case pattern list
            continue;
        }
        // An arithmetic command (( ... )) at the start of a command: one word, which statusOf()
        // evaluates when it only tests. It ends at the "))" that closes both "(": where the
        // two close apart, as in "((cd /tmp; ls) )", they are two subshells, as bash reads them.
        std::size_t arithmeticClose = npos;
        // The arithmetic for, for (( ... )) (manual 3.2.5.1), takes one such word after "for".
        // Before it only reserved words may stand, and time's own options (time -p for ...).
        const bool arithmeticFor = !cur.words.empty() && cur.words.back().text == "for"
            && std::all_of(cur.words.begin(), cur.words.end() - 1, [&](const RawWord& word) {
                   const bool timeOption = (word.text == "-p" || word.text == "--") && &word != &cur.words.front()
                       && (&word)[-1].text == "time";
                   return !word.array_assign && (opensCommand(word.text) || timeOption);
               });
        if (c == '(' && i + 1 < n && text[i + 1] == '(' && (atCommandStart() || arithmeticFor)) {
            int nested = 0;
            std::size_t j = i + 2;
            while (j < n) {
                const char d = text[j];
                if (d == '\\') {
                    j += 2;
                    continue;
                }
                if (d == '\'' || d == '"') {
                    const std::size_t q = d == '\'' ? skipSingle(text, j) : skipDouble(text, j);
                    j = q == npos ? n : q;
                    continue;
                }
                if (d == '(') {
                    ++nested;
                } else if (d == ')' && nested > 0) {
                    --nested;
                } else if (d == ')') {
                    if (j + 1 < n && text[j + 1] == ')')
                        arithmeticClose = j;
                    break;
                }
                ++j;
            }
            if (j >= n)
                fail(line, "no )) closes the arithmetic command (( opened here (bash: unexpected end of file)");
        }
        if (arithmeticClose != npos) {
            const std::size_t end = arithmeticClose + 2;
            RawWord arith;
            arith.text = text.substr(i, end - i);
            if (cur.words.empty())
                cur.line = line;
            cur.words.push_back(std::move(arith));
            for (std::size_t k = i; k < end; ++k)
                line += text[k] == '\n';
            i = end;
            // A compound command ends at its "))": a reserved word right after it begins the
            // next command, as in "if ((N > 1))then" or "while ((N < 8)) do".
            std::size_t next = i;
            while (next < n && (text[next] == ' ' || text[next] == '\t')) ++next;
            // The arithmetic for's body may be a { } group: "for ((i = 0; i < N; i++)) { ...; }".
            for (const char* word : {"then", "do", "else", "elif", "fi", "done", "esac", "}", "{"})
                if ((word[0] != '{' || arithmeticFor) && reservedAt(text, next, word)) {
                    endCommand(";");
                    break;
                }
            continue;
        }
        if (c == '(' && atCommandStart()) {
            openSubshell();
            ++i;
            continue;
        }
        if (c == '(') {
            // After a name: "NAME()" or "NAME ( )" define a function (the commands after it are
            // its body), and so does "function NAME ( ... )" with the subshell as the body.
            std::size_t j = i + 1;
            while (j < n && (text[j] == ' ' || text[j] == '\t')) ++j;
            if (j < n && text[j] == ')') {
                endCommand("(");
                i = j + 1;
                continue;
            }
            if (cur.words.size() == 2 && cur.words.front().text == "function") {
                endCommand("(");
                openSubshell();
                ++i;
                continue;
            }
        }
        if (c == ')' && !open.empty() && open.back().subshell) {
            // The end of a subshell: a command of its own, which takes the operator after it
            // ("( ... ) && next", "( ... ) | tee log").
            if (!cur.words.empty())
                endCommand(";");
            open.pop_back();
            cur.line = line;
            cur.words.push_back(RawWord{")", false, {}});
            ++i;
            continue;
        }
        if (c == ')' && !open.empty())
            open.back().pattern = false;   // the end of a case pattern list
        // Inside [[ ]] (manual 3.2.5.2), && and || join its tests and < and > compare strings:
        // words of the test, not a list operator or a redirection.
        if (((c == '&' || c == '|') && i + 1 < n && text[i + 1] == c) || c == '<' || c == '>') {
            if (inDoubleBracket()) {
                const std::size_t len = c == '<' || c == '>' ? 1 : 2;
                cur.words.push_back(RawWord{text.substr(i, len), false, {}});
                i += len;
                continue;
            }
        }
        // "&>" and "&>>" redirect stdout and stderr (manual 3.6.4, 3.6.5): not a "&".
        const bool bothRedirect = c == '&' && i + 1 < n && text[i + 1] == '>';
        if (!bothRedirect && (c == ';' || c == '&' || c == '|' || c == '(' || c == ')')) {
            std::string separator(1, c);
            if ((c == '&' || c == '|' || c == ';') && i + 1 < n && text[i + 1] == c)
                separator += c;
            if (c == ';' && i + separator.size() < n && text[i + separator.size()] == '&')
                separator += '&';   // ";&" and ";;&" end a case branch
            if (isCaseTerminator(separator) && !open.empty() && !open.back().subshell)
                open.back().pattern = true;
            endCommand(separator);
            i += separator.size();
            continue;
        }
        if (c == '<' && !cur.words.empty() && cur.words.back().text.size() > 2 && cur.words.back().text.rfind("--", 0) == 0) {
            // A flag's value left to fill in, as documentation writes it: --data-path <PATH TO
            // DATA>. Bash reads a redirection from PATH there (and > the next word as a file),
            // so the script cannot run as written. Read as filled in: the value becomes a
            // reference named after the flag, ${DATA_PATH}, which an exported launcher requires
            // to be set, as with the placeholders of assignments below.
            const std::size_t close = text.find('>', i + 1);
            const std::string inside = close == npos ? std::string() : text.substr(i + 1, close - i - 1);
            // Written against the brackets (< in.txt > out.txt redirects, with the blanks), and not
            // ending in a descriptor's number (<in.txt 2>err.log).
            const std::size_t lastBlank = inside.rfind(' ');
            const bool descriptor = lastBlank != npos && lastBlank + 1 < inside.size()
                && inside.find_first_not_of("0123456789", lastBlank + 1) == npos;
            const bool placeholder = !inside.empty() && inside.front() != ' ' && inside.back() != ' ' && !descriptor
                && inside.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 _./:-") == npos
                && inside.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != npos;
            if (placeholder) {
                const std::string& flag = cur.words.back().text;
                std::string name;
                for (char ch : flag.substr(2))
                    name += ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
                // A variable of that name the script assigns (anywhere: the text is read before it
                // runs) is not the placeholder's value.
                const auto assigns = [&](const std::string& n) {
                    for (std::size_t at = text.find(n + "="); at != npos; at = text.find(n + "=", at + 1))
                        if (at == 0 || !isNameChar(text[at - 1]))
                            return true;
                    return false;
                };
                while (assigns(name))
                    name += "_VALUE";
                if (ShellQuote::isValidName(name)) {
                    m_placeholderNames.insert(name);   // this warning says it: not "from the environment" too
                    warnAt(line,
                           flag + " <" + inside + ">: a placeholder left to fill in (bash would read < and > as "
                               "redirections); read as filled in, as ${" + name + "}, which an exported launcher requires "
                               "to be set",
                           flag, std::string_view(text).substr(i, close + 1 - i));
                    cur.words.push_back(RawWord{"${" + name + "}", false, {}});
                    i = close + 1;
                    continue;
                }
            }
        }
        if (c == '<' || c == '>' || bothRedirect) {
            // Redirection: the operator and its target are not part of the command.
            std::string op;
            while (i < n && (text[i] == '<' || text[i] == '>' || text[i] == '&' || text[i] == '-')) {
                if (text[i] == '-' && op != "<<") break;
                op += text[i++];
            }
            while (i < n && (text[i] == ' ' || text[i] == '\t')) ++i;
            // The descriptor redirected: the number glued before the operator, else standard
            // input for "<" operators. Only standard input is what `read` reads.
            const bool standardInput = op.front() == '<' && redirectedFd <= 0;
            redirectedFd = -1;
            if (op.size() >= 2 && op.back() == '&' ) {
                readWord(false);   // >&2, 2>&1
                if (standardInput)
                    cur.other_input = true;   // <&3
                continue;
            }
            const std::size_t targetAt = i;
            std::string target = readWord(false);
            // A redirection with nothing after it (X=<path to fill in>: `>` ends the line) is
            // bash's "syntax error near unexpected token": bash stops there and runs nothing
            // after it. Example scripts ship such placeholders (Megatron-LM's
            // CHECKPOINT_PATH=<Specify path>) for the user to fill in: read on, and said.
            if (target.empty() && (targetAt >= n || text[targetAt] == '\n' || text[targetAt] == '\r' || text[targetAt] == ';'
                                   || text[targetAt] == '|' || text[targetAt] == '&' || text[targetAt] == ')'))
            {
                warnAt(line, "the redirection " + op + " has no file after it, a syntax error at which bash stops: a placeholder "
                           "such as <path> left to fill in? Read on as if it were filled in: the variable meant for it stays a "
                           "reference, ${NAME}, that an exported launcher requires to be set");
                // X=<PATH> (also after other assignments, or as `export X=<PATH>`): the empty
                // assignment is the placeholder's, not a value. Read as filled in, X is left
                // out of the command and forgotten after it, so it stays a reference, ${X}, as with
                // X=<two words>, whatever it held before.
                static const std::set<std::string> declaring = {"export", "readonly", "declare", "typeset", "local"};
                if (!cur.words.empty()) {
                    const std::string& last = cur.words.back().text;
                    // NAME= or NAME+= with nothing after it (not an element, NAME[i]=).
                    std::string name = assignedName(last);
                    if (last != name + "=" && last != name + "+=")
                        name.clear();
                    const std::size_t from = declaring.count(cur.words.front().text) ? 1 : 0;
                    bool before = true;
                    for (std::size_t w = from; w + 1 < cur.words.size(); ++w)
                        before = before && (!assignedName(cur.words[w].text).empty() || (from == 1 && cur.words[w].text.front() == '-'));
                    if (!name.empty() && before) {
                        cur.words.pop_back();
                        forgetAfter = name;
                    }
                }
            }
            if (!standardInput) {
                // 3<<< WORD, 3<< EOF, > FILE: not the input `read` reads (a here-document's lines
                // are skipped all the same).
                if (op == "<<" || op == "<<-") {
                    std::string delim;
                    for (char d : target)
                        if (d != '\'' && d != '"' && d != '\\') delim += d;
                    heredocs.push_back({delim, op == "<<-", delim == target, npos});
                }
                continue;
            }
            if (op == "<<" || op == "<<-") {
                std::string delim;
                for (char d : target)
                    if (d != '\'' && d != '"' && d != '\\') delim += d;
                // The command this redirection belongs to is pushed next (endCommand).
                heredocs.push_back({delim, op == "<<-", delim == target, commands.size()});
            } else if (op == "<<<") {
                cur.input = RawCommand::HereInput{target, true, true};
            } else if (op.front() == '<') {
                cur.other_input = true;   // < FILE, <> FILE, < <(...)
            }
            continue;
        }
        if (cur.words.empty())
            cur.line = line;
        RawWord word;
        const int wordLine = line;
        word.text = readWord(false);
        if (noteFlagLines)
            noteFlags(word.text, wordLine);
        // NAME=( ... ) or NAME+=( ... ): an array assignment over any number of lines.
        if (i < n && text[i] == '(' && !word.text.empty() && word.text.back() == '=') {
            std::string name = word.text.substr(0, word.text.size() - 1);
            if (!name.empty() && name.back() == '+') name.pop_back();
            if (validName(name)) {
                const int startLine = line;
                ++i;
                word.array_assign = true;
                for (;;) {
                    while (i < n && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) {
                        if (text[i] == '\n') ++line;
                        ++i;
                    }
                    if (i >= n) fail(startLine, "unterminated array " + name + "=( ... )");
                    if (text[i] == '\\' && i + 1 < n && text[i + 1] == '\n') {
                        i += 2;
                        ++line;
                        continue;
                    }
                    if (text[i] == '#') {
                        while (i < n && text[i] != '\n') ++i;
                        continue;
                    }
                    if (text[i] == ')') {
                        ++i;
                        break;
                    }
                    const std::size_t before = i;
                    const int elementLine = line;
                    std::string element = readWord(true);
                    if (noteFlagLines)
                        noteFlags(element, elementLine);
                    if (i == before) {   // an operator inside the array: bash rejects it
                        fail(line, std::string("unexpected '") + text[i] + "' inside array " + name + "=( ... )");
                    }
                    word.elements.push_back(std::move(element));
                }
            }
        }
        // A file-descriptor number glued to a redirection (2>&1): not a word.
        if (!word.array_assign && i < n && (text[i] == '<' || text[i] == '>') && !word.text.empty()
            && std::all_of(word.text.begin(), word.text.end(), [](char d) { return std::isdigit(static_cast<unsigned char>(d)); })) {
            redirectedFd = word.text.size() > 6 ? 1000000 : std::stoi(word.text);
            continue;
        }
        if (word.text.empty() && !word.array_assign)
            continue;
        if (isSubshellClose(cur)) {
            // A reserved word after ")" ("( ... ) }", "if (true) then") begins the next command.
            endCommand(";");
            cur.line = wordLine;
        }
        if (!word.array_assign && atCommandStart()) {
            if (word.text == "case")
                open.push_back(Open{false, wordLine, true});
            else if (word.text == "esac" && !open.empty() && !open.back().subshell)
                open.pop_back();
        }
        cur.words.push_back(std::move(word));
    }
    endCommand("\n");
    for (auto it = open.rbegin(); it != open.rend(); ++it)
        if (it->subshell)
            fail(it->line, "no ) closes the subshell ( opened here (bash: unexpected end of file)");
    // Groups, subshells, ifs, loops and case blocks inside one another: reading a level looks
    // for its end, so the time grows with the square of the depth (100,000 nested { took 57 s).
    // A launch script nests a few; past 1,000 levels the script is refused where it passes.
    int depth = 0;
    for (const RawCommand& cmd : commands) {
        if (isSubshellOpen(cmd))
            ++depth;
        else if (isSubshellClose(cmd))
            --depth;
        else
            depth += braceDepthChange(cmd);
        for (const RawWord& w : cmd.words) {   // reserved words lead a command; the rest are its words
            const std::string& t = w.text;
            if (t == "if" || t == "do" || t == "case")
                ++depth;
            else if (t == "fi" || t == "done" || t == "esac")
                --depth;
            else if (t != "{" && t != "}" && t != "then" && t != "else" && t != "elif" && t != "!" && t != "time"
                     && t != "while" && t != "until")
                break;
        }
        if (depth > kMaxCompoundNesting)
            fail(cmd.line, "groups, subshells, ifs, loops and case blocks are nested in one another more than 1,000 deep; a "
                           "launch script nests a few, so the script is not read");
    }
    return commands;
}

void BashReader::noteFlags(std::string_view raw, int line)
{
    // "--name" at the start of the word or after a blank, a quote, '(' or '=' ("--a=1 --b"
    // inside one quoted word), ending at the word's end or such a character.
    const auto boundary = [](char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '(' || c == ')' || c == '=';
    };
    const auto nameChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; };
    for (std::size_t i = 0; i + 2 < raw.size(); ++i) {
        if (raw[i] == '\n') {
            ++line;
            continue;
        }
        if (raw[i] != '-' || raw[i + 1] != '-' || (i > 0 && !boundary(raw[i - 1])))
            continue;
        std::size_t end = i + 2;
        while (end < raw.size() && nameChar(raw[end]))
            ++end;
        if (end == i + 2 || (end < raw.size() && !boundary(raw[end])))
            continue;
        std::vector<int>& at = m_flagLines[std::string(raw.substr(i, end - i))];
        if (at.empty() || at.back() != line)
            at.push_back(line);
        i = end - 1;
    }
}

bool BashReader::active() const
{
    return std::all_of(m_branches.begin(), m_branches.end(), [](const Branch& b) { return b.active; });
}

int BashReader::uniqueLineInScript(std::string_view word, std::string_view next) const
{
    if (word.empty() || next.empty())
        return 0;
    std::size_t found = npos;
    for (std::size_t at = m_script.find(next); at != npos; at = m_script.find(next, at + 1)) {
        // Back over the blanks and line continuations between the two, then the word, which
        // must start the script's word there.
        std::size_t j = at;
        while (j > 0) {
            if (m_script[j - 1] == ' ' || m_script[j - 1] == '\t')
                --j;
            else if (j >= 2 && m_script[j - 1] == '\n' && m_script[j - 2] == '\\')
                j -= 2;
            else
                break;
        }
        if (j == at || j < word.size() || m_script.compare(j - word.size(), word.size(), word) != 0)
            continue;
        const std::size_t start = j - word.size();
        if (start > 0 && !std::isspace(static_cast<unsigned char>(m_script[start - 1])) && m_script[start - 1] != '"'
            && m_script[start - 1] != '\'')
            continue;
        if (found != npos)
            return 0;   // written twice: which one ran is not known here
        found = start;
    }
    if (found == npos)
        return 0;
    return 1 + static_cast<int>(std::count(m_script.begin(), m_script.begin() + static_cast<std::ptrdiff_t>(found), '\n'));
}

void BashReader::read(std::string_view text)
{
    m_script = std::string(text);
    try {
        std::vector<RawCommand> commands = tokenize(text);
        // Bash reads a script a line at a time (a compound command spanning lines as one) and
        // stops at the first it cannot parse (a stray fi, an if never closed): the lines before
        // it run, none after. It is said, and the reading goes on past it, as it goes on past an
        // example script's fill-in field (an argument in angle brackets, which bash reads as a
        // redirection): the script was meant to run whole.
        int line = 0;
        std::size_t runs = 0;
        if (const std::string error = syntaxError(commands, &line, &runs); !error.empty()) {
            m_syntaxErrorLine = line;
            m_syntaxError = error;
            warn(line, "a syntax error (" + error + "), at which bash stops reading the script, so it runs nothing from line "
                           + std::to_string(runs < commands.size() ? commands[runs].line : line)
                           + " on (bash -n shows it); the import reads on past it");
        }
        run(commands);
    } catch (const NestingTooDeep&) {
        static_assert(kMaxQuoteNesting == 1000, "the message gives the bound");
        throw InputError(m_file, "", "quotes, ${ } and $( ) are nested in one another more than 1,000 deep; a launch "
                                     "script nests a few, so the script is not read");
    }
    m_envExitFinding = addEnvExitFinding(m_warnings, npos);
}

std::string BashReader::addEnvExitFinding(std::vector<std::string>& warnings, std::size_t commands) const
{
    // The exits read as not taken because a test on the environment or the script's arguments
    // decides them (usage guards): one warning for all, so that a launcher with several guards
    // (our own export's) gets one finding, not one per guard.
    std::vector<const EnvExit*> exits;
    for (const EnvExit& e : m_envExits)
        if (commands == npos || e.command <= commands)
            exits.push_back(&e);
    if (exits.empty())
        return {};
    std::string message;
    for (std::size_t a = 0; a < exits.size(); ++a)
        message += (a == 0 ? "" : "; line " + std::to_string(exits[a]->line) + ": ") + exits[a]->text;
    const int line = exits.front()->line;
    const std::string text = "line " + std::to_string(line) + ": " + message
        + (exits.size() == 1 ? ": read as not taken" : ": each read as not taken");
    // Among the others where its line is: before the first finding of a later line.
    auto later = std::find_if(warnings.begin(), warnings.end(), [&](const std::string& w) {
        return w.rfind("line ", 0) == 0 && std::atoi(w.c_str() + 5) > line;
    });
    warnings.insert(later, text);
    return text;
}

std::vector<std::string> BashReader::warningsUntil(const ShellCommand& command) const
{
    const auto index = static_cast<std::size_t>(&command - m_commands.data());
    std::vector<std::string> out;
    for (const std::string& w : m_warnings) {
        if (w == m_envExitFinding)
            continue;
        const auto at = m_warningAt.find(w);
        if (at == m_warningAt.end() || at->second <= index)
            out.push_back(w);
    }
    addEnvExitFinding(out, index);
    return out;
}

void BashReader::run(std::span<const RawCommand> commands)
{
    // The exit status of the last command run in the current && / || list, and the test that
    // gave it (for the warning when it cannot be decided).
    Truth status = Truth::True;
    std::string statusTest;
    // What that status depends on from outside the script (m_envReads), the && / || list so far.
    std::vector<std::string> statusEnv;
    // The blocks open where these commands begin (a call's): those the commands open are
    // closed when they end, also after `return`.
    const std::size_t base = m_branches.size();
    auto isCase = [&] { return m_branches.size() > base && m_branches.back().kind == Branch::Kind::Case; };
    // A loop body: read once, where it is written, but whether it runs at all is not decided
    // (the text does not evaluate loop conditions), so an exit inside is undecided.
    auto pushLoop = [&] {
        Branch b;
        b.kind = Branch::Kind::Loop;
        b.known = false;
        b.active = true;
        b.awaiting_body = true;
        m_branches.push_back(b);
    };
    for (std::size_t k = 0; k < commands.size() && !m_exiting && !m_returning && m_breakLevels == 0 && m_continueLevels == 0; ++k) {
        const RawCommand& cmd = commands[k];
        const std::string& before = k > 0 ? commands[k - 1].separator : std::string();
        if (!m_frames.empty())
            ++m_calledCommands;
        // A case branch ends at ";;", ";&" or ";;&": the next command is a pattern list (or
        // esac). After ";&" the next branch's commands run too, untested; after ";;&" its
        // patterns are tested as if this branch's had not matched (manual 3.2.5.2).
        if (isCaseTerminator(before) && isCase()) {
            Branch& b = m_branches.back();
            b.fall_through = before == ";&" && b.active;
            if (before == ";;&" && b.active)
                b.taken = false;
            b.expect_pattern = true;
            b.active = false;
        }
        if (isCaseTerminator(cmd.words.front().text))
            continue;
        if (isCase() && cmd.words.front().text == "esac") {
            const Branch b = m_branches.back();
            m_branches.pop_back();
            if (b.known && !b.taken && active())
                setLastStatus(Truth::True, "`esac`", false);   // no pattern matched: status 0
            if (!b.known && !b.assigned.empty())
                warn(b.line, "case " + b.subject + ": the subject is not known from the text, so every branch is read in "
                             "order and " + [&] {
                                 std::string names;
                                 for (std::size_t a = 0; a < b.assigned.size(); ++a)
                                     names += (a ? ", " : "") + b.assigned[a];
                                 return names;
                             }() + (b.assigned.size() == 1 ? " keeps the value of the last branch that sets it"
                                                           : " keep the values of the last branch that sets them"));
            continue;
        }
        if (isCase() && m_branches.back().expect_pattern) {
            casePattern(m_branches.back(), cmd, 0);
            continue;
        }
        // After && or ||: whether bash runs this command, from the status of the one before.
        Truth runs = Truth::True;
        const bool chained = before == "&&" || before == "||";
        if (chained) {
            if (status == Truth::Unknown)
                runs = Truth::Unknown;
            else
                runs = (status == Truth::True) == (before == "&&") ? Truth::True : Truth::False;
        }
        // What the running of this command depends on from outside the script: the call's, and
        // the list's before && / ||.
        std::vector<std::string> runsEnv = m_callEnv;
        if (chained)
            addEnv(runsEnv, statusEnv);
        struct CallEnv {
            std::vector<std::string>& env;
            std::vector<std::string> outer;
            CallEnv(std::vector<std::string>& e, const std::vector<std::string>& now) : env(e), outer(e) { env = now; }
            ~CallEnv() { env = std::move(outer); }
        };
        // A subshell ( ... ): its commands up to the matching ")" are read in a subshell of their
        // own, unless bash skips them; after it a && or || is not followed, as after a group.
        if (isSubshellOpen(cmd)) {
            const std::size_t close = subshellEnd(commands, k);
            if (active() && runs != Truth::False) {
                {
                    CallEnv under(m_callEnv, runsEnv);
                    runSubshell(commands.subspan(k + 1, close - k - 1));
                }
                if (close < commands.size() && (commands[close].separator == "&&" || commands[close].separator == "||")) {
                    status = Truth::Unknown;
                    statusTest.clear();
                    statusEnv = runsEnv;
                }
            }
            k = close;
            continue;
        }
        if (isSubshellClose(cmd))
            continue;   // its "(" was read as part of an if or while condition
        // A command of a pipeline, or one run with &: bash runs it in a child process (manual
        // 3.2.3, 3.2.4.3), so it is read as a subshell.
        const bool ownProcess = cmd.separator == "|" || cmd.separator == "&" || before == "|";
        std::size_t w = 0;
        // The condition of if/elif/while: this command and the ones joined to it by && or ||.
        auto condition = [&]() {
            std::vector<const RawCommand*> parts{&cmd};
            while (k + 1 < commands.size() && (commands[k].separator == "&&" || commands[k].separator == "||"))
                parts.push_back(&commands[++k]);
            return parts;
        };
        bool consumed = false;
        bool negated = false;
        bool group = false;
        while (w < cmd.words.size() && !cmd.words[w].array_assign && !consumed) {
            const std::string& t = cmd.words[w].text;
            if (t == "if") {
                Branch b;
                m_conditionEnv.clear();
                const Truth truth = active() ? evalCondition(condition(), w + 1) : (condition(), Truth::False);
                b.known = truth != Truth::Unknown;
                b.taken = truth == Truth::True;
                b.active = truth != Truth::False;
                b.line = cmd.line;
                b.env = m_conditionEnv;
                b.then_status = m_conditionThen;
                b.else_status = m_conditionElse;
                m_branches.push_back(b);
                consumed = true;
            } else if (t == "elif") {
                const auto parts = condition();
                // Only a block these commands opened: a stray elif, else, fi or } in a function
                // body or a subshell leaves the blocks around the call or the subshell alone.
                if (m_branches.size() > base) {
                    Branch& b = m_branches.back();
                    if (b.known && b.taken) {
                        b.active = false;
                    } else if (b.known) {
                        const Branch block = b;
                        m_branches.pop_back();
                        m_conditionEnv.clear();
                        const Truth truth = active() ? evalCondition(parts, w + 1) : Truth::False;
                        m_branches.push_back(block);
                        Branch& nb = m_branches.back();
                        nb.known = truth != Truth::Unknown;
                        nb.taken = truth == Truth::True;
                        nb.active = truth != Truth::False;
                        nb.line = cmd.line;
                        addEnv(nb.env, m_conditionEnv);   // and the conditions before it
                        nb.then_status = m_conditionThen;
                        nb.else_status = m_conditionElse;
                    } else {
                        // Not evaluated (an earlier condition is undecided): whether this
                        // branch or the else after it runs is undecided either way.
                        b.active = true;
                        b.then_status = b.else_status = {"!U`elif`"};
                    }
                    m_branches.back().in_else = false;
                }
                consumed = true;
            } else if (t == "else") {
                if (m_branches.size() > base) {
                    Branch& b = m_branches.back();
                    b.active = !b.known || !b.taken;
                    b.in_else = true;
                }
                ++w;
            } else if (t == "fi") {
                // Closes the innermost if (and any group or case left open inside it).
                while (m_branches.size() > base && m_branches.back().kind != Branch::Kind::If)
                    m_branches.pop_back();
                if (m_branches.size() > base)
                    m_branches.pop_back();
                ++w;
            } else if ((t == "while" || t == "until" || t == "for" || t == "select") && active() && runs != Truth::False
                       && loopInOwnProcess(commands, k, w, before)) {
                consumed = true;
                continue;
            } else if (t == "while" || t == "until") {
                // A condition the text decides at each turn (the script's arguments given,
                // counters): the body as often as bash runs it; any other loop once.
                if (active() && runs != Truth::False && before != "&&" && before != "||"
                    && iterateWhile(commands, k, w, t == "until")) {
                    consumed = true;
                    continue;
                }
                if (active())
                    warnOnce("loop", cmd.line, "loops are read as straight-line code (their body once, where it is written)");
                // `while read -r K V`: the names read sets hold input the text does not give.
                for (const RawCommand* part : condition()) {
                    std::size_t first = part == &cmd ? w + 1 : 0;
                    while (first < part->words.size() && part->words[first].text == "!")
                        ++first;
                    const std::size_t h = commandWord(*part, first);   // past IFS= and the like
                    const std::string head = h < part->words.size() ? part->words[h].text : std::string();
                    if (active() && (head == "read" || head == "readarray" || head == "mapfile"))
                        readInput(*part, h);
                    else if (active() && head == "getopts")
                        getoptsUnknown(*part, first);
                }
                pushLoop();
                consumed = true;   // loop bodies are read once, as straight-line code
            } else if (t == "case") {
                Branch b;
                b.kind = Branch::Kind::Case;
                b.line = cmd.line;
                b.outer_active = active() && runs != Truth::False;
                b.active = false;
                b.expect_pattern = true;
                b.known = true;
                if (w + 2 < cmd.words.size() && cmd.words[w + 2].text == "in") {
                    if (b.outer_active) {
                        m_unknownExpansion = false;
                        m_envReads.clear();
                        // The word is not split (manual 3.2.5.2): `case $S` keeps S's blanks.
                        b.subject = expandToString(cmd.words[w + 1].text, cmd.line, 0);
                        b.env = m_envReads;
                        b.known = !m_unknownExpansion;
                        if (!b.known)
                            b.subject = cmd.words[w + 1].text;
                    }
                    m_branches.push_back(b);
                    // "case $X in small) ...": the first pattern list is on the same command.
                    if (w + 3 < cmd.words.size())
                        casePattern(m_branches.back(), cmd, w + 3);
                } else {
                    b.known = false;
                    b.subject = w + 1 < cmd.words.size() ? cmd.words[w + 1].text : std::string();
                    m_branches.push_back(b);
                }
                consumed = true;
            } else if (t == "for" || t == "select") {
                // for NAME in WORDS whose words the text gives: the body once per word, as bash
                // runs it; any other loop once, where it is written.
                if (t == "for" && active() && runs != Truth::False && before != "&&" && before != "||" && iterateFor(commands, k, w)) {
                    consumed = true;
                    continue;
                }
                if (active())
                    warnOnce("loop", cmd.line, "loops are read as straight-line code (their body once, where it is written)");
                pushLoop();
                consumed = true;
            } else if (t == "function") {
                // function NAME { ... } or function NAME() { ... }: the body's "{" on this
                // command or on the next.
                const std::string name = w + 1 < cmd.words.size() ? cmd.words[w + 1].text : std::string();
                const bool here = w + 2 < cmd.words.size();
                defineFunction(name, commands, k, here ? k : k + 1, here ? w + 2 : 0, active() && runs != Truth::False);
                consumed = true;
            } else if (t == "{" && m_branches.size() > base && m_branches.back().kind == Branch::Kind::Loop
                       && m_branches.back().awaiting_body) {
                // The loop's body as a { } group: its "}" closes the loop.
                m_branches.back().awaiting_body = false;
                m_branches.back().brace_body = true;
                ++w;
            } else if (t == "{") {
                // A group: run or skipped as a whole when it follows && or ||. One that is a
                // command of a pipeline or run with & is a child process, so read as a subshell.
                RawCommand from = cmd;
                from.words.erase(from.words.begin(), from.words.begin() + static_cast<std::ptrdiff_t>(w));
                const std::size_t close = groupEnd(from, commands, k);
                if (active() && runs != Truth::False && close < commands.size() && commands[close].words.size() == 1
                    && (commands[close].separator == "|" || commands[close].separator == "&" || before == "|")) {
                    std::vector<RawCommand> inner(commands.begin() + static_cast<std::ptrdiff_t>(k),
                                                  commands.begin() + static_cast<std::ptrdiff_t>(close));
                    inner.front().words = std::vector<RawWord>(from.words.begin() + 1, from.words.end());
                    if (inner.front().words.empty())
                        inner.erase(inner.begin());
                    {
                        CallEnv under(m_callEnv, runsEnv);
                        runSubshell(inner);
                    }
                    if (commands[close].separator == "&&" || commands[close].separator == "||") {
                        status = Truth::Unknown;
                        statusTest.clear();
                        statusEnv = runsEnv;
                    }
                    k = close;
                    consumed = true;
                    break;
                }
                Branch b;
                b.kind = Branch::Kind::Group;
                b.known = runs != Truth::Unknown;
                b.active = runs != Truth::False;
                if (chained)
                    b.env = statusEnv;
                m_branches.push_back(b);
                group = true;
                ++w;
            } else if (t == "done") {
                // Closes the innermost loop body (and any block left open inside it).
                if (std::any_of(m_branches.begin() + static_cast<std::ptrdiff_t>(base), m_branches.end(),
                                [](const Branch& b) { return b.kind == Branch::Kind::Loop; })) {
                    while (m_branches.back().kind != Branch::Kind::Loop)
                        m_branches.pop_back();
                    m_branches.pop_back();
                }
                ++w;
            } else if (t == "}") {
                if (m_branches.size() > base
                    && (m_branches.back().kind == Branch::Kind::Group
                        || (m_branches.back().kind == Branch::Kind::Loop && m_branches.back().brace_body)))
                    m_branches.pop_back();
                ++w;
            } else if (t == "!") {
                negated = !negated;
                ++w;
            } else if (reservedWords().count(t) || t == "esac") {
                if (t == "do" && m_branches.size() > base && m_branches.back().kind == Branch::Kind::Loop)
                    m_branches.back().awaiting_body = false;
                ++w;
            } else {
                break;
            }
        }
        // NAME() { ...: a function definition ("NAME" ends at the "(" of "()").
        if (!consumed && w + 1 == cmd.words.size() && cmd.separator == "(" && !cmd.words[w].array_assign
            && validName(cmd.words[w].text)) {
            defineFunction(cmd.words[w].text, commands, k, k + 1, 0, active() && runs != Truth::False);
            if (active() && runs != Truth::False)
                setLastStatus(Truth::True, "`" + cmd.words[w].text + "()`", false);   // a definition: status 0
            continue;
        }
        if (!consumed && w < cmd.words.size() && !active()) {
            // Skipped because of what the text does not give: what it would set depends on that.
            std::vector<std::string> env;
            int testLine = 0;   // the outermost test that skips it
            for (const Branch& b : m_branches)
                if (b.known && !b.active) {
                    addEnv(env, b.env);
                    if (testLine == 0 && !b.env.empty())
                        testLine = b.line;
                }
            skippedAssignments(cmd, w, env, testLine);
        }
        if (consumed || w >= cmd.words.size() || !active()) {
            if (group && runs == Truth::Unknown && active() && !statusTest.empty())
                warn(cmd.line, "the test " + statusTest + " before " + before
                                   + " cannot be decided from the text; the { ... } group after it is read as if it ran");
            if (!consumed && active() && runs != Truth::False && (cmd.separator == "&&" || cmd.separator == "||")) {
                status = Truth::Unknown;   // "}" or "fi" before && / ||: not followed
                statusTest.clear();
                statusEnv = runsEnv;
            }
            continue;
        }
        if (runs == Truth::False) {
            // bash skips it; the list's status stays the one before. `[ -n "$KEY" ] &&
            // ARGS+=(...)`: what it would set depends on the test.
            if (active())
                skippedAssignments(cmd, w, runsEnv, cmd.line);
            continue;
        }
        if (cmd.words[w].text == "exit") {
            // Bash ends the script here, or the subshell the exit is in: when the text decides
            // that this line runs. Under a test it cannot decide, what follows is read too, as
            // every branch is. A command of a pipeline ends only its own process.
            if (ownProcess)
                continue;
            const std::size_t from = m_subshells.empty() ? 0 : m_subshells.back().branches;
            // A guard on the environment or the script's arguments ([ -z "$DATA_PATH" ] && exit 1,
            // [ $# -lt 1 ]): bash run bare takes it, the real run passes it. Read as not taken,
            // and the blocks it depends on as undecided, so that their other branches (the
            // else of the guard) are read too.
            std::vector<std::string> env = runsEnv;
            addEnv(env, branchesEnv(from));
            // After a return the text cannot decide, in this call or one around it.
            bool afterReturn = false;
            for (const Frame& frame : m_frames)
                if (frame.after_undecided_return) {
                    afterReturn = true;
                    addEnv(env, frame.after_return_env);
                }
            // An exit that runs only if a command succeeds (cd /tmp && exit 1) is no guard: the
            // real run takes it as likely as not.
            // Nor is one that depends on a variable set where the text could not decide whether
            // the assignment runs (MULTI=0; cmd && MULTI=1; if [ "$MULTI" = 1 ]; then exit 0;
            // fi): the reading follows the guess, but the exit is undecided.
            std::vector<std::string> succeedsList, eitherWayList, guessedList;
            for (const std::string& read : env)
                if (read.size() > 2 && read[0] == '!' && read[1] != 'F' && read.rfind("!U`elif`", 0) != 0) {
                    const bool guess = read.find("(line ") != std::string::npos;
                    (guess ? guessedList : read[1] == 'S' ? succeedsList : eitherWayList)
                        .push_back(guess ? read.substr(3, read.size() - 4) : read.substr(2));
                }
            const std::string succeeds = joinNames(succeedsList), guessed = joinNames(guessedList);
            std::vector<std::string> all = succeedsList;
            all.insert(all.end(), eitherWayList.begin(), eitherWayList.end());
            const std::string eitherWay = joinNames(eitherWayList), anyStatus = joinNames(all);
            const bool undecidedStatus = dropUndecidedStatus(env);
            if (!env.empty()) {
                for (std::size_t b = from; b < m_branches.size(); ++b)
                    if (!m_branches[b].env.empty())
                        m_branches[b].known = false;
                std::string text;
                for (std::size_t a = w; a < cmd.words.size(); ++a)
                    text += (a > w ? " " : "") + cmd.words[a].text;
                // Keyed by where the script exits: the call's line when the exit is in a function
                // (guards sharing a usage/die function are each listed).
                const int at = exitSite(cmd.line);
                if (at != cmd.line)
                    text += " (line " + std::to_string(cmd.line) + ", in function " + m_frames.back().function + ")";
                if (std::none_of(m_envExits.begin(), m_envExits.end(), [&](const EnvExit& e) { return e.line == at; }))
                    m_envExits.push_back({at, text + " depends on " + describeEnv(env), m_commands.size()});
                continue;
            }
            const bool inLoop = std::any_of(m_branches.begin() + static_cast<std::ptrdiff_t>(from), m_branches.end(),
                                            [](const Branch& b) { return b.kind == Branch::Kind::Loop; });
            if (runs == Truth::True && !m_undecidedCall && !afterReturn && !undecidedStatus
                && std::all_of(m_branches.begin() + static_cast<std::ptrdiff_t>(from), m_branches.end(),
                               [](const Branch& b) { return b.known; })) {
                m_exiting = true;
                if (m_subshells.empty()) {
                    m_exitLine = exitSite(cmd.line);
                    if (m_exitLine != cmd.line)
                        warn(m_exitLine, "the script exits here: the call runs function " + m_frames.back().function
                                             + ", whose exit at line " + std::to_string(cmd.line) + " runs");
                }
                break;
            }
            const std::string rest = "; the rest of the " + std::string(m_subshells.empty() ? "script" : "subshell")
                + " is read as if it did not exit";
            const int at = exitSite(cmd.line);
            const std::string where = at == cmd.line ? std::string()
                : " (line " + std::to_string(cmd.line) + ", in function " + m_frames.back().function + ")";
            std::string message;
            if (inLoop)
                message = "exit" + where + " is inside a loop body, which the text does not tell runs" + rest;
            else if (runs == Truth::Unknown && !statusTest.empty())
                message = "exit" + where + " runs after the test " + statusTest + ", which cannot be decided from the text" + rest;
            else if (m_undecidedCall && runs == Truth::True && at != cmd.line)
                message = "exit" + where + " runs when this call does, which the text cannot decide" + rest;
            else if (!guessed.empty())
                message = "exit" + where + " depends on " + guessed + ", whose value the text cannot decide" + rest;
            else if (!succeeds.empty() && eitherWay.empty())
                message = "exit" + where + " runs only if " + succeeds + " succeeds, which the text cannot decide" + rest;
            else if (!succeeds.empty() || !eitherWay.empty())
                message = "exit" + where + " depends on the exit status of " + anyStatus + ", which the text cannot decide" + rest;
            else if (afterReturn && runs == Truth::True)
                message = "exit" + where + " runs only if a return before it in the function does not, which the text cannot "
                    "decide" + rest;
            else
                message = "exit" + where + " runs under a test that cannot be decided from the text" + rest;
            warnOnce("exit:" + std::to_string(at) + ":" + std::to_string(cmd.line), at, message);
            continue;
        }
        if (cmd.words[w].text == "return" && !m_frames.empty()) {
            // Bash leaves the function here: when the text decides that this line runs. Under a
            // test it cannot decide, the rest of the body is read too, as every branch is. A
            // command of a pipeline returns only from its own process.
            if (ownProcess)
                continue;
            // Decided on what the text does not give (the script's arguments, its environment):
            // a guard the real run passes, as for exit; read as not returning.
            std::vector<std::string> outside = runsEnv;
            addEnv(outside, branchesEnv(base));
            std::erase_if(outside, [](const std::string& r) { return r.empty() || r[0] == '!'; });
            if (runs == Truth::True && outside.empty()
                && std::all_of(m_branches.begin() + static_cast<std::ptrdiff_t>(base), m_branches.end(),
                               [](const Branch& b) { return b.known; })) {
                m_returning = true;   // ends the call, also from inside a loop's body (callFunction)
                break;
            }
            const bool guard = runs == Truth::True && !outside.empty();
            const std::string test = guard ? "on a test that depends on " + describeEnv(outside) + ", which"
                : runs == Truth::Unknown && !statusTest.empty() ? "after the test " + statusTest + ", which"
                                                                : "under a test that";
            // The rest of the body runs only when this return does not: what it depends on,
            // with the sense of each command's status reversed.
            // Not for a return in a subshell inside the call: it ends that subshell only. What
            // decides whether the call runs at all (m_callEnv) keeps its sense.
            Frame& frame = m_frames.back();
            if (m_subshells.size() == frame.subshells) {
                frame.after_undecided_return = true;
                std::vector<std::string> env = chained ? statusEnv : std::vector<std::string>();
                addEnv(env, branchesEnv(base));
                for (const std::string& read : env)
                    if (std::find(m_callEnv.begin(), m_callEnv.end(), read) == m_callEnv.end())
                        addEnv(frame.after_return_env, {reversedStatus(read)});
            }
            warnOnce("return:" + std::to_string(cmd.line), cmd.line,
                     "return in function " + m_frames.back().function + " runs " + test
                         + " cannot be decided from the text; the rest of the function is read as if it did not return");
            continue;
        }
        if (runs == Truth::Unknown && !statusTest.empty()) {
            // Read as if it ran (as before), and said when it changes a variable.
            const std::string& head = cmd.words[w].text;
            const bool setsVariables = group
                || std::any_of(cmd.words.begin() + static_cast<std::ptrdiff_t>(w), cmd.words.end(),
                               [](const RawWord& word) { return word.array_assign; })
                || head == "export" || head == "declare" || head == "typeset" || head == "local" || head == "readonly"
                || head == "unset"
                || std::all_of(cmd.words.begin() + static_cast<std::ptrdiff_t>(w), cmd.words.end(),
                               [](const RawWord& word) { return !assignedName(word.text).empty(); });
            if (setsVariables)
                warn(cmd.line, "the test " + statusTest + " before " + before
                                   + " cannot be decided from the text; the command after it is read as if it ran");
        }
        const bool continues = cmd.separator == "&&" || cmd.separator == "||";
        m_conditionEnv.clear();
        Truth own = continues ? statusOf(cmd, w) : Truth::Unknown;
        m_arithmeticStatus.reset();
        const std::vector<std::string> ownEnv = m_conditionEnv;
        // $? after it, from what it is given before it runs (`shift 2` changes its arguments):
        // statusOf reads a test again; what the list's reading keeps is put back.
        Truth last = own;
        if (!continues) {
            const NameList envReads = m_envReads;
            const auto conditionEnv = m_conditionEnv;
            const auto conditionThen = m_conditionThen, conditionElse = m_conditionElse;
            last = statusOf(cmd, w);
            m_envReads = envReads;
            m_conditionEnv = conditionEnv;
            m_conditionThen = conditionThen;
            m_conditionElse = conditionElse;
        }
        if (ownProcess)
            enterSubshell();
        {
            CallEnv under(m_callEnv, runsEnv);
            // A function called where the text cannot decide whether the call runs: an exit
            // in it is undecided too.
            const bool outerUndecided = m_undecidedCall;
            m_undecidedCall = outerUndecided || runs == Truth::Unknown;
            execute(cmd, w);
            m_undecidedCall = outerUndecided;
        }
        if (ownProcess)
            leaveSubshell();
        if (m_arithmeticStatus) {
            // let / (( )) that assign: their status is known only once they are evaluated.
            own = continues ? *m_arithmeticStatus : own;
            last = *m_arithmeticStatus;
            m_arithmeticStatus.reset();
        }
        if (!m_exiting)
            setLastStatus(negated ? truthNot(last) : last, commandText(cmd, w), negated);
        if (continues) {
            statusEnv = runsEnv;
            addEnv(statusEnv, ownEnv);
            const Truth mine = negated ? truthNot(own) : own;
            const std::string& head = cmd.words[w].text;
            const bool test = head == "[" || head == "[[" || head == "test" || head.rfind("((", 0) == 0;
            // cd "$DIR" || exit 1: whether the command fails is the machine's, not the text's.
            // What follows || runs when it fails (&& with !), what follows && when it succeeds.
            const bool onFailure = (cmd.separator == "||") != negated;
            if (runs == Truth::Unknown) {
                if ((before == "||" && mine == Truth::True) || (before == "&&" && mine == Truth::False)) {
                    // a || true, a && false: the list's status is this command's, whatever a did.
                    status = mine;
                    statusTest.clear();
                    statusEnv = m_callEnv;
                    addEnv(statusEnv, ownEnv);
                } else {
                    status = Truth::Unknown;   // the test before still decides; statusTest names it
                    if (mine == Truth::Unknown && !test)
                        addEnv(statusEnv, {statusRead(cmd, w, onFailure ? 'F' : 'S')});
                    // a && b || exit: the exit runs when either failed, so on a failure only;
                    // a || b && exit runs when either succeeded: undecided either way.
                    if (cmd.separator != before)
                        for (std::string& read : statusEnv)
                            if (read.size() > 1 && read[0] == '!' && (read[1] == 'F' || read[1] == 'S')
                                && std::find(m_callEnv.begin(), m_callEnv.end(), read) == m_callEnv.end())
                                read[1] = before == "&&" && cmd.separator == "||" ? 'F' : 'U';
                }
            } else {
                status = mine;
                statusTest.clear();
                if (status == Truth::Unknown && test) {
                    for (std::size_t a = w; a < cmd.words.size(); ++a)
                        statusTest += (a > w ? " " : "") + cmd.words[a].text;
                    statusTest = "`" + statusTest + "` (line " + std::to_string(cmd.line) + ")";
                } else if (status == Truth::Unknown) {
                    addEnv(statusEnv, {statusRead(cmd, w, onFailure ? 'F' : 'S')});
                }
            }
        }
    }
    m_branches.erase(m_branches.begin() + static_cast<std::ptrdiff_t>(base), m_branches.end());
}

std::string BashReader::syntaxError(std::span<const RawCommand> commands, int* errorLine, std::size_t* runs,
                                    std::string_view linesOf)
{
    // The reserved words of the compound commands (manual 3.2.5) in their order, and each one
    // closed. Bash parses a script, an eval text or a command string one line at a time (a
    // compound command spanning lines as one) and runs the lines before the one that fails.
    enum class Open { If, Loop, Case, Brace, Subshell };
    std::vector<Open> open;
    std::size_t outerStart = 0;   // the first command of the line that opened the outermost compound still open
    int outerLine = 0;
    bool conditionPending = false;   // after if, elif, while, until: a command before then / do
    auto closes = [&](Open what) {
        if (open.empty() || open.back() != what)
            return false;
        open.pop_back();
        return true;
    };
    std::size_t index = 0;
    // Bash parses a whole line of commands (up to a newline outside any compound command)
    // before it runs any of them: the first command of the current line.
    std::size_t lineStart = 0;
    // An error at the current command: bash runs the commands of the lines before it.
    auto at = [&](std::string message) {
        if (errorLine)
            *errorLine = commands[index].line;
        if (runs)
            *runs = open.empty() ? lineStart : outerStart;
        return message;
    };
    auto opens = [&](Open what) {
        if (open.empty()) {
            outerStart = lineStart;
            outerLine = commands[index].line;
        }
        open.push_back(what);
    };
    // A for or select loop may take a { ... } group where do ... done stands (bash's
    // undocumented but accepted form, `for x in a; { ...; }`).
    bool forWaitsDo = false;
    for (; index < commands.size(); ++index) {
        const RawCommand& c = commands[index];
        if (open.empty() && index > 0 && commands[index - 1].separator == "\n")
            lineStart = index;
        if (isSubshellOpen(c)) {
            opens(Open::Subshell);
            continue;
        }
        if (isSubshellClose(c)) {
            if (!closes(Open::Subshell))
                return at("unexpected )");
            continue;
        }
        if ((isCaseTerminator(c.separator) || (!c.words.empty() && isCaseTerminator(c.words.front().text)))
            && std::find(open.begin(), open.end(), Open::Case) == open.end())
            return at("unexpected " + (c.words.empty() || !isCaseTerminator(c.words.front().text) ? c.separator : c.words.front().text));
        if (!open.empty() && open.back() == Open::Case) {
            // Patterns and branches: only the case's own end (or a case inside) is followed.
            if (!c.words.empty() && c.words.front().text == "esac")
                open.pop_back();
            else if (!c.words.empty() && c.words.front().text == "case")
                opens(Open::Case);
            continue;
        }
        for (std::size_t w = 0; w < c.words.size(); ++w) {
            const std::string& t = c.words[w].text;
            if (t == "!")
                continue;
            // time [-p] [--] PIPELINE and coproc [NAME] COMMAND (manual 3.2.3, 3.2.6) prefix a
            // command, compound or simple; coproc's NAME stands only before a compound one.
            if (t == "time") {
                while (w + 1 < c.words.size() && (c.words[w + 1].text == "-p" || c.words[w + 1].text == "--"))
                    ++w;
                continue;
            }
            if (t == "coproc") {
                static const std::set<std::string> compound = {"{", "if", "while", "until", "for", "select", "case"};
                if (w + 2 < c.words.size() && !compound.count(c.words[w + 1].text) && compound.count(c.words[w + 2].text))
                    ++w;
                continue;
            }
            if (t == "{" && forWaitsDo && !open.empty() && open.back() == Open::Loop) {
                open.back() = Open::Brace;   // for ...; { ...; }: closed by }
                forWaitsDo = false;
                continue;
            }
            if (t == "if" || t == "while" || t == "until") {
                opens(t == "if" ? Open::If : Open::Loop);
                conditionPending = true;
                continue;
            }
            if ((t == "then" || t == "do") && conditionPending)
                return at("unexpected " + t + " (no condition before it)");
            if (t == "then" || t == "else") {
                if (open.empty() || open.back() != Open::If)
                    return at("unexpected " + t);
                continue;
            }
            if (t == "elif") {
                if (open.empty() || open.back() != Open::If)
                    return at("unexpected elif");
                conditionPending = true;
                continue;
            }
            if (t == "do") {
                if (open.empty() || open.back() != Open::Loop)
                    return at("unexpected do");
                forWaitsDo = false;
                continue;
            }
            if (t == "fi" || t == "done" || t == "esac" || t == "}") {
                if (!closes(t == "fi" ? Open::If : t == "done" ? Open::Loop : t == "esac" ? Open::Case : Open::Brace))
                    return at("unexpected " + t);
                continue;
            }
            if (t == "{") {
                opens(Open::Brace);
                continue;
            }
            conditionPending = false;
            forWaitsDo = false;
            if (t == "for" || t == "select") {
                opens(Open::Loop);   // for NAME in WORDS: its words follow
                forWaitsDo = true;

            } else if (t == "case") {
                opens(Open::Case);
            } else if (t == "function") {
                // function NAME [()] { ...
                std::size_t b = w + 2;
                if (b < c.words.size() && c.words[b].text == "()")
                    ++b;
                if (b < c.words.size() && c.words[b].text == "{")
                    opens(Open::Brace);
            } else if (t == "[[" && std::none_of(c.words.begin() + static_cast<std::ptrdiff_t>(w), c.words.end(),
                                                 [](const RawWord& x) { return x.text == "]]"; })) {
                return at("[[ without ]]");
            }
            break;   // a simple command: the rest are its words
        }
    }
    if (!open.empty()) {
        static const char* const names[] = {"if", "loop", "case", "{", "("};
        static const char* const closers[] = {"fi", "done", "esac", "}", ")"};
        if (errorLine)
            *errorLine = outerLine;
        if (runs)
            *runs = outerStart;
        const int kind = static_cast<int>(open.back());
        return std::string("unexpected end of the text: no ") + closers[kind] + " closes the " + names[kind]
            + (open.size() > 1 ? " inside the compound command" : "") + " opened at line " + std::to_string(outerLine)
            + (linesOf.empty() ? std::string() : " of " + std::string(linesOf));
    }
    return {};
}

void BashReader::evalText(const RawCommand& cmd, std::size_t w, std::size_t firstAssign)
{
    // eval [--] [ARG ...] (manual 4.1): the arguments, expanded as any command's and joined by
    // blanks, are read and run as commands of the shell where eval stands, so that
    // `run_cmd="torchrun $ARGS pretrain_gpt.py ..."; eval $run_cmd` launches as bash runs it.
    // What the text put together holds is read as written there: a command substitution kept
    // as text stays text, a quote opens a quoted word.
    std::string text;
    bool first = true;
    std::size_t a = w + 1;
    if (a < cmd.words.size() && cmd.words[a].text == "--")
        ++a;
    // What the text was computed from outside the script goes with every word of the commands
    // it runs, as with the words bash splits from one value (ShellCommand::word_reads).
    NameList outerReads;
    outerReads.swap(m_valueReads);
    for (; a < cmd.words.size(); ++a)
        for (const std::string& field : expandWord(cmd.words[a].text, cmd.line)) {
            if (!first)
                text += ' ';
            text += field;
            first = false;
        }
    std::vector<std::string> textReads = m_evalReads;
    addEnv(textReads, m_valueReads);
    m_valueReads.swap(outerReads);
    addEnv(m_valueReads, outerReads);
    std::vector<RawCommand> commands;
    if (!parseText(text, cmd.line, "eval", commands))
        return;
    // NAME=value eval ...: the assignments hold while the text runs (bash's default mode).
    const std::vector<SavedVariable> hidden = applyTemporarily(cmd, firstAssign, w);
    runText(commands, cmd.line, "eval", std::move(textReads));
    restoreVariables(hidden);
}

bool BashReader::parseText(const std::string& text, int line, const std::string& what, std::vector<RawCommand>& commands)
{
    if (text.find_first_not_of(" \t\n") == npos)
        return false;   // nothing to run: status 0
    m_evalBytes += text.size();
    if (m_evalDepth >= static_cast<int>(kMaxSubshellDepth) || m_evalCommands > kMaxEvalCommands || m_evalBytes > kMaxEvalBytes) {
        warnOnce("eval", line, what + " nested " + std::to_string(kMaxSubshellDepth) + " deep, or past "
                                   + std::to_string(kMaxEvalCommands) + " commands or " + std::to_string(kMaxEvalBytes >> 20)
                                   + " MiB of " + (what == "eval" ? "eval texts" : "texts run as commands")
                                   + ", is not followed; its text is ignored");
        m_evalLines.push_back(line);
        return false;
    }
    std::string error;
    std::size_t runs = 0;
    int errorLine = 0;
    const std::string textName = what + "'s text";
    try {
        commands = tokenize(text, false, &what, line);
        error = syntaxError(commands, &errorLine, &runs, textName);
    } catch (const InputError& e) {
        error = e.detail();
        runs = 0;
    }
    if (!error.empty()) {
        // bash reports the syntax error and the command fails (status 2); the script goes on.
        // Of the text it runs the lines before the one the error is in.
        if (runs == 0) {
            warn(line, what + "'s text does not parse (" + error + "); bash reports a syntax error there and runs none of it");
            return false;
        }
        warn(line, what + "'s text does not parse (" + error + ", at its line " + std::to_string(errorLine)
                       + "); bash reports a syntax error there and runs only its lines before line "
                       + std::to_string(commands[runs].line));
        commands.resize(runs);
    }
    for (RawCommand& c : commands)
        c.line = line;   // every command of the text stands where the command running it does
    m_evalCommands += commands.size();
    return true;
}

void BashReader::runText(std::span<const RawCommand> commands, int line, const std::string& what, std::vector<std::string> textReads)
{
    ++m_evalDepth;
    textReads.swap(m_evalReads);
    try {
        run(commands);
    } catch (const InputError& e) {
        // A body the text opens and does not close, found as it runs.
        warn(line, what + "'s text does not parse (" + e.detail() + "); bash reports a syntax error there and runs none of it");
    }
    textReads.swap(m_evalReads);
    --m_evalDepth;
}

bool BashReader::skippedInOpenBlock(const std::string& read) const
{
    if (!read.starts_with(kSkippedMark))
        return false;
    const std::size_t index = std::strtoul(read.c_str() + kSkippedMark.size(), nullptr, 10);
    if (index >= m_skippedByTest.size())
        return false;
    const int line = m_skippedByTest[index].line;
    return std::any_of(m_branches.begin(), m_branches.end(), [&](const Branch& b) { return b.kind == Branch::Kind::If && b.line == line; });
}

std::pair<std::vector<std::string>, int> BashReader::batchDirectives(std::string_view script)
{
    std::vector<std::string> words;
    int first = 0, line = 0;
    std::size_t at = 0;
    while (at < script.size()) {
        const std::size_t end = std::min(script.find('\n', at), script.size());
        std::string_view l = script.substr(at, end - at);
        at = end + 1;
        ++line;
        const std::size_t start = l.find_first_not_of(" \t\r");
        if (start == npos)
            continue;
        l.remove_prefix(start);
        if (l.front() != '#')
            break;
        if (!l.starts_with("#SBATCH") || (l.size() > 7 && l[7] != ' ' && l[7] != '\t'))
            continue;
        std::istringstream in{std::string(l.substr(7))};
        for (std::string w; in >> w;) {
            if (w.front() == '#')
                break;   // a comment after the options
            words.push_back(w);
        }
        if (first == 0)
            first = line;
    }
    return {words, first};
}

std::optional<BashReader::SlurmOption> BashReader::slurmOptionAt(const std::vector<std::string>& words, std::size_t& k,
                                                                 std::size_t end, std::initializer_list<std::string_view> names)
{
    SlurmOption o;
    o.name = words[k];
    bool attached = false;
    if (o.name.starts_with("--")) {
        if (const auto eq = o.name.find('='); eq != npos) {
            o.value = o.name.substr(eq + 1);
            o.name.resize(eq);
            attached = true;
        }
    } else if (o.name.size() > 2 && o.name[0] == '-' && (o.name[1] == 'N' || o.name[1] == 'n')) {
        o.value = o.name.substr(2);
        o.name.resize(2);
        attached = true;
    }
    if (std::find(names.begin(), names.end(), o.name) == names.end())
        return std::nullopt;
    if (!attached && k + 1 < end)
        o.value = words[++k];
    o.written = o.name + (attached ? (o.name.starts_with("--") ? "=" : "") : " ") + o.value;
    return o;
}

std::vector<BashReader::JobVariable> BashReader::batchJobEnvironment(const std::vector<std::string>& options)
{
    std::map<std::string, std::pair<std::string, std::string>> set;   // name -> value, option
    auto allDigits = [](const std::string& v) {
        return !v.empty() && v.size() <= 9 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    for (std::size_t k = 0; k < options.size(); ++k) {
        const auto option = slurmOptionAt(options, k, options.size(), {"-N", "--nodes", "-n", "--ntasks", "--ntasks-per-node", "--gpus-per-node"});
        if (!option)
            continue;
        const std::string& a = option->name;
        const std::string& v = option->value;   // empty when none is left: sets nothing
        const std::string& written = option->written;
        if (a == "-N" || a == "--nodes") {
            // MIN-MAX: the job gets at most MAX nodes; the import takes the maximum, as for srun.
            const std::string count = v.find('-') != npos && v.find('-') > 0 ? v.substr(v.find('-') + 1) : v;
            if (!allDigits(count))
                continue;
            set["SLURM_JOB_NUM_NODES"] = {count, written};
            set["SLURM_NNODES"] = {count, written};
        } else if (a == "-n" || a == "--ntasks") {
            if (!allDigits(v))
                continue;
            set["SLURM_NTASKS"] = {v, written};
            set["SLURM_NPROCS"] = {v, written};
        } else if (a == "--ntasks-per-node") {
            if (allDigits(v))
                set["SLURM_NTASKS_PER_NODE"] = {v, written};
        } else if (allDigits(v)) {   // --gpus-per-node=8; a typed count (h100:8) is left out
            set["SLURM_GPUS_PER_NODE"] = {v, written};
        }
    }
    // Without --ntasks, a fixed node count and --ntasks-per-node give the tasks in all, as
    // sbatch computes them (nodes x tasks per node) and sets them.
    if (!set.count("SLURM_NTASKS") && set.count("SLURM_NNODES") && set.count("SLURM_NTASKS_PER_NODE")
        && set["SLURM_NNODES"].second.find('-', 2) == npos) {
        const long long tasks = std::stoll(set["SLURM_NNODES"].first) * std::stoll(set["SLURM_NTASKS_PER_NODE"].first);
        const std::string written = set["SLURM_NNODES"].second + " x " + set["SLURM_NTASKS_PER_NODE"].second;
        set["SLURM_NTASKS"] = {std::to_string(tasks), written};
        set["SLURM_NPROCS"] = {std::to_string(tasks), written};
    }
    std::vector<JobVariable> out;
    for (const auto& [name, value] : set)
        out.push_back({name, value.first, value.second});
    return out;
}

std::optional<BashReader::CommandString> BashReader::commandStringAt(const std::vector<std::string>& words)
{
    // sh, bash, dash or zsh with options up to one holding c (bash -c, bash -x -c, bash -lc),
    // then the command string. A shell that reads its standard input or a file is not this.
    for (std::size_t k = 0; k + 1 < words.size(); ++k) {
        const std::string base = baseName(words[k]);
        if (base != "sh" && base != "bash" && base != "dash" && base != "zsh")
            continue;
        std::size_t f = k + 1;
        const auto shortOption = [&](std::size_t i) { return i < words.size() && words[i].size() > 1 && words[i][0] == '-' && words[i][1] != '-'; };
        // Options before -c: single letters (-x, -l, -e), -o / -O and +o / +O with their
        // option name, and bash's long ones (--login, --norc, --noprofile, ...).
        for (;;) {
            if (f < words.size() && (words[f] == "-o" || words[f] == "+o" || words[f] == "-O" || words[f] == "+O")) {
                f += 2;
            } else if (f < words.size() && words[f].size() > 2 && words[f].rfind("--", 0) == 0 && words[f] != "--rcfile"
                       && words[f] != "--init-file") {
                ++f;
            } else if (shortOption(f) && words[f].find('c') == npos) {
                ++f;
            } else {
                break;
            }
        }
        if (shortOption(f) && words[f].find('c') != npos && f + 1 < words.size())
            return CommandString{k, f + 1, base};
        return std::nullopt;
    }
    return std::nullopt;
}

std::vector<BashReader::SavedVariable> BashReader::applyTemporarily(const RawCommand& cmd, std::size_t from, std::size_t to)
{
    std::vector<SavedVariable> saved;
    for (std::size_t a = from; a < to; ++a) {
        saved.push_back(saveVariable(assignedName(cmd.words[a].text)));
        applyAssignment(cmd.words[a], cmd.line, false);
    }
    return saved;
}

void BashReader::restoreVariables(const std::vector<SavedVariable>& saved)
{
    for (auto it = saved.rbegin(); it != saved.rend(); ++it)
        restoreVariable(*it);
}

void BashReader::readInput(const RawCommand& cmd, std::size_t w)
{
    const std::vector<RawWord>& words = cmd.words;
    const std::string& head = words[w].text;
    // read [-ers] [-a ARRAY] [-d D] [-i T] [-n N] [-N N] [-p P] [-t T] [-u FD] [NAME ...]
    // (default REPLY), readarray/mapfile [options] [ARRAY] (default MAPFILE): the values
    // come from input the text does not give (bash's builtins, manual 4.2). Each name
    // holds a value kept as text, so that a test on it is not decided.
    const std::string withValue = head == "read" ? "adinNptu" : "dnOsuCc";   // mapfile -t takes none
    std::vector<std::string> names;
    for (std::size_t a = w + 1; a < words.size(); ++a) {
        const std::vector<std::string> f = expandWord(words[a].text, cmd.line);
        for (const std::string& word : f) {
            if (!names.empty() || word.empty() || word[0] != '-' || word == "-") {
                if (validName(word))
                    names.push_back(word);
                continue;
            }
            // An option cluster: a letter taking a value takes the rest, or the next word.
            for (std::size_t o = 1; o < word.size(); ++o) {
                if (withValue.find(word[o]) == std::string::npos)
                    continue;
                std::string value = word.substr(o + 1);
                if (value.empty() && a + 1 < words.size()) {
                    const std::vector<std::string> next = expandWord(words[++a].text, cmd.line);
                    value = next.empty() ? std::string() : next.front();
                }
                if (head == "read" && word[o] == 'a' && validName(value))
                    names.push_back(value);
                break;
            }
        }
    }
    if (names.empty())
        names.push_back(head == "read" ? "REPLY" : "MAPFILE");
    std::vector<std::string> kept;
    for (const std::string& name : names)
        kept.push_back(keepUnknown(name));
    warn(cmd.line, head + " sets " + joinNames(names) + " from input the text does not give; "
                       + (names.size() == 1 ? "its value is" : "their values are") + " kept as " + joinNames(kept));
}

std::size_t BashReader::commandWord(const RawCommand& cmd, std::size_t first)
{
    while (first < cmd.words.size() && !assignedName(cmd.words[first].text).empty())
        ++first;
    return first;
}

bool BashReader::printfAssign(const RawCommand& cmd, std::size_t w)
{
    // printf -v NAME FORMAT [ARGUMENT ...] (manual 4.2): NAME is set to what printf would
    // print. Arguments the text does not give (a substitution kept as text) go into %s as
    // that text; a number the text does not give leaves NAME kept as text.
    std::vector<std::string> args;
    for (std::size_t a = w + 1; a < cmd.words.size(); ++a) {
        std::vector<std::string> fields = expandWord(cmd.words[a].text, cmd.line);
        args.insert(args.end(), fields.begin(), fields.end());
    }
    std::size_t i = 1;
    std::string name = args.empty() ? std::string() : args.front().substr(2);
    if (name.empty() && args.size() > 1)
        name = args[i++];
    if (i < args.size() && args[i] == "--")
        ++i;
    if (!validName(name))
        return false;   // bash: "not a valid identifier", nothing set
    std::string out;
    if (i >= args.size())
        return false;   // bash: a usage error, nothing set
    bool tooLarge = false;
    const bool formatted = formatPrintf(args[i], std::span<const std::string>(args).subspan(i + 1), out, kMaxValueBytes, tooLarge);
    if (tooLarge)
        checkValueSize(name, kMaxValueBytes + 1, 0, cmd.line);   // refused as a value doubled past it is
    if (!formatted) {
        warn(cmd.line, "printf -v " + name + ": the format or its arguments are not evaluated here; " + name + " is kept as "
                           + keepUnknown(name));
        return true;
    }
    setScalar(name, out);
    m_arithmeticStatus = Truth::True;
    return true;
}

BashReader::Truth BashReader::readLine(const RawCommand& cmd, std::size_t first)
{
    // read [-ers] [-a ARRAY] [-d DELIM] [-n N] [-N N] [-p P] [-t T] [-u FD] [NAME ...]
    // (manual 4.2): one line, up to DELIM (a newline; -d '' reads to the end), without -r a
    // backslash keeps the next character from splitting and a backslash-newline joins lines;
    // the line split on IFS, each name a field and the last one the rest; -a the fields.
    const std::vector<RawWord>& words = cmd.words;
    std::size_t w = first;
    while (w < words.size() && !assignedName(words[w].text).empty())
        ++w;
    std::vector<std::string> names;
    std::string array;
    char delimiter = '\n';
    std::size_t count = npos;
    bool exact = false, raw = false, otherDescriptor = false, timeoutZero = false;
    for (std::size_t a = w + 1; a < words.size(); ++a) {
        for (const std::string& word : expandWord(words[a].text, cmd.line)) {
            if (!names.empty() || word.empty() || word[0] != '-' || word == "-") {
                names.push_back(word);
                continue;
            }
            for (std::size_t o = 1; o < word.size(); ++o) {
                const char option = word[o];
                if (option == 'r') raw = true;
                if (std::string("adinNptu").find(option) == npos)
                    continue;
                std::string value = word.substr(o + 1);
                if (value.empty() && a + 1 < words.size()) {
                    const std::vector<std::string> next = expandWord(words[++a].text, cmd.line);
                    value = next.empty() ? std::string() : next.front();
                }
                long long number = 0;
                switch (option) {
                case 'a': array = value; break;
                case 'd': delimiter = value.empty() ? '\0' : value.front(); break;
                case 'n':
                case 'N':
                    if (!evalArithmetic(value, number, cmd.line, 0) || number < 0)
                        return Truth::Unknown;
                    count = static_cast<std::size_t>(number);
                    exact = option == 'N';
                    break;
                case 'u': otherDescriptor = value != "0"; break;
                case 't': timeoutZero = value == "0"; break;
                default: break;
                }
                break;
            }
        }
    }
    if (std::any_of(names.begin(), names.end(), [](const std::string& n) { return !validName(n); })
        || (!array.empty() && !validName(array)))
        return Truth::False;   // bash: "not a valid identifier", status 1, nothing set
    if (timeoutZero)
        return Truth::True;   // -t 0 only asks whether input is there, and reads nothing
    // The input: the command's own here-string or here-document, else the loop's; another
    // descriptor's (-u 3) is not known.
    std::optional<InputText> own;
    InputText* in = nullptr;
    if (cmd.input && !otherDescriptor) {
        if (std::optional<std::string> text = hereText(*cmd.input, cmd.line)) {
            own = InputText{std::move(*text), 0};
            in = &*own;
        }
    } else if (!cmd.input && !cmd.other_input && !otherDescriptor && !m_inputs.empty() && m_inputs.back()) {
        in = &*m_inputs.back();
    }
    if (!in)
        return Truth::Unknown;
    // IFS=, read ...: the assignments hold for the read alone.
    const std::vector<SavedVariable> hidden = applyTemporarily(cmd, first, w);
    const std::string separators = ifs();
    restoreVariables(hidden);

    std::string text;
    std::vector<bool> escaped;
    bool complete = false;   // the delimiter (or the count) was reached: status 0
    const std::string& data = in->data;
    std::size_t& p = in->pos;
    while (p < data.size() && text.size() < count) {
        const char c = data[p++];
        if (!exact && c == delimiter) {
            complete = true;
            break;
        }
        if (!raw && c == '\\') {
            if (p >= data.size())
                break;
            const char next = data[p++];
            if (next != '\n') {   // a backslash-newline joins the lines
                text += next;
                escaped.push_back(true);
            }
            continue;
        }
        text += c;
        escaped.push_back(false);
    }
    complete = complete || (count != npos && text.size() >= count);
    auto delimits = [&](std::size_t i) { return !escaped[i] && separators.find(text[i]) != npos; };
    auto blank = [&](std::size_t i) { return delimits(i) && isIfsBlank(text[i]); };
    if (exact) {
        // -N: no splitting; the text goes whole to the first name (bash 5.2 as it runs).
        if (!array.empty())
            setArrayValues(array, {text});
        for (std::size_t k = 0; k < names.size(); ++k)
            setScalar(names[k], k == 0 ? text : std::string());
        if (array.empty() && names.empty())
            setScalar("REPLY", text);
    } else if (!array.empty()) {
        FieldSplitter fields(separators);
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (escaped[i])
                fields.keep(std::string_view(&text[i], 1), true);
            else
                fields.split(text[i]);
        }
        setArrayValues(array, fields.finish(false));
    } else if (names.empty()) {
        setScalar("REPLY", text);   // the line as read, blanks kept
    } else {
        std::size_t i = 0;
        while (i < text.size() && blank(i))
            ++i;
        // Past one delimiter: blanks, at most one other character of IFS, blanks.
        auto skipDelimiter = [&](std::size_t& at, std::size_t end) {
            while (at < end && blank(at)) ++at;
            if (at < end && delimits(at) && !isIfsBlank(text[at])) {
                ++at;
                while (at < end && blank(at)) ++at;
            }
        };
        for (std::size_t k = 0; k + 1 < names.size(); ++k) {
            const std::size_t start = i;
            while (i < text.size() && !delimits(i)) ++i;
            setScalar(names[k], text.substr(start, i - start));
            skipDelimiter(i, text.size());
        }
        // The last name: the rest, without the blanks of IFS at its end, and without one
        // delimiter after a single field ("2," gives 2, "2,3," stays).
        std::size_t end = text.size();
        while (end > i && blank(end - 1)) --end;
        std::size_t fieldEnd = i;
        while (fieldEnd < end && !delimits(fieldEnd)) ++fieldEnd;
        std::size_t after = fieldEnd;
        skipDelimiter(after, end);
        setScalar(names.back(), text.substr(i, (after == end && fieldEnd < end ? fieldEnd : end) - i));
    }
    return complete ? Truth::True : Truth::False;
}

std::optional<std::string> BashReader::hereText(const RawCommand::HereInput& input, int line, bool keepUnknown)
{
    if (!input.here_string && !input.expand)
        return input.text;
    const bool unknownBefore = std::exchange(m_unknownExpansion, false);
    auto known = [&](std::string text) -> std::optional<std::string> {
        const bool unknown = std::exchange(m_unknownExpansion, unknownBefore);
        return unknown && !keepUnknown ? std::nullopt : std::optional<std::string>(std::move(text));
    };
    if (input.here_string)
        return known(expandToString(input.text, line, 0) + "\n");   // manual 3.6.7: the word, not split, and a newline
    // An unquoted delimiter: parameter, command and arithmetic expansion as inside double
    // quotes, where a backslash escapes only $ ` \ and a newline (manual 3.6.6); a double quote
    // is an ordinary character.
    std::string quoted = "\"";
    for (std::size_t i = 0; i < input.text.size(); ++i) {
        const char c = input.text[i];
        if (c == '$' && i + 1 < input.text.size() && (input.text[i + 1] == '{' || input.text[i + 1] == '(')) {
            // ${X:-"a b"}, $(...): their quotes are theirs, as inside double quotes.
            const std::size_t j = skipDollarGroup(input.text, i);
            if (j != npos) {
                quoted += input.text.substr(i, j - i);
                i = j - 1;
                continue;
            }
        }
        if (c == '\\' && i + 1 < input.text.size() && std::string("$`\\\n").find(input.text[i + 1]) != npos) {
            quoted += input.text.substr(i++, 2);
        } else if (c == '\\' && i + 1 < input.text.size() && input.text[i + 1] == '"') {
            quoted += "\\\\\\\"";   // \" of the text: both characters
            ++i;
        } else if (c == '"') {
            quoted += "\\\"";
        } else {
            quoted += c;
        }
    }
    return known(expandToString(quoted + "\"", line, 0));
}

void BashReader::setArrayValues(const std::string& name, std::vector<std::string> values)
{
    touchVariable(name);
    m_envDerived.erase(name);
    m_valueDerived.erase(name);
    m_elementReads.erase(name);
    m_opaqueVars.erase(name);
    m_rawValues.erase(name);
    m_vars.erase(name);
    m_arrays[name] = std::move(values);
}

std::string BashReader::keepUnknown(const std::string& name)
{
    const std::string kept = "${" + name + "}";
    setScalar(name, kept);
    m_opaqueVars.insert(name);
    return kept;
}

void BashReader::setScalar(const std::string& name, const std::string& value)
{
    touchVariable(name);
    m_envDerived.erase(name);
    m_valueDerived.erase(name);
    m_elementReads.erase(name);
    m_opaqueVars.erase(name);
    m_rawValues.erase(name);
    m_arrays.erase(name);
    m_vars[name] = value;
    if (name == "OPTIND")
        m_getopts.letter = 1;   // `for OPTIND in 1`, read OPTIND: getopts starts again
    if (m_allExport)
        exportName(name);
}

void BashReader::exportName(const std::string& name)
{
    if (std::find(m_exportOrder.begin(), m_exportOrder.end(), name) == m_exportOrder.end())
        m_exportOrder.push_back(name);
}

void BashReader::unsetScalar(const std::string& name)
{
    m_unsetByScript.insert(name);
    touchVariable(name);
    m_envDerived.erase(name);
    m_valueDerived.erase(name);
    m_elementReads.erase(name);
    m_vars.erase(name);
    m_arrays.erase(name);
    m_opaqueVars.erase(name);
}

BashReader::Truth BashReader::getoptsStep(const RawCommand& cmd, std::size_t w)
{
    std::vector<std::string> words;
    m_unknownExpansion = false;
    for (std::size_t a = w + 1; a < cmd.words.size(); ++a) {
        const std::vector<std::string> f = expandWord(cmd.words[a].text, cmd.line);
        words.insert(words.end(), f.begin(), f.end());
    }
    if (m_unknownExpansion)
        return Truth::Unknown;
    if (words.size() < 2 || !validName(words[1]))
        return Truth::False;   // bash: a usage error, status 2
    const std::string& optstring = words[0];
    const std::string& name = words[1];
    std::vector<std::string> args(words.begin() + 2, words.end());
    if (words.size() == 2) {
        const Frame* frame = positionalFrame();
        if ((!frame || frame->unknown_args) && (!frame || frame->args.empty())) {
            noteEnvRead("$@");
            setScalar(name, "?");
            unsetScalar("OPTARG");
            if (std::string text; !lookup("OPTIND", text))
                setScalar("OPTIND", "1");   // after `unset OPTIND`, getopts sets it again
            return Truth::False;   // bash run bare: no arguments, so no option
        }
        // A call's words with the script's own unknown ("$@" -p 4): those words, as bash run
        // bare passes them.
        args = frame->args;
    }
    long long index = 1;
    if (std::string text; lookup("OPTIND", text) && !wholeInteger(text, index))
        return Truth::Unknown;
    index = std::max(index, 1LL);
    const auto at = static_cast<std::size_t>(index - 1);
    if (index != m_getopts.index || at >= args.size() || m_getopts.letter >= args[at].size())
        m_getopts.letter = 1;   // the script set OPTIND, or other arguments: from the start of that one
    auto leave = [&](long long nextIndex, std::size_t nextChar) {
        setScalar("OPTIND", std::to_string(nextIndex));
        m_getopts = {nextChar, nextIndex};
    };
    // The end of the options: no argument left, one that is no option ("-" alone, a word
    // without "-"), or "--", which is passed over.
    if (at >= args.size() || (m_getopts.letter == 1 && (args[at].size() < 2 || args[at][0] != '-'))
        || (m_getopts.letter == 1 && args[at] == "--")) {
        setScalar(name, "?");
        unsetScalar("OPTARG");
        // Past the arguments, OPTIND is set back to one past the last (bash's getopts).
        leave(at < args.size() && args[at] == "--" ? index + 1 : std::min<long long>(index, static_cast<long long>(args.size()) + 1), 1);
        return Truth::False;
    }
    const std::string& arg = args[at];
    const char c = arg[m_getopts.letter];
    const std::size_t after = m_getopts.letter + 1;
    // On to the next letter of a cluster (-ab), or to the next argument.
    auto nextLetter = [&] { after < arg.size() ? leave(index, after) : leave(index + 1, 1); };
    // A leading ':' in OPTSTRING: errors are the script's to report (NAME ':' or '?', OPTARG
    // the letter); else bash prints them and NAME is '?' with OPTARG unset.
    const bool silent = optstring[0] == ':';
    const std::size_t spec = c == ':' ? npos : optstring.find(c);
    const bool takesValue = spec != npos && spec + 1 < optstring.size() && optstring[spec + 1] == ':';
    if (spec == npos || (takesValue && after >= arg.size() && at + 1 >= args.size())) {
        setScalar(name, spec == npos || !silent ? "?" : ":");
        if (silent) {
            setScalar("OPTARG", std::string(1, c));
        } else {
            unsetScalar("OPTARG");
            warn(cmd.line, std::string("getopts: -") + c + (spec == npos ? " is not an option of \"" + optstring + "\""
                                                                         : " needs a value, and none follows it")
                               + "; " + name + " is set to ?");
        }
        nextLetter();   // a missing value is at the end of its argument
        return Truth::True;
    }
    setScalar(name, std::string(1, c));
    if (takesValue) {
        // The rest of this argument, or the next one whole.
        const bool rest = after < arg.size();
        setScalar("OPTARG", rest ? arg.substr(after) : args[at + 1]);
        leave(index + (rest ? 1 : 2), 1);
    } else {
        unsetScalar("OPTARG");
        nextLetter();
    }
    return Truth::True;
}

void BashReader::getoptsUnknown(const RawCommand& cmd, std::size_t w)
{
    std::vector<std::string> words;
    for (std::size_t a = w + 1; a < cmd.words.size() && words.size() < 2; ++a) {
        const std::vector<std::string> f = expandWord(cmd.words[a].text, cmd.line);
        words.insert(words.end(), f.begin(), f.end());
    }
    if (words.size() < 2 || !validName(words[1]))
        return;
    warn(cmd.line, "getopts reads arguments the text does not give in full; " + words[1] + " and OPTARG are kept as "
                       + keepUnknown(words[1]) + " and " + keepUnknown("OPTARG"));
}

std::size_t BashReader::loopEnd(std::span<const RawCommand> commands, std::size_t k)
{
    // Only a `done` that ends the loop's command alone: `done | tee log` (a subshell), `done <
    // list` (redirected input), `done && ...` are read once.
    const std::size_t j = loopClose(commands, k);
    return j != npos && commands[j].words.size() == 1 && (commands[j].separator == "\n" || commands[j].separator == ";") ? j : npos;
}

std::size_t BashReader::loopClose(std::span<const RawCommand> commands, std::size_t k)
{
    // The command that starts with the `done` of the loop opened at k: loops opened at the
    // start of a command in between (after reserved words such as `do`, `then`) nest.
    static const std::set<std::string> opens = {"for", "while", "until", "select"};
    static const std::set<std::string> passes = {"do", "then", "else", "elif", "if", "{", "!", "time"};
    int depth = 1;
    for (std::size_t j = k + 1; j < commands.size(); ++j) {
        for (const RawWord& word : commands[j].words) {
            if (word.array_assign)
                break;
            if (opens.count(word.text)) {
                ++depth;
                break;
            }
            if (word.text == "done") {
                if (--depth > 0)
                    continue;
                return j;
            }
            if (!passes.count(word.text))
                break;
        }
    }
    return npos;
}

bool BashReader::loopInOwnProcess(std::span<const RawCommand> commands, std::size_t& k, std::size_t w, const std::string& before)
{
    // A loop that is a command of a pipeline (`for ...; done | tee log`, `cmd | while read
    // ...`) or runs with & is a child process: read as a subshell, so that what it sets is
    // not the script's after it (manual 3.2.3), its `done` then closing it alone.
    const std::size_t end = loopClose(commands, k);
    if (end == npos || commands[end].words.size() != 1
        || !(commands[end].separator == "|" || commands[end].separator == "&" || (w == 0 && before == "|")))
        return false;
    std::vector<RawCommand> loop(commands.begin() + static_cast<std::ptrdiff_t>(k), commands.begin() + static_cast<std::ptrdiff_t>(end) + 1);
    loop.front().words.erase(loop.front().words.begin(), loop.front().words.begin() + static_cast<std::ptrdiff_t>(w));
    loop.back().separator = "\n";
    if (w == 0 && before == "|")
        loop.back().other_input = true;   // `cmd | while read ...`: it reads the pipe
    runSubshell(loop);
    k = end;
    return true;
}

bool BashReader::iterateFor(std::span<const RawCommand> commands, std::size_t& k, std::size_t w)
{
    // for NAME in WORD ...; do BODY; done (manual 3.2.5.1), or for NAME; do (the positional
    // parameters, when they are known).
    const RawCommand& cmd = commands[k];
    if (w + 1 >= cmd.words.size() || !validName(cmd.words[w + 1].text))
        return false;
    const std::string name = cmd.words[w + 1].text;
    const std::size_t end = loopEnd(commands, k);
    if (end == npos || k + 1 >= commands.size() || commands[k + 1].words.empty() || commands[k + 1].words.front().text != "do")
        return false;
    std::vector<std::string> values;
    std::vector<std::string> reads;   // what the words read from outside the script
    // Over the script's own arguments when they are not given (`for a`, `for a in "$@"`): no
    // turn, as bash run bare, with a warning; what the body sets depends on them.
    const bool overArguments = w + 2 == cmd.words.size()
        || (w + 4 == cmd.words.size() && cmd.words[w + 2].text == "in"
            && (cmd.words[w + 3].text == "\"$@\"" || cmd.words[w + 3].text == "$@" || cmd.words[w + 3].text == "\"${@}\""
                || cmd.words[w + 3].text == "$*" || cmd.words[w + 3].text == "\"$*\""));
    const Frame* frame = positionalFrame();
    if (overArguments && (!frame || (frame->unknown_args && frame->args.empty()))) {
        const std::span<const RawCommand> skipped = commands.subspan(k + 1, end - k - 1);
        warn(cmd.line, "the loop runs over the script's own arguments, which are not given, so its body is not read (give "
                       "the script's arguments to read it as it runs)");
        for (const RawCommand& c : skipped)
            skippedAssignments(c, 0, {"$@"}, 0);   // the loop warning names it
        k = end;
        return true;
    }
    if (w + 2 == cmd.words.size()) {
        if (!frame || frame->unknown_args)
            return false;
        values = frame->args;
    } else {
        if (cmd.words[w + 2].text != "in")
            return false;
        m_unknownExpansion = false;
        NameList outer;
        outer.swap(m_envReads);
        for (std::size_t a = w + 3; a < cmd.words.size(); ++a) {
            const std::vector<std::string> f = expandWord(cmd.words[a].text, cmd.line);
            for (const std::string& v : f) {
                const std::vector<std::string> braced = braceExpand(v);
                values.insert(values.end(), braced.begin(), braced.end());
            }
        }
        reads = m_envReads.names();
        addEnv(outer, m_envReads);
        m_envReads.swap(outer);
        // A value the text does not give, or a pattern bash would match against file names
        // (or a brace form braceExpand does not know).
        if (m_unknownExpansion || std::any_of(values.begin(), values.end(), [](const std::string& v) {
                return v.find_first_of("*?[") != std::string::npos || (v.find('{') != std::string::npos && v.find('}') != std::string::npos);
            }))
            return false;
    }
    constexpr std::size_t kMaxIterations = 4096;
    if (values.size() > kMaxIterations)
        return false;
    const std::span<const RawCommand> body = commands.subspan(k + 1, end - k - 1);
    m_iterating.push_back(m_branches.size());
    for (const std::string& value : values) {
        if (!loopTurnLeft(cmd.line))
            break;
        setScalar(name, value);
        if (!reads.empty())
            m_envDerived[name] = reads;   // for d in "$CKPT" "$DATA": d is the environment's
        run(body);
        if (m_exiting || m_returning || !nextTurn())
            break;
    }
    m_iterating.pop_back();
    k = end;   // the `done`: nothing of it is left to read
    return true;
}

void BashReader::skippedAssignments(const RawCommand& cmd, std::size_t w, const std::vector<std::string>& env, int testLine)
{
    if (env.empty())
        return;
    // What the test read from the environment or the arguments; not the exit statuses of
    // commands (a test on `command -v nvidia-smi` is the machine's, not the user's to give).
    std::vector<std::string> given;
    for (const std::string& what : env)
        if (!what.empty() && (what[0] == '$' || isNameStart(what[0])))
            given.push_back(what);
    // The reserved words before a command (do, then, a case pattern's `)` is its own command),
    // then NAME=value words, or those of export / local / declare / readonly / typeset.
    static const std::set<std::string> declares = {"export", "local", "declare", "typeset", "readonly"};
    std::size_t a = w;
    while (a < cmd.words.size() && (reservedWords().count(cmd.words[a].text) || opensCommand(cmd.words[a].text)))
        ++a;
    const bool declaration = a < cmd.words.size() && declares.count(cmd.words[a].text);
    for (std::size_t b = declaration ? a + 1 : a; b < cmd.words.size(); ++b) {
        std::string name = assignedName(cmd.words[b].text);
        if (name.empty() && declaration && validName(cmd.words[b].text))
            name = cmd.words[b].text;
        if (name.empty()) {
            if (declaration && !cmd.words[b].text.empty() && cmd.words[b].text[0] == '-')
                continue;   // an option of the declaration
            break;
        }
        addEnv(m_envDerived[name], env);
        const RawWord& word = cmd.words[b];
        std::string words;
        if (word.array_assign) {
            for (const std::string& e : word.elements)
                words += (words.empty() ? "" : " ") + e;
        } else if (const std::size_t eq = word.text.find('='); eq != npos) {
            words = word.text.substr(eq + 1);
        }
        if (given.empty() || testLine == 0 || words.find_first_not_of(" \t\n") == npos || m_evalDepth > 0)
            continue;
        // Once per place (a function called twice skips the same assignment twice).
        std::size_t index = 0;
        while (index < m_skippedByTest.size()
               && !(m_skippedByTest[index].line == testLine && m_skippedByTest[index].name == name && m_skippedByTest[index].words == words))
            ++index;
        if (index == m_skippedByTest.size())
            m_skippedByTest.push_back({testLine, name, words, word.text.find("+=") == name.size(), given, describeEnv(given)});
        addEnv(m_valueDerived[name], {std::string(kSkippedMark) + std::to_string(index)});
    }
}

std::vector<std::string> BashReader::braceExpand(const std::string& word)
{
    // The brace expansion of a for loop's word as bash does it before the others (manual
    // 3.5.1), for one brace pair: PRE{a,b,c}POST and PRE{N..M}POST (integers, either way,
    // at most 4096). Anything else comes back as it is.
    const std::size_t open = word.find('{');
    const std::size_t close = open == npos ? npos : word.find('}', open);
    if (close == npos || word.find('{', open + 1) < close || word.find('{', close) != npos)
        return {word};
    const std::string pre = word.substr(0, open), post = word.substr(close + 1), inner = word.substr(open + 1, close - open - 1);
    std::vector<std::string> out;
    if (const std::size_t dots = inner.find(".."); dots != npos) {
        char* e1 = nullptr;
        char* e2 = nullptr;
        const std::string a = inner.substr(0, dots), b = inner.substr(dots + 2);
        const long long from = std::strtoll(a.c_str(), &e1, 10), to = std::strtoll(b.c_str(), &e2, 10);
        if (a.empty() || b.empty() || *e1 != '\0' || *e2 != '\0' || std::llabs(to - from) >= 4096)
            return {word};
        for (long long v = from;; v += from <= to ? 1 : -1) {
            out.push_back(pre + std::to_string(v) + post);
            if (v == to)
                break;
        }
        return out;
    }
    if (inner.find(',') == npos)
        return {word};   // {x} stays as it is in bash too
    std::size_t from = 0;
    for (std::size_t comma = inner.find(','); ; comma = inner.find(',', from)) {
        out.push_back(pre + inner.substr(from, comma == npos ? npos : comma - from) + post);
        if (comma == npos)
            break;
        from = comma + 1;
    }
    return out;
}

bool BashReader::nextTurn()
{
    // After a turn of the innermost loop being iterated: `break N` leaves it (and N - 1 more),
    // `continue 1` goes on with its next turn, `continue N` with the next turn of the loop N
    // out (manual 4.1).
    if (m_breakLevels > 0) {
        --m_breakLevels;
        return false;
    }
    if (m_continueLevels > 0 && --m_continueLevels > 0)
        return false;
    return true;
}

bool BashReader::iterateWhile(std::span<const RawCommand> commands, std::size_t& k, std::size_t w, bool until)
{
    // while/until CONDITION; do BODY; done (manual 3.2.5.1) whose condition the text decides
    // at every turn, on what the script sets (or the arguments and environment it is given).
    std::vector<const RawCommand*> parts{&commands[k]};
    std::size_t c = k;
    while (c + 1 < commands.size() && (commands[c].separator == "&&" || commands[c].separator == "||"))
        parts.push_back(&commands[++c]);
    if (w + 1 >= commands[k].words.size())
        return false;
    const std::size_t end = loopEnd(commands, k);
    if (end == npos || c + 1 >= end || commands[c + 1].words.empty() || commands[c + 1].words.front().text != "do")
        return false;
    const std::span<const RawCommand> body = commands.subspan(c + 1, end - c - 1);
    int maxTurns = 256;   // a loop on a counter or the arguments
    // The loop's input: `done <<< "$X"` or a here-document the text gives, `done < FILE` not;
    // without either it reads the input around it.
    const RawCommand& done = commands[end];
    const bool ownInput = done.input || done.other_input;
    if (ownInput)
        m_inputs.push_back(std::nullopt);
    if (done.input)
        if (std::optional<std::string> text = hereText(*done.input, done.line))
            m_inputs.back() = InputText{std::move(*text), 0};
    struct PopInput {
        std::vector<std::optional<InputText>>& inputs;
        bool pop;
        ~PopInput() { if (pop) inputs.pop_back(); }
    } popInput{m_inputs, ownInput};
    // A loop over lines the text gives ends with them: only the budget of all loops bounds it.
    if (!m_inputs.empty() && m_inputs.back())
        maxTurns = kMaxLoopTurns;
    m_iterating.push_back(m_branches.size());
    for (int turn = 0;; ++turn) {
        const NameList envBefore = m_envReads;
        Truth truth = evalCondition(parts, w + 1);
        const bool fromOutside = !m_conditionEnv.empty();
        m_envReads = envBefore;
        if (until)
            truth = truthNot(truth);
        if (fromOutside && turn == 0 && truth == Truth::False) {
            // `while [[ $# -gt 0 ]]` without the script's arguments: no turn, as bash runs it
            // bare (an if on them is read the same way), and said. What the body would set
            // depends on them.
            for (const RawCommand& skipped : body)
                skippedAssignments(skipped, 0, m_conditionEnv, 0);   // the loop warning names it
            warn(commands[k].line, "the loop's condition depends on " + describeEnv(m_conditionEnv) + ", and "
                                       + (until ? "holds" : "fails") + " as read, so its body is not read (give the script's "
                                       "arguments or environment to read it as it runs)");
            break;
        }
        if (truth == Truth::Unknown || fromOutside) {
            m_iterating.pop_back();
            if (turn == 0)
                return false;   // read once, as any loop the text does not decide
            warn(commands[k].line, "the loop's condition cannot be decided from the text after " + std::to_string(turn)
                                       + " turns; what follows the loop is read as if it ended there");
            k = end;
            return true;
        }
        if (truth == Truth::False)
            break;
        if (turn == maxTurns) {
            warn(commands[k].line, "the loop ran " + std::to_string(maxTurns) + " turns without its condition failing; the "
                                       "reading goes on after it");
            break;
        }
        if (!loopTurnLeft(commands[k].line))
            break;
        run(body);
        if (m_exiting || m_returning || !nextTurn())
            break;
    }
    m_iterating.pop_back();
    k = end;
    return true;
}

bool BashReader::loopTurnLeft(int line)
{
    // All loops of a reading together (nested ones multiply): past the budget the rest of
    // each loop is not read, with one warning.
    if (++m_loopTurns <= kMaxLoopTurns)
        return true;
    warnOnce("turns", line, "loops ran " + std::to_string(kMaxLoopTurns) + " turns in all; the rest of this loop and of the "
                            "loops after it is not read");
    return false;
}

std::vector<std::string> BashReader::branchesEnv(std::size_t from) const
{
    std::vector<std::string> env;
    for (std::size_t b = from; b < m_branches.size(); ++b) {
        addEnv(env, m_branches[b].env);
        addEnv(env, m_branches[b].in_else ? m_branches[b].else_status : m_branches[b].then_status);
    }
    return env;
}

void BashReader::defineFunction(const std::string& name, std::span<const RawCommand> commands, std::size_t& k,
                                std::size_t open, std::size_t brace, bool defines)
{
    const int line = commands[k].line;
    // The body: a { ... } group, or a ( ... ) subshell, which a call reads as one.
    const bool group = open < commands.size() && brace < commands[open].words.size() && commands[open].words[brace].text == "{";
    const bool subshell = open < commands.size() && brace == 0 && isSubshellOpen(commands[open]);
    if (!validName(name) || (!group && !subshell)) {
        // A body bash allows that is neither (a loop, an if): read as it stands.
        if (defines)
            warnOnce("func:" + name, line,
                     "function " + name + ": a body that is not a { ... } group or a ( ... ) subshell is read where it is "
                     "written, as straight-line code; a call to it is not followed");
        return;
    }
    RawCommand first = commands[open];
    first.words.erase(first.words.begin(), first.words.begin() + static_cast<std::ptrdiff_t>(brace));
    const std::size_t close = subshell ? subshellEnd(commands, open) : groupEnd(first, commands, open);
    if (close >= commands.size())
        throw InputError(m_file, "line " + std::to_string(line),
                         "function " + name + ": no " + (subshell ? ")" : "}") + " closes its body (bash: unexpected end of file)");
    k = close;
    if (!defines)
        return;   // in a branch bash does not run: not defined
    auto body = std::make_shared<std::vector<RawCommand>>(commands.begin() + static_cast<std::ptrdiff_t>(open),
                                                          commands.begin() + static_cast<std::ptrdiff_t>(close) + 1);
    body->front() = std::move(first);
    body->back().separator = "\n";   // what follows "}" or ")" is not the body's
    touchFunction(name);
    Function& f = m_functions[name];  // a later definition replaces an earlier one
    f.body = std::move(body);
    f.line = line;
}

void BashReader::runSubshell(std::span<const RawCommand> commands)
{
    if (m_subshells.size() >= kMaxSubshellDepth) {
        const int line = commands.empty() ? 0 : commands.front().line;
        warnOnce("subshells", line,
                 "subshells nested " + std::to_string(kMaxSubshellDepth)
                     + " deep, far past any launch script; the commands of this one are not read");
        return;
    }
    enterSubshell();
    run(commands);
    leaveSubshell();
}

void BashReader::enterSubshell()
{
    Subshell s;
    s.branches = m_branches.size();
    s.exported = m_exportOrder;
    s.frames = m_frames.size();
    if (!m_frames.empty())
        s.locals = m_frames.back().locals.size();
    if (const Frame* frame = positionalFrame()) {
        s.args = frame->args;
        s.arg_reads = frame->arg_reads;
        s.switches = frame->switches;
    }
    s.undecided_call = m_undecidedCall;
    m_undecidedCall = false;   // an exit inside ends only the subshell
    s.env_derived = m_envDerived;
    s.value_derived = m_valueDerived;
    s.element_reads = m_elementReads;
    s.unset_by_script = m_unsetByScript;
    s.getopts = m_getopts;
    s.all_export = m_allExport;
    s.extglob = m_extglob;
    m_subshells.push_back(std::move(s));
}

int BashReader::exitSite(int line) const
{
    // The outermost call under way, since the subshell the exit ends began.
    const std::size_t frames = m_subshells.empty() ? 0 : m_subshells.back().frames;
    return m_frames.size() > frames ? m_frames[frames].call_line : line;
}

void BashReader::leaveSubshell()
{
    // Taken off first, so that putting things back is not noted in an enclosing subshell: what
    // this one changed stands there as it stood before it.
    Subshell s = std::move(m_subshells.back());
    m_subshells.pop_back();
    for (auto it = s.variables.rbegin(); it != s.variables.rend(); ++it)
        putVariable(*it);
    for (auto& [name, before] : s.functions) {
        if (before) {
            Function& f = m_functions[name];
            const bool called = f.called;   // a call inside still counts as one
            f = *before;
            f.called = f.called || called;
        } else if (auto it = m_functions.find(name); it != m_functions.end()) {
            it->second.body.reset();   // defined inside only: known as defined, not callable
        }
    }
    m_exportOrder = std::move(s.exported);
    m_undecidedCall = s.undecided_call;
    m_envDerived = std::move(s.env_derived);
    m_valueDerived = std::move(s.value_derived);
    m_elementReads = std::move(s.element_reads);
    m_unsetByScript = std::move(s.unset_by_script);
    m_getopts = s.getopts;
    m_allExport = s.all_export;
    m_extglob = s.extglob;
    if (!m_frames.empty() && m_frames.size() == s.frames) {
        m_frames.back().args = std::move(s.args);
        m_frames.back().arg_reads = std::move(s.arg_reads);
        m_frames.back().switches = std::move(s.switches);
        m_frames.back().locals.resize(s.locals);
    } else if (m_frames.empty() && s.frames == 0 && m_argumentsGiven) {
        m_scriptFrame.args = std::move(s.args);   // a shift inside leaves the script's as they were
        m_scriptFrame.arg_reads = std::move(s.arg_reads);
    }
    m_exiting = false;   // an exit inside ends only the subshell
    m_breakLevels = m_continueLevels = 0;   // and so do break and continue
    m_returning = false;
}

void BashReader::touchVariable(const std::string& name)
{
    if (!m_subshells.empty() && m_subshells.back().saved.insert(name).second)
        m_subshells.back().variables.push_back(saveVariable(name));
}

void BashReader::touchFunction(const std::string& name)
{
    if (m_subshells.empty() || m_subshells.back().functions.count(name))
        return;
    const auto it = m_functions.find(name);
    m_subshells.back().functions[name] = it == m_functions.end() ? std::nullopt : std::optional<Function>(it->second);
}

void BashReader::callFunction(const std::string& name, std::vector<std::string> args, bool unknownArgs,
                              std::vector<std::string> warnings, int line, std::vector<WordReads> argReads,
                              std::vector<SwitchAt> switches)
{
    Function& f = m_functions.at(name);
    f.called = true;
    if (m_frames.size() >= kMaxCallDepth || m_calledCommands > kMaxCalledCommands) {
        warnOnce((m_frames.size() >= kMaxCallDepth ? "depth:" : "calls:") + name, line,
                 "function " + name + ": "
                     + (m_frames.size() >= kMaxCallDepth
                            ? "calls nested " + std::to_string(kMaxCallDepth) + " deep, a recursion the text does not end"
                            : "function calls have read more than " + std::to_string(kMaxCalledCommands) + " commands")
                     + "; this call is not followed, and the commands it would run are not read");
        return;
    }
    // Arguments are bounded (a data blend of a thousand files is 2,000 of them): a call that
    // passes its arguments on twice (f "$@" "$@") doubles them at each level.
    checkArgumentCount("function " + name + " is called with", args.size(), line);
    // The body stays alive while it runs, even if it defines the function again.
    const std::shared_ptr<const std::vector<RawCommand>> body = f.body;
    if (argReads.size() != args.size())
        argReads.clear();
    m_frames.push_back(Frame{name, std::move(args), std::move(argReads), unknownArgs, {}, std::move(warnings), line,
                             m_subshells.size(), false, {}, {}, std::move(switches)});
    run(*body);
    m_returning = false;   // a return ends this call only
    const std::vector<SavedVariable> locals = std::move(m_frames.back().locals);
    const auto getopts = m_frames.back().getopts;
    m_frames.pop_back();
    restoreVariables(locals);
    if (getopts)
        m_getopts = *getopts;
}

void BashReader::noteFunctionNamed(const std::string& name)
{
    if (auto it = m_functions.find(name); it != m_functions.end())
        it->second.named = true;
}

std::vector<BashReader::UncalledFunction> BashReader::uncalledFunctions() const
{
    std::vector<UncalledFunction> out;
    for (const auto& [name, f] : m_functions)
        if (!f.called && !f.named)
            out.push_back({name, f.line, f.body ? 0 : f.unset_line, f.body ? 0 : f.called_after_unset});
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
    return out;
}

BashReader::SavedVariable BashReader::saveVariable(const std::string& name) const
{
    SavedVariable saved;
    saved.name = name;
    if (auto it = m_vars.find(name); it != m_vars.end()) saved.var = it->second;
    if (auto it = m_rawValues.find(name); it != m_rawValues.end()) saved.raw = it->second;
    if (auto it = m_arrays.find(name); it != m_arrays.end()) saved.array = it->second;
    saved.opaque = m_opaqueVars.count(name) > 0;
    if (auto it = m_envDerived.find(name); it != m_envDerived.end()) saved.env_derived = it->second;
    if (auto it = m_valueDerived.find(name); it != m_valueDerived.end()) saved.value_derived = it->second;
    if (auto it = m_elementReads.find(name); it != m_elementReads.end()) saved.element_reads = it->second;
    return saved;
}

void BashReader::restoreVariable(const SavedVariable& saved)
{
    touchVariable(saved.name);
    putVariable(saved);
}

void BashReader::putVariable(const SavedVariable& saved)
{
    m_vars.erase(saved.name);
    m_rawValues.erase(saved.name);
    m_arrays.erase(saved.name);
    m_opaqueVars.erase(saved.name);
    m_envDerived.erase(saved.name);
    m_valueDerived.erase(saved.name);
    m_elementReads.erase(saved.name);
    if (saved.var) m_vars[saved.name] = *saved.var;
    if (saved.raw) m_rawValues[saved.name] = *saved.raw;
    if (saved.array) m_arrays[saved.name] = *saved.array;
    if (saved.opaque) m_opaqueVars.insert(saved.name);
    if (saved.env_derived) m_envDerived[saved.name] = *saved.env_derived;
    if (saved.value_derived) m_valueDerived[saved.name] = *saved.value_derived;
    if (saved.element_reads) m_elementReads[saved.name] = saved.element_reads;
}

bool BashReader::isLocal(const std::string& name) const
{
    return !m_frames.empty() && std::any_of(m_frames.back().locals.begin(), m_frames.back().locals.end(),
                                            [&](const SavedVariable& v) { return v.name == name; });
}

bool BashReader::makeLocal(const std::string& name)
{
    if (isLocal(name))
        return false;
    m_frames.back().locals.push_back(saveVariable(name));
    if (name == "OPTIND" && !m_frames.back().getopts) {
        // Bash keeps getopts' place of the caller for the return and starts afresh here.
        m_frames.back().getopts = m_getopts;
        m_getopts.letter = 1;
    }
    return true;
}

BashReader::Truth BashReader::statusOf(const RawCommand& cmd, std::size_t firstWord)
{
    const std::string& head = cmd.words[firstWord].text;
    if (head == "[" || head == "[[" || head == "test")
        return evalCondition({&cmd}, firstWord);
    if (head.rfind("((", 0) == 0) {
        m_envReads.clear();
        // A name the script does not set (NNODES from the environment) leaves it undecided:
        // the real run sets it, so `(( NNODES > 1 ))` guards the multi-node arguments.
        Truth t = arithmeticStatus(head, cmd.line);
        m_conditionEnv = m_envReads;
        return t;
    }
    if (head == "true" || head == ":")
        return Truth::True;
    if (head == "false")
        return Truth::False;
    // `return` outside a function fails in a script bash runs (not sourced): "can only
    // `return' from a function or sourced script", status 1; so `return 2>/dev/null || exit 0`
    // exits.
    if (head == "return" && m_frames.empty())
        return Truth::False;
    // Builtins that succeed on what a script gives them (export, local ... also with
    // NAME=$(cmd): their own status, not the substitution's).
    static const std::set<std::string> succeed = {"export", "readonly", "declare", "typeset", "local", "unset", "echo", "set"};
    if (succeed.count(head))
        return Truth::True;
    // shift N with the arguments known: fails when there are fewer than N.
    if (head == "shift" && positionalFrame() && !positionalFrame()->unknown_args) {
        long long count = 1;
        if (firstWord + 1 < cmd.words.size() && !evalArithmetic(expandToString(cmd.words[firstWord + 1].text, cmd.line, 0), count, cmd.line, 0))
            return Truth::Unknown;
        return count >= 0 && static_cast<unsigned long long>(count) <= positionalFrame()->args.size() ? Truth::True : Truth::False;
    }
    // Assignments alone: status 0, or that of the last command substitution in them, which is
    // not run here (manual 3.7.1); $(( )) is arithmetic, no command.
    auto substitutes = [](const std::string& text) {
        for (std::size_t i = text.find("$("); i != std::string::npos; i = text.find("$(", i + 2))
            if (i + 2 >= text.size() || text[i + 2] != '(')
                return true;
        return text.find('`') != std::string::npos;
    };
    const bool assignsOnly = std::all_of(cmd.words.begin() + static_cast<std::ptrdiff_t>(firstWord), cmd.words.end(),
                                         [&](const RawWord& word) { return !assignedName(word.text).empty() && !substitutes(word.text); });
    return assignsOnly ? Truth::True : Truth::Unknown;
}

void BashReader::casePattern(Branch& b, const RawCommand& cmd, std::size_t firstWord)
{
    // Bash matches the subject against each pattern (expanded, not split) in turn; the first
    // branch whose pattern matches runs, the others do not (manual 3.2.5.2), unless ";&" or
    // ";;&" ends it (run()).
    if (b.outer_active && b.known && !b.taken && !b.fall_through) {
        for (std::size_t a = firstWord; a < cmd.words.size() && b.match != Truth::True; ++a) {
            m_unknownExpansion = false;
            m_envReads.clear();
            const std::string pattern = expandPattern(cmd.words[a].text, cmd.line, 0);
            addEnv(b.env, m_envReads);
            if (matchesPattern(pattern, b.subject, m_extglob))
                b.match = Truth::True;
            else if (m_unknownExpansion)
                b.match = Truth::Unknown;
        }
    }
    if (cmd.separator == "|")
        return;   // "small|" then "tiny)": the list goes on in the next command
    const Truth match = std::exchange(b.match, Truth::False);
    b.expect_pattern = false;
    if (!b.outer_active) {
        b.active = false;
    } else if (std::exchange(b.fall_through, false)) {
        b.active = true;
    } else if (!b.known) {
        b.active = true;   // every branch in order, as written
    } else if (b.taken) {
        b.active = false;
    } else if (match == Truth::True) {
        b.active = true;
        b.taken = true;
    } else if (match == Truth::Unknown) {
        b.active = true;
        b.known = false;
    } else {
        b.active = false;
    }
}

BashReader::Truth BashReader::evalCondition(const std::vector<const RawCommand*>& parts, std::size_t firstWord)
{
    // Left to right, && and || of equal precedence (bash's lists), three-valued.
    Truth result = Truth::Unknown;
    m_envReads.clear();
    m_conditionThen.clear();
    m_conditionElse.clear();
    // The commands whose status the text does not give, and whether each is negated.
    std::vector<std::pair<std::string, bool>> commandsRead;
    for (std::size_t p = 0; p < parts.size(); ++p) {
        const RawCommand& c = *parts[p];
        std::size_t first = p == 0 ? firstWord : 0;
        // "! CMD": the status of CMD negated (bash's pipeline negation, manual 3.2.3).
        bool negate = false;
        while (first < c.words.size() && c.words[first].text == "!") {
            negate = !negate;
            ++first;
        }
        if (first >= c.words.size())
            continue;   // not a condition bash would accept; left undecided
        const std::string& head = c.words[first].text;
        Truth t = Truth::Unknown;
        if (head.rfind("((", 0) == 0) {
            t = arithmeticStatus(head, c.line);   // undecided on a name the script does not set
        } else if (head == "getopts") {
            t = getoptsStep(c, first);
        } else if (const std::size_t h = commandWord(c, first); h < c.words.size() && c.words[h].text == "read"
                   && (t = readLine(c, first)) != Truth::Unknown) {
            // `while read -r A B` over input the text gives: decided by what is left of it.
        } else {
            std::vector<std::string> words;
            m_unsetAsEmpty = true;
            m_emptyReads.clear();
            m_unknownExpansion = false;
            m_statusParameterRead = false;
            std::vector<std::string> saved;
            saved.swap(m_warnings);
            ++m_warningsHeld;
            auto expandAll = [&] {
                words.clear();
                for (std::size_t w = first; w < c.words.size(); ++w) {
                    // Inside [[ ]] no word is split or dropped: `[[ -n $X ]]` with X empty
                    // tests an empty word (manual 3.2.5.2).
                    if (head == "[[" && (c.words[w].text == "(" || c.words[w].text == ")")) {
                        // A group of the test's own text, told apart from a value "(" (evalTest).
                        words.push_back(std::string(1, kGroupMark) + c.words[w].text);
                        continue;
                    }
                    if (head == "[[") {
                        const std::string op = w > first ? c.words[w - 1].text : std::string();
                        const bool pattern = op == "==" || op == "=" || op == "!=";
                        words.push_back(pattern ? expandPattern(c.words[w].text, c.line, 0)
                                                : expandToString(c.words[w].text, c.line, 0));
                        continue;
                    }
                    std::vector<std::string> f = expandWord(c.words[w].text, c.line);
                    words.insert(words.end(), f.begin(), f.end());
                }
                // A value kept as ${ARG1} or ${NAME} through a variable (SIZE=$1): what bash
                // run bare has there is empty, as for $1 itself.
                for (std::string& word : words)
                    for (const auto& [text, what] : m_keptRefs)
                        for (std::size_t at = word.find(text); at != npos; at = word.find(text, at)) {
                            word.replace(at, text.size(), m_emptySentinel ? std::string(1, kEmptySentinel) : std::string());
                            if (std::find(m_emptyReads.begin(), m_emptyReads.end(), what) == m_emptyReads.end())
                                m_emptyReads.push_back(what);
                        }
            };
            expandAll();
            // `[ $? -ne 0 ]` after a command the reading does not run: the test read with $? 0
            // and with 1. The same either way decides it; else it is that command's status, read
            // with its sense (`cmd; [ $? -ne 0 ] && exit 1` exits only on a failure: a guard).
            std::optional<Truth> sameEither, onSuccess;
            const bool bracketTest = head == "[" || head == "[[" || head == "test";
            const bool statusRead = m_statusParameterRead;
            if (statusRead && bracketTest && !m_unknownExpansion) {
                // The statuses tried: 0, 1, and each number the test names with its
                // neighbours, so that `[ $? -eq 127 ]` and `[ $? -gt 1 ]` are not taken for a
                // test of success.
                std::set<long long> statuses = {0, 1};
                for (const std::string& word : words)
                    if (long long n = 0; wholeInteger(word, n))
                        for (long long v : {n - 1, n, n + 1})
                            if (v >= 0 && v <= 255)
                                statuses.insert(v);
                Truth atZero = Truth::Unknown;
                std::optional<Truth> atFailure;   // the same for every nonzero status tried
                bool failuresAgree = true;
                for (long long status : statuses) {
                    m_forcedStatus = std::to_string(status);
                    expandAll();
                    const Truth r = evalTest(words);
                    if (status == 0)
                        atZero = r;
                    else if (!atFailure)
                        atFailure = r;
                    else if (*atFailure != r)
                        failuresAgree = false;
                }
                m_forcedStatus.reset();
                if (failuresAgree && atFailure && atZero == *atFailure)
                    sameEither = atZero;
                else if (failuresAgree && atFailure && atZero != Truth::Unknown && *atFailure != Truth::Unknown)
                    onSuccess = atZero;   // True: the test holds when the command succeeded
            }
            m_warnings.swap(saved);
            --m_warningsHeld;
            m_unsetAsEmpty = false;
            // A value the text does not give (a command substitution kept as text, $$): the
            // test on it is not decided by comparing that text.
            const bool unknownValue = m_unknownExpansion;
            bool settled = true;   // by $? or by a value the text does not give
            if (sameEither && !unknownValue) {
                t = *sameEither;
            } else if (onSuccess && !unknownValue) {
                // `! cmd; [ $? -ne 0 ]`: the status read is cmd's, with the sense reversed.
                commandsRead.emplace_back(m_lastStatusText, (negate != (*onSuccess == Truth::False)) != m_lastStatusNegated);
            } else if (!(bracketTest && (unknownValue || statusRead))) {
                settled = false;
            }
            if (settled) {
                // t as set above; Unknown for a value the text does not give
            } else if (!words.empty() && (words.front() == "true" || words.front() == ":")) {
                t = Truth::True;   // also `if $FLAG` with FLAG=true
            } else if (!words.empty() && (words.front() == "false" || (words.front() == "return" && m_frames.empty()))) {
                t = Truth::False;   // return outside a function fails (statusOf)
            } else {
                t = evalTest(words);
                if (t == Truth::Unknown && !bracketTest)
                    commandsRead.emplace_back(commandText(c, first), negate);
            }
            if (t != Truth::Unknown && bracketTest && !m_emptyReads.empty()) {
                // The same test with what read as empty marked: whether it decided it.
                const std::vector<std::string> plain = words, emptyReads = m_emptyReads;
                std::vector<std::string> hush;
                hush.swap(m_warnings);
                ++m_warningsHeld;
                m_unsetAsEmpty = m_emptySentinel = true;
                expandAll();
                m_unsetAsEmpty = m_emptySentinel = false;
                m_warnings.swap(hush);
                --m_warningsHeld;
                const std::vector<std::string> marked = std::move(words);
                words = plain;
                m_emptyReads = emptyReads;
                noteEmptyComparison(c, first, marked, t);
            }
            if (!words.empty())
                noteFunctionNamed(words.front());   // if check_env; then: run by bash, not read here
        }
        if (negate)
            t = truthNot(t);
        if (p == 0)
            result = t;
        else
            result = parts[p - 1]->separator == "&&" ? truthAnd(result, t) : truthOr(result, t);
    }
    m_conditionEnv = m_envReads;
    // Where a command's status leaves the condition undecided (a decided one does not depend
    // on it): under then and under else, what runs only if the command fails. One command, or
    // all joined by || under else (each failed), or all by && under then (each succeeded):
    // the sense follows from its "!". All joined by && under else runs when one of them
    // failed: still only on a failure. Any other mix is undecided either way.
    if (result == Truth::Unknown && !commandsRead.empty()) {
        bool allOr = true, allAnd = true;
        for (std::size_t p = 0; p + 1 < parts.size(); ++p) {
            allOr = allOr && parts[p]->separator == "||";
            allAnd = allAnd && parts[p]->separator == "&&";
        }
        for (const auto& [text, negated] : commandsRead) {
            const char failsThen = negated ? 'F' : 'S', failsElse = negated ? 'S' : 'F';
            m_conditionThen.push_back(std::string("!") + (allAnd ? failsThen : 'U') + text);
            m_conditionElse.push_back(std::string("!") + (allOr || allAnd ? failsElse : 'U') + text);
        }
    }
    return result;
}

void BashReader::noteEmptyComparison(const RawCommand& cmd, std::size_t firstWord, const std::vector<std::string>& marked,
                                     Truth result)
{
    // marked: the test's words with each value read as empty marked (kEmptySentinel). It
    // decided the test when another value would not: one the test compares with (and a
    // number's neighbours). [ "$1" = big -o "$X" = 1 ] with X=1 holds whatever $1 is.
    if (m_emptyReads.empty())
        return;
    std::set<std::string> candidates;
    for (const std::string& w : marked) {
        if (w.find(kEmptySentinel) != std::string::npos)
            continue;
        candidates.insert(w);
        if (long long n = 0; wholeInteger(w, n))
            for (long long v : {n - 1, n + 1})
                candidates.insert(std::to_string(v));
    }
    const bool decided = std::any_of(candidates.begin(), candidates.end(), [&](const std::string& value) {
        std::vector<std::string> other = marked;
        for (std::string& w : other)
            for (std::size_t at = w.find(kEmptySentinel); at != std::string::npos; at = w.find(kEmptySentinel, at + value.size()))
                w.replace(at, 1, value);
        return evalTest(other) != result;
    });
    if (!decided)
        return;
    static const std::set<std::string> operators = {"=", "==", "!=", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "<", ">"};
    static const std::set<std::string> usage = {"help", "usage", "h", "?"};
    auto clean = [](std::string w) {
        std::erase(w, kEmptySentinel);
        return w;
    };
    auto optionLike = [&](const std::string& raw) {
        const std::string w = clean(raw);
        return (w.size() > 1 && w[0] == '-' && !std::isdigit(static_cast<unsigned char>(w[1]))) || usage.count(w);
    };
    bool compares = false;
    for (std::size_t k = 1; k + 1 < marked.size(); ++k) {
        if (!operators.count(marked[k]))
            continue;
        const std::string& l = marked[k - 1];
        const std::string& r = marked[k + 1];
        if (optionLike(l) || optionLike(r))
            return;   // [ "$1" = --help ], [ "$1" = help ]: a usage check, not a choice of configuration
        // [ "$MODE" = "" ], [ "x$MODE" = x ]: a test of emptiness, as -z is.
        if ((l != clean(l) && clean(l) == r) || (r != clean(r) && clean(r) == l))
            return;
        compares = true;
    }
    if (!compares)
        return;
    std::vector<std::string> args, vars;
    for (const std::string& what : m_emptyReads)
        (what[0] == '$' ? args : vars).push_back(what);
    std::string why;
    if (!args.empty())
        why = "the script's arguments are not given";
    if (!vars.empty())
        why += (why.empty() ? "" : ", and ") + std::string("neither the script nor its given environment sets ")
            + (vars.size() == 1 ? "it" : "them");
    if (!args.empty() && !vars.empty())
        why = why.substr(0, why.size() - (vars.size() == 1 ? 2 : 4)) + joinNames(vars);
    // The test as written (up to a line's worth): it names the value compared with.
    std::string text;
    for (std::size_t w = firstWord; w < cmd.words.size(); ++w)
        text += (w > firstWord ? " " : "") + cmd.words[w].text;
    if (text.size() > 60)
        text = text.substr(0, 56) + " ...";
    warnOnce("empty:" + std::to_string(cmd.line) + text, cmd.line,
             "the test `" + text + "`" + (result == Truth::True ? " holds" : " fails") + " as read, with "
                 + joinNames(m_emptyReads) + " empty: " + why + " (give "
                 + (args.empty() ? "the environment" : vars.empty() ? "the arguments" : "both") + " to read the script as it runs)");
}

BashReader::Truth BashReader::arithmeticStatus(const std::string& word, int line)
{
    // "(( EXPR ))": status 0 when EXPR is nonzero (manual 3.2.6). An assignment in it
    // (=, +=, ++, ...) is not evaluated here (execute() says so): undecided.
    if (word.size() < 4 || word.compare(word.size() - 2, 2, "))") != 0)
        return Truth::Unknown;
    std::string expr = word.substr(2, word.size() - 4);
    std::erase(expr, '"');   // (( "$#" )): quotes inside are removed, as bash does
    if (arithmeticAssigns(expr))
        return Truth::Unknown;
    long long value = 0;
    if (!evalArithmetic(expr, value, line, 0))
        return Truth::Unknown;
    return value != 0 ? Truth::True : Truth::False;
}

std::string BashReader::commandText(const RawCommand& cmd, std::size_t firstWord)
{
    std::string text;
    const std::size_t last = std::min(cmd.words.size(), firstWord + (cmd.words.size() - firstWord > 4 ? 3 : 4));
    for (std::size_t a = firstWord; a < last; ++a)
        text += (a > firstWord ? " " : "") + cmd.words[a].text;
    if (last < cmd.words.size())
        text += " ...";
    return "`" + text + "`";
}

std::string BashReader::statusRead(const RawCommand& cmd, std::size_t firstWord, char sense)
{
    return std::string("!") + sense + commandText(cmd, firstWord);
}

std::string BashReader::reversedStatus(const std::string& read)
{
    if (read.size() < 2 || read[0] != '!' || (read[1] != 'F' && read[1] != 'S'))
        return read;
    return std::string("!") + (read[1] == 'F' ? 'S' : 'F') + read.substr(2);
}

bool BashReader::dropUndecidedStatus(std::vector<std::string>& env)
{
    return std::erase_if(env, [](const std::string& w) { return w.size() > 1 && w[0] == '!' && w[1] != 'F'; }) > 0;
}

// test's comparisons of two words (manual 6.4), -a and -o apart.
bool isTestComparison(const std::string& op)
{
    static const std::set<std::string> comparisons = {"=", "==", "!=", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "<", ">",
                                                      "-nt", "-ot", "-ef"};
    return comparisons.count(op) > 0;
}

// The words from..to as a test of their own: "[ words ]", or "[[ words ]]".
std::vector<std::string> bracketed(std::vector<std::string>::const_iterator from, std::vector<std::string>::const_iterator to,
                                   bool doubleBracket = false)
{
    std::vector<std::string> t{doubleBracket ? "[[" : "["};
    t.insert(t.end(), from, to);
    t.push_back(doubleBracket ? "]]" : "]");
    return t;
}

bool BashReader::isGroup(const std::vector<std::string>& w, std::size_t k, char paren)
{
    // In [[ ]] the text's own "(" and ")" are marked (evalCondition); a value "(" is no group.
    return w[k].size() == 2 && w[k][0] == kGroupMark && w[k][1] == paren;
}

BashReader::Truth BashReader::evalSingleTest(const std::vector<std::string>& a)
{
    // bash's test with four arguments or more (test.c: expr, term): -o below -a below "!",
    // then "(" EXPR ")", a comparison when the next argument is one, a unary test, or a word.
    // Each comparison and unary test is read as a test of its own (evalTest).
    std::size_t pos = 0;
    bool failed = false;
    std::function<Truth()> expr;
    // The next `count` arguments as a test of their own.
    auto sub = [&](std::size_t count) {
        pos += count;
        return evalTest(bracketed(a.begin() + static_cast<std::ptrdiff_t>(pos - count), a.begin() + static_cast<std::ptrdiff_t>(pos)));
    };
    std::function<Truth()> term = [&]() -> Truth {
        if (pos >= a.size()) {
            failed = true;
            return Truth::Unknown;
        }
        if (a[pos] == "!") {
            ++pos;
            return truthNot(term());
        }
        if (a[pos] == "(") {
            ++pos;
            const Truth t = expr();
            if (pos >= a.size() || a[pos] != ")")
                failed = true;
            ++pos;
            return t;
        }
        if (pos + 2 < a.size() && isTestComparison(a[pos + 1]))
            return sub(3);
        if (a[pos].size() == 2 && a[pos][0] == '-' && a[pos] != "-a" && a[pos] != "-o" && pos + 1 < a.size())
            return sub(2);
        ++pos;
        return a[pos - 1].empty() ? Truth::False : Truth::True;
    };
    auto andTerm = [&]() {
        Truth t = term();
        while (pos < a.size() && a[pos] == "-a") {
            ++pos;
            t = truthAnd(t, term());
        }
        return t;
    };
    expr = [&]() {
        Truth t = andTerm();
        while (pos < a.size() && a[pos] == "-o") {
            ++pos;
            t = truthOr(t, andTerm());
        }
        return t;
    };
    const Truth t = expr();
    return failed || pos != a.size() ? Truth::Unknown : t;
}

BashReader::Truth BashReader::evalTest(const std::vector<std::string>& all)
{
    std::vector<std::string> w = all;
    if (w.empty())
        return Truth::Unknown;
    if ((w.front() == "[" && w.back() == "]" && w.size() > 2) || w.front() == "test") {
        // [ ] and test by their count of arguments, as bash's test does (manual 4.1): three
        // with a comparison in the middle compare, "!" before three negates them, "( X )"
        // and "( X Y )" group; five or more (and four of no such form) are parsed.
        const std::vector<std::string> a(w.begin() + 1, w.front() == "test" ? w.end() : w.end() - 1);
        if (a.size() == 3 && (a[1] == "-a" || a[1] == "-o")) {
            const Truth left = a[0].empty() ? Truth::False : Truth::True, right = a[2].empty() ? Truth::False : Truth::True;
            return a[1] == "-a" ? truthAnd(left, right) : truthOr(left, right);
        }
        if ((a.size() == 3 && !isTestComparison(a[1])) || a.size() == 4) {
            if (a[0] == "!")
                return truthNot(evalTest(bracketed(a.begin() + 1, a.end())));
            if (a[0] == "(" && a.back() == ")")
                return evalTest(bracketed(a.begin() + 1, a.end() - 1));
        }
        if (a.size() >= 4)
            return evalSingleTest(a);
    }
    // Tests joined inside [[ ]] by && and ||, "and" binding tighter than "or" (manual
    // 3.2.5.2). Each side is a test of its own.
    const bool doubleBracket = w.front() == "[[";
    if (doubleBracket) {
        const std::size_t begin = 1, end = w.size() - 1;
        for (const std::string& op : {std::string("||"), std::string("&&")}) {
            std::vector<std::size_t> at;
            std::size_t from = begin;
            int depth = 0;   // inside ( ... ): grouped, split there (below)
            for (std::size_t k = begin; k < end; ++k) {
                depth += isGroup(w, k, '(') ? 1 : isGroup(w, k, ')') && depth > 0 ? -1 : 0;
                if (depth == 0 && w[k] == op && k > from && k + 1 < end) {
                    at.push_back(k);
                    from = k + 1;
                }
            }
            if (at.empty())
                continue;
            at.push_back(end);
            Truth result = Truth::Unknown;
            std::size_t start = begin;
            for (std::size_t a = 0; a < at.size(); ++a) {
                const Truth t = evalTest(bracketed(w.begin() + static_cast<std::ptrdiff_t>(start), w.begin() + static_cast<std::ptrdiff_t>(at[a]), true));
                result = a == 0 ? t : op == "||" ? truthOr(result, t) : truthAnd(result, t);
                start = at[a] + 1;
            }
            return result;
        }
        // ( EXPR ) groups, also after "!" (manual 3.2.5.2): the inside as a test of its own.
        std::size_t open = begin;
        bool negated = false;
        while (open < end && w[open] == "!") {
            negated = !negated;
            ++open;
        }
        if (end >= open + 2 && isGroup(w, open, '(') && isGroup(w, end - 1, ')') && end - open > 2) {
            int depth = 0;
            bool whole = true;
            for (std::size_t k = open; k < end && whole; ++k) {
                depth += isGroup(w, k, '(') ? 1 : isGroup(w, k, ')') ? -1 : 0;
                whole = depth > 0 || k + 1 == end;
            }
            if (whole) {
                const Truth t = evalTest(bracketed(w.begin() + static_cast<std::ptrdiff_t>(open) + 1, w.begin() + static_cast<std::ptrdiff_t>(end) - 1, true));
                return negated ? truthNot(t) : t;
            }
        }
    }
    if (w.front() == "[" && w.back() == "]") w = std::vector<std::string>(w.begin() + 1, w.end() - 1);
    else if (w.front() == "[[" && w.back() == "]]") w = std::vector<std::string>(w.begin() + 1, w.end() - 1);
    else if (w.front() == "test") w.erase(w.begin());
    else return Truth::Unknown;
    bool negate = false;
    if (!w.empty() && w.front() == "!") {
        negate = true;
        w.erase(w.begin());
    }
    auto result = [&](bool v) { return (v != negate) ? Truth::True : Truth::False; };
    if (w.size() == 1)
        return result(!w[0].empty());
    if (w.size() == 2 && w[0] == "-n")
        return result(!w[1].empty());
    if (w.size() == 2 && w[0] == "-z")
        return result(w[1].empty());
    if (w.size() == 3) {
        const std::string& op = w[1];
        // In [[ ]] the right of == and != is a pattern (manual 3.2.5.2): [[ $M == *70b* ]].
        const bool pattern = doubleBracket && w[2].find_first_of("*?[\\()") != std::string::npos;
        const bool equal = pattern ? matchesPattern(w[2], w[0], true) : w[0] == w[2];
        if (op == "=" || op == "==")
            return result(equal);
        if (op == "!=")
            return result(!equal);
        // [[ WORD =~ REGEX ]]: a POSIX extended expression matched anywhere in the word, as
        // bash runs it (regcomp with REG_EXTENDED; manual 3.2.5.2). A word holding a value the
        // reading does not know, or an expression regcomp refuses (bash's status 2), decides
        // nothing. (Quoted parts of the expression match literally in bash; the word arrives
        // here with its quotes removed, so an expression with quoted special characters can
        // match more than bash's.)
        if (doubleBracket && op == "=~") {
            if (w[0].find(kEmptySentinel) != std::string::npos)
                return Truth::Unknown;
            regex_t re;
            if (regcomp(&re, w[2].c_str(), REG_EXTENDED | REG_NOSUB) != 0)
                return Truth::Unknown;
            const bool matched = regexec(&re, w[0].c_str(), 0, nullptr, 0) == 0;
            regfree(&re);
            return result(matched);
        }
        long long a = 0, b = 0;
        if ((op == "-eq" || op == "-ne" || op == "-lt" || op == "-le" || op == "-gt" || op == "-ge") && wholeInteger(w[0], a)
            && wholeInteger(w[2], b)) {
            if (op == "-eq") return result(a == b);
            if (op == "-ne") return result(a != b);
            if (op == "-lt") return result(a < b);
            if (op == "-le") return result(a <= b);
            if (op == "-gt") return result(a > b);
            return result(a >= b);
        }
    }
    return Truth::Unknown;   // file tests, -a/-o: not decidable from text
}

void BashReader::warnSubstitution(const std::string& text, int line)
{
    // The text eval reads again holds the substitutions its values kept: said where the value
    // was made, not again at the eval.
    if (m_evalDepth > 0 && std::find(m_keptTexts.begin(), m_keptTexts.end(), text) != m_keptTexts.end())
        return;
    warn(line, "command substitution " + text + " is not executed; kept as text");
}

void BashReader::keepOpaque(std::vector<Piece>& pieces, const std::string& text)
{
    m_unknownExpansion = true;
    pieces.push_back({text, false, false, true});
    m_keptSubstitution = true;
    m_keptText = text;
    if (std::find(m_keptTexts.begin(), m_keptTexts.end(), text) == m_keptTexts.end())
        m_keptTexts.push_back(text);
}

void BashReader::noteOpaque(const std::string& name, const std::string& value)
{
    if (m_keptSubstitution && value == m_keptText)
        m_opaqueVars.insert(name);
    else
        m_opaqueVars.erase(name);
}

bool BashReader::applyAssignment(const RawWord& word, int line, bool exported)
{
    const std::string& t = word.text;
    std::size_t eq = npos;
    // NAME=..., NAME+=..., NAME[index]=...
    std::size_t k = 0;
    if (t.empty() || !isNameStart(t[0]))
        return false;
    while (k < t.size() && isNameChar(t[k])) ++k;
    const std::string name = t.substr(0, k);
    std::string index;
    bool hasIndex = false;
    if (k < t.size() && t[k] == '[') {
        const std::size_t close = t.find(']', k);
        if (close == npos) return false;
        index = t.substr(k + 1, close - k - 1);
        hasIndex = true;
        k = close + 1;
    }
    bool append = false;
    if (k < t.size() && t[k] == '+') {
        append = true;
        ++k;
    }
    if (k >= t.size() || t[k] != '=')
        return false;
    eq = k;
    touchVariable(name);
    noteRan({&word, 1});
    const bool undecidedBranch = std::any_of(m_branches.begin(), m_branches.end(), [](const Branch& b) {
        return !b.known && b.kind != Branch::Kind::Case && b.kind != Branch::Kind::Loop;
    });
    if (undecidedBranch)
        warnOnce("cond:" + name, line,
                 name + " is set in a branch whose condition cannot be decided from the text; it is read as if the branch ran");
    // In a case block whose subject is not known: named once, at its esac. Not for one that
    // encloses the subshell this assignment is in (--tp) ( TP=8 ) ;;): the value stays in there.
    const std::size_t inside = m_subshells.empty() ? 0 : m_subshells.back().branches;
    for (std::size_t k = inside; k < m_branches.size(); ++k) {
        Branch& b = m_branches[k];
        if (b.kind == Branch::Kind::Case && !b.known && std::find(b.assigned.begin(), b.assigned.end(), name) == b.assigned.end())
            b.assigned.push_back(name);
    }
    // What the value reads from outside the script goes with the variable (m_envDerived).
    NameList outerReads, outerValueReads;
    outerReads.swap(m_envReads);
    outerValueReads.swap(m_valueReads);
    struct TakeReads {
        BashReader& r;
        NameList& outer;
        NameList& outerValue;
        const std::string& name;
        bool append;
        ~TakeReads()
        {
            take(r.m_envDerived, r.m_envReads, outer);
            take(r.m_valueDerived, r.m_valueReads, outerValue);
        }
        void take(std::map<std::string, std::vector<std::string>>& derivedOf, NameList& reads, NameList& outerReads) const
        {
            std::vector<std::string>& derived = derivedOf[name];
            // A new value replaces what the old one read, but not what another branch of an if
            // still open would have set (if [ -n "$FP8" ]; then ARGS=(...); else ARGS=(...)):
            // that branch's words stay the alternative (skippedByTest).
            if (!append)
                std::erase_if(derived, [&](const std::string& read) { return !(&derivedOf == &r.m_valueDerived && r.skippedInOpenBlock(read)); });
            addEnv(derived, reads);
            if (derived.empty())
                derivedOf.erase(name);
            addEnv(outerReads, reads);
            reads.swap(outerReads);
        }
    } takeReads{*this, outerReads, outerValueReads, name, append || hasIndex};
    // Set in a branch taken on what the text does not give (a variable of the environment, the
    // script's arguments): the value depends on that too, as when the branch is skipped
    // (skippedAssignments).
    for (const Branch& b : m_branches)
        if (b.known && b.active)
            addEnv(m_envReads, b.env);
    // Its value is a guess where the branch, or the && / || before it, is undecided: a test on
    // it later decides nothing (evalCondition).
    if (undecidedBranch || m_undecidedCall)
        m_envReads.add("!U`" + name + " (line " + std::to_string(line) + ")`");
    if (word.array_assign) {
        m_opaqueVars.erase(name);   // elements split as written; the array is no one substitution
        std::vector<std::string> values;
        std::vector<WordReads> reads;   // per value: what its element read
        for (const std::string& e : word.elements) {
            NameList before;
            before.swap(m_valueReads);
            std::vector<std::string> fields = expandWord(e, line);
            const std::vector<WordReads> own = fieldReads(e, fields, m_valueReads);
            values.insert(values.end(), fields.begin(), fields.end());
            reads.insert(reads.end(), own.begin(), own.end());
            addEnv(before, m_valueReads);
            m_valueReads.swap(before);
        }
        auto& arr = m_arrays[name];
        auto elementReads = m_elementReads.find(name);
        const bool parallel = elementReads != m_elementReads.end() && elementReads->second->size() == arr.size();
        if (!append) {
            arr.clear();
            if (auto it = m_vars.find(name); it != m_vars.end()) m_vars.erase(it);
            m_elementReads[name] = std::make_shared<std::vector<WordReads>>(std::move(reads));
        } else if (auto it = m_vars.find(name); it != m_vars.end()) {
            arr.insert(arr.begin(), it->second);
            m_vars.erase(it);
            m_elementReads.erase(name);
        } else if (parallel) {
            if (elementReads->second.use_count() > 1)
                elementReads->second = std::make_shared<std::vector<WordReads>>(*elementReads->second);
            elementReads->second->insert(elementReads->second->end(), reads.begin(), reads.end());
        } else if (arr.empty()) {
            m_elementReads[name] = std::make_shared<std::vector<WordReads>>(std::move(reads));
        } else {
            m_elementReads.erase(name);
        }
        arr.insert(arr.end(), values.begin(), values.end());
        std::size_t bytes = 0;
        for (const std::string& v : arr)
            bytes += v.size();
        checkValueSize(name, bytes, arr.size(), line);
    } else {
        m_keptSubstitution = false;
        const std::string value = expandToString(t.substr(eq + 1), line, 0);
        if (!hasIndex && append)
            m_opaqueVars.erase(name);   // an appended value is never one substitution alone
        else if (!hasIndex)
            noteOpaque(name, value);
        if (hasIndex) {
            long long idx = 0;
            if (!evalArithmetic(index, idx, line, 0) || idx < 0 || idx > 100000) {
                warn(line, "array index [" + index + "] of " + name + " is not a number; ignored");
                return true;
            }
            auto& arr = m_arrays[name];
            m_elementReads.erase(name);
            if (auto it = m_vars.find(name); it != m_vars.end()) {
                arr.insert(arr.begin(), it->second);
                m_vars.erase(it);
            }
            if (arr.size() <= static_cast<std::size_t>(idx)) arr.resize(static_cast<std::size_t>(idx) + 1);
            arr[static_cast<std::size_t>(idx)] = append ? arr[static_cast<std::size_t>(idx)] + value : value;
            checkValueSize(name, arr[static_cast<std::size_t>(idx)].size(), arr.size(), line);
        } else if (auto it = m_arrays.find(name); it != m_arrays.end()) {
            m_elementReads.erase(name);
            if (it->second.empty()) it->second.push_back({});
            it->second.front() = append ? it->second.front() + value : value;
            checkValueSize(name, it->second.front().size(), it->second.size(), line);
        } else if (m_integerVars.count(name)) {
            // The integer attribute: the value is an arithmetic expression, and += adds.
            long long v = 0, old = 0;
            const auto now = m_vars.find(name);
            if (!evalArithmetic(value, v, line, 0)
                || (append && now != m_vars.end() && !now->second.empty() && !evalArithmetic(now->second, old, line, 0))) {
                warn(line, name + " has the integer attribute (declare -i), and bash evaluates \"" + value
                               + "\" as arithmetic, which the reader cannot; its value is left as it was");
            } else {
                m_vars[name] = std::to_string(append ? old + v : v);
                m_rawValues.erase(name);
            }
        } else {
            m_vars[name] = append ? m_vars[name] + value : value;
            checkValueSize(name, m_vars[name].size(), 1, line);
            if (name == "OPTIND")
                m_getopts.letter = 1;   // bash starts getopts again at any assignment to OPTIND
            if (append)
                m_rawValues.erase(name);
            else
                m_rawValues[name] = t.substr(eq + 1);
        }
    }
    if (exported || m_allExport)
        exportName(name);
    return true;
}

void BashReader::execute(const RawCommand& cmd, std::size_t firstWord)
{
    if (cmd.forget) {   // X=<PATH>: X as if never set, a reference that the environment gives
        const std::string& name = cmd.words.front().text;
        unsetScalar(name);
        m_unsetByScript.erase(name);
        m_integerVars.erase(name);
        if (!isLocal(name))
            std::erase(m_exportOrder, name);
        return;
    }
    std::size_t w = firstWord;
    const auto& words = cmd.words;
    // Leading assignments. Alone on a command they set shell variables; before a command
    // (NAME=value cmd ...) they go to that command's environment only and the shell's
    // variables stay as they were (manual 3.7.1 and 3.7.4).
    const std::size_t firstAssign = w;
    while (w < words.size() && !assignedName(words[w].text).empty()) ++w;
    if (w >= words.size()) {
        for (std::size_t a = firstAssign; a < w; ++a)
            applyAssignment(words[a], cmd.line, false);
        return;
    }
    const std::string& head = words[w].text;
    if (head == "local" && m_frames.empty()) {
        warn(cmd.line, "local outside a function: bash refuses it (\"can only be used in a function\") and sets nothing");
        return;
    }
    if (head == "export" || head == "declare" || head == "typeset" || head == "local" || head == "readonly") {
        bool exported = head == "export";
        bool unexported = false;   // export -n, declare +x: no longer in the environment of commands
        // In a function, local and declare / typeset (without -g) make the variables the call's own.
        bool global = head == "export" || head == "readonly" || m_frames.empty();
        // -i: the integer attribute, whose assignments bash evaluates as arithmetic (declare,
        // typeset and local take it; +i takes it away).
        bool integer = false, notInteger = false;
        const bool takesInteger = head == "declare" || head == "typeset" || head == "local";
        for (std::size_t a = w + 1; a < words.size(); ++a) {
            const std::string& t = words[a].text;
            if (!t.empty() && t[0] == '-' && !words[a].array_assign) {
                if (t.find('x') != npos) exported = true;
                if (t.find('g') != npos) global = true;
                if (head == "export" && t.find('n') != npos) unexported = true;
                if (takesInteger && t.find('i') != npos) integer = true;
                continue;
            }
            if (t.size() > 1 && t[0] == '+' && !words[a].array_assign) {
                if (t.find('x') != npos) unexported = true;
                if (takesInteger && t.find('i') != npos) notInteger = true;
                continue;
            }
            if (integer || notInteger) {
                const std::string assigned = assignedName(t);
                const std::string name = assigned.empty() ? t : assigned;
                if (validName(name)) {
                    if (integer)
                        m_integerVars.insert(name);
                    else
                        m_integerVars.erase(name);
                }
            }
            if (unexported) {
                const std::string assigned = assignedName(t);
                const std::string name = assigned.empty() ? t : assigned;
                if (!global && validName(name))
                    makeLocal(name);   // declare +x in a function: the call's own, as declare makes it
                const bool allExport = std::exchange(m_allExport, false);
                if (!assigned.empty())
                    applyAssignment(words[a], cmd.line, false);
                m_allExport = allExport;
                if (!isLocal(name))   // the export is tracked by name: the caller's stands
                    std::erase(m_exportOrder, name);
                continue;
            }
            const std::string assigned = assignedName(t);
            const std::string& name = assigned.empty() ? t : assigned;
            // `local X` without a value: X is unset in the call until it is assigned.
            if (!global && validName(name) && makeLocal(name) && assigned.empty()) {
                SavedVariable unset;
                unset.name = name;
                restoreVariable(unset);
            }
            if (applyAssignment(words[a], cmd.line, exported))
                continue;
            if (exported && validName(t))
                exportName(t);
        }
        return;
    }
    if (head == "unset") {
        // Bash's unset builtin: -f removes functions, -v variables; without either, a variable,
        // or the function of that name when no variable has it. A call to a removed function is
        // an unknown command, as in bash.
        std::vector<std::string> names;
        for (std::size_t a = w + 1; a < words.size(); ++a) {
            std::vector<std::string> fields = expandWord(words[a].text, cmd.line);
            names.insert(names.end(), fields.begin(), fields.end());
        }
        bool functions = false, variables = false;
        std::size_t a = 0;
        for (; a < names.size() && names[a].size() > 1 && names[a][0] == '-'; ++a) {
            if (names[a] == "--") {
                ++a;
                break;
            }
            for (std::size_t o = 1; o < names[a].size(); ++o) {
                if (names[a][o] == 'f') {
                    functions = true;
                } else if (names[a][o] == 'v') {
                    variables = true;
                } else if (names[a][o] != 'n') {   // -n: the name reference itself, a variable here
                    warn(cmd.line, "unset " + names[a] + ": not an option of bash's unset, which then removes nothing");
                    return;
                }
            }
        }
        if (functions && variables) {
            warn(cmd.line, "unset -f -v: bash cannot remove a function and a variable at once, and removes nothing");
            return;
        }
        for (; a < names.size(); ++a) {
            const std::string& name = names[a];
            if (!functions) {
                m_integerVars.erase(name);      // unset takes the attributes too
                m_unsetByScript.insert(name);   // also one from the environment
                if (!isLocal(name))
                    std::erase(m_exportOrder, name);   // set again, it is not exported
            }
            if (!functions && (variables || m_vars.count(name) || m_arrays.count(name))) {
                unsetScalar(name);
            } else if (!variables) {
                if (auto it = m_functions.find(name); it != m_functions.end() && it->second.body) {
                    touchFunction(name);
                    it->second.body.reset();   // still known as defined (uncalledFunctions)
                    it->second.unset_line = cmd.line;
                    it->second.called_after_unset = 0;
                }
            }
        }
        return;
    }
    if (head == "read") {
        const Truth t = readLine(cmd, firstAssign);
        if (t == Truth::Unknown)
            readInput(cmd, w);
        else
            m_arithmeticStatus = t;   // for && / || and $?: 1 at the end of the input
        return;
    }
    if (head == "readarray" || head == "mapfile") {
        readInput(cmd, w);
        return;
    }
    if (head == "printf" && w + 1 < words.size() && words[w + 1].text.rfind("-v", 0) == 0) {
        printfAssign(cmd, w);
        return;
    }
    if (head == "shopt") {
        // shopt -s / -u extglob: whether case patterns and ${V#P} know @( ) !( ) ... (inside
        // [[ ]] bash knows them always).
        bool set = false, unset = false, extglob = false;
        for (std::size_t a = w + 1; a < words.size(); ++a) {
            const std::string word = expandToString(words[a].text, cmd.line, 0);
            set = set || word == "-s";
            unset = unset || word == "-u";
            extglob = extglob || word == "extglob";
        }
        if (extglob && set != unset)
            m_extglob = set;
        return;
    }
    if (head == "getopts") {
        // Outside a loop's condition (`getopts "t:" o && TP=$OPTARG`, `while true; do getopts
        // ... || break`): one call, its status taken as an arithmetic command's.
        const Truth t = getoptsStep(cmd, w);
        if (t == Truth::Unknown)
            getoptsUnknown(cmd, w);
        else
            m_arithmeticStatus = t;
        return;
    }
    if (head == "break" || head == "continue") {
        // Followed in a loop being iterated when the text decides that it runs: no block the
        // text cannot decide, and no loop read once, between it and the loop.
        if (m_iterating.empty())
            return;   // in a loop read once: the body is read on, as before
        long long levels = 1;
        if (w + 1 < words.size() && (!evalArithmetic(expandToString(words[w + 1].text, cmd.line, 0), levels, cmd.line, 0) || levels < 1))
            return;   // bash: not a loop count, an error that leaves nothing
        const bool decided = !m_undecidedCall
            && std::all_of(m_branches.begin() + static_cast<std::ptrdiff_t>(m_iterating.back()), m_branches.end(),
                           [](const Branch& b) { return b.known && b.kind != Branch::Kind::Loop; });
        if (!decided) {
            warnOnce("jump:" + std::to_string(cmd.line), cmd.line,
                     head + " under a test the text cannot decide is not followed; the rest of the loop's body is read");
            return;
        }
        (head == "break" ? m_breakLevels : m_continueLevels) =
            static_cast<int>(std::min<long long>(levels, static_cast<long long>(m_iterating.size())));
        return;
    }
    if (head == "set") {
        // set [options] [--] [ARG ...]: with `--` or a first word that is no option, the
        // words become $1 ... (bash's set builtin, manual 4.3.1); options alone (set -e, -x,
        // -o pipefail) change nothing the reading follows.
        std::vector<std::string> fields;
        NameList outer;
        outer.swap(m_envReads);
        for (std::size_t a = w + 1; a < words.size(); ++a) {
            const std::vector<std::string> f = expandWord(words[a].text, cmd.line);
            fields.insert(fields.end(), f.begin(), f.end());
        }
        const bool fromArguments = std::any_of(m_envReads.begin(), m_envReads.end(), [](const std::string& r) { return r[0] == '$'; });
        addEnv(outer, m_envReads);
        m_envReads.swap(outer);
        // `set -- "$@" --log-dir /x` (or an array set from "$@") with the script's own
        // arguments unknown: they stay unknown, so a usage guard on them is still one.
        if (fromArguments)
            return;
        std::size_t a = 0;
        bool positional = false;
        for (; a < fields.size(); ++a) {
            if (fields[a] == "--") {
                positional = true;
                ++a;
                break;
            }
            if (fields[a].empty() || (fields[a][0] != '-' && fields[a][0] != '+')) {
                positional = true;
                break;
            }
            const bool on = fields[a][0] == '-';
            if (fields[a].find('a') != std::string::npos)
                m_allExport = on;   // set -a / +a: assignments export their names (allexport)
            if (fields[a].find('o') != std::string::npos) {
                if (a + 1 < fields.size() && fields[a + 1] == "allexport")
                    m_allExport = on;
                ++a;   // -o NAME, also in a cluster (set -euo pipefail): the option's name
            }
        }
        if (!positional)
            return;
        std::vector<std::string> args(fields.begin() + static_cast<std::ptrdiff_t>(std::min(a, fields.size())), fields.end());
        checkArgumentCount("set -- gives", args.size(), cmd.line);
        if (Frame* frame = positionalFrame()) {
            frame->args = std::move(args);
            frame->arg_reads.clear();
            frame->switches.clear();
            frame->unknown_args = false;
        } else {
            setArguments(std::move(args));   // the script's own, unknown before, are the text's from here on
        }
        return;
    }
    if (head == "shift" && positionalFrame()) {
        // Drops the call's (or the given script's) first n arguments; more than it has is an
        // error and drops none (bash's shift builtin).
        Frame& frame = *positionalFrame();
        long long count = 1;
        if (w + 1 < words.size() && (!evalArithmetic(expandToString(words[w + 1].text, cmd.line, 0), count, cmd.line, 0) || count < 0)) {
            warn(cmd.line, "shift " + words[w + 1].text + ": not a count the text gives; the arguments of " + frame.function
                               + " are kept");
            return;
        }
        if (static_cast<unsigned long long>(count) <= frame.args.size()) {
            frame.args.erase(frame.args.begin(), frame.args.begin() + static_cast<std::ptrdiff_t>(count));
            if (frame.arg_reads.size() >= static_cast<unsigned long long>(count))
                frame.arg_reads.erase(frame.arg_reads.begin(), frame.arg_reads.begin() + static_cast<std::ptrdiff_t>(count));
            if (frame.arg_reads.size() != frame.args.size())
                frame.arg_reads.clear();
            const auto shifted = static_cast<std::size_t>(count);
            std::erase_if(frame.switches, [&](const SwitchAt& sw) { return sw.at < shifted; });
            for (SwitchAt& sw : frame.switches)
                sw.at -= shifted;
        } else if (frame.unknown_args) {
            frame.args.clear();
            warnOnce("shift:" + frame.function, cmd.line,
                     "shift in function " + frame.function + " goes past the arguments the text gives (it was called with the "
                     "script's own); its positional parameters keep their names as the script's");
        }
        return;
    }
    if (head == "trap") {
        // trap 'cleanup' EXIT: bash runs the handler later; the reading does not, but the
        // functions it names are not "never called".
        for (std::size_t a = w + 1; a + 1 < words.size(); ++a) {
            std::string name;
            for (const char c : expandToString(words[a].text, cmd.line, 0) + " ") {
                if (isNameChar(c)) {
                    name += c;
                } else {
                    noteFunctionNamed(name);
                    name.clear();
                }
            }
        }
        return;
    }
    if (head == "eval") {
        evalText(cmd, w, firstAssign);
        return;
    }
    // Arithmetic commands assign only through their expression (manual 6.5): evaluated when
    // each assignment's name and value are known, else the variables keep their values.
    if (head.rfind("((", 0) == 0 && !arithmeticAssigns(head.substr(2)))
        return;   // a test only (( X > 1 )): its status is read by statusOf
    if (head == "let" || head.rfind("((", 0) == 0) {
        std::vector<std::string> expressions;
        if (head == "let") {
            for (std::size_t a = w + 1; a < words.size(); ++a)
                expressions.push_back(expandToString(words[a].text, cmd.line, 0));
        } else if (head.size() >= 4 && head.compare(head.size() - 2, 2, "))") == 0) {
            expressions.push_back(head.substr(2, head.size() - 4));
            std::erase(expressions.back(), '"');
        }
        bool evaluated = !expressions.empty();
        long long last = 0;
        for (const std::string& e : expressions)
            evaluated = evaluated && assignArithmetic(e, cmd.line, last);
        // Its status: 0 when the last expression is not zero (manual 4.2 let, 3.2.6); run()
        // takes it for && / || and $?.
        if (evaluated)
            m_arithmeticStatus = last != 0 ? Truth::True : Truth::False;
        else
            warn(cmd.line, std::string(head == "let" ? "let" : "(( ))") + " is not evaluated; variables it sets keep their "
                           "earlier values (write NAME=$(( ... )) instead)");
        return;
    }
    if (head == "source" || head == ".") {
        warn(cmd.line, "'" + head + "' of another file is not followed; variables it sets are unknown");
        m_sourceLines.push_back(cmd.line);
        // Kept as a command (its words expanded, nothing run), so that an export can write
        // it again where the script ran it (a vendor's set_env.sh before the launch).
    }
    // The words are expanded before the prefix assignments are made (manual 3.7.1).
    ShellCommand out;
    out.line = cmd.line;
    // Findings while expanding a command stay with it: only the launch command's matter.
    std::vector<std::string> saved, savedKeys;
    saved.swap(m_warnings);
    savedKeys.swap(m_warnedKeys);
    ++m_warningsHeld;
    m_scriptArgs = false;
    // What each word's value was computed from outside the script, kept with its fields
    // (m_envReads, what a condition's status depends on, is collected apart as before).
    NameList commandValueReads;
    commandValueReads.swap(m_valueReads);
    // A word of a text eval runs shares what the text was computed from.
    const auto textReads = m_evalReads.empty() ? nullptr : std::make_shared<const std::vector<std::string>>(m_evalReads);
    NameList valueReads;   // out.value_reads: the text's, then each word's
    valueReads.add(m_evalReads);
    noteRan(std::span<const RawWord>(words).subspan(w));
    // For a call: each switch of each word, at the end of that word's fields. Its words would
    // have stood at the latest there (in a word that gave several, or in "$@" passed on), so a
    // shift drops it only when it went past all of them. Every use of it is kept.
    std::vector<std::pair<std::string, std::size_t>> switchAt;
    std::optional<bool> calls;   // the first word names a function
    for (std::size_t a = w; a < words.size(); ++a) {
        if (words[a].array_assign) continue;
        m_valueReads.clear();
        std::vector<std::string> fields = expandWord(words[a].text, cmd.line);
        if (!calls && !(out.words.empty() && fields.empty()))
            calls = m_functions.count(out.words.empty() ? fields.front() : out.words.front()) > 0;
        if (calls.value_or(false))
            for (const std::string& read : m_valueReads)
                if (read.starts_with('+'))
                    switchAt.emplace_back(read, out.words.size() + fields.size());
        if (fields.empty())
            addEnv(out.vanished_environment_reads, m_valueReads);
        for (WordReads& f : fieldReads(words[a].text, fields, m_valueReads)) {
            if (textReads)
                f.text_names = textReads;
            out.word_reads.push_back(std::move(f));
        }
        out.words.insert(out.words.end(), fields.begin(), fields.end());
        valueReads.add(m_valueReads);
        addEnv(commandValueReads, m_valueReads);
    }
    out.value_reads = valueReads.names();
    m_valueReads.swap(commandValueReads);
    out.warnings.swap(m_warnings);
    m_warnings.swap(saved);
    m_warnedKeys.swap(savedKeys);
    --m_warningsHeld;
    const bool scriptArgs = m_scriptArgs;
    // The prefix assignments, applied in order (a later one sees an earlier one, as bash's
    // temporary environment does) and their values noted; a function called sees them as
    // variables. Then the variables are put back.
    std::vector<SavedVariable> hidden;
    for (std::size_t a = firstAssign; a < w; ++a) {
        const std::string name = assignedName(words[a].text);
        hidden.push_back(saveVariable(name));
        applyAssignment(words[a], cmd.line, false);
        std::string value;
        lookup(name, value);
        std::erase_if(out.environment, [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; });
        out.environment.push_back(name + "=" + value);
        const std::string& t = words[a].text;
        out.environment_raw[name] = t.substr(t.find('=') + 1);
    }
    const bool call = !out.words.empty() && [&] {
        const auto it = m_functions.find(out.words.front());
        if (it != m_functions.end() && !it->second.body && it->second.called_after_unset == 0) {
            touchFunction(it->first);
            it->second.called_after_unset = cmd.line;   // bash: command not found
        }
        return it != m_functions.end() && it->second.body != nullptr;
    }();
    if (call) {
        // What each argument read, for the function's "$@" and $1 ... (fieldReads).
        std::vector<WordReads> callReads;
        if (out.word_reads.size() == out.words.size())
            callReads.assign(out.word_reads.begin() + 1, out.word_reads.end());
        std::vector<SwitchAt> switches;   // "+NAME" marks of the call's words, for its "$@"
        for (const auto& [mark, at] : switchAt)
            if (at > 0)   // past the function's name: an argument's index
                switches.push_back({mark, at - 1});
        callFunction(out.words.front(), std::vector<std::string>(out.words.begin() + 1, out.words.end()), scriptArgs,
                     std::move(out.warnings), cmd.line, std::move(callReads), std::move(switches));
    }
    restoreVariables(hidden);
    if (call || out.words.empty())
        return;
    // Inside a call, the findings of the calls' own words (an unset variable passed as an
    // argument) are this command's too.
    std::vector<std::string> found;
    for (const Frame& frame : m_frames)
        found.insert(found.end(), frame.warnings.begin(), frame.warnings.end());
    found.insert(found.end(), out.warnings.begin(), out.warnings.end());
    out.warnings.clear();
    for (std::string& finding : found)
        if (std::find(out.warnings.begin(), out.warnings.end(), finding) == out.warnings.end())
            out.warnings.push_back(std::move(finding));
    if (!m_batchOptions.empty()) {
        out.batch_job = true;
        out.batch_options = m_batchOptions.back();
    }
    // A command a shell runs from a command string (below) stands after what ran that shell:
    // `srun -N 16 ... sh -c "python pretrain_gpt.py ..."` is read as srun running python.
    if (!m_wrappedBy.empty() && out.word_reads.size() == out.words.size()) {
        out.words.insert(out.words.begin(), m_wrappedBy.back().words.begin(), m_wrappedBy.back().words.end());
        out.word_reads.insert(out.word_reads.begin(), m_wrappedBy.back().reads.begin(), m_wrappedBy.back().reads.end());
    }
    if (!m_environmentKept || m_environmentKept(out)) {
        out.exported = exportedVariables();
        for (const std::string& e : out.exported)
            if (auto it = m_rawValues.find(e.substr(0, e.find('='))); it != m_rawValues.end())
                out.exported_raw.insert(*it);
    }
    const std::optional<CommandString> string = commandStringAt(out.words);
    const bool batch = !out.words.empty() && baseName(out.words.front()) == "sbatch" && cmd.input && !cmd.input->here_string;
    const ShellCommand& ran = m_commands.emplace_back(std::move(out));
    if (batch) {
        // sbatch [OPTIONS] <<EOF: the batch script on its standard input, read as a script of
        // its own (a subshell) whose commands stand at this line and know the job's options.
        // As the here-document expands it; a command substitution in it stays as its text.
        const std::string script = hereText(*cmd.input, cmd.line, true).value_or(cmd.input->text);
        std::vector<std::string> options = batchDirectives(script).first;
        options.insert(options.end(), ran.words.begin() + 1, ran.words.end());
        const int line = ran.line;
        std::vector<RawCommand> commands;
        if (!parseText(script, line, "sbatch", commands))
            return;
        m_batchOptions.push_back(std::move(options));
        enterSubshell();
        exportTemporarily(cmd, firstAssign, w);   // TP=4 sbatch <<EOF: the job's environment
        // What sbatch sets in the job's environment from its options, over the submitter's.
        for (const JobVariable& v : batchJobEnvironment(m_batchOptions.back())) {
            setScalar(v.name, v.value);
            exportName(v.name);
        }
        runText(commands, line, "sbatch", m_evalReads);
        leaveSubshell();
        m_batchOptions.pop_back();
        return;
    }
    if (!string)
        return;
    // sh -c STRING (bash -c, and with its options): a shell of its own reads the string as a
    // script. Read here as a subshell whose commands stand at this line, after the words
    // before the shell (srun and its options, which run it); the string's reads go with every
    // word of its commands, as eval's text's do.
    const std::size_t shellAt = string->shell;
    std::vector<RawCommand> commands;
    const std::string text = ran.words[string->text];
    std::vector<std::string> stringReads = m_evalReads;
    const bool aligned = ran.word_reads.size() == ran.words.size();
    if (aligned)
        addEnv(stringReads, WordReads::of(ran.word_reads[string->text].names));
    Wrapper wrapper;
    wrapper.words.assign(ran.words.begin(), ran.words.begin() + static_cast<std::ptrdiff_t>(shellAt));
    if (aligned)
        wrapper.reads.assign(ran.word_reads.begin(), ran.word_reads.begin() + static_cast<std::ptrdiff_t>(shellAt));
    else
        wrapper.reads.resize(shellAt);
    const int line = ran.line;
    const std::string what = string->name + " -c";
    // The words after the string are the shell's $0, $1, ... (bash(1), -c).
    std::vector<std::string> args;
    std::vector<WordReads> argReads;
    for (std::size_t k = string->text + 2; k < ran.words.size(); ++k) {
        args.push_back(ran.words[k]);
        if (aligned)
            argReads.push_back(ran.word_reads[k]);
    }
    // (m_commands grows while the string runs: `ran` is not used past here.)
    if (!parseText(text, line, what, commands))
        return;
    m_wrappedBy.push_back(std::move(wrapper));
    enterSubshell();
    exportTemporarily(cmd, firstAssign, w);   // TP=4 srun ... bash -c '... $TP'
    m_frames.push_back(Frame{what, std::move(args), std::move(argReads), false, {}, {}, line, m_subshells.size(), false, {}, {}, {}});
    runText(commands, line, what, std::move(stringReads));
    m_returning = false;
    const std::vector<SavedVariable> locals = std::move(m_frames.back().locals);
    m_frames.pop_back();
    restoreVariables(locals);
    leaveSubshell();
    m_wrappedBy.pop_back();
}

void BashReader::exportTemporarily(const RawCommand& cmd, std::size_t from, std::size_t to)
{
    // NAME=value before the command that starts another shell: that shell's environment.
    // Inside a subshell, which puts the variables and the exported names back when it ends.
    for (std::size_t a = from; a < to; ++a) {
        applyAssignment(cmd.words[a], cmd.line, false);
        exportName(assignedName(cmd.words[a].text));
    }
}

std::vector<std::string> BashReader::expandWord(const std::string& raw, int line)
{
    std::vector<Piece> pieces;
    bool force = false;
    expandInto(raw, 0, raw.size(), false, pieces, force, line, 0);
    FieldSplitter fields(ifs());
    for (const Piece& p : pieces) {
        if (p.field_break)
            fields.breakField();
        if (p.soft_break && p.split_separator.empty())
            fields.softBreak();
        else if (p.soft_break)
            fields.split(p.split_separator.front());
        if (!p.splittable) {
            fields.keep(p.text, p.element);
            continue;
        }
        for (std::size_t i = 0; i < p.text.size();) {
            // A substitution kept as text inside a longer value (ARGS="--master_addr $(hostname
            // -I | awk ...) --nnodes 4") stays one word: bash splits the command's output, not
            // its text.
            const auto kept = std::find_if(m_keptTexts.begin(), m_keptTexts.end(),
                                           [&](const std::string& k) { return p.text.compare(i, k.size(), k) == 0; });
            if (kept != m_keptTexts.end()) {
                fields.keep(*kept, true);
                i += kept->size();
                continue;
            }
            fields.split(p.text[i++]);
        }
    }
    return fields.finish(force);
}

std::string BashReader::ifs() const
{
    // Unset by the script: as the default (manual 3.5.7). A value the text does not give
    // (IFS=$SEP, SEP from the environment) is not split on: the default is taken.
    std::string value;
    if (!lookup("IFS", value) || m_opaqueVars.count("IFS") || value.find("${") != npos || value.find("$(") != npos)
        return " \t\n";
    return value;
}

std::string BashReader::expandToString(const std::string& raw, int line, int depth)
{
    return expandJoined(raw, line, depth, false);
}

std::string BashReader::expandPattern(const std::string& raw, int line, int depth)
{
    return expandJoined(raw, line, depth, true);
}

std::string BashReader::expandJoined(const std::string& raw, int line, int depth, bool pattern)
{
    std::vector<Piece> pieces;
    bool force = false;
    expandInto(raw, 0, raw.size(), false, pieces, force, line, depth);
    std::string out;
    for (const Piece& p : pieces) {
        if (p.field_break && !out.empty()) out += ' ';
        if (p.soft_break) out += p.separator;
        for (const char c : p.text) {
            // As a pattern, what the text quotes is escaped: also what bracket expressions and
            // the extended forms give a meaning to.
            if (pattern && p.quoted && std::string_view("*?[]\\!^-()|@+&").find(c) != std::string_view::npos)
                out += '\\';
            out += c;
        }
    }
    return out;
}

void BashReader::expandInto(const std::string& raw, std::size_t begin, std::size_t end, bool quoted,
                            std::vector<Piece>& pieces, bool& forceField, int line, int depth)
{
    if (depth > kMaxDepth) {
        warn(line, "expansion nested too deeply; kept as text");
        pieces.push_back({raw.substr(begin, end - begin), false, false});
        return;
    }
    auto lit = [&](std::string s, bool escaped = false) {
        Piece p{std::move(s), false, false};
        p.quoted = quoted || escaped;
        pieces.push_back(std::move(p));
    };
    std::size_t i = begin;
    while (i < end) {
        const char c = raw[i];
        if (!quoted && c == '\'') {
            std::size_t j = skipSingle(raw, i);
            if (j == npos || j > end) j = end;
            lit(raw.substr(i + 1, j - i - 2), true);
            forceField = true;
            i = j;
        } else if (!quoted && c == '"') {
            std::size_t j = skipDouble(raw, i);
            if (j == npos || j > end) j = end;
            const std::string inner = raw.substr(i + 1, j - i - 2);
            // "${ARR[@]}" of an empty array yields no word at all; any other quotes yield one.
            const bool onlyAt = inner == "$@" || onlyListExpansion(inner);
            if (!onlyAt) forceField = true;
            const std::size_t first = pieces.size();
            expandInto(raw, i + 1, j - 1, true, pieces, forceField, line, depth + 1);
            for (std::size_t p = first; p < pieces.size(); ++p)
                pieces[p].quoted = true;
            i = j;
        } else if (c == '\\') {
            if (i + 1 >= end) {
                lit("\\");
                ++i;
            } else if (!quoted) {
                lit(std::string(1, raw[i + 1]), true);
                i += 2;
            } else {
                const char e = raw[i + 1];
                if (e == '$' || e == '`' || e == '"' || e == '\\') lit(std::string(1, e));
                else if (e == '\n') {}
                else lit(std::string("\\") + e);
                i += 2;
            }
        } else if (c == '$') {
            i = expandDollar(raw, i, end, quoted, pieces, line, depth);
        } else if (c == '`') {
            std::size_t j = skipBacktick(raw, i);
            if (j == npos || j > end) j = end;
            warnSubstitution(raw.substr(i, j - i), line);
            keepOpaque(pieces, raw.substr(i, j - i));
            i = j;
        } else {
            std::size_t j = i + 1;
            while (j < end && raw[j] != '\'' && raw[j] != '"' && raw[j] != '\\' && raw[j] != '$' && raw[j] != '`') ++j;
            if (quoted) {
                // every character is literal inside double quotes except the ones handled above
                lit(raw.substr(i, j - i));
            } else {
                lit(raw.substr(i, j - i));
            }
            i = j;
        }
    }
}

std::size_t BashReader::expandDollar(const std::string& raw, std::size_t i, std::size_t end, bool quoted,
                                     std::vector<Piece>& pieces, int line, int depth)
{
    if (i + 1 >= end) {
        pieces.push_back({"$", false, false});
        return i + 1;
    }
    const char n = raw[i + 1];
    if (n == '{') {
        std::size_t j = skipDollarGroup(raw, i);
        if (j == npos || j > end) j = end;
        expandParameter(raw.substr(i + 2, j - i - 3), quoted, pieces, line, depth + 1);
        return j;
    }
    if (n == '(') {
        std::size_t j = skipDollarGroup(raw, i);
        if (j == npos || j > end) j = end;
        const std::string text = raw.substr(i, j - i);
        if (text.size() >= 5 && text[2] == '(' && text.compare(text.size() - 2, 2, "))") == 0) {
            long long v = 0;
            if (evalArithmetic(text.substr(3, text.size() - 5), v, line, depth + 1)) {
                pieces.push_back({std::to_string(v), !quoted, false});
                return j;
            }
            warn(line, "arithmetic " + text + " could not be evaluated" + (m_arithmeticError.empty() ? "" : " (" + m_arithmeticError + ")")
                           + "; kept as text");
            keepOpaque(pieces, text);   // one word of unknown value, as a substitution's
            return j;
        }
        warnSubstitution(text, line);
        keepOpaque(pieces, text);
        return j;
    }
    if (n == '\'' && !quoted) {
        std::string out;
        std::size_t j = readAnsiC(raw, i, out);
        if (j == npos || j > end) j = end;
        Piece p{out, false, false};
        p.quoted = true;
        pieces.push_back(std::move(p));
        return j;
    }
    if (isNameStart(n)) {
        std::size_t j = i + 1;
        while (j < end && isNameChar(raw[j])) ++j;
        expandParameter(raw.substr(i + 1, j - i - 1), quoted, pieces, line, depth + 1);
        return j;
    }
    if (std::isdigit(static_cast<unsigned char>(n)) || n == '@' || n == '*' || n == '#' || n == '?' || n == '$'
        || n == '!' || n == '-') {
        expandParameter(std::string(1, n), quoted, pieces, line, depth + 1);
        return i + 2;
    }
    pieces.push_back({"$", false, false});
    return i + 1;
}

void BashReader::emitListPieces(std::vector<Piece>& pieces, const std::vector<std::string>& list, bool quoted, bool atForm,
                                int line)
{
    // "${A[@]}": one word each (an empty one too). Otherwise one text: "$*" and "${A[*]}" join
    // with the first character of IFS, none when it is empty, a blank when it is unset (manual
    // 3.4.2); unquoted, with a blank, to be split.
    std::size_t bytes = list.empty() ? 0 : list.size() - 1;
    for (const std::string& e : list)
        bytes += e.size() + kElementCost;
    chargeExpansion(bytes, line);
    if (quoted && atForm) {
        for (std::size_t e = 0; e < list.size(); ++e)
            pieces.push_back({list[e], false, e > 0, false, true});
        return;
    }
    const std::string ifsFirst = ifs().substr(0, 1);   // a blank when IFS is unset, none when empty
    const std::string separator = atForm ? std::string(" ") : ifsFirst;
    if (!quoted) {
        // Where words are split: joined with IFS's first character and split as one text;
        // where not (R=${A[*]}, case $*): joined with the separator (manual 3.4.2, 3.5.7).
        for (std::size_t e = 0; e < list.size(); ++e) {
            Piece p{list[e], true, false};
            p.soft_break = e > 0;
            p.separator = separator;
            p.split_separator = ifsFirst;
            pieces.push_back(std::move(p));
        }
        return;
    }
    std::string all;
    for (std::size_t e = 0; e < list.size(); ++e)
        all += (e ? separator : std::string()) + list[e];
    pieces.push_back({all, false, false});
}

void BashReader::expandParameter(const std::string& body, bool quoted, std::vector<Piece>& pieces, int line, int depth)
{
    auto literal = [&](const std::string& s) { pieces.push_back({s, false, false}); };
    if (depth > kMaxDepth) {
        warn(line, "expansion nested too deeply; kept as text");
        literal("${" + body + "}");
        return;
    }
    // ${!NAME}: the parameter whose name is NAME's value (${!#} the last argument, ${!N} ...),
    // ${!A[@]} the indices of array A, ${!PREFIX@} the names that begin with PREFIX (manual
    // 3.5.3).
    // (${!:-none} is $! with an operator, read below.)
    if (body.size() > 1 && body[0] == '!' && std::string_view(":-+=?%/").find(body[1]) == std::string_view::npos) {
        const std::string ref = body.substr(1);
        std::size_t n = 0;
        if (isNameStart(ref[0]))
            while (n < ref.size() && isNameChar(ref[n])) ++n;
        else if (std::isdigit(static_cast<unsigned char>(ref[0])))
            while (n < ref.size() && std::isdigit(static_cast<unsigned char>(ref[n]))) ++n;
        else if (ref[0] == '#')
            n = 1;
        const bool names = n > 0 && isNameStart(ref[0]);
        // ${!A[1]}: the name is A[1]'s value; ${!A[@]} (below) lists A's indices.
        if (names && n < ref.size() && ref[n] == '[') {
            const std::size_t close = ref.find(']', n);
            const std::string sub = close == npos ? std::string() : ref.substr(n + 1, close - n - 1);
            if (close != npos && sub != "@" && sub != "*")
                n = close + 1;
        }
        const std::string after = ref.substr(n);
        if (names && (after == "[@]" || after == "[*]" || after == "@" || after == "*")) {
            std::vector<std::string> list;
            const std::string base = ref.substr(0, n);
            if (after.size() == 3) {
                const auto it = m_arrays.find(base);
                const std::size_t count = it != m_arrays.end() ? it->second.size() : m_vars.count(base);
                for (std::size_t e = 0; e < count; ++e)
                    list.push_back(std::to_string(e));
            } else {
                std::set<std::string> all;
                for (const auto& [var, value] : m_vars)
                    if (var.rfind(base, 0) == 0) all.insert(var);
                for (const auto& [var, value] : m_arrays)
                    if (var.rfind(base, 0) == 0) all.insert(var);
                list.assign(all.begin(), all.end());
            }
            emitListPieces(pieces, list, quoted, after.find('@') != npos, line);
            return;
        }
        // The name, read with its own findings held back: one finding says what is not known.
        std::vector<Piece> inner;
        std::vector<std::string> held, heldKeys = m_warnedKeys;
        held.swap(m_warnings);
        ++m_warningsHeld;
        const bool unknownBefore = std::exchange(m_unknownExpansion, false);
        if (n > 0)
            expandParameter(ref.substr(0, n), true, inner, line, depth + 1);
        const bool unknownName = std::exchange(m_unknownExpansion, unknownBefore);
        held.swap(m_warnings);
        --m_warningsHeld;
        heldKeys.swap(m_warnedKeys);
        std::string target;
        for (const Piece& piece : inner)
            target += piece.text;
        const bool digits = !target.empty()
            && std::all_of(target.begin(), target.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
        // ref="A[@]" or "A[1]": an array's elements or one of them, the usual way to pass an
        // array by name.
        const std::size_t bracket = target.find('[');
        const bool element = bracket != npos && bracket > 0 && target.back() == ']' && validName(target.substr(0, bracket));
        if (n == 0 || unknownName || !(validName(target) || digits || target == "#" || target == "@" || target == "*" || element)) {
            const std::string what = std::isdigit(static_cast<unsigned char>(ref[0])) || ref[0] == '#' ? "$" + ref.substr(0, n)
                                                                                                           : ref.substr(0, n);
            warn(line, "${" + body + "}: " + (n == 0 ? std::string("not an indirect expansion bash reads")
                                              : unknownName ? "the name it reads from " + what + " is not known"
                                                            : what + " holds \"" + target + "\", which names no variable")
                           + "; kept as text");
            m_unknownExpansion = true;
            literal("${" + body + "}");
            return;
        }
        for (const std::string& w : held)
            if (std::find(m_warnings.begin(), m_warnings.end(), w) == m_warnings.end()) {
                m_warnings.push_back(w);
                if (m_warningsHeld == 0)
                    m_warningAt.emplace(w, m_commands.size());
            }
        m_warnedKeys = std::move(heldKeys);
        expandParameter(target + after, quoted, pieces, line, depth + 1);
        return;
    }
    // ${#NAME} and ${#ARR[@]}; ${#@} and ${#*} are $#.
    if (body == "#@" || body == "#*") {
        expandParameter("#", quoted, pieces, line, depth + 1);
        return;
    }
    if (body.size() > 1 && body[0] == '#') {
        std::string name = body.substr(1);
        if (name.size() > 3 && (name.compare(name.size() - 3, 3, "[@]") == 0 || name.compare(name.size() - 3, 3, "[*]") == 0)) {
            name.resize(name.size() - 3);
            auto it = m_arrays.find(name);
            const std::size_t count = it != m_arrays.end() ? it->second.size() : (m_vars.count(name) ? 1 : 0);
            literal(std::to_string(count));
            return;
        }
        std::string v;
        if (const std::size_t open = name.find('['); open != npos && name.back() == ']') {
            // ${#A[1]}: the length of one element.
            std::vector<Piece> element;
            expandParameter(name, true, element, line, depth + 1);
            for (const Piece& piece : element)
                v += piece.text;
        } else {
            lookup(name, v);
        }
        literal(std::to_string(v.size()));
        return;
    }
    std::size_t k = 0;
    std::string name;
    if (!body.empty() && isNameStart(body[0])) {
        while (k < body.size() && isNameChar(body[k])) ++k;
        name = body.substr(0, k);
    } else if (!body.empty() && std::isdigit(static_cast<unsigned char>(body[0]))) {
        while (k < body.size() && std::isdigit(static_cast<unsigned char>(body[k]))) ++k;
        name = body.substr(0, k);
    } else if (!body.empty() && std::string("@*#?$!-0").find(body[0]) != npos) {
        name = body.substr(0, 1);
        k = 1;
    } else {
        warn(line, "bad substitution ${" + body + "}; kept as text");
        literal("${" + body + "}");
        return;
    }
    std::string subscript;
    bool hasSubscript = false;
    if (k < body.size() && body[k] == '[') {
        const std::size_t close = body.find(']', k);
        if (close == npos) {
            warn(line, "bad substitution ${" + body + "}; kept as text");
            literal("${" + body + "}");
            return;
        }
        subscript = body.substr(k + 1, close - k - 1);
        hasSubscript = true;
        k = close + 1;
    }
    const std::string rest = body.substr(k);

    // The value: a list of elements (for [@] / [*] / $@) or one string; isSet tells unset
    // apart from empty.
    bool isSet = false;
    bool isList = false;
    bool atForm = false;
    std::vector<std::string> elements;
    std::string value;
    const bool positional = std::isdigit(static_cast<unsigned char>(name[0])) != 0;
    // In a call, $1 ... $@ $# are its arguments; the script's own are known when given.
    const Frame* frame = positionalFrame();
    if (name == "@" || name == "*") {
        isSet = true;
        isList = true;
        atForm = name == "@";
        if (frame) {
            elements = frame->args;
            for (const SwitchAt& sw : frame->switches)
                noteValueRead(sw.mark);
        }
        if (!frame || frame->unknown_args) {
            m_scriptArgs = true;
            m_unknownExpansion = true;
            warnOnce("args", line, "the script's own arguments ($@) are not known; expanded as empty");
        }
    } else if (name == "#" && frame && frame->unknown_args && m_unsetAsEmpty) {
        // In a condition, as at the top level: the arguments the text gives (the script's own
        // read as none), the test depending on them (m_envReads).
        noteEnvRead("$#");
        isSet = true;
        value = std::to_string(frame->args.size());
    } else if (name == "#" && frame && frame->unknown_args) {
        noteEnvRead("$#");
        m_unknownExpansion = true;
        warnOnce("argc", line, "$# in function " + frame->function + " counts the script's own arguments, which are not known; "
                               "kept as text");
        literal("$#");
        return;
    } else if (name == "?" && m_forcedStatus) {
        isSet = true;
        value = *m_forcedStatus;
    } else if (name == "?" && m_lastStatus == Truth::Unknown) {
        // The status of a command the reading does not run: a condition tries both (see
        // evalCondition); elsewhere the text is kept.
        m_statusParameterRead = true;
        if (!m_unsetAsEmpty) {
            m_unknownExpansion = true;
            warnOnce("status:" + m_lastStatusText, line,
                     "$? is the exit status of " + m_lastStatusText + ", which the text does not give; kept as text");
        }
        literal("$?");
        return;
    } else if (name == "#" || name == "?") {
        isSet = true;
        value = name == "#" && frame ? std::to_string(frame->args.size())
            : name == "?" && m_lastStatus == Truth::False ? "1"
                                                          : "0";
    } else if (name == "0") {
        isSet = true;
        value = m_file;
    } else if (name == "BASH_SOURCE" && !m_arrays.count(name) && !m_vars.count(name)) {
        // Bash's array of the files of the functions being run: here always the script, so
        // `[[ "${BASH_SOURCE[0]}" == "${0}" ]]` holds, as when bash runs it (not sourced).
        isSet = !hasSubscript || subscript == "@" || subscript == "*" || subscript == "0";
        isList = hasSubscript && (subscript == "@" || subscript == "*");
        atForm = subscript == "@";
        if (isList)
            elements = {m_file};
        else if (isSet)
            value = m_file;
    } else if (name == "$" || name == "!" || name == "-") {
        m_unknownExpansion = true;
        warn(line, "$" + name + " has no value when reading the script; kept as text");
        literal("$" + name);
        return;
    } else if (hasSubscript && (subscript == "@" || subscript == "*")) {
        isList = true;
        atForm = subscript == "@";
        if (auto it = m_arrays.find(name); it != m_arrays.end()) {
            isSet = true;
            elements = it->second;
        } else if (auto v = m_vars.find(name); v != m_vars.end()) {
            isSet = true;
            elements = {v->second};
        }
    } else if (hasSubscript) {
        long long idx = 0;
        if (!evalArithmetic(subscript, idx, line, depth + 1)) {
            warn(line, "array index [" + subscript + "] is not a number; kept as text");
            literal("${" + body + "}");
            return;
        }
        if (auto it = m_arrays.find(name); it != m_arrays.end()) {
            if (idx < 0)
                idx += static_cast<long long>(it->second.size());   // ${A[-1]}: from the end
            if (idx >= 0 && static_cast<std::size_t>(idx) < it->second.size()) {
                isSet = true;
                value = it->second[static_cast<std::size_t>(idx)];
            }
        } else if (auto v = m_vars.find(name); v != m_vars.end() && idx == 0) {
            isSet = true;
            value = v->second;
        }
    } else {
        isSet = lookup(name, value);
    }
    // Read from outside the script: the script's own arguments where they are not known, a
    // variable it does not set (its environment), or one it set from those.
    if (name == "@" || name == "*") {
        if (!frame || frame->unknown_args)
            noteEnvRead("$" + name);
    } else if (name == "#") {
        if (!frame)
            noteEnvRead("$#");
    } else if (positional) {
        if (!isSet && name != "0" && (!frame || frame->unknown_args))
            noteEnvRead("$" + name);
    } else {
        noteNameRead(name, isSet);
    }
    if (isList && !isSet) isSet = false;
    auto joinList = [](const std::vector<std::string>& list) {
        std::string s;
        for (std::size_t e = 0; e < list.size(); ++e) s += (e ? " " : "") + list[e];
        return s;
    };
    const std::string joined = joinList(elements);
    const bool isEmpty = isList ? elements.empty() || joined.empty() : value.empty();

    // A list's elements ("${A[@]}" one word each, otherwise joined and split), or a slice of them.
    auto emitList = [&](const std::vector<std::string>& list) { emitListPieces(pieces, list, quoted, atForm, line); };
    auto emitValue = [&] {
        if (isList) {
            emitList(elements);
            return;
        }
        chargeExpansion(value.size(), line);
        if (m_opaqueVars.count(name)) {
            keepOpaque(pieces, value);
        } else {
            pieces.push_back({value, !quoted, false});
        }
    };
    // Expands the word of an operator (${X:-word}): in the caller's quoting, so that an
    // unquoted default undergoes word splitting as bash does.
    auto emitWord = [&](const std::string& given, bool isDefault) {
        // Inside double quotes ("${U:-"d  e"}") the word's own double quotes only quote what
        // is quoted already: bash removes them (its single quotes stay characters there).
        std::string word = given;
        if (quoted) {
            word.clear();
            for (std::size_t i = 0; i < given.size(); ++i) {
                if (given[i] == '\\' && i + 1 < given.size()) {
                    word += given.substr(i++, 2);
                } else if (given[i] == '$' && i + 1 < given.size() && (given[i + 1] == '{' || given[i + 1] == '(')) {
                    const std::size_t j = skipDollarGroup(given, i);
                    if (j == npos) {
                        word += given.substr(i);
                        break;
                    }
                    word += given.substr(i, j - i);
                    i = j - 1;
                } else if (given[i] != '"') {
                    word += given[i];
                }
            }
        }
        std::vector<Piece> sub;
        bool force = false;
        expandInto(word, 0, word.size(), quoted, sub, force, line, depth + 1);
        if (isDefault && !positional) {
            std::string text;
            for (const Piece& p : sub)
                text += p.text;
            noteEnvDefault(name, text);
        }
        for (Piece& p : sub) {
            // What the word itself quotes (${X:-"a b"}) stays whole, as bash keeps it.
            if (!quoted && !p.opaque && !p.quoted) p.splittable = true;
            pieces.push_back(std::move(p));
        }
    };
    auto unsetLiteral = [&] {
        // Unset is empty for bash; a positional parameter past a call's arguments is unset, and
        // so is a name the script unset (also getopts' OPTARG).
        if ((positional && frame && !frame->unknown_args) || (!positional && m_unsetByScript.count(name)))
            return;
        if (m_unsetAsEmpty) {   // a condition's name the text does not give (see evalCondition)
            const std::string what = positional ? "$" + name : name;
            if (std::find(m_emptyReads.begin(), m_emptyReads.end(), what) == m_emptyReads.end())
                m_emptyReads.push_back(what);
            if (m_emptySentinel)
                pieces.push_back({std::string(1, kEmptySentinel), false, false});
            return;
        }
        m_unknownExpansion = true;
        if (positional) {
            warnOnce("pos" + name, line,
                     "positional parameter $" + name + " has no value when reading the script; kept as ${ARG" + name + "}");
            literal("${ARG" + name + "}");
            m_keptRefs["${ARG" + name + "}"] = "$" + name;
        } else {
            // Set only in a branch a test on the environment or the arguments skipped: say so,
            // rather than that the variable comes from the environment.
            const auto skipped = std::find_if(m_skippedByTest.begin(), m_skippedByTest.end(),
                                              [&](const SkippedByTest& b) { return b.name == name && !b.append; });
            if (skipped != m_skippedByTest.end()) {
                // What turns the test: the environment (--script-env), the arguments (--script-args).
                const bool arguments = std::any_of(skipped->reads.begin(), skipped->reads.end(),
                                                   [](const std::string& r) { return !r.empty() && r[0] == '$'; });
                const bool environment = std::any_of(skipped->reads.begin(), skipped->reads.end(),
                                                     [](const std::string& r) { return !r.empty() && r[0] != '$'; });
                const std::string give = environment && arguments ? "--script-env or --script-args"
                    : arguments                                    ? "--script-args"
                                                                   : "--script-env";
                warnOnce("unset" + name, line,
                         name + " is set only in a branch the reading skips, at line " + std::to_string(skipped->line)
                             + ", whose test depends on " + skipped->described + "; kept as ${" + name
                             + "}: give what the run gives with " + give + " to take the branch");
            } else if (!m_placeholderNames.count(name)) {
                warnOnce("unset" + name, line,
                         name + " is not set in the script (it would come from the environment); kept as ${" + name + "}");
            }
            literal("${" + body.substr(0, k) + "}");
            m_keptRefs["${" + body.substr(0, k) + "}"] = body.substr(0, k);
        }
    };

    if (rest.empty()) {
        if (!isSet && !isList) {
            unsetLiteral();
            return;
        }
        emitValue();
        return;
    }
    const bool colon = rest[0] == ':' && rest.size() > 1 && std::string("-=+?").find(rest[1]) != npos;
    const char op = colon ? rest[1] : rest[0];
    const std::string word = rest.substr(colon ? 2 : 1);
    const bool useDefault = colon ? (!isSet || isEmpty) : !isSet;
    switch (op) {
    case '-':
        if (useDefault) emitWord(word, !isSet);   // a default standing in for the environment
        else emitValue();
        return;
    case '=':
        if (useDefault) {
            // Assigns as NAME=word would, opaque marks included, inside the expansion under way.
            const bool outerKept = std::exchange(m_keptSubstitution, false);
            const std::string outerText = m_keptText;
            const std::string v = expandToString(word, line, depth + 1);
            const bool opaque = m_keptSubstitution && v == m_keptText;
            if (!positional && !isSet)
                noteEnvDefault(name, v);
            if (!positional && !isList) {
                touchVariable(name);
                m_vars[name] = v;
                if (m_allExport)
                    exportName(name);   // set -a
                noteOpaque(name, v);
                addEnv(m_envDerived[name], {name});   // the default stands where the environment has none
                addEnv(m_valueDerived[name], {name});
            }
            if (opaque)
                keepOpaque(pieces, v);
            else
                pieces.push_back({v, !quoted, false});
            if (!m_keptSubstitution)
                m_keptText = outerText;
            m_keptSubstitution = m_keptSubstitution || outerKept;
        } else {
            emitValue();
        }
        return;
    case '+':
        if (!useDefault)
            emitWord(word, false);
        else if (!positional && !isList && (!isSet || derivesFromItself(name)))
            noteEnvSwitch(name, word);   // words the environment would switch on (also after USE_FP8=${USE_FP8:-})
        return;
    case '?':
        if (useDefault) {
            warn(line, name + " must be set for this script (${" + body + "}); kept as ${" + name + "}");
            literal("${" + name + "}");
        } else {
            emitValue();
        }
        return;
    default: break;
    }
    if (!isSet) {
        unsetLiteral();
        return;
    }
    const std::string subject = isList ? joined : value;
    // An operation on the value, or on each element of a list ("${A[@]#--}", "${A[@]/#/-x }"),
    // as bash applies it (manual 3.5.3).
    auto emitEach = [&](const auto& transform) {
        if (isList) {
            std::vector<std::string> mapped;
            mapped.reserve(elements.size());
            for (const std::string& e : elements)
                mapped.push_back(transform(e));
            emitList(mapped);
        } else {
            pieces.push_back({transform(value), !quoted, false});
        }
    };
    // Prefix and suffix removal with glob patterns.
    if (rest[0] == '#' || rest[0] == '%') {
        const bool longest = rest.size() > 1 && rest[1] == rest[0];
        const std::string pattern = expandPattern(rest.substr(longest ? 2 : 1), line, depth + 1);
        emitEach([&](const std::string& text) {
            const std::string& subject = text;
            const std::size_t size = subject.size();
            // No prefix (suffix) of the value matching at all: one match says so.
            if (!patternWorkLeft(size + 1, line, body))
                return subject;
            if (!matchesPattern(rest[0] == '#' ? anyPrefixPattern(pattern) : anySuffixPattern(pattern), subject, m_extglob))
                return subject;
            const std::optional<std::size_t> fixedLength = fixedPatternLength(pattern, m_extglob);
            for (std::size_t step = 0; step <= size; ++step) {
                const std::size_t len = longest ? size - step : step;
                if (fixedLength && len != *fixedLength)
                    continue;   // a pattern of fixed length matches no other prefix or suffix
                if (!patternWorkLeft(len + 1, line, body))
                    return subject;
                const std::string part = rest[0] == '#' ? subject.substr(0, len) : subject.substr(size - len);
                if (matchesPattern(pattern, part, m_extglob))
                    return rest[0] == '#' ? subject.substr(len) : subject.substr(0, size - len);
            }
            return subject;
        });
        return;
    }
    if (rest[0] == '/') {
        // ${X/P/R}, ${X//P/R}, ${X/#P/R}, ${X/%P/R} (manual 3.5.3): the longest match of the
        // pattern P, the first or every one, or one at the start or at the end, replaced by R,
        // where an unquoted & stands for the match (bash 5.2's patsub_replacement).
        const bool all = rest.size() > 1 && rest[1] == '/';
        std::string spec = rest.substr(all ? 2 : 1);
        const char anchor = !all && !spec.empty() && (spec[0] == '#' || spec[0] == '%') ? spec[0] : 0;
        if (anchor)
            spec.erase(0, 1);
        // P ends at the first "/" that is not quoted, escaped or inside ${ } / $( ).
        std::size_t slash = 0;
        while (slash < spec.size() && spec[slash] != '/') {
            const char c = spec[slash];
            std::size_t next = slash + 1;
            if (c == '\\')
                next = slash + 2;
            else if (c == '\'')
                next = skipSingle(spec, slash);
            else if (c == '"')
                next = skipDouble(spec, slash);
            else if (c == '$' && slash + 1 < spec.size() && (spec[slash + 1] == '{' || spec[slash + 1] == '('))
                next = skipDollarGroup(spec, slash);
            slash = next == npos ? spec.size() : next;
        }
        slash = std::min(slash, spec.size());
        const std::string from = expandPattern(spec.substr(0, slash), line, depth + 1);
        // The replacement with what it quotes marked, so that only an unquoted & is the match.
        const std::string to = slash >= spec.size() ? std::string() : expandPattern(spec.substr(slash + 1), line, depth + 1);
        auto replacement = [&](const std::string& match) {
            std::string out;
            for (std::size_t k = 0; k < to.size(); ++k) {
                if (to[k] == '\\' && k + 1 < to.size())
                    out += to[++k];
                else if (to[k] == '&')
                    out += match;
                else
                    out += to[k];
            }
            return out;
        };
        // A pattern without pattern characters: its text, found as it is.
        std::string literal;
        bool glob = false;
        for (std::size_t k = 0; k < from.size() && !glob; ++k) {
            if (from[k] == '\\' && k + 1 < from.size()) {
                literal += from[++k];
                continue;
            }
            glob = from[k] == '*' || from[k] == '?' || from[k] == '['
                || (m_extglob && k + 1 < from.size() && from[k + 1] == '(' && std::string_view("@!+").find(from[k]) != std::string_view::npos);
            literal += from[k];
        }
        constexpr std::size_t kMaxPatternSubject = 4096;   // a pattern tried at every start and end
        // Every match replaced can multiply a value (${X//a/$X}): checked as it grows, before
        // it is whole, against the limit on one value (the name is built only to say so).
        const auto grown = [&](const std::string& result) {
            if (result.size() > kMaxValueBytes)
                checkValueSize("${" + body + "}", result.size(), 0, line);
        };
        emitEach([&](const std::string& text) {
            const std::string& subject = text;
            const std::size_t size = subject.size();
            if (!glob) {
                if (literal.empty() && !anchor)
                    return subject;
                if (anchor == '#')
                    return subject.compare(0, literal.size(), literal) == 0 ? replacement(literal) + subject.substr(literal.size()) : subject;
                if (anchor == '%')
                    return size >= literal.size() && subject.compare(size - literal.size(), literal.size(), literal) == 0
                        ? subject.substr(0, size - literal.size()) + replacement(literal)
                        : subject;
                std::string result;
                std::size_t at = 0;
                for (std::size_t pos = subject.find(literal); pos != npos; pos = all ? subject.find(literal, at) : npos) {
                    result += subject.substr(at, pos - at) + replacement(literal);
                    grown(result);
                    at = pos + literal.size();
                }
                return result + subject.substr(at);
            }
            if (size > kMaxPatternSubject) {
                warn(line, "${..." + rest + "}: a pattern on a value of " + std::to_string(size)
                               + " characters is not matched; the value is kept as it is");
                return subject;
            }
            const std::string fromAnyEnd = anyPrefixPattern(from);
            // A pattern of fixed length ("a?", "[,;]") can only end at one place from a start.
            const std::optional<std::size_t> fixedLength = fixedPatternLength(from, m_extglob);
            // The pattern as matchesPattern passes it on, for the ends tried below on one copy
            // of the rest of the value cut by a NUL.
            const std::string fromFixed = withTrailingBackslashEscaped(from);
            const int flags = m_extglob ? FNM_EXTMATCH : 0;
            // Bash tries each start in turn; an empty match is replaced too, except at the end
            // of a value that is not empty (unless anchored there).
            std::string result;
            std::size_t i = 0;
            bool replaced = false;
            while (i < size || (i == size && !replaced && (size == 0 || anchor == '%'))) {
                std::size_t end = npos;
                bool candidate = (!replaced || all) && (anchor != '#' || i == 0);
                // Unless anchored at the end, one match tells whether any end can match from i.
                if (candidate && anchor != '%') {
                    if (!patternWorkLeft(size - i + 1, line, body))
                        return subject;
                    candidate = matchesPattern(fromAnyEnd, subject.substr(i), m_extglob);
                }
                if (candidate) {
                    std::string tail = subject.substr(i);   // cut at each end tried by a NUL, then mended
                    for (std::size_t j = size + 1; j-- > i && end == npos;) {
                        if ((anchor == '%' && j != size) || (fixedLength && j - i != *fixedLength))
                            continue;
                        if (!patternWorkLeft(j - i + 1, line, body))
                            return subject;
                        const char kept = tail[j - i];
                        tail[j - i] = '\0';
                        if (fnmatch(fromFixed.c_str(), tail.c_str(), flags) == 0)
                            end = j;
                        tail[j - i] = kept;
                    }
                }
                if (end == npos) {
                    if (i < size)
                        result += subject[i];
                    ++i;
                    continue;
                }
                result += replacement(subject.substr(i, end - i));
                grown(result);
                replaced = true;
                if (end == i) {   // an empty match: the character after it stays
                    if (i < size)
                        result += subject[i];
                    ++i;
                } else {
                    i = end;
                }
            }
            return result;
        });
        return;
    }
    if (rest == "^^" || rest == ",,") {
        std::string result = subject;
        for (char& ch : result)
            ch = static_cast<char>(rest == "^^" ? std::toupper(static_cast<unsigned char>(ch)) : std::tolower(static_cast<unsigned char>(ch)));
        pieces.push_back({result, !quoted, false});
        return;
    }
    if (rest[0] == ':') {
        // ${X:offset} and ${X:offset:length} (manual 3.5.3): characters of a string, elements
        // of ${A[@]} / ${A[*]} / $@. A negative offset counts from the end (written ": -1" or
        // "(-1)", since ":-" is the default operator) and one past the start gives nothing; a
        // negative length ends that far from the end of a string, and is an error for a list.
        long long offset = 0, length = 0;
        const std::string spec = rest.substr(1);
        const std::size_t colon2 = spec.find(':');
        const bool hasLength = colon2 != npos;
        if (evalArithmetic(spec.substr(0, colon2), offset, line, depth + 1)
            && (!hasLength || evalArithmetic(spec.substr(colon2 + 1), length, line, depth + 1))) {
            // The positional parameters are counted from $0: ${@:2} begins at $2.
            if (name == "@" || name == "*")
                elements.insert(elements.begin(), m_file);
            const long long size = static_cast<long long>(isList ? elements.size() : subject.size());
            if (offset < 0) offset += size;
            if (isList) {
                if (hasLength && length < 0) {
                    warn(line, "${" + body + "}: a negative length of an array slice is an error in bash (substring expression < 0); "
                               "expanded as nothing");
                    return;
                }
                std::vector<std::string> slice;
                if (offset >= 0 && offset < size) {
                    const long long stop = hasLength ? std::min(size, offset + length) : size;
                    slice.assign(elements.begin() + offset, elements.begin() + std::max(offset, stop));
                }
                emitList(slice);
                return;
            }
            if (offset < 0 || offset > size) {
                pieces.push_back({std::string(), !quoted, false});
                return;
            }
            long long stop = size;
            if (hasLength)
                stop = length >= 0 ? std::min(size, offset + length) : size + length;
            if (stop < offset) {
                warn(line, "${" + body + "}: the length ends before the offset, an error in bash (substring expression < 0); "
                           "expanded as nothing");
                return;
            }
            pieces.push_back({subject.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(stop - offset)), !quoted, false});
            return;
        }
    }
    m_unknownExpansion = true;
    warn(line, "substitution ${" + body + "} is not supported; kept as text");
    literal("${" + body + "}");
}

bool BashReader::assignArithmetic(const std::string& expr, int line, long long& last)
{
    // Items joined by commas, each NAME=EXPR, NAME op= EXPR (+ - * / % << >> & | ^), NAME++,
    // NAME--, ++NAME, --NAME, or an expression that assigns nothing (manual 6.5). Evaluated in
    // order; false, with the rest not evaluated, at the first the reader cannot evaluate (a
    // name the script does not set, an assignment nested in an expression).
    std::vector<std::string> items;
    int depth = 0;
    std::size_t from = 0;
    for (std::size_t i = 0; i <= expr.size(); ++i) {
        if (i == expr.size() || (expr[i] == ',' && depth == 0)) {
            items.push_back(expr.substr(from, i - from));
            from = i + 1;
        } else if (expr[i] == '(') {
            ++depth;
        } else if (expr[i] == ')') {
            --depth;
        }
    }
    auto trim = [](std::string s) {
        const std::size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
        return b == npos ? std::string() : s.substr(b, e - b + 1);
    };
    auto set = [&](const std::string& name, long long value) {
        return applyAssignment(RawWord{name + "=" + std::to_string(value), false, {}}, line, false);
    };
    for (std::string item : items) {
        item = trim(item);
        long long value = 0, old = 0;
        if (item.size() > 2 && (item.compare(0, 2, "++") == 0 || item.compare(0, 2, "--") == 0) && validName(trim(item.substr(2)))) {
            const std::string name = trim(item.substr(2));
            if (!evalArithmetic(name, old, line, 0))
                return false;
            last = ShellArithmetic::apply(item.substr(0, 1), old, 1);   // ++i is the new value
            if (!set(name, last))
                return false;
            continue;
        }
        if (item.size() > 2 && (item.compare(item.size() - 2, 2, "++") == 0 || item.compare(item.size() - 2, 2, "--") == 0)
            && validName(trim(item.substr(0, item.size() - 2)))) {
            const std::string name = trim(item.substr(0, item.size() - 2));
            if (!evalArithmetic(name, old, line, 0) || !set(name, ShellArithmetic::apply(item.substr(item.size() - 1), old, 1)))
                return false;
            last = old;   // i++ is the old value
            continue;
        }
        if (!arithmeticAssigns(item)) {
            if (!evalArithmetic(item, value, line, 0))
                return false;
            last = value;
            continue;
        }
        // NAME op= EXPR: the first '=' that is no comparison.
        std::size_t eq = npos;
        for (std::size_t i = 0; i < item.size(); ++i) {
            if (item[i] != '=')
                continue;
            if (i + 1 < item.size() && item[i + 1] == '=') {
                ++i;
                continue;
            }
            if (i > 0 && (item[i - 1] == '!' || ((item[i - 1] == '<' || item[i - 1] == '>') && !(i > 1 && item[i - 2] == item[i - 1]))))
                continue;
            eq = i;
            break;
        }
        if (eq == npos)
            return false;
        std::string left = trim(item.substr(0, eq));
        const std::string right = item.substr(eq + 1);
        std::string op;
        for (const char* o : {"<<", ">>", "+", "-", "*", "/", "%", "&", "|", "^"}) {
            const std::string s(o);
            if (left.size() > s.size() && left.compare(left.size() - s.size(), s.size(), s) == 0) {
                op = s;
                left = trim(left.substr(0, left.size() - s.size()));
                break;
            }
        }
        if (!validName(left) || arithmeticAssigns(right) || !evalArithmetic(right, value, line, 0))
            return false;
        if (!op.empty()) {
            if (!evalArithmetic(left, old, line, 0))
                return false;
            try {
                value = ShellArithmetic::apply(op, old, value);
            } catch (const std::runtime_error& e) {
                m_arithmeticError = e.what();   // bash: division by 0, an error that assigns nothing
                return false;
            }
        }
        if (!set(left, value))
            return false;
        last = value;
    }
    return true;
}

bool BashReader::evalArithmetic(const std::string& expr, long long& value, int line, int depth)
{
    m_arithmeticError.clear();   // a name's value evaluated below sets it again if it fails
    if (depth > kMaxDepth)
        return false;
    // $VAR and ${VAR} inside $(( )) expand first; bare names are looked up below.
    std::vector<Piece> pieces;
    bool force = false;
    expandInto(expr, 0, expr.size(), true, pieces, force, line, depth + 1);
    std::string text;
    for (const Piece& p : pieces) text += p.text;
    if (text.find('$') != npos || text.find('`') != npos)
        return false;
    ShellArithmetic a(text, [&](const std::string& name, long long& v) {
        std::string s;
        // A bare name reads from outside the script as $NAME does (m_envReads).
        const bool isSet = lookup(name, s);
        noteNameRead(name, isSet);
        if (!isSet)
            return false;
        if (s.empty()) {
            v = 0;
            return true;
        }
        return evalArithmetic(s, v, line, depth + 1);
    });
    if (a.eval(value))
        return true;
    // The innermost reason: a name whose value failed says what failed in it.
    if (m_arithmeticError.empty() || a.error().find(" has no number here") == npos)
        m_arithmeticError = a.error();
    return false;
}

} // namespace hapmoe
