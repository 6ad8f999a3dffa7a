#pragma once
// The command-line flags a target accepts: resources/megatron-flags.json (Megatron-LM at
// d98e8a64) and resources/flagscale-flags.json (FlagScale's pinned Megatron-LM 8479eb35
// plus FlagScale's own flags), copied from the reference lists with their sources. The
// exporter emits only flags in the target's list; the importer warns about the rest.

#include <set>
#include <string>
#include <string_view>

namespace hapmoe {

class FlagList {
public:
    static const FlagList& megatron();
    static const FlagList& flagscale();

    bool contains(std::string_view flag) const { return m_flags.count(std::string(flag)) > 0; }
    const std::set<std::string>& flags() const { return m_flags; }
    const std::string& source() const { return m_source; }

private:
    static FlagList load(std::string_view resourceName);

    std::set<std::string> m_flags;
    std::string m_source;
};

} // namespace hapmoe
