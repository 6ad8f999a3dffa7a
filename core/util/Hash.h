#pragma once
// Hash of a key made of three 64-bit words, for the search's hash maps: the splitmix64
// finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014) applied word by word.

#include <cstddef>
#include <cstdint>

namespace hapmoe {

constexpr std::uint64_t splitmix64Finalise(std::uint64_t x) noexcept
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

constexpr std::size_t hashWords(std::uint64_t a, std::uint64_t b, std::uint64_t c) noexcept
{
    return static_cast<std::size_t>(splitmix64Finalise(a ^ splitmix64Finalise(b ^ splitmix64Finalise(c))));
}

} // namespace hapmoe
