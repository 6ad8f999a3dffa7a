// hapmoe calibrate --log train.log --plan PLAN.json [-o profile.json]: reads a Megatron-LM
// training log, compares it with the cost model's prediction for the plan the run used,
// and writes a calibrated profile (device efficiency, memory overhead, rho).

#include "CliArgs.h"
#include "Commands.h"

#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "megatron/LogCalibration.h"

#include <iomanip>
#include <iostream>

namespace hapmoe::cli {

namespace {

constexpr const char* kHelp = R"HELP(Usage: hapmoe calibrate --log train.log --plan PLAN.json [-o profile.json]
                        [--profile BASE.json] [--devices FILE]

Reads a Megatron-LM training log: the "elapsed time per iteration (ms)" lines (the first
interval, which includes start-up, is skipped), the memory report lines ("[Rank r] ...
memory (MB) | ... | max reserved: ..."), the timers, and per-layer router token counts
when present. Prints predicted vs measured before and after calibration and writes a
hapmoe.profile: device efficiency so that the predicted iteration time matches the log,
the memory overhead per device type from the measured peak, and rho from the router counts.
A log that cannot come from a run of the plan is refused with its line (exit code 2): an
iteration time that is not a positive number (or is shorter than the plan's devices need at
their peak), a memory figure above the device's capacity or of a rank the plan does not
have, a world size or parallel size ("using world size: ...") other than the plan's.
The run is costed with the overlap switches of the plan's prediction, replaced by the run's
own where the log holds Megatron-LM's arguments dump ("overlap_grad_reduce ..... False",
likewise overlap_param_gather, tp_comm_overlap, overlap_p2p_comm); a note names those that
differ.

Options:
  --log FILE       the training log (required)
  --plan FILE      the hapmoe.plan the run used (required)
  -o FILE          write the calibrated profile
  --profile FILE   a profile to start from (its tables are kept)
  --devices FILE   a hapmoe.devices catalog adding or overriding device types
)HELP";

} // namespace

int cmdCalibrate(const Args& args)
{
    const CliArgs a(args, {"log", "plan", "o", "profile", "devices"}, {"help"});
    if (a.has("help")) {
        std::cout << kHelp;
        return Success;
    }
    if (!a.positionals().empty())
        throw UsageError("unexpected argument \"" + a.positionals().front() + "\"\n\n" + kHelp);
    const std::string logFile = a.required("log");
    const std::string planFile = a.required("plan");
    if (auto out = a.value("o"))
        checkOutputPath("-o", *out, givenInputs(a, {"profile", "devices"}, {{"--log", logFile}, {"--plan", planFile}}));
    const DeviceCatalog catalog = catalogFromArgs(a);
    Warnings warnings;
    const PlanDocument doc = readPlan(readTextFile(planFile), planFile, &warnings);
    validatePlanDocument(doc, catalog, planFile);
    std::optional<Profile> base;
    if (auto p = a.value("profile"))
        base = readProfile(readTextFile(*p), *p, &warnings);
    const MegatronLog log = parseMegatronLog(readTextFile(logFile), logFile);
    for (const auto& w : warnings)
        std::cerr << "warning: " << w << "\n";
    for (const auto& w : log.warnings)
        std::cerr << "warning: " << w << "\n";

    const CalibrationResult r = calibrateFromLog(log, doc, catalog, logFile, base ? &*base : nullptr);
    // The profile must be one the other commands read (router counts beyond a double's range
    // give a rho below 1, for example): refused before anything is printed or written.
    try {
        readProfile(writeProfile(r.profile), logFile);
    } catch (const InputError& e) {
        throw InputError(logFile, "", "the calibrated profile would not be valid (" + e.where() + ": " + e.detail()
                                          + "); check the log's figures");
    }
    auto pct = [](double predicted, double measured) { return 100.0 * (predicted - measured) / measured; };
    std::cout << std::fixed;
    std::cout << "log: " << logFile << ": " << log.intervals.size() << " intervals (" << r.intervals_used << " used), "
              << log.memory.size() << " memory reports, " << log.timers.size() << " timers, " << log.router_tokens.size()
              << " layers with router counts\n";
    std::cout << std::setprecision(1) << "iteration time: measured " << r.measured_iteration_s * 1000 << " ms\n";
    std::cout << "  predicted before " << r.predicted_before_s * 1000 << " ms (" << std::showpos
              << pct(r.predicted_before_s, r.measured_iteration_s) << std::noshowpos << "%)\n";
    std::cout << "  predicted after  " << r.predicted_after_s * 1000 << " ms (" << std::showpos << std::setprecision(2)
              << pct(r.predicted_after_s, r.measured_iteration_s) << std::noshowpos << "%)\n";
    std::cout << std::setprecision(3) << "device efficiency (fraction of BF16 peak):";
    for (const auto& [type, e] : r.profile.device_efficiency)
        std::cout << " " << type << " " << e;
    std::cout << " (x" << r.efficiency_scale << " the catalog default)\n";
    if (r.rho)
        std::cout << "router imbalance rho: " << *r.rho << "\n";
    for (const auto& [name, t] : log.timers)
        std::cout << std::setprecision(1) << "timer " << name << ": " << t.first << " - " << t.second << " ms\n";
    if (!r.memory.empty()) {
        std::cout << std::setprecision(2) << "memory per stage (GiB): measured / predicted before / after\n";
        for (const StageMemoryCheck& m : r.memory)
            std::cout << "  stage " << m.stage << " (" << m.device_type << "): " << m.measured_gib << " / " << m.predicted_before_gib
                      << " / " << m.predicted_after_gib << "\n";
        for (const MemoryCalibration& mc : r.profile.memory)
            std::cout << "  " << mc.device_type << ": fixed overhead " << mc.fixed_overhead_gib << " GiB\n";
    }
    for (const std::string& n : r.notes)
        std::cout << "note: " << n << "\n";
    if (auto out = a.value("o")) {
        saveFileAtomically(*out, writeProfile(r.profile));
        std::cout << "wrote " << *out << "\n";
    }
    return Success;
}

} // namespace hapmoe::cli
