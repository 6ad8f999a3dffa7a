#include "megatron/FlagList.h"

#include "util/EmbeddedResources.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace hapmoe {

FlagList FlagList::load(std::string_view resourceName)
{
    for (const auto& [name, content] : resources::embeddedResources()) {
        if (name != resourceName)
            continue;
        const nlohmann::json doc = nlohmann::json::parse(content);
        FlagList list;
        list.m_source = doc.value("source", std::string());
        for (const auto& f : doc.at("flags"))
            list.m_flags.insert(f.get<std::string>());
        if (const auto values = doc.find("values"); values != doc.end()) {
            list.m_hasValueCounts = true;
            for (const auto& [flag, nargs] : values->items()) {
                const std::string n = nargs.get<std::string>();
                ValueCount c;
                if (n == "+")
                    c = {1, -1};
                else if (n == "*")
                    c = {0, -1};
                else if (n == "?")
                    c = {0, 1};
                else
                    c.min = c.max = std::stoi(n);
                list.m_valueCounts[flag] = c;
            }
        }
        if (const auto choices = doc.find("choices"); choices != doc.end())
            for (const auto& [flag, values] : choices->items())
                list.m_choices[flag] = values.get<std::vector<std::string>>();
        return list;
    }
    // The lists are built into the library; a missing one is a build error, not user input.
    throw std::logic_error("embedded resource " + std::string(resourceName) + " is missing");
}

std::optional<FlagList::ValueCount> FlagList::valueCount(std::string_view flag) const
{
    if (!m_hasValueCounts || !contains(flag))
        return std::nullopt;
    const auto it = m_valueCounts.find(flag);
    return it == m_valueCounts.end() ? ValueCount{} : it->second;
}

const std::vector<std::string>* FlagList::choices(std::string_view flag) const
{
    const auto it = m_choices.find(flag);
    return it == m_choices.end() ? nullptr : &it->second;
}

const FlagList& FlagList::megatron()
{
    static const FlagList list = load("megatron-flags.json");
    return list;
}

const FlagList& FlagList::flagscale()
{
    static const FlagList list = load("flagscale-flags.json");
    return list;
}

} // namespace hapmoe
