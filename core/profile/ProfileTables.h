#pragma once
// Fast look-ups in a measured profile (DESIGN section 2, paper section 3.3): compute time of
// a layer per (device, TP, CP, tokens) and collective time per (primitive, link class, group
// size, bytes). Between table points the time is interpolated log-log (a power law between
// neighbours); beyond the last point it is extrapolated proportionally to the size, below the
// first point it is held at the first time (latency bound). Built once per cost model; the
// look-ups allocate nothing.

#include "profile/Profile.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hapmoe {

struct LayerTimes {
    double dense_fwd = 0;
    double dense_bwd = 0;
    double ffn_fwd = 0;
    double ffn_bwd = 0;
};

class ProfileTables {
public:
    ProfileTables() = default;
    explicit ProfileTables(const Profile& profile);

    bool empty() const { return m_compute.empty() && m_collectives.empty() && m_memory.empty() && m_efficiency.empty(); }

    // Layer times for tokens per replica (mbs * seq / CP); nullopt when no entry matches the
    // device type, TP and CP.
    std::optional<LayerTimes> compute(std::string_view deviceType, int tp, int cp, double tokens) const;

    // Time of one collective with bytes per rank; entries of the device type win over generic
    // ones (empty device_type). nullopt when no entry matches primitive, link and group size.
    std::optional<double> collective(Collective primitive, LinkClass link, int groupSize, double bytes,
                                     std::string_view deviceType) const;

    const MemoryCalibration* memory(std::string_view deviceType) const;
    std::optional<double> efficiency(std::string_view deviceType) const;

    // Log-log interpolation of y(x) over points sorted by x (exposed for the tests).
    static double interpolateLogLog(const std::vector<std::pair<double, double>>& points, double x);

private:
    struct ComputeSeries {
        std::string device;
        int tp = 1, cp = 1;
        std::vector<std::pair<double, LayerTimes>> points;   // sorted by tokens
    };
    struct CollectiveSeries {
        Collective primitive;
        LinkClass link;
        int group = 0;
        std::string device;
        std::vector<std::pair<double, double>> points;        // (bytes, seconds), sorted
    };
    std::vector<ComputeSeries> m_compute;
    std::vector<CollectiveSeries> m_collectives;
    std::vector<MemoryCalibration> m_memory;
    std::vector<std::pair<std::string, double>> m_efficiency;
};

// Case-insensitive comparison of device type names, as the catalog look-up does.
bool sameDeviceName(std::string_view a, std::string_view b);

} // namespace hapmoe
