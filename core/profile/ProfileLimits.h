#pragma once
// Bounds on the values of a profile (format "hapmoe.profile") beyond what its reader checks:
// figures no device or network gives, which would drive a prediction to 1e300 s or to
// infinity, and compute series that give the FFN times at some points only, between which
// they would be made up. docs/profiling.md, "Bounds", lists them.

#include "profile/Profile.h"

#include <string>

namespace hapmoe {

struct ProfileLimits {
    // One layer's forward or backward for one micro-batch, one collective: from 1 ns (below
    // a kernel launch) to an hour.
    static constexpr double kMinTimeS = 1e-9;
    static constexpr double kMaxTimeS = 3600;
    static constexpr double kMaxTokens = 1e9;            // tokens per device-replica of one micro-batch
    static constexpr double kMaxBytes = 1024.0 * 1024 * 1024 * 1024;   // 1 TiB per rank
    static constexpr double kMinEfficiency = 1e-3;       // 0.1% of peak
};

// Throws InputError (file = fileName, where = the JSON path of the value, e.g.
// "profile.compute[0].dense_layer_fwd_s") at the first value out of bounds, or at the first
// point of a compute series (device type, TP, CP) whose FFN times are given where another
// point's are not.
void checkProfileLimits(const Profile& profile, const std::string& fileName);

} // namespace hapmoe
