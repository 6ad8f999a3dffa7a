#pragma once
// Built-in presets (resources/models/*.json, resources/clusters/*.json, embedded at build
// time) and name resolution for the command line: a preset name (case-insensitive), a
// file path, or for clusters the shorthand "TYPE:NODESxPER_NODE,..." such as
// "A100-80GB:8x8,H100-SXM:4x8" (default interconnect from the catalog).

#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"
#include "model/ModelSpec.h"
#include "util/InputError.h"

#include <string>
#include <string_view>
#include <vector>

namespace hapmoe {

struct PresetInfo {
    std::string name;
    std::string summary;   // one line: shape or composition
    std::string source;
};

std::vector<PresetInfo> modelPresets();
std::vector<PresetInfo> clusterPresets();
const ModelSpec* findModelPreset(std::string_view name);     // case-insensitive
const Cluster* findClusterPreset(std::string_view name);

// Builds a cluster from the shorthand; nodes get hosts "node0".., one leaf switch per
// device type under one spine (no spine for one type, no switch for one node), link
// bandwidths from the catalog. Throws InputError.
Cluster clusterFromShorthand(std::string_view shorthand, const DeviceCatalog& catalog);

// Preset name, then file, then (clusters) shorthand. Throws InputError when none fits.
ModelSpec resolveModel(const std::string& nameOrPath, Warnings* warnings = nullptr);
Cluster resolveCluster(const std::string& nameOrPathOrShorthand, const DeviceCatalog& catalog,
                       Warnings* warnings = nullptr);

} // namespace hapmoe
