#pragma once
// The command-line flags a target accepts: resources/megatron-flags.json (Megatron-LM at
// d98e8a64) and resources/flagscale-flags.json (FlagScale's pinned Megatron-LM 8479eb35
// plus FlagScale's own flags), copied from the reference lists with their sources. The
// exporter emits only flags in the target's list; the importer warns about the rest. Megatron-LM's
// list also records how many values each flag takes and the values some accept (argparse's
// nargs and choices), which the importer holds a script to.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hapmoe {

class FlagList {
public:
    static const FlagList& megatron();
    static const FlagList& flagscale();

    bool contains(std::string_view flag) const { return m_flags.count(std::string(flag)) > 0; }
    const std::set<std::string>& flags() const { return m_flags; }
    const std::string& source() const { return m_source; }

    // How many values a flag takes on the command line (argparse's nargs: 0 for a switch,
    // 1 by default, 3, "+" one or more, "*" any, "?" at most one); max < 0 means no bound.
    // Empty when the list does not record it (FlagScale's list, a flag not in the list).
    struct ValueCount {
        int min = 1;
        int max = 1;
    };
    std::optional<ValueCount> valueCount(std::string_view flag) const;
    // The values a flag accepts (argparse's choices), or nullptr when any value goes.
    const std::vector<std::string>* choices(std::string_view flag) const;

private:
    static FlagList load(std::string_view resourceName);

    std::set<std::string> m_flags;
    std::string m_source;
    bool m_hasValueCounts = false;
    std::map<std::string, ValueCount, std::less<>> m_valueCounts;   // flags not taking exactly one value
    std::map<std::string, std::vector<std::string>, std::less<>> m_choices;
};

} // namespace hapmoe
