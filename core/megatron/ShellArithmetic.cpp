#include "megatron/ShellArithmetic.h"

#include <cctype>
#include <cstring>
#include <stdexcept>

namespace hapmoe {

namespace {

bool isNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// bash computes in 64-bit integers that wrap around; unsigned arithmetic does that without
// undefined behaviour.
long long wrap(unsigned long long v) { return static_cast<long long>(v); }
long long add(long long a, long long b) { return wrap(static_cast<unsigned long long>(a) + static_cast<unsigned long long>(b)); }
long long sub(long long a, long long b) { return wrap(static_cast<unsigned long long>(a) - static_cast<unsigned long long>(b)); }
long long mul(long long a, long long b) { return wrap(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b)); }
long long divide(long long a, long long b, bool remainder)
{
    if (b == 0)
        throw std::runtime_error("division by 0, where bash stops the script");
    if (b == -1)   // LLONG_MIN / -1 overflows
        return remainder ? 0 : sub(0, a);
    return remainder ? a % b : a / b;
}
// bash shifts its 64-bit integers with C's operators; on x86-64 the count is taken modulo 64
// (bash 5.2 there: $((1<<64)) is 1, $((1<<-1)) is -2^63) and >> keeps the sign.
long long shiftLeft(long long a, long long n) { return wrap(static_cast<unsigned long long>(a) << (n & 63)); }
long long shiftRight(long long a, long long n) { return a >> (n & 63); }

} // namespace

long long ShellArithmetic::apply(std::string_view op, long long a, long long b)
{
    if (op == "+") return add(a, b);
    if (op == "-") return sub(a, b);
    if (op == "*") return mul(a, b);
    if (op == "/" || op == "%") return divide(a, b, op == "%");
    if (op == "<<") return shiftLeft(a, b);
    if (op == ">>") return shiftRight(a, b);
    if (op == "&") return a & b;
    if (op == "|") return a | b;
    if (op == "^") return a ^ b;
    throw std::invalid_argument("no arithmetic operator " + std::string(op));
}

ShellArithmetic::ShellArithmetic(std::string text, Lookup lookup) : m_s(std::move(text)), m_lookup(std::move(lookup)) {}

bool ShellArithmetic::eval(long long& out)
{
    m_error.clear();
    m_skip = 0;
    try {
        out = parseConditional();
        skipWs();
        if (m_i != m_s.size())
            m_error = notReadHere();
        return m_i == m_s.size();
    } catch (const std::exception& e) {
        m_error = e.what();
        return false;
    }
}

std::string ShellArithmetic::notReadHere() const
{
    return "\"" + m_s.substr(m_i, 20) + "\" is not read here (the operators are + - * / % ** << >> comparisons & ^ | && || ! ~ ?: and parentheses)";
}

void ShellArithmetic::skipWs()
{
    while (m_i < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_i])))
        ++m_i;
}

bool ShellArithmetic::take(const char* op)
{
    skipWs();
    const std::size_t n = std::strlen(op);
    if (m_s.compare(m_i, n, op) == 0) {
        m_i += n;
        return true;
    }
    return false;
}

bool ShellArithmetic::peekIs(const char* op)
{
    skipWs();
    return m_s.compare(m_i, std::strlen(op), op) == 0;
}

long long ShellArithmetic::parseConditional()
{
    const long long condition = parseOr();
    if (!take("?"))
        return condition;
    // Bash evaluates the branch taken only: the other is read, its errors not raised.
    const long long whenTrue = skippedIf(condition == 0, [&] { return parseConditional(); });
    if (!take(":"))
        throw std::runtime_error("a ? without its :");
    const long long whenFalse = skippedIf(condition != 0, [&] { return parseConditional(); });
    return condition != 0 ? whenTrue : whenFalse;
}

long long ShellArithmetic::parseOr()
{
    long long v = parseAnd();
    while (take("||")) {
        const bool known = v != 0;   // the right side is not evaluated (short-circuit)
        v = (skippedIf(known, [&] { return parseAnd(); }) != 0 || known) ? 1 : 0;
    }
    return v;
}

long long ShellArithmetic::parseAnd()
{
    long long v = parseBitOr();
    while (take("&&")) {
        const bool known = v == 0;
        v = (skippedIf(known, [&] { return parseBitOr(); }) != 0 && !known) ? 1 : 0;
    }
    return v;
}

// Bash's precedence below the shifts, from the manual's table (6.5): < <= > >=, then == !=,
// then &, ^ and |, each left-associative; so 1 == 2 > 1 is 1 and 6 & 3 == 3 is 0, as in bash.
long long ShellArithmetic::parseBitOr()
{
    long long v = parseBitXor();
    while (!peekIs("||") && take("|"))
        v |= parseBitXor();
    return v;
}

long long ShellArithmetic::parseBitXor()
{
    long long v = parseBitAnd();
    while (take("^"))
        v ^= parseBitAnd();
    return v;
}

long long ShellArithmetic::parseBitAnd()
{
    long long v = parseEquality();
    while (!peekIs("&&") && take("&"))
        v &= parseEquality();
    return v;
}

long long ShellArithmetic::parseEquality()
{
    long long v = parseRelational();
    for (;;) {
        if (take("==")) v = v == parseRelational();
        else if (take("!=")) v = v != parseRelational();
        else return v;
    }
}

long long ShellArithmetic::parseRelational()
{
    long long v = parseShift();
    for (;;) {
        if (take("<=")) v = v <= parseShift();
        else if (take(">=")) v = v >= parseShift();
        else if (!peekIs("<<") && take("<")) v = v < parseShift();
        else if (!peekIs(">>") && take(">")) v = v > parseShift();
        else return v;
    }
}

long long ShellArithmetic::parseShift()
{
    long long v = parseAdd();
    for (;;) {
        if (take("<<")) v = shiftLeft(v, parseAdd());
        else if (take(">>")) v = shiftRight(v, parseAdd());
        else return v;
    }
}

long long ShellArithmetic::parseAdd()
{
    long long v = parseMul();
    for (;;) {
        if (take("+")) v = add(v, parseMul());
        else if (take("-")) v = sub(v, parseMul());
        else return v;
    }
}

long long ShellArithmetic::parseMul()
{
    long long v = parsePow();
    for (;;) {
        if (peekIs("**"))
            return v;
        if (take("*")) {
            v = mul(v, parsePow());
        } else if (take("/")) {
            const long long d = parsePow();
            v = m_skip > 0 && d == 0 ? 0 : divide(v, d, false);
        } else if (take("%")) {
            const long long d = parsePow();
            v = m_skip > 0 && d == 0 ? 0 : divide(v, d, true);
        } else {
            return v;
        }
    }
}

long long ShellArithmetic::parsePow()
{
    const long long base = parseUnary();
    if (take("**")) {
        const long long e = parsePow();
        if (e < 0 || e > 62) {
            if (m_skip > 0)
                return 0;
            throw std::runtime_error("an exponent below 0 or above 62");
        }
        long long r = 1;
        for (long long k = 0; k < e; ++k) r = mul(r, base);
        return r;
    }
    return base;
}

long long ShellArithmetic::parseUnary()
{
    if (++m_depth > 64) throw std::runtime_error("nested more than 64 deep");
    long long v = 0;
    if (take("-")) v = sub(0, parseUnary());
    else if (take("+")) v = parseUnary();
    else if (take("!")) v = parseUnary() == 0 ? 1 : 0;
    else if (take("~")) v = ~parseUnary();
    else v = parsePrimary();
    --m_depth;
    return v;
}

long long ShellArithmetic::parsePrimary()
{
    skipWs();
    if (take("(")) {
        const long long v = parseConditional();
        if (!take(")")) throw std::runtime_error("a ( without its )");
        return v;
    }
    if (m_i < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_i]))) {
        std::size_t used = 0;
        long long v = 0;
        try {
            v = std::stoll(m_s.substr(m_i), &used, 0);
        } catch (const std::out_of_range&) {
            throw std::runtime_error("a number beyond 64 bits");
        }
        m_i += used;
        return v;
    }
    if (m_i < m_s.size() && isNameStart(m_s[m_i])) {
        std::size_t j = m_i;
        while (j < m_s.size() && isNameChar(m_s[j])) ++j;
        const std::string name = m_s.substr(m_i, j - m_i);
        m_i = j;
        long long v = 0;
        if (!m_lookup(name, v)) {
            if (m_skip > 0)
                return 0;
            throw std::runtime_error(name + " has no number here");
        }
        return v;
    }
    throw std::runtime_error(notReadHere());
}

} // namespace hapmoe
