#include "CliArgs.h"

#include <cerrno>
#include <cstdlib>

namespace hapmoe::cli {

CliArgs::CliArgs(const std::vector<std::string>& args, const std::set<std::string>& valueOptions,
                 const std::set<std::string>& switches)
{
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.size() > 2 && a.rfind("--", 0) == 0) {
            std::string name = a.substr(2);
            std::optional<std::string> inlineValue;
            if (auto eq = name.find('='); eq != std::string::npos) {
                inlineValue = name.substr(eq + 1);
                name = name.substr(0, eq);
            }
            if (valueOptions.count(name)) {
                if (inlineValue) {
                    m_values[name] = *inlineValue;
                } else {
                    if (i + 1 >= args.size())
                        throw UsageError("option --" + name + " needs a value");
                    m_values[name] = args[++i];
                }
            } else if (switches.count(name)) {
                if (inlineValue)
                    throw UsageError("option --" + name + " takes no value");
                m_switches.insert(name);
            } else {
                throw UsageError("unknown option --" + name);
            }
        } else if (a == "-o") {
            if (!valueOptions.count("o"))
                throw UsageError("unknown option -o");
            if (i + 1 >= args.size())
                throw UsageError("option -o needs a value");
            m_values["o"] = args[++i];
        } else {
            m_positionals.push_back(a);
        }
    }
}

bool CliArgs::has(const std::string& name) const
{
    return m_switches.count(name) > 0 || m_values.count(name) > 0;
}

std::optional<std::string> CliArgs::value(const std::string& name) const
{
    auto it = m_values.find(name);
    if (it == m_values.end())
        return std::nullopt;
    return it->second;
}

std::string CliArgs::required(const std::string& name) const
{
    auto v = value(name);
    if (!v)
        throw UsageError("missing required option --" + name);
    return *v;
}

std::optional<int> CliArgs::intValue(const std::string& name, int min) const
{
    auto v = value(name);
    if (!v)
        return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const long parsed = std::strtol(v->c_str(), &end, 10);
    if (v->empty() || *end != '\0' || errno == ERANGE || parsed < min || parsed > 1'000'000'000)
        throw UsageError("--" + name + ": expected an integer >= " + std::to_string(min) + ", got \"" + *v + "\"");
    return static_cast<int>(parsed);
}

std::optional<double> CliArgs::doubleValue(const std::string& name, double min) const
{
    auto v = value(name);
    if (!v)
        return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const double parsed = std::strtod(v->c_str(), &end);
    if (v->empty() || *end != '\0' || errno == ERANGE || !(parsed >= min))
        throw UsageError("--" + name + ": expected a number >= " + std::to_string(min) + ", got \"" + *v + "\"");
    return parsed;
}

} // namespace hapmoe::cli
