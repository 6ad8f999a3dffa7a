#include "megatron/MoeLayerPattern.h"

#include <cctype>
#include <stdexcept>

namespace hapmoe {

MoeLayerPattern::MoeLayerPattern(const std::string& text)
{
    for (char c : text)
        if (c != ' ' && c != '\'' && c != '"')
            m_s += c;
}

bool MoeLayerPattern::parse(const std::string& expression, std::vector<std::uint8_t>& pattern)
{
    MoeLayerPattern p(expression);
    try {
        pattern = p.sum();
        return p.m_i == p.m_s.size() && !pattern.empty();
    } catch (const std::exception&) {
        return false;
    }
}

std::string MoeLayerPattern::expression(const std::vector<std::uint8_t>& pattern)
{
    std::string out = "(";
    for (std::size_t i = 0; i < pattern.size();) {
        std::size_t j = i;
        while (j < pattern.size() && pattern[j] == pattern[i]) ++j;
        if (i > 0)
            out += "+";
        out += "[" + std::to_string(pattern[i] != 0 ? 1 : 0) + "]*" + std::to_string(j - i);
        i = j;
    }
    return out + ")";
}

std::vector<std::uint8_t> MoeLayerPattern::sum()
{
    std::vector<std::uint8_t> v = product();
    while (m_i < m_s.size() && m_s[m_i] == '+') {
        ++m_i;
        const std::vector<std::uint8_t> t = product();
        v.insert(v.end(), t.begin(), t.end());
    }
    return v;
}

std::vector<std::uint8_t> MoeLayerPattern::product()
{
    std::vector<std::uint8_t> v = atom();
    while (m_i < m_s.size() && m_s[m_i] == '*') {
        ++m_i;
        const long n = number();
        if (n < 0 || v.size() * static_cast<std::size_t>(n) > 1000000)
            throw std::runtime_error("count");
        std::vector<std::uint8_t> r;
        for (long k = 0; k < n; ++k)
            r.insert(r.end(), v.begin(), v.end());
        v = std::move(r);
    }
    return v;
}

std::vector<std::uint8_t> MoeLayerPattern::atom()
{
    if (++m_depth > 32 || m_i >= m_s.size())
        throw std::runtime_error("syntax");
    std::vector<std::uint8_t> v;
    if (m_s[m_i] == '(') {
        ++m_i;
        v = sum();
        expect(')');
    } else if (m_s[m_i] == '[') {
        ++m_i;
        while (m_i < m_s.size() && m_s[m_i] != ']') {
            const long n = number();
            if (n != 0 && n != 1)
                throw std::runtime_error("0 or 1");
            v.push_back(static_cast<std::uint8_t>(n));
            if (m_i < m_s.size() && m_s[m_i] == ',')
                ++m_i;
        }
        expect(']');
    } else {
        throw std::runtime_error("syntax");
    }
    --m_depth;
    return v;
}

long MoeLayerPattern::number()
{
    const std::size_t start = m_i;
    while (m_i < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_i])))
        ++m_i;
    if (start == m_i || m_i - start > 7)
        throw std::runtime_error("number");
    return std::stol(m_s.substr(start, m_i - start));
}

void MoeLayerPattern::expect(char c)
{
    if (m_i >= m_s.size() || m_s[m_i] != c)
        throw std::runtime_error("syntax");
    ++m_i;
}

} // namespace hapmoe
