#pragma once
// The one chain of format migrations (docs/formats.md, "Versions and migrations").
// Every reader calls Migrations::upgrade before it looks at a document: older versions are
// rewritten step by step to the current layout (one warning per step), a newer version is
// refused with a message.

#include "io/JsonNode.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace hapmoe::io {

// A key a migration moved or renamed: `now` is its path in the upgraded document, `was`
// its path in the file (both relative to the document, e.g. "nodes[3].count" and
// "nodes[3].gpus"), `note` what else changed ("value / 8, Gb/s to GB/s"), or "".
struct MovedKey {
    std::string now;
    std::string was;
    std::string note;
};
using MovedKeys = std::vector<MovedKey>;

class Migrations {
public:
    // The version this program writes for a format ("hapmoe.model" -> 2); 0 if unknown.
    static int currentVersion(std::string_view format);

    // Checks doc["format"] == format and doc["version"], then upgrades doc in place to the
    // current version. Throws InputError (file from context) on a wrong format, a missing
    // or malformed version, or a version newer than currentVersion(format).
    // A version-1 field that cannot be carried over (a non-boolean "fp16", a key given under
    // both its old and new name) is refused with its own path. When moved is given, every
    // key the steps moved is appended to it.
    static void upgrade(nlohmann::json& doc, std::string_view format, const JsonContext& context,
                        MovedKeys* moved = nullptr);

    // An error a reader raised on the upgraded document, restated with the path the user
    // wrote: root is the reader's path prefix ("model"), so "model.training.micro_batch_size"
    // becomes "model.micro_batch_size" when the file was version 1. Errors on other paths
    // come back unchanged.
    static InputError restate(const InputError& error, const MovedKeys& moved, std::string_view root);
};

} // namespace hapmoe::io
