#pragma once
// Integer expressions of bash's $(( )) (GNU Bash Reference Manual 6.5, Shell Arithmetic),
// without assignments, increments and the comma: + - * / % ** << >> comparisons & ^ | && || !
// ~ ?: and parentheses over decimal (or 0x) numbers and variable names, with bash's precedence.
// Names are resolved by the caller.

#include <functional>
#include <string>
#include <string_view>

namespace hapmoe {

class ShellArithmetic {
public:
    // Looks up a variable as an integer; false when it has no value.
    using Lookup = std::function<bool(const std::string&, long long&)>;
    ShellArithmetic(std::string text, Lookup lookup);

    // False on a syntax error, an unknown name, division by zero or nesting too deep; error()
    // then says which ("division by 0, where bash stops the script").
    bool eval(long long& out);
    const std::string& error() const { return m_error; }

    // a OP b as bash computes it (64-bit integers that wrap, shift counts modulo 64), for the
    // compound assignments (N <<= 2); OP is one of + - * / % << >> & | ^. Throws
    // std::runtime_error on a division by 0.
    static long long apply(std::string_view op, long long a, long long b);

private:
    void skipWs();
    // The error for the text at the read position that is no expression read here.
    std::string notReadHere() const;
    bool take(const char* op);
    bool peekIs(const char* op);
    long long parseConditional();   // c ? a : b, right-associative, below ||
    long long parseOr();
    long long parseAnd();
    long long parseBitOr();
    long long parseBitXor();
    long long parseBitAnd();
    long long parseEquality();
    long long parseRelational();
    long long parseShift();
    long long parseAdd();
    long long parseMul();
    long long parsePow();
    long long parseUnary();
    long long parsePrimary();

    std::string m_s;
    Lookup m_lookup;
    std::size_t m_i = 0;
    int m_depth = 0;
    std::string m_error;
    // Inside a branch bash does not evaluate (the right of a decided || or &&, the ?: branch not
    // taken): a division by 0 or an unset name there is no error.
    int m_skip = 0;
    template <typename F>
    long long skippedIf(bool skip, F parse)
    {
        m_skip += skip ? 1 : 0;
        const long long v = parse();
        m_skip -= skip ? 1 : 0;
        return v;
    }
};

} // namespace hapmoe
