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
        return list;
    }
    // The lists are built into the library; a missing one is a build error, not user input.
    throw std::logic_error("embedded resource " + std::string(resourceName) + " is missing");
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
