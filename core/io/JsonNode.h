#pragma once
// A read-only view on one value of a parsed JSON document that knows its JSON path
// ("cluster.nodes[3].count"), so every getter can throw an InputError naming the file,
// the path and what was expected. Used by every reader of core (io, hardware, megatron)
// so that no reader walks nlohmann::json by hand.

#include "util/InputError.h"

#include <nlohmann/json.hpp>

#include <climits>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hapmoe::io {

struct JsonContext {
    std::string file;
    Warnings* warnings = nullptr;
};

class JsonNode {
public:
    JsonNode(const nlohmann::json& value, std::string path, const JsonContext& context);

    // Parses text; a syntax error becomes InputError(file, "line L, column C", ...).
    static nlohmann::json parse(std::string_view text, const std::string& file);
    // A short rendering of a value for "got ..." in messages.
    static std::string describe(const nlohmann::json& value);
    // The characters that identify a name regardless of case, '-', '_' and spaces.
    static std::string normalizedName(std::string_view name);

    const nlohmann::json& value() const { return *m_value; }
    const std::string& path() const { return m_path; }
    const JsonContext& context() const { return *m_context; }
    std::string childPath(std::string_view key) const;
    std::string indexPath(std::size_t index) const;

    bool isObject() const { return m_value->is_object(); }
    void requireObject() const;
    bool has(std::string_view key) const;   // present and not null

    JsonNode child(std::string_view key) const;                  // required
    std::optional<JsonNode> optChild(std::string_view key) const;
    JsonNode object(std::string_view key) const;                 // required object
    std::optional<JsonNode> optObject(std::string_view key) const;
    // Elements of an array member; absent -> empty unless required.
    std::vector<JsonNode> array(std::string_view key, bool required = false) const;
    std::vector<JsonNode> elements() const;                      // this value as an array

    int reqInt(std::string_view key, int min = INT_MIN, int max = INT_MAX) const;
    int optInt(std::string_view key, int fallback, int min = INT_MIN, int max = INT_MAX) const;
    long long reqInt64(std::string_view key, long long min = std::numeric_limits<long long>::min()) const;
    long long optInt64(std::string_view key, long long fallback, long long min = std::numeric_limits<long long>::min()) const;
    // Numbers; minExclusive: value must be > min (else >= min).
    double reqDouble(std::string_view key, double min = -std::numeric_limits<double>::infinity(), bool minExclusive = false,
                     double max = std::numeric_limits<double>::infinity()) const;
    double optDouble(std::string_view key, double fallback, double min = -std::numeric_limits<double>::infinity(),
                     bool minExclusive = false, double max = std::numeric_limits<double>::infinity()) const;
    bool optBool(std::string_view key, bool fallback) const;
    std::string reqString(std::string_view key, bool nonEmpty = true) const;
    // Printable text: line breaks and tabs, no other control character.
    std::string optString(std::string_view key, const std::string& fallback = {}) const;
    // Any string (a launch script a project keeps as it was read).
    std::string optRawString(std::string_view key, const std::string& fallback = {}) const;
    // A name: one line of printable text (no byte below 0x20, nor 0x7f), since names reach
    // terminals, window titles and comment lines, where an escape sequence would act.
    std::string optLine(std::string_view key, const std::string& fallback = {}) const;
    // One of the names (matched by normalizedName); returns its index.
    int reqChoice(std::string_view key, const std::vector<std::string_view>& names) const;
    int optChoice(std::string_view key, const std::vector<std::string_view>& names, int fallback) const;

    // The value itself, for array elements.
    int asInt(int min = INT_MIN, int max = INT_MAX) const;
    double asDouble(double min = -std::numeric_limits<double>::infinity(), bool minExclusive = false) const;

    // Warns about keys this reader does not know, and fails on one near a known key that the
    // object does not have (a misspelling, whose default would be taken in silence).
    void warnUnknownKeys(std::initializer_list<std::string_view> known) const;
    void warn(const std::string& message) const;

    [[noreturn]] void fail(std::string_view key, const std::string& message) const;
    [[noreturn]] void failHere(const std::string& message) const;

private:
    const nlohmann::json* member(std::string_view key) const;
    static std::string expectedInteger(long long min, long long max);
    long long integerOf(const nlohmann::json& v, const std::string& path, long long min, long long max) const;
    double numberOf(const nlohmann::json& v, const std::string& path, double min, bool minExclusive, double max) const;

    const nlohmann::json* m_value;
    std::string m_path;
    const JsonContext* m_context;
};

} // namespace hapmoe::io
