#pragma once
// The one chain of format migrations (docs/formats.md, "Versions and migrations").
// Every reader calls Migrations::upgrade before it looks at a document: older versions are
// rewritten step by step to the current layout (one warning per step), a newer version is
// refused with a message.

#include "io/JsonNode.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace hapmoe::io {

class Migrations {
public:
    // The version this program writes for a format ("hapmoe.model" -> 2); 0 if unknown.
    static int currentVersion(std::string_view format);

    // Checks doc["format"] == format and doc["version"], then upgrades doc in place to the
    // current version. Throws InputError (file from context) on a wrong format, a missing
    // or malformed version, or a version newer than currentVersion(format).
    static void upgrade(nlohmann::json& doc, std::string_view format, const JsonContext& context);
};

} // namespace hapmoe::io
