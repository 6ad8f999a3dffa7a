#pragma once
// Quoting for values that reach a generated bash launcher, so that no value can run a
// command: single quotes by default ('\'' for a quote inside), bare words only from a
// small safe alphabet, and host names checked against RFC 1123 (refused otherwise).

#include <string>
#include <string_view>

namespace hapmoe {

class ShellQuote {
public:
    // Bare when every character is in [A-Za-z0-9_./:=,+@%-] (and it does not start with
    // '-' '=' or '~'), else single-quoted.
    static std::string word(std::string_view value);
    // Every character is in that safe alphabet (true for an empty value).
    static bool isSafe(std::string_view value);
    // Like word(), but keeps "${NAME}" and "${NAME:-}" references (values the original script took from its
    // environment) live inside double quotes; every other special character is escaped.
    static std::string value(std::string_view value);
    // Always single-quoted (paths, patterns such as a pipeline layout).
    static std::string single(std::string_view value);
    // The value without one pair of quote characters around it ('99,1,0' -> 99,1,0): what
    // reaches a program as part of a word when bash split a "flag value" array element.
    // Other values are returned as they are.
    static std::string unquoted(std::string_view value);
    static bool isQuoted(std::string_view value);

    // A label FlagScale passes as --hetero-device-types / type=: [A-Za-z0-9._-]+.
    static bool isValidLabel(std::string_view label);
    // An environment variable name: [A-Za-z_][A-Za-z0-9_]*.
    static bool isValidName(std::string_view name);
    // A whole word "${NAME}": what the script reader keeps for a variable the script does not
    // set (it comes from the environment).
    static bool isReference(std::string_view word);
};

} // namespace hapmoe
