#pragma once
// Access to the files of resources/ embedded at build time (cmake/EmbedResources.cmake).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hapmoe::resources {

// Every embedded file as (path relative to resources/, content).
const std::vector<std::pair<std::string_view, std::string_view>>& embeddedResources();

} // namespace hapmoe::resources
