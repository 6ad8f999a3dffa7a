#pragma once
// Reads a Megatron-LM training log (../shared/reference/megatron-log-format.md) and
// calibrates a profile so that the cost model reproduces what the run measured: the device
// efficiency (Profile::device_efficiency) with the base profile's compute tables scaled
// alike, the memory overhead per device type (Profile::memory) and the router imbalance rho
// (Profile::router_imbalance) when the log has per-layer token counts. docs/megatron.md and
// docs/profiling.md describe the method.

#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "profile/Profile.h"

#include <map>
#include <optional>
#include <set>
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
    // 0 = not stated. Each size keeps the line it was read from, for the error that names it.
    struct ParallelSizes {
        int world = 0, dp = 0, cp = 0, tp = 0, pp = 0, ep = 0;
        int world_line = 0, dp_line = 0, cp_line = 0, tp_line = 0, pp_line = 0, ep_line = 0;
    };
    ParallelSizes sizes;
    // The overlap switches of the arguments dump ("  overlap_grad_reduce ...... True"),
    // printed after validate_args settled them; unset = not in the log.
    struct Switches {
        std::optional<bool> grad_reduce, param_gather, tp_comm, p2p;
        int line = 0;   // where the first of them was read
        // "  fp8 ..... hybrid" (--fp8-format's dest): the format, "None" without FP8.
        std::optional<std::string> fp8;
        int fp8_line = 0;
    };
    Switches switches;
    std::vector<Interval> intervals;
    std::vector<MemoryReport> memory;
    // Timers ("forward-backward", "optimizer", ...): (min, max) across ranks in ms, last seen.
    std::map<std::string, std::pair<double, double>> timers;
    // Tokens routed to each expert, per MoE layer (layer index -> counts), last seen.
    std::map<int, std::vector<double>> router_tokens;
    std::map<int, int> router_lines;   // layer index -> the line its counts were read from
    // Megatron-LM's theoretical memory report: "Total number of parameters in billions: 46.70".
    std::optional<double> total_parameters_billions;
    int total_parameters_line = 0;
    // The log may hold several runs (a restart appends to it): a start-up line ("using world
    // size: ...", the arguments dump, "[before the start of training step]") after an
    // iteration line, or an iteration number below the one before, starts a new run. Every
    // field above is the last complete run's (one with an interval after its first), or the
    // last run's when none is; first_line is where it starts.
    int runs = 1;
    int first_line = 1;
    std::vector<std::string> warnings;
};

// Throws InputError (where = "line N") when the log has no iteration line, or when a line
// it reads holds a value no run can have: an iteration time that is not a positive number
// of at most a day, a memory figure that is negative or not a number. A last line without
// an end of line (a log cut while it was written) is left out with a warning.
MegatronLog parseMegatronLog(std::string_view text, const std::string& fileName);

struct StageMemoryCheck {
    int stage = 0;
    std::string device_type;
    double measured_gib = 0;     // max reserved of the stage's ranks
    double predicted_before_gib = 0;
    double predicted_after_gib = 0;
    double capacity_gib = 0;     // the device's memory (less the plan's headroom)
};

struct CalibrationResult {
    Profile profile;
    double measured_iteration_s = 0;   // median of the intervals used
    int intervals_used = 0;
    int intervals_ramp_up = 0;         // skipped: logged before the global batch reached the plan's
    double predicted_before_s = 0;
    double predicted_after_s = 0;
    double efficiency_scale = 1;       // calibrated efficiency / catalog default efficiency
    // Per device type of the plan: the large-GEMM efficiency the prediction before calibration
    // used (the base profile's, else the catalog default x kLargeGemmOverMamf), so that the
    // change can be read against the model rather than against the catalog figure.
    std::map<std::string, double> efficiency_before;
    // The types whose figure before is the base profile's (the others': the catalog's x 0.935).
    std::set<std::string> efficiency_before_from_base;
    // The compute table times of the plan's device types, scaled by 1 / efficiency_scale with
    // the efficiency (1 when the base profile has no table for them).
    double table_scale = 1;
    bool time_matched = false;         // |after - measured| <= 0.1% of measured
    std::string fit_failure;           // why no scale reproduces the logged time (empty: it does)
    std::optional<double> rho;         // from the router token counts
    std::vector<StageMemoryCheck> memory;
    std::vector<std::string> notes;
    std::vector<std::string> warnings; // the run differs from the plan where calibration cannot follow it
};

// How far a prediction is from the measurement, in per cent, rounded to `digits` decimals as
// calibrate shows it (hapmoe calibrate and the studio's dialog), and never -0: a difference that
// rounds to none is none.
double roundedPercentOff(double predicted, double measured, int digits);

// Calibrates against the plan the log was produced with, costed with the switches "hapmoe
// estimate --plan" uses for it (the plan's prediction's), so that the written profile
// reproduces the logged time there; overlap switches of the run that differ are warnings.
// The base profile (if any) is kept and extended; its device efficiencies are replaced and
// its compute table times of the plan's device types scaled with them. Intervals logged
// during a batch-size ramp-up (global batch below the plan's) are skipped. Throws InputError
// (file = logFile, where = "line N") when the log cannot come from a run of this plan: a
// world size or parallel size the log states that differs from the plan's, a global batch
// other than the plan's after the ramp-up, a memory report of a rank the plan does not have,
// above its device's capacity or below half its stage's weights, gradients and optimizer
// states, an iteration faster than the plan's devices could compute
// the model's FLOPs at their peak, a logged throughput per GPU more than 2x off the plan's
// model FLOPs at the logged time, or a calibrated profile that `hapmoe validate` would refuse
// (written and read back as the other commands read it).
CalibrationResult calibrateFromLog(const MegatronLog& log, const PlanDocument& doc, const DeviceCatalog& catalog,
                                   const std::string& logFile, const Profile* base = nullptr);

} // namespace hapmoe
