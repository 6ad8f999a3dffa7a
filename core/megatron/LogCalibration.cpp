#include "megatron/LogCalibration.h"

#include "cost/CostModel.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

// Line formats: ../shared/reference/megatron-log-format.md (Megatron-LM
// megatron/training/training.py training_log and report_memory; memory in MB = 2^20 bytes).

namespace hapmoe {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The number that follows `key` on the line (after optional spaces), or nullopt.
std::optional<double> numberAfter(const std::string& line, const std::string& key, std::size_t from = 0)
{
    const std::size_t k = line.find(key, from);
    if (k == std::string::npos)
        return std::nullopt;
    const char* start = line.c_str() + k + key.size();
    char* end = nullptr;
    const double v = std::strtod(start, &end);
    if (end == start || !std::isfinite(v))
        return std::nullopt;
    return v;
}

std::string lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string trim(const std::string& s)
{
    const std::size_t a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos)
        return {};
    const std::size_t b = s.find_last_not_of(" \t\r");
    return s.substr(a, b - a + 1);
}

} // namespace

MegatronLog parseMegatronLog(std::string_view text, const std::string& fileName)
{
    MegatronLog log;
    std::istringstream in{std::string(text)};
    std::string line;
    int lineNo = 0;
    while (std::getline(in, line)) {
        ++lineNo;
        // Iteration line: "iteration       20/    1000 | ... | elapsed time per iteration (ms): 1834.2 | ..."
        if (auto ms = numberAfter(line, "elapsed time per iteration (ms):")) {
            MegatronLog::Interval iv;
            iv.elapsed_ms = *ms;
            iv.line = lineNo;
            if (auto it = numberAfter(line, "iteration"))
                iv.iteration = static_cast<long long>(*it);
            iv.tflops_per_gpu = numberAfter(line, "throughput per GPU (TFLOP/s/GPU):");
            if (*ms > 0)
                log.intervals.push_back(iv);
            else
                log.warnings.push_back(fileName + ":" + std::to_string(lineNo) + ": iteration time " + std::to_string(*ms) + " ms ignored");
            continue;
        }
        // Memory report: "[Rank 0] (after 2 iterations) memory (MB) | allocated: ... | max reserved: ..."
        if (line.find("memory (MB)") != std::string::npos && line.find("[Rank") != std::string::npos) {
            MegatronLog::MemoryReport m;
            m.line = lineNo;
            if (auto r = numberAfter(line, "[Rank")) m.rank = static_cast<int>(*r);
            const std::size_t fields = line.find("memory (MB)");
            m.allocated_mb = numberAfter(line, "| allocated:", fields).value_or(0);
            m.max_allocated_mb = numberAfter(line, "max allocated:", fields).value_or(0);
            m.reserved_mb = numberAfter(line, "| reserved:", fields).value_or(0);
            m.max_reserved_mb = numberAfter(line, "max reserved:", fields).value_or(0);
            if (m.max_reserved_mb > 0 || m.max_allocated_mb > 0)
                log.memory.push_back(m);
            continue;
        }
        // Timers: "    forward-backward ......: (1799.56, 1799.91)"
        if (const std::size_t dots = line.find("..."); dots != std::string::npos) {
            const std::size_t colon = line.find(':', dots);
            const std::size_t open = line.find('(', colon == std::string::npos ? dots : colon);
            if (colon != std::string::npos && open != std::string::npos) {
                const std::string name = trim(line.substr(0, dots));
                const char* p = line.c_str() + open + 1;
                char* end = nullptr;
                const double lo = std::strtod(p, &end);
                if (end != p && *end == ',') {
                    char* end2 = nullptr;
                    const double hi = std::strtod(end + 1, &end2);
                    if (end2 != end + 1 && !name.empty())
                        log.timers[name] = {lo, hi};
                }
            }
            continue;
        }
        // Per-layer router statistics: "... layer 3 ... tokens per expert: 1021 998 1040 ..."
        const std::string l = lower(line);
        if (const std::size_t tpe = l.find("tokens per expert"); tpe != std::string::npos) {
            const std::size_t lay = l.find("layer");
            const std::size_t colon = l.find(':', tpe);
            if (lay == std::string::npos || colon == std::string::npos)
                continue;
            const auto layer = numberAfter(l, "layer", lay);
            std::vector<double> counts;
            std::string rest = l.substr(colon + 1);
            for (char& c : rest)
                if (c == ',' || c == '[' || c == ']') c = ' ';
            std::istringstream nums(rest);
            double v = 0;
            while (nums >> v)
                if (v >= 0 && std::isfinite(v)) counts.push_back(v);
            if (layer && counts.size() >= 2)
                log.router_tokens[static_cast<int>(*layer)] = counts;
        }
    }
    if (log.intervals.empty())
        throw InputError(fileName, "", "no \"elapsed time per iteration (ms)\" line: not a Megatron-LM training log");
    return log;
}

CalibrationResult calibrateFromLog(const MegatronLog& log, const PlanDocument& doc, const DeviceCatalog& catalog,
                                   const std::string& logFile, const Profile* base)
{
    CalibrationResult r;
    const Plan& plan = doc.plan;
    if (plan.stages.empty())
        throw InputError(logFile, "plan", "the plan has no stage");
    r.profile = base ? *base : Profile{};
    r.profile.name = "calibrated from " + logFile;
    r.profile.source = "hapmoe calibrate: Megatron-LM log " + logFile + " with plan \"" + plan.name + "\"";

    // The first interval includes start-up work (reference log format); use the later ones.
    std::vector<MegatronLog::Interval> used(log.intervals.begin() + (log.intervals.size() > 1 ? 1 : 0), log.intervals.end());
    if (log.intervals.size() == 1)
        r.notes.push_back("only one logging interval: it includes start-up work and is used as it is");
    double sum = 0;
    for (const auto& iv : used)
        sum += iv.elapsed_ms;
    r.intervals_used = static_cast<int>(used.size());
    r.measured_iteration_s = sum / static_cast<double>(used.size()) / 1000.0;

    {
        const CostModel before(doc.model, doc.cluster, catalog, base);
        r.predicted_before_s = before.estimate(plan).iteration_time_s;
    }

    // Router imbalance rho = max_i |T_i| / mean_j |T_j| per layer (paper section 3.2),
    // averaged over the layers: every MoE layer's slowest expert adds to the critical path.
    if (!log.router_tokens.empty()) {
        double rhoSum = 0;
        int layers = 0;
        for (const auto& [layer, counts] : log.router_tokens) {
            double total = 0, peak = 0;
            for (double c : counts) {
                total += c;
                peak = std::max(peak, c);
            }
            if (total <= 0)
                continue;
            rhoSum += peak / (total / static_cast<double>(counts.size()));
            ++layers;
        }
        if (layers > 0) {
            r.rho = rhoSum / layers;
            r.profile.router_imbalance = r.rho;
            r.notes.push_back("rho " + std::to_string(*r.rho).substr(0, 5) + " from token counts of " + std::to_string(layers)
                              + " MoE layers");
        }
    }

    // Device efficiency: one scale s over the catalog defaults of the plan's device types
    // (one iteration time cannot tell the types apart), found by bisection on log s so that
    // the predicted iteration time equals the measured one. T(s) decreases with s.
    std::vector<std::pair<std::string, double>> types;
    for (const StagePlan& st : plan.stages) {
        const DeviceType& t = catalog.get(st.device_type, "plan stage device type");
        if (std::none_of(types.begin(), types.end(), [&](const auto& p) { return p.first == t.name; }))
            types.push_back({t.name, t.default_efficiency > 0 ? t.default_efficiency : 0.5});
    }
    double maxDefault = 0;
    for (const auto& [name, e] : types)
        maxDefault = std::max(maxDefault, e);
    auto predict = [&](double s) {
        Profile p = r.profile;
        for (const auto& [name, e] : types)
            p.device_efficiency[name] = s * e;
        const CostModel cm(doc.model, doc.cluster, catalog, &p);
        return cm.estimate(plan).iteration_time_s;
    };
    const double hi = 1.0 / maxDefault;      // no device above its peak
    const double lo = hi / 500.0;
    const double target = r.measured_iteration_s;
    double s = 1;
    const double tHi = predict(hi);
    const double tLo = predict(lo);
    if (target <= tHi) {
        s = hi;
        r.notes.push_back("the run is faster than the model allows at peak efficiency: communication or memory-bound terms are "
                          "over-predicted for this cluster");
    } else if (target >= tLo) {
        s = lo;
        r.notes.push_back("the run is slower than the model allows at 1/500 of the default efficiency");
    } else {
        double a = std::log(lo), b = std::log(hi);
        for (int it = 0; it < 100; ++it) {
            const double mid = 0.5 * (a + b);
            const double t = predict(std::exp(mid));
            if (std::abs(t - target) <= 1e-6 * target) {
                a = b = mid;
                break;
            }
            if (t > target)
                a = mid;   // too slow: raise the efficiency
            else
                b = mid;
        }
        s = std::exp(0.5 * (a + b));
    }
    r.efficiency_scale = s;
    for (const auto& [name, e] : types)
        r.profile.device_efficiency[name] = s * e;

    // Memory: max reserved per stage against the prediction; the difference becomes the
    // fixed overhead of the device type (mean over its stages).
    {
        const CostModel cm(doc.model, doc.cluster, catalog, &r.profile);
        const Prediction p = cm.estimate(plan);
        r.predicted_after_s = p.iteration_time_s;
        std::vector<double> measured(plan.stages.size(), 0.0);
        std::vector<int> rankStart;
        int rank = 0;
        for (const StagePlan& st : plan.stages) {
            rankStart.push_back(rank);
            rank += st.numDevices();
        }
        for (const auto& m : log.memory) {
            if (m.rank < 0 || m.rank >= rank) {
                r.notes.push_back("memory report of rank " + std::to_string(m.rank) + " is outside the plan's " + std::to_string(rank)
                                  + " ranks; ignored");
                continue;
            }
            std::size_t s2 = 0;
            while (s2 + 1 < rankStart.size() && rankStart[s2 + 1] <= m.rank) ++s2;
            const double mb = m.max_reserved_mb > 0 ? m.max_reserved_mb : m.max_allocated_mb;
            measured[s2] = std::max(measured[s2], mb * 1024.0 * 1024.0);
        }
        std::map<std::string, std::pair<double, int>> diff;   // type -> (sum of new overhead, count)
        for (std::size_t i = 0; i < plan.stages.size() && i < p.stages.size(); ++i) {
            if (measured[i] <= 0)
                continue;
            const MemoryBreakdown& mem = p.stages[i].memory;
            const std::string type = catalog.get(plan.stages[i].device_type).name;
            const double overhead = std::max(0.0, mem.overhead + measured[i] - mem.total());
            diff[type].first += overhead;
            diff[type].second += 1;
            r.memory.push_back({static_cast<int>(i), type, measured[i] / kGiB, mem.total() / kGiB, 0});
        }
        for (const auto& entry : diff) {
            const std::string& type = entry.first;
            const std::pair<double, int>& acc = entry.second;
            MemoryCalibration mc;
            mc.device_type = type;
            mc.fixed_overhead_gib = acc.first / acc.second / kGiB;
            mc.activation_factor = 1.0;
            for (const MemoryCalibration& old : r.profile.memory)
                if (old.device_type == type && old.activation_factor > 0)
                    mc.activation_factor = old.activation_factor;
            r.profile.memory.erase(std::remove_if(r.profile.memory.begin(), r.profile.memory.end(),
                                                  [&](const MemoryCalibration& m) { return m.device_type == type; }),
                                   r.profile.memory.end());
            r.profile.memory.push_back(mc);
        }
    }
    if (!r.memory.empty()) {
        const CostModel cm(doc.model, doc.cluster, catalog, &r.profile);
        const Prediction p = cm.estimate(plan);
        r.predicted_after_s = p.iteration_time_s;
        for (StageMemoryCheck& m : r.memory)
            m.predicted_after_gib = p.stages[static_cast<std::size_t>(m.stage)].memory.total() / kGiB;
    } else {
        r.notes.push_back("no memory report in the log: memory is not calibrated");
    }
    r.time_matched = std::abs(r.predicted_after_s - r.measured_iteration_s) <= 1e-3 * r.measured_iteration_s;
    return r;
}

} // namespace hapmoe
