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
        std::optional<double> global_batch_size;  // "global batch size: 256"
        int line = 0;
    };
    struct MemoryReport {
        int rank = 0;
        double allocated_mb = 0, max_allocated_mb = 0, reserved_mb = 0, max_reserved_mb = 0;
        int line = 0;
    };
    // What the run says about its size, from validate_args' "using world size: 32,
    // data-parallel size: 8, context-parallel size: 1, ..., tensor-model-parallel size: 1,
    // pipeline-model-parallel size: 4" or the arguments dump ("  world_size ....... 32");
    // 0 = not stated.
    struct ParallelSizes {
        int world = 0, dp = 0, cp = 0, tp = 0, pp = 0, ep = 0;
        int line = 0;   // where the first of them was read
    };
    ParallelSizes sizes;
    // The overlap switches of the arguments dump ("  overlap_grad_reduce ...... True"),
    // printed after validate_args settled them; unset = not in the log.
    struct Switches {
        std::optional<bool> grad_reduce, param_gather, tp_comm, p2p;
        int line = 0;   // where the first of them was read
    };
    Switches switches;
    std::vector<Interval> intervals;
    std::vector<MemoryReport> memory;
    // Timers ("forward-backward", "optimizer", ...): (min, max) across ranks in ms, last seen.
    std::map<std::string, std::pair<double, double>> timers;
    // Tokens routed to each expert, per MoE layer (layer index -> counts), last seen.
    std::map<int, std::vector<double>> router_tokens;
    std::map<int, int> router_lines;   // layer index -> the line its counts were read from
    std::vector<std::string> warnings;
};

// Throws InputError (where = "line N") when the log has no iteration line, or when a line
// it reads holds a value no run can have: an iteration time that is not a positive number
// of at most a day, a memory figure that is negative or not a number.
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
// and extended; its device efficiencies are replaced. Throws InputError (file = logFile,
// where = "line N") when the log cannot come from a run of this plan: a world size or
// parallel size the log states that differs from the plan's, a memory report of a rank the
// plan does not have or above its device's capacity, an iteration faster than the plan's
// devices could compute the model's FLOPs at their peak.
CalibrationResult calibrateFromLog(const MegatronLog& log, const PlanDocument& doc, const DeviceCatalog& catalog,
                                   const std::string& logFile, const Profile* base = nullptr);

} // namespace hapmoe
