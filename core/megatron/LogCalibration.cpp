#include "megatron/LogCalibration.h"

#include "cost/CostModel.h"
#include "util/Strings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

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

std::string trim(const std::string& s)
{
    const std::size_t a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos)
        return {};
    const std::size_t b = s.find_last_not_of(" \t\r");
    return s.substr(a, b - a + 1);
}

// The text of the field that follows `key`, up to the next '|' (or the end), trimmed.
std::string fieldText(const std::string& line, std::size_t keyEnd)
{
    const std::size_t bar = line.find('|', keyEnd);
    return trim(line.substr(keyEnd, bar == std::string::npos ? std::string::npos : bar - keyEnd));
}

// The whole text as a finite number, or nullopt.
std::optional<double> finiteNumber(const std::string& text)
{
    if (text.empty())
        return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(v))
        return std::nullopt;
    return v;
}

// A count as logged: 256, 1300, 1e+300.
std::string countText(double v)
{
    std::ostringstream os;
    os.precision(12);
    os << v;
    return os.str();
}

// 0.001, 2034.5: three decimals below 10, one above; 1.234e+12 from a billion up, so that a
// broken line's 1e308 reads as such and not as 309 digits.
std::string fixedText(double v)
{
    std::ostringstream os;
    if (std::fabs(v) >= 1e9) {
        os.precision(4);
        os << v;
        return os.str();
    }
    os.setf(std::ios::fixed);
    os.precision(v < 10 ? 3 : 1);
    os << v;
    return os.str();
}

// An iteration of a day or more is not a training run the cost model describes.
constexpr double kMaxIterationMs = 86'400'000.0;

// Reads the sizes of validate_args' "using world size: ..." line and of the arguments dump.
void readParallelSizes(const std::string& line, int lineNo, MegatronLog::ParallelSizes& sizes)
{
    auto set = [&](int& field, double v) {
        if (field == 0 && v >= 1 && v <= 1e9 && v == std::floor(v)) {
            field = static_cast<int>(v);
            if (sizes.line == 0)
                sizes.line = lineNo;
        }
    };
    if (const std::size_t at = line.find("using world size:"); at != std::string::npos) {
        // Comma-separated "name: value" pairs; the names are matched whole, so that
        // "encoder-tensor-model-parallel size" is not read as the tensor-parallel size.
        std::istringstream parts(line.substr(at + 6));
        std::string part;
        while (std::getline(parts, part, ',')) {
            const std::size_t colon = part.find(':');
            if (colon == std::string::npos)
                continue;
            const std::string name = trim(part.substr(0, colon));
            const auto v = finiteNumber(trim(part.substr(colon + 1)));
            if (!v)
                continue;
            if (name == "world size") set(sizes.world, *v);
            else if (name == "data-parallel size") set(sizes.dp, *v);
            else if (name == "context-parallel size") set(sizes.cp, *v);
            else if (name == "tensor-model-parallel size") set(sizes.tp, *v);
            else if (name == "pipeline-model-parallel size") set(sizes.pp, *v);
        }
        return;
    }
    // "  world_size ...................................... 32" (print_args)
    std::istringstream words(line);
    std::string name, dots, value, extra;
    if (!(words >> name >> dots >> value) || (words >> extra) || dots.size() < 3
        || dots.find_first_not_of('.') != std::string::npos)
        return;
    const auto v = finiteNumber(value);
    if (!v)
        return;
    if (name == "world_size") set(sizes.world, *v);
    else if (name == "data_parallel_size") set(sizes.dp, *v);
    else if (name == "context_parallel_size") set(sizes.cp, *v);
    else if (name == "tensor_model_parallel_size") set(sizes.tp, *v);
    else if (name == "pipeline_model_parallel_size") set(sizes.pp, *v);
    else if (name == "expert_model_parallel_size") set(sizes.ep, *v);
}

// "  overlap_grad_reduce ............................. True" (print_args).
void readSwitches(const std::string& line, int lineNo, MegatronLog::Switches& sw)
{
    std::istringstream words(line);
    std::string name, dots, value, extra;
    if (!(words >> name >> dots >> value) || (words >> extra) || dots.size() < 3
        || dots.find_first_not_of('.') != std::string::npos || (value != "True" && value != "False"))
        return;
    std::optional<bool>* field = name == "overlap_grad_reduce"    ? &sw.grad_reduce
                                 : name == "overlap_param_gather" ? &sw.param_gather
                                 : name == "tp_comm_overlap"      ? &sw.tp_comm
                                 : name == "overlap_p2p_comm"     ? &sw.p2p
                                                                  : nullptr;
    if (!field || field->has_value())
        return;
    *field = value == "True";
    if (sw.line == 0)
        sw.line = lineNo;
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
        const std::string where = "line " + std::to_string(lineNo);
        readParallelSizes(line, lineNo, log.sizes);
        readSwitches(line, lineNo, log.switches);
        // Iteration line: "iteration       20/    1000 | ... | elapsed time per iteration (ms): 1834.2 | ..."
        static const std::string kElapsed = "elapsed time per iteration (ms):";
        if (const std::size_t k = line.find(kElapsed); k != std::string::npos) {
            const std::string text = fieldText(line, k + kElapsed.size());
            const auto ms = finiteNumber(text);
            if (!ms || *ms <= 0 || *ms > kMaxIterationMs)
                throw InputError(fileName, where,
                                 "elapsed time per iteration (ms): expected a positive number of milliseconds, at most "
                                     + std::to_string(static_cast<long long>(kMaxIterationMs)) + " (one day), got \"" + text
                                     + "\"");
            MegatronLog::Interval iv;
            iv.elapsed_ms = *ms;
            iv.line = lineNo;
            // An iteration number outside any run's range is not one (and would not convert).
            if (auto it = numberAfter(line, "iteration"); it && *it >= 0 && *it <= 1e15)
                iv.iteration = static_cast<long long>(*it);
            iv.tflops_per_gpu = numberAfter(line, "throughput per GPU (TFLOP/s/GPU):");
            iv.global_batch_size = numberAfter(line, "global batch size:");
            log.intervals.push_back(iv);
            continue;
        }
        // Memory report: "[Rank 0] (after 2 iterations) memory (MB) | allocated: ... | max reserved: ..."
        if (line.find("memory (MB)") != std::string::npos && line.find("[Rank") != std::string::npos) {
            MegatronLog::MemoryReport m;
            m.line = lineNo;
            if (auto r = numberAfter(line, "[Rank")) m.rank = static_cast<int>(std::clamp(*r, -1.0, 1e9));
            const std::size_t fields = line.find("memory (MB)");
            // A field that is there must hold a number of MB >= 0.
            auto mb = [&](const std::string& key, const std::string& name) {
                const std::size_t at = line.find(key, fields);
                if (at == std::string::npos)
                    return 0.0;
                const std::string text = fieldText(line, at + key.size());
                const auto v = finiteNumber(text);
                if (!v || *v < 0)
                    throw InputError(fileName, where, name + " (MB): expected a number >= 0, got \"" + text + "\"");
                return *v;
            };
            m.allocated_mb = mb("| allocated:", "allocated");
            m.max_allocated_mb = mb("max allocated:", "max allocated");
            m.reserved_mb = mb("| reserved:", "reserved");
            m.max_reserved_mb = mb("max reserved:", "max reserved");
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
                    // (min, max) over the ranks in ms: anything else is not a timer line.
                    if (end2 != end + 1 && !name.empty() && std::isfinite(lo) && std::isfinite(hi) && lo >= 0 && lo <= hi)
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
            std::string word;
            while (nums >> word) {
                const auto v = finiteNumber(word);
                if (!v)
                    break;   // the counts end at the first word that is not a number
                if (*v < 0)
                    throw InputError(fileName, where, "tokens per expert: expected token counts >= 0, got \"" + word + "\"");
                counts.push_back(*v);
            }
            if (layer && *layer >= 0 && *layer <= 1e6 && counts.size() >= 2) {
                log.router_tokens[static_cast<int>(*layer)] = counts;
                log.router_lines[static_cast<int>(*layer)] = lineNo;
            }
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

    if (log.intervals.empty())
        throw InputError(logFile, "", "no \"elapsed time per iteration (ms)\" line: not a Megatron-LM training log");

    // The sizes the run states must be the plan's: a log of another run calibrates nothing.
    const MegatronLog::ParallelSizes& sizes = log.sizes;
    const std::string sizesAt = "line " + std::to_string(sizes.line);
    auto mismatch = [&](const std::string& what, int logged, int planned) {
        throw InputError(logFile, sizesAt, "the run has " + what + " " + std::to_string(logged) + ", the plan \"" + plan.name
                                               + "\" has " + what + " " + std::to_string(planned)
                                               + ": expected the log of a run of this plan");
    };
    if (sizes.world > 0 && sizes.world != plan.numDevices())
        mismatch("world size", sizes.world, plan.numDevices());
    if (sizes.pp > 0 && sizes.pp != plan.pp())
        mismatch("pipeline-model-parallel size", sizes.pp, plan.pp());
    // TP, CP, DP and EP are one number per run only when every stage has the same.
    auto same = [&](int StagePlan::*field) {
        for (const StagePlan& st : plan.stages)
            if (st.*field != plan.stages.front().*field)
                return 0;
        return plan.stages.front().*field;
    };
    for (auto [logged, field, what] : {std::tuple{sizes.tp, &StagePlan::tp, "tensor-model-parallel size"},
                                       std::tuple{sizes.cp, &StagePlan::cp, "context-parallel size"},
                                       std::tuple{sizes.dp, &StagePlan::dp, "data-parallel size"},
                                       std::tuple{sizes.ep, &StagePlan::ep, "expert-model-parallel size"}})
        if (const int planned = same(field); logged > 0 && planned > 0 && logged != planned)
            mismatch(what, logged, planned);

    // The global batch the run logged on every iteration line: another batch is another run
    // (the efficiency fitted to it would be off by the ratio).
    for (const auto& iv : log.intervals)
        if (iv.global_batch_size && *iv.global_batch_size != plan.global_batch_size)
            throw InputError(logFile, "line " + std::to_string(iv.line),
                             "the run has global batch size " + countText(*iv.global_batch_size) + ", the plan \"" + plan.name
                                 + "\" has global batch size " + std::to_string(plan.global_batch_size)
                                 + ": expected the log of a run of this plan");

    // The first interval includes start-up work (reference log format); use the later ones.
    std::vector<MegatronLog::Interval> used(log.intervals.begin() + (log.intervals.size() > 1 ? 1 : 0), log.intervals.end());
    if (log.intervals.size() == 1)
        r.notes.push_back("only one logging interval: it includes start-up work and is used as it is");
    double sum = 0;
    for (const auto& iv : used)
        sum += iv.elapsed_ms;
    r.intervals_used = static_cast<int>(used.size());
    r.measured_iteration_s = sum / static_cast<double>(used.size()) / 1000.0;

    // The overlap switches: those the plan's prediction assumed, replaced by those the run
    // printed, so that the efficiency is fitted to the run as it ran.
    CostOptions options;
    if (doc.prediction)
        options.overlap = doc.prediction->overlap;
    {
        const MegatronLog::Switches& sw = log.switches;
        std::vector<std::string> differ;
        auto take = [&](const std::optional<bool>& logged, bool& field, const char* flag) {
            if (logged && *logged != field)
                differ.push_back(std::string(*logged ? "with " : "without ") + flag);
            if (logged)
                field = *logged;
        };
        take(sw.grad_reduce, options.overlap.grad_reduce, "--overlap-grad-reduce");
        take(sw.param_gather, options.overlap.param_gather, "--overlap-param-gather");
        take(sw.tp_comm, options.overlap.tp_comm, "--tp-comm-overlap");
        // Megatron-LM prints overlap_p2p_comm False for plain 1F1B, where the cost model ignores it.
        if (plan.vpp > 1)
            take(sw.p2p, options.overlap.p2p, "p2p overlap");
        if (!differ.empty()) {
            std::string list;
            for (const std::string& d : differ)
                list += (list.empty() ? "" : ", ") + d;
            r.notes.push_back("the run's arguments (line " + std::to_string(sw.line) + ") say it ran " + list
                              + "; " + (doc.prediction ? "the plan's prediction" : "the cost model's defaults")
                              + " assumed otherwise, so the run is costed as it ran");
        }
    }

    const CostModel before(doc.model, doc.cluster, catalog, base, options);
    const Prediction predictedBefore = before.estimate(plan);
    r.predicted_before_s = predictedBefore.iteration_time_s;

    // No iteration is shorter than the model's FLOPs over the plan's devices at their peak
    // (MFU 1): MFU = FLOPs / (T x sum of peaks), so that time is the prediction's MFU x T.
    const double fastestS = predictedBefore.mfu * predictedBefore.iteration_time_s;
    if (fastestS > 0 && std::isfinite(fastestS))
        for (const auto& iv : used)
            if (iv.elapsed_ms / 1000.0 < fastestS)
                throw InputError(logFile, "line " + std::to_string(iv.line),
                                 "elapsed time per iteration " + fixedText(iv.elapsed_ms) + " ms is shorter than the "
                                     + fixedText(fastestS * 1000) + " ms the plan's " + std::to_string(plan.numDevices())
                                     + " devices need for the model's FLOPs at their peak: expected at least "
                                     + fixedText(fastestS * 1000) + " ms (is the log from this plan's run?)");

    // Router imbalance rho = max_i |T_i| / mean_j |T_j| per layer (paper section 3.2),
    // averaged over the layers: every MoE layer's slowest expert adds to the critical path.
    if (!log.router_tokens.empty()) {
        // Counts a router of this model cannot give are refused at their line: one count per
        // expert, and no expert above the layer's tokens (a top-k router sends each token to
        // k different experts, so the counts sum to k x tokens and each is at most the sum / k).
        const ModelSpec& m = doc.model;
        for (const auto& [layer, counts] : log.router_tokens) {
            const auto at = log.router_lines.find(layer);
            const std::string where = at == log.router_lines.end() ? std::string() : "line " + std::to_string(at->second);
            if (!m.isMoe())
                throw InputError(logFile, where, "tokens per expert: the plan's model \"" + m.name + "\" is dense: expected the log of a run of this plan");
            if (counts.size() != static_cast<std::size_t>(m.num_experts))
                throw InputError(logFile, where, "tokens per expert of layer " + std::to_string(layer) + ": expected "
                                                     + std::to_string(m.num_experts) + " counts, one per expert of \"" + m.name + "\", got "
                                                     + std::to_string(counts.size()));
            double sum = 0;
            for (double c : counts)
                sum += c / m.moe_router_topk;
            for (std::size_t e = 0; e < counts.size(); ++e)
                if (counts[e] > sum * (1 + 1e-9))
                    throw InputError(logFile, where, "tokens per expert of layer " + std::to_string(layer) + ": expert " + std::to_string(e)
                                                         + " has " + countText(counts[e]) + " tokens, more than the " + countText(sum)
                                                         + " tokens of the layer (the counts over top-" + std::to_string(m.moe_router_topk)
                                                         + "); expected counts of a top-" + std::to_string(m.moe_router_topk) + " router");
        }
        double rhoSum = 0;
        int layers = 0;
        for (const auto& [layer, counts] : log.router_tokens) {
            // The mean as a sum of c / n: never above the largest count, so it stays finite
            // where the plain sum of counts near the largest double would not.
            double mean = 0, peak = 0;
            for (double c : counts) {
                mean += c / static_cast<double>(counts.size());
                peak = std::max(peak, c);
            }
            if (mean <= 0)
                continue;
            rhoSum += std::max(1.0, peak / mean);
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
        const CostModel cm(doc.model, doc.cluster, catalog, &p, options);
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
        const CostModel cm(doc.model, doc.cluster, catalog, &r.profile, options);
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
            const std::string at = "line " + std::to_string(m.line);
            if (m.rank < 0 || m.rank >= rank)
                throw InputError(logFile, at, "memory report of rank " + std::to_string(m.rank) + ": expected a rank of the plan, 0 to "
                                                  + std::to_string(rank - 1) + " (is the log from this plan's run?)");
            std::size_t s2 = 0;
            while (s2 + 1 < rankStart.size() && rankStart[s2 + 1] <= m.rank) ++s2;
            const bool reserved = m.max_reserved_mb > 0;
            const double mb = reserved ? m.max_reserved_mb : m.max_allocated_mb;
            // A device holds at most its memory; more is a broken line, not a measurement.
            const double capacity = s2 < predictedBefore.stages.size() ? predictedBefore.stages[s2].memory.capacity : 0;
            if (capacity > 0 && mb * 1024.0 * 1024.0 > capacity)
                throw InputError(logFile, at, std::string(reserved ? "max reserved" : "max allocated") + " (MB): expected at most "
                                                  + fixedText(capacity / (1024.0 * 1024.0)) + ", the memory of a device of pipeline stage "
                                                  + std::to_string(s2) + " (" + plan.stages[s2].device_type + "), got "
                                                  + fixedText(mb));
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
        const CostModel cm(doc.model, doc.cluster, catalog, &r.profile, options);
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
