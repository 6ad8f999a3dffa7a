#pragma once
// A hash map for the search's hot caches (knob fronts, stage records, DP states): the keys
// sit in one array probed linearly, so a lookup usually reads one cache line where
// std::unordered_map follows a bucket pointer and a node pointer. Values sit in a vector
// in the order they were added: as with std::vector, adding a key invalidates pointers and
// references to the values. No erase; clear() keeps the memory for the next use, and an
// empty map allocates nothing.
//
// Hash must mix into the low bits (the slot is hash & (capacity - 1)): hashWords does.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace hapmoe {

template <class Key, class Value, class Hash>
class FlatMap {
public:
    // The value of key, or nullptr.
    Value* find(const Key& key)
    {
        if (m_values.empty())
            return nullptr;
        for (std::size_t i = Hash{}(key) & m_mask;; i = (i + 1) & m_mask) {
            const Slot& s = m_slots[i];
            if (s.index == 0)
                return nullptr;
            if (s.key == key)
                return &m_values[s.index - 1];
        }
    }
    const Value* find(const Key& key) const { return const_cast<FlatMap*>(this)->find(key); }

    // The value of key, added as value when absent; second: whether it was added.
    template <class V>
    std::pair<Value*, bool> emplace(const Key& key, V&& value)
    {
        if ((m_values.size() + 1) * 2 > m_slots.size())
            grow();
        std::size_t i = Hash{}(key) & m_mask;
        for (;; i = (i + 1) & m_mask) {
            Slot& s = m_slots[i];
            if (s.index == 0)
                break;
            if (s.key == key)
                return {&m_values[s.index - 1], false};
        }
        m_values.push_back(std::forward<V>(value));
        m_slots[i] = Slot{key, static_cast<std::uint32_t>(m_values.size())};
        return {&m_values.back(), true};
    }

    Value& operator[](const Key& key) { return *emplace(key, Value{}).first; }

    std::size_t size() const { return m_values.size(); }
    bool empty() const { return m_values.empty(); }

    void clear()
    {
        if (m_values.empty())
            return;
        m_values.clear();
        std::fill(m_slots.begin(), m_slots.end(), Slot{});
    }

private:
    struct Slot {
        Key key{};
        std::uint32_t index = 0;   // 1 + the value's place in m_values; 0: empty
    };

    // At most half the slots are used: linear probes stay short.
    // The new array is filled before it replaces the old: a failed allocation leaves the map
    // as it was.
    void grow()
    {
        const std::size_t capacity = m_slots.empty() ? 16 : m_slots.size() * 2;
        std::vector<Slot> slots(capacity);
        const std::size_t mask = capacity - 1;
        for (const Slot& s : m_slots) {
            if (s.index == 0)
                continue;
            std::size_t i = Hash{}(s.key) & mask;
            while (slots[i].index != 0)
                i = (i + 1) & mask;
            slots[i] = s;
        }
        m_slots.swap(slots);
        m_mask = mask;
    }

    std::vector<Slot> m_slots;
    std::vector<Value> m_values;
    std::size_t m_mask = 0;
};

} // namespace hapmoe
