#pragma once
// What a launch script is run with, as `NAME=VALUE ... bash SCRIPT ARG...` would give it:
// its arguments ($1 ... "$@", $#) and variables of its environment. The script reader takes
// them as given (BashReader::setArguments, setEnvironment).

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace hapmoe {

// Without arguments the reading does not know the script's own (a usage guard on them is read
// as not taken); a name neither the script nor the environment sets is bash's unset (empty in
// a test, with a warning).
struct ScriptInputs {
    std::vector<std::string> arguments;            // given when not empty
    std::map<std::string, std::string> environment;

    bool empty() const { return arguments.empty() && environment.empty(); }
    bool operator==(const ScriptInputs&) const = default;
};

// "NAME=VALUE" into inputs.environment. Throws InputError naming `where` (the option or the
// field) unless NAME is a shell variable name ([A-Za-z_][A-Za-z0-9_]*).
void addScriptEnvironment(ScriptInputs& inputs, const std::string& assignment, const std::string& where);

// The words of a command line as bash splits them: blanks separate words; '...' keeps its
// text, "..." keeps its text with \" \\ \$ \` unescaped, and a backslash outside quotes keeps
// the next character. No expansion. Throws InputError naming `where` on an unterminated quote.
std::vector<std::string> splitShellWords(std::string_view text, const std::string& where);
// The arguments written back as one line splitShellWords reads as the same words.
std::string joinShellWords(const std::vector<std::string>& words);
// The inputs in one line, as the model's source and the studio name them: the arguments, then
// "with NAME=VALUE ..." ("70B --dry with NNODES=4"); empty without any.
std::string describeScriptInputs(const ScriptInputs& inputs);

} // namespace hapmoe
