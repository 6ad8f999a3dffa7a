#pragma once
// A small, strict argument parser for the hapmoe subcommands: "--name value", "--name=value",
// boolean switches and positionals. Unknown options and missing values are usage errors
// (exit code 2), reported with the option's name.

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace hapmoe::cli {

enum ExitCode { Success = 0, NoFeasiblePlan = 1, BadInput = 2 };

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class CliArgs {
public:
    // valueOptions take a value; switches do not. Names without the leading "--".
    CliArgs(const std::vector<std::string>& args, const std::set<std::string>& valueOptions,
            const std::set<std::string>& switches);

    bool has(const std::string& name) const;
    std::optional<std::string> value(const std::string& name) const;
    std::string required(const std::string& name) const;            // throws UsageError
    std::optional<int> intValue(const std::string& name, int min = 1) const;      // throws UsageError
    std::optional<double> doubleValue(const std::string& name, double min = 0) const;
    const std::vector<std::string>& positionals() const { return m_positionals; }

private:
    std::map<std::string, std::string> m_values;
    std::set<std::string> m_switches;
    std::vector<std::string> m_positionals;
};

} // namespace hapmoe::cli
