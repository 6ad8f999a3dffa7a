#pragma once
// Megatron-LM's --moe-layer-freq as a list expression (reference section 7): "([0]*3+[1]*58)"
// or "[1,0,1,0]", one 0/1 per layer; Megatron allows only the characters ",0-9[]()+*".

#include <cstdint>
#include <string>
#include <vector>

namespace hapmoe {

class MoeLayerPattern {
public:
    // Parses the expression (spaces and quotes ignored); false when it is not a 0/1 list
    // built from [..], +, *n and parentheses.
    static bool parse(const std::string& expression, std::vector<std::uint8_t>& pattern);

    // Run-length form without spaces: [0,0,0,1,1] -> "([0]*3+[1]*2)".
    static std::string expression(const std::vector<std::uint8_t>& pattern);

private:
    explicit MoeLayerPattern(const std::string& text);
    std::vector<std::uint8_t> sum();
    std::vector<std::uint8_t> product();
    std::vector<std::uint8_t> atom();
    long number();
    void expect(char c);

    std::string m_s;
    std::size_t m_i = 0;
    int m_depth = 0;
};

} // namespace hapmoe
