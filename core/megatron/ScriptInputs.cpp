#include "megatron/ScriptInputs.h"

#include "megatron/ShellQuote.h"
#include "util/InputError.h"
#include "util/Strings.h"

namespace hapmoe {

void addScriptEnvironment(ScriptInputs& inputs, const std::string& assignment, const std::string& where)
{
    const std::size_t eq = assignment.find('=');
    if (eq == std::string::npos || !ShellQuote::isValidName(std::string_view(assignment).substr(0, eq)))
        throw InputError("", where,
                         "expected NAME=VALUE with a shell variable name (letters, digits and _, not a digit first), got \""
                             + assignment + "\"");
    // Once each, as every option of the command line: a second value would silently win.
    const std::string name = assignment.substr(0, eq);
    if (const auto given = inputs.environment.find(name); given != inputs.environment.end())
        throw InputError("", where, name + " is given twice (" + name + "=" + printableText(given->second) + ", then "
                                        + printableText(assignment) + "); give each variable once");
    inputs.environment[name] = assignment.substr(eq + 1);
}

std::vector<std::string> splitShellWords(std::string_view text, const std::string& where)
{
    // Bash's quoting (manual 3.1.2): the three quoting mechanisms, without expansions.
    std::vector<std::string> words;
    std::string word;
    bool inWord = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == ' ' || c == '\t' || c == '\n') {
            if (inWord)
                words.push_back(std::move(word));
            word.clear();
            inWord = false;
            continue;
        }
        inWord = true;
        if (c == '\\') {
            if (i + 1 < text.size() && text[i + 1] != '\n')
                word += text[i + 1];
            ++i;
        } else if (c == '\'' || c == '"') {
            const std::size_t close = text.find(c, i + 1);
            std::size_t end = close;
            if (c == '"') {   // a closing quote preceded by a backslash does not close
                end = i + 1;
                while (end < text.size() && text[end] != '"')
                    end += text[end] == '\\' ? 2 : 1;
                if (end >= text.size())
                    end = std::string_view::npos;
            }
            if (end == std::string_view::npos)
                throw InputError("", where, std::string("unterminated ") + (c == '"' ? "double" : "single") + " quote in \""
                                                + std::string(text) + "\"");
            for (std::size_t k = i + 1; k < end; ++k) {
                if (c == '"' && text[k] == '\\' && k + 1 < end && std::string_view("\"\\$`").find(text[k + 1]) != std::string_view::npos)
                    ++k;
                word += text[k];
            }
            i = end;
        } else {
            word += c;
        }
    }
    if (inWord)
        words.push_back(std::move(word));
    return words;
}

std::string joinShellWords(const std::vector<std::string>& words)
{
    std::string out;
    for (const std::string& w : words)
        out += (out.empty() ? "" : " ") + (w.empty() ? std::string("''") : ShellQuote::word(w));
    return out;
}

std::string describeScriptInputs(const ScriptInputs& inputs)
{
    std::string out = joinShellWords(inputs.arguments);
    std::string env;
    for (const auto& [name, value] : inputs.environment)
        env += (env.empty() ? "" : " ") + name + "=" + joinShellWords({value});
    if (!env.empty())
        out += (out.empty() ? "with " : " with ") + env;
    return out;
}

} // namespace hapmoe
