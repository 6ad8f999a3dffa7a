// hapmoe calibrate --log train.log --plan PLAN.json [-o profile.json]: reads a Megatron-LM
// training log, compares it with the cost model's prediction for the plan the run used,
// and writes a calibrated profile (device efficiency and compute tables, memory overhead, rho).
// Exit 0, 1 when no calibration reproduces the logged time, 2 on bad input.

#include "CliArgs.h"
#include "util/Strings.h"
#include "Commands.h"

#include "cost/CostModel.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "megatron/LogCalibration.h"
#include "megatron/ShellQuote.h"

#include <iomanip>
#include <iostream>

namespace hapmoe::cli {

namespace {

constexpr const char* kHelp = R"HELP(Usage: hapmoe calibrate --log train.log --plan PLAN.json [-o profile.json]
                        [--profile BASE.json] [--devices FILE]

Reads a Megatron-LM training log: the "elapsed time per iteration (ms)" lines, the memory
report lines ("[Rank r] ... memory (MB) | ... | max reserved: ..."; several ranks' reports
run together on one line are split at each "[Rank"), and per-layer router token counts
when present. The timers ("forward-backward ...: (min, max)") are printed, not fitted.
The measured iteration time is the median of the intervals of the plan's global batch: the
first interval (start-up) and those of a batch-size ramp-up are skipped (a log of one
interval is calibrated from it, with a warning that it includes start-up work). A log holding
several runs (a start-up line after an iteration, or an iteration number going backwards,
starts one) is read from its last complete run, with a warning; a last line without an end
of line (a log cut while written) is left out with a warning.

Prints predicted vs measured before and after calibration and writes a hapmoe.profile that
reproduces the logged time with "hapmoe estimate --plan PLAN --profile OUT" (the command is
printed): one scale s fitted over the plan's device types, the device efficiency s x the
catalog default (printed against the efficiency the prediction before used: the analytic
model takes 0.935 of the catalog figure) and the base profile's compute table times of those
types / s (a fit above the catalog's measured GEMM maximum is warned of); the memory
overhead per device type from the measured peak, the most any of its stages needs, so that
no stage is predicted below its log (the activation factor is kept, not fitted); rho from
the router counts. The run is costed with the plan's own overlap
switches (its prediction's "overlap", as estimate uses them); where Megatron-LM's arguments
dump ("overlap_grad_reduce ..... False", likewise overlap_param_gather, tp_comm_overlap,
overlap_p2p_comm) says the run used others, a warning names them.

A log that cannot come from a run of the plan is refused with its line (exit code 2): an
iteration time that is not a positive number (or is shorter than the plan's devices need at
their peak), a memory figure above the device's capacity, below half the stage's weights,
gradients and optimizer states (GB written as MB?) or of a rank the plan does not have, a world size or parallel size ("using world size: ...") other than the plan's, a
global batch other than the plan's after the ramp-up, a logged "throughput per GPU
(TFLOP/s/GPU)" more than 2x off the plan's model FLOPs (Megatron-LM's
num_floating_point_operations) at the logged time. A base profile is checked as "hapmoe
validate" checks it (exit code 2).

Exit code 1: no scale reproduces the logged time within 0.1% (the run is faster than the
model allows at peak efficiency, or slower than at 1/500 of it); the comparison is printed,
a warning says why, and no profile is written.

Options:
  --log FILE       the training log (required)
  --plan FILE      the hapmoe.plan the run used (required)
  -o FILE          write the calibrated profile
  --profile FILE   a profile to start from (its tables are kept, scaled with the fit)
  --devices FILE   a hapmoe.devices catalog adding or overriding device types
  --saved-plan N   --plan may be a project (.hapmoe): its saved plan N, from 1 (default 1)
)HELP";

// No scale reproduces the logged time (kHelp): a result, like estimate's "does not fit".
constexpr int kFitFailed = 1;

} // namespace

int cmdCalibrate(const Args& args)
{
    const CliArgs a(args, {"log", "plan", "o", "profile", "devices", "saved-plan"}, {"help"});
    if (a.has("help")) {
        std::cout << kHelp;
        return Success;
    }
    if (!a.positionals().empty())
        throw UsageError("unexpected argument \"" + a.positionals().front() + "\"", kHelp);
    const std::string logFile = a.required("log");
    const std::string planFile = a.required("plan");
    if (auto out = a.value("o"))
        checkOutputPath("-o", *out, givenInputs(a, {"profile", "devices"}, {{"--log", logFile}, {"--plan", planFile}}));
    Warnings warnings;
    std::optional<Profile> projectProfile;
    const PlanDocument doc = readPlanFile(a, planFile, warnings, &projectProfile);
    const DeviceCatalog catalog = catalogForPlan(a, doc, planFile);
    validatePlanDocument(doc, catalog, planFile);
    std::optional<Profile> base;
    if (auto p = a.value("profile")) {
        base = readCommandProfile(*p, doc.model, catalog, warnings);
    } else if (projectProfile) {
        // A project's saved plan was costed with the project's profile: the calibration starts from it.
        base = readCommandProfile(planFile, doc.model, catalog, warnings, std::move(projectProfile));
        std::cerr << "note: the project's profile is the base of the calibration, as its saved plans were costed with it "
                     "(--profile FILE gives another)\n";
    }
    const MegatronLog log = parseMegatronLog(readTextFile(logFile), logFile);
    for (const auto& w : warnings)
        std::cerr << "warning: " << printableText(w) << "\n";
    for (const auto& w : log.warnings)   // of the log's lines: named with the log, as its errors are
        std::cerr << "warning: " << printableText(logFile + ": " + w) << "\n";

    const CalibrationResult r = calibrateFromLog(log, doc, catalog, logFile, base ? &*base : nullptr);
    for (const auto& w : r.warnings)
        std::cerr << "warning: " << printableText(w) << "\n";
    std::cout << std::fixed;
    std::cout << "log: " << logFile << ": " << log.intervals.size() << " intervals (" << r.intervals_used << " used), "
              << log.memory.size() << " memory reports, " << log.timers.size() << " timers, " << log.router_tokens.size()
              << " layers with router counts\n";
    std::cout << std::setprecision(1) << "iteration time: measured " << r.measured_iteration_s * 1000 << " ms\n";
    std::cout << "  predicted before " << r.predicted_before_s * 1000 << " ms (" << std::showpos
              << roundedPercentOff(r.predicted_before_s, r.measured_iteration_s, 1) << std::noshowpos << "%)\n";
    std::cout << "  predicted after  " << r.predicted_after_s * 1000 << " ms (" << std::showpos << std::setprecision(2)
              << roundedPercentOff(r.predicted_after_s, r.measured_iteration_s, 2) << std::noshowpos << "%)\n";
    // Against what the prediction before used (the analytic model takes 0.935 of the catalog's
    // figure, a base profile its own), and against the catalog figure the fit scales.
    std::cout << std::setprecision(3) << "device efficiency (large-GEMM fraction of BF16 peak):";
    for (const auto& [type, e] : r.profile.device_efficiency) {
        std::cout << " " << type << " " << e;
        if (const auto before = r.efficiency_before.find(type); before != r.efficiency_before.end() && before->second > 0) {
            // Say where the figure before came from: the catalog's MAMF times 0.935, or a base profile.
            std::cout << " (was " << before->second;
            const DeviceType* t = catalog.find(type);
            if (r.efficiency_before_from_base.count(type) || !t)
                std::cout << ", the base profile's";
            else
                std::cout << ", 0.935 x the catalog's " << t->default_efficiency;
            std::cout << ": x" << e / before->second << ")";
        }
    }
    std::cout << "\n";
    // One speed scale for all the plan's types (one iteration time cannot tell them apart);
    // with compute tables the tables carry it (the line below).
    if (r.table_scale == 1)
        std::cout << "  one scale for the plan's device types: x" << r.efficiency_scale
                  << " each type's catalog MAMF figure (its measured maximum achievable GEMM rate)\n";
    if (r.table_scale != 1)
        std::cout << std::setprecision(4) << "compute table times of the plan's device types: x" << r.table_scale << "\n";
    if (r.rho)
        std::cout << std::setprecision(3) << "router imbalance rho: " << *r.rho << "\n";
    for (const auto& [name, t] : log.timers)
        std::cout << std::setprecision(1) << "timer " << name << ": " << t.first << " - " << t.second << " ms\n";
    if (!r.memory.empty()) {
        std::cout << std::setprecision(2) << "memory per stage (GiB): measured / predicted before / after, of capacity\n";
        for (const StageMemoryCheck& m : r.memory)
            std::cout << "  stage " << m.stage << " (" << m.device_type << "): " << m.measured_gib << " / " << m.predicted_before_gib
                      << " / " << m.predicted_after_gib << " of " << m.capacity_gib << "\n";
        for (const MemoryCalibration& mc : r.profile.memory)
            std::cout << "  " << mc.device_type << ": fixed overhead " << mc.fixed_overhead_gib << " GiB\n";
    }
    for (const std::string& n : r.notes)
        std::cout << "note: " << n << "\n";
    if (!r.fit_failure.empty()) {
        std::cerr << "warning: the calibration failed: " << r.fit_failure << "; no profile is written\n";
        return kFitFailed;
    }
    if (auto out = a.value("o")) {
        saveFileAtomically(*out, writeProfile(r.profile));
        std::cout << "wrote " << *out << "\n";
        std::string command = "hapmoe estimate --plan " + ShellQuote::word(planFile) + " --profile " + ShellQuote::word(*out);
        if (auto d = a.value("devices"))
            command += " --devices " + ShellQuote::word(*d);
        std::cout << "reproduces the logged " << std::setprecision(1) << r.measured_iteration_s * 1000 << " ms: " << command << "\n";
    }
    return Success;
}

} // namespace hapmoe::cli
