#pragma once
// Reads a Megatron-LM training log (../shared/reference/megatron-log-format.md) and
// calibrates a profile so that the cost model reproduces what the run measured: the device
// efficiency (Profile::device_efficiency), the memory overhead per device type
// (Profile::memory) and the router imbalance rho (Profile::router_imbalance) when the log
// has per-layer token counts. docs/megatron.md describes the method.

#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "profile/Profile.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hapmoe {

struct MegatronLog {
    struct Interval {
        long long iteration = 0;
        double elapsed_ms = 0;                 // mean over the logging interval
        std::optional<double> tflops_per_gpu;  // with --log-throughput
        int line = 0;
    };
    struct MemoryReport {
        int rank = 0;
        double allocated_mb = 0, max_allocated_mb = 0, reserved_mb = 0, max_reserved_mb = 0;
        int line = 0;
    };
    std::vector<Interval> intervals;
    std::vector<MemoryReport> memory;
    // Timers ("forward-backward", "optimizer", ...): (min, max) across ranks in ms, last seen.
    std::map<std::string, std::pair<double, double>> timers;
    // Tokens routed to each expert, per MoE layer (layer index -> counts), last seen.
    std::map<int, std::vector<double>> router_tokens;
    std::vector<std::string> warnings;
};

// Throws InputError when the log has no iteration line.
MegatronLog parseMegatronLog(std::string_view text, const std::string& fileName);

struct StageMemoryCheck {
    int stage = 0;
    std::string device_type;
    double measured_gib = 0;     // max reserved of the stage's ranks
    double predicted_before_gib = 0;
    double predicted_after_gib = 0;
};

struct CalibrationResult {
    Profile profile;
    double measured_iteration_s = 0;   // mean of the intervals after the first
    int intervals_used = 0;
    double predicted_before_s = 0;
    double predicted_after_s = 0;
    double efficiency_scale = 1;       // calibrated efficiency / catalog default efficiency
    bool time_matched = false;         // |after - measured| <= 0.1% of measured
    std::optional<double> rho;         // from the router token counts
    std::vector<StageMemoryCheck> memory;
    std::vector<std::string> notes;
};

// Calibrates against the plan the log was produced with. The base profile (if any) is kept
// and extended; its device efficiencies are replaced.
CalibrationResult calibrateFromLog(const MegatronLog& log, const PlanDocument& doc, const DeviceCatalog& catalog,
                                   const std::string& logFile, const Profile* base = nullptr);

} // namespace hapmoe
