// hapmoe plan: searches the fastest feasible plan (HS-DP, paper section 3.4) and prints it
// as a stage table beside the baselines, or writes a hapmoe.plan document.

#include "CliArgs.h"
#include "Commands.h"

#include "cost/CostModel.h"
#include "hardware/ClusterTopology.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "io/Presets.h"
#include "megatron/ScriptImport.h"
#include "plan/PlanRelation.h"
#include "search/Search.h"
#include "util/Strings.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <string>

namespace hapmoe::cli {

namespace {

constexpr const char* kPlanUsage = R"(Usage: hapmoe plan --model M --cluster C [options]

Searches the fastest feasible parallel plan (HS-DP) and compares it with the baselines.

  --model M              model preset name or hapmoe.model file
  --script S             a Megatron-LM launch script instead of --model: its model, and its
                         configuration estimated as "current" beside the best plan
                         (not together with --model); every plan, the current one included,
                         is costed as its exported launcher runs: data-parallel overlap on,
                         the script's --tp-comm-overlap (stages of one TP size) and p2p overlap
  --script-args WORDS    the script's arguments, as `bash SCRIPT WORDS` gets them (split
                         as bash splits words; a script that reads $1 takes its value)
  --script-env NAME=VALUE  a variable of the script's environment (repeatable)
  --cluster C            cluster preset, hapmoe.cluster file, or shorthand "H800:2x8,910B:2x8"
  --profile P            hapmoe.profile with measured tables (default: analytic)
  --devices FILE         a hapmoe.devices catalog adding or overriding device types
  --target T             megatron | flagscale | any (default any: the best the cluster allows)
  --top K                number of distinct plans to return, 1 to 1000 (default 1)
  --algorithm A          hs-dp | exhaustive | uniform | metis-style (default hs-dp;
                         exhaustive tries every stage sequence, a time exponential in the
                         devices: Mixtral-S on H800:1x2,A100-80GB:1x2 takes 0.6 s, on
                         H800:1x2,A100-80GB:1x4 30 s, on H800:1x4,A100-80GB:1x4 minutes;
                         so for a few devices (tests, an oracle for HS-DP) or with
                         --time-limit, which returns the best plan found so far)
  --exact                turn off the load-balance and communication prunings
                         (the --top plans are then the exact K best, at a cost in time)
  --exact-check W        after the pruned search, search again without the prunings for at
                         most W of work (partial plans extended, more of them with --top K;
                         a tenth for each stage option refused for memory; counted, not
                         timed: default 1000000, at most 2 s on 2 cores for the paper's
                         clusters, a few seconds with --top 100; 0 = off); when that
                         finishes the plans are the exact best, as with --exact. Not
                         tried when the pruned search alone did more work, or when
                         --time-limit leaves less than twice its time
  --delta D              load-balance tolerance (default 0.2)
  --eta E                heterogeneous communication threshold (default 2)
  --time-limit S         stop after S seconds with the best plan so far (a finite number;
                         0 or more than 1e7 s, about four months, means no limit;
                         default 600 s)
  --gbs N                global batch size (default: the model's)
  --mbs N                micro-batch size of the first mesh (default: the model's);
                         N,N,... searches each of these sizes and keeps the fastest plans
                         over them, baselines included; "auto" searches 1, 2, 4, 8 and the
                         model's own (those that divide the global batch). Each size is a
                         search of its own
  --max-vpp N            also try Megatron-LM's interleaved 1F1B on the plans found: each
                         plan Megatron-LM can run (PP of 2 or more, micro-batches a multiple
                         of PP) at 2 to N virtual stages per pipeline rank, its layers spread
                         evenly over the chunks, with the least recompute that fits; the
                         fastest form is kept (1 to 512; default 1: plain 1F1B, as the paper)
  --fp8 F                none | hybrid | e4m3: the linear layers' GEMMs in FP8 (Megatron-LM
                         --fp8-format; default: the model's or the script's training section).
                         Device types without FP8 tensor cores are left out of the search
  --fp8-recipe R         delayed | tensorwise | mxfp8 | blockwise: how Transformer Engine scales
                         the FP8 tensors (Megatron-LM --fp8-recipe; default the model's). mxfp8
                         runs on compute capability 10.x, blockwise on 9.0 or higher: other
                         device types are left out
  --memory-headroom F    keep the fraction F (0 to 0.5) of every device's memory free: a
                         plan fits when each device's total is at most (1 - F) x its
                         memory (default 0: the model's 2 GiB runtime overhead only)
  --optimizer-offload W  never | if-needed | always | fastest: optimizer states and their Adam
                         step in host memory (Megatron-Core --optimizer-cpu-offload); default
                         if-needed, only when the search finds no plan without it; fastest
                         searches the devices and a quarter, half and all offloaded and keeps
                         the fastest plans (each pass looks only for plans faster than the
                         --top-th so far)
  --json                 print the hapmoe.plan document instead of the table (when no plan
                         is feasible: the document with "plan": null and
                         search.no_plan_reason, exit code 1)
  -o FILE                also write the hapmoe.plan document to FILE (when no plan is
                         feasible: the document with "plan": null, as --json prints it)

Exit codes: 0 plan found, 1 no feasible plan, 2 bad input. Ctrl-C (SIGINT) or SIGTERM
stops the search: the best plans so far are printed and written (-o), and the exit code is
130 or 143.
)";

constexpr double kNoTimeLimitAbove = 1e7;   // seconds
// Seconds without --time-limit: a bound, not a budget. HS-DP finds the paper's plans in
// under two seconds with its exact check, but a cluster of a dozen device types or a model of a thousand layers
// can take far longer, and the exhaustive algorithm's time is exponential in the devices.
constexpr double kDefaultTimeLimit = 600;
// The alternatives --top may ask for: each is a whole plan with its prediction (a thousand
// are about 9 MB of JSON, which every command reads back; the studio lists at most 50).
constexpr int kMaxTop = 1000;

// Options of "plan"; other commands that search (e.g. with a script) extend these sets.
const std::set<std::string>& planValueOptions()
{
    static const std::set<std::string> s = {"model", "cluster", "profile", "target", "top", "algorithm", "delta",
                                            "eta", "time-limit", "gbs", "mbs", "o", "script", "script-args",
                                            "optimizer-offload", "devices", "memory-headroom", "exact-check", "fp8", "fp8-recipe", "max-vpp"};
    return s;
}

const std::set<std::string>& planSwitches()
{
    static const std::set<std::string> s = {"exact", "json", "help"};
    return s;
}

Target parseTarget(const std::string& v)
{
    if (v == "megatron")
        return Target::Megatron;
    if (v == "flagscale")
        return Target::FlagScale;
    if (v == "any")
        return Target::Any;
    throw UsageError("--target: expected megatron, flagscale or any, got \"" + v + "\"");
}

Algorithm parseAlgorithm(const std::string& v)
{
    if (v == "hs-dp")
        return Algorithm::HsDp;
    if (v == "exhaustive")
        return Algorithm::Exhaustive;
    if (v == "uniform")
        return Algorithm::Uniform;
    if (v == "metis-style")
        return Algorithm::MetisStyle;
    throw UsageError("--algorithm: expected hs-dp, exhaustive, uniform or metis-style, got \"" + v + "\"");
}

OptimizerOffload parseOffload(const std::string& v)
{
    for (OptimizerOffload o : {OptimizerOffload::Never, OptimizerOffload::IfNeeded, OptimizerOffload::Always, OptimizerOffload::Fastest})
        if (v == toString(o))
            return o;
    throw UsageError("--optimizer-offload: expected never, if-needed, always or fastest, got \"" + v + "\"");
}

std::string fmt(const char* f, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// A share of the optimizer offloaded, as the search tries them (a quarter, half, all).
std::string offloadShareText(double share)
{
    if (share == 0.25)
        return "a quarter";
    if (share == 0.5)
        return "half";
    if (share == 1.0)
        return "all";
    return fmt("%.0f", share * 100) + " %";
}

std::string devicesText(const StagePlan& st, const Cluster& cluster)
{
    std::string out;
    // Long node lists (large clusters) show their first two slots and a count of the rest.
    const std::size_t shown = st.devices.size() > 3 ? 2 : st.devices.size();
    for (std::size_t k = 0; k < shown; ++k) {
        const DeviceSlot& s = st.devices[k];
        const Node* n = cluster.node(s.node);
        if (!out.empty())
            out += ",";
        out += (n ? n->host : std::to_string(s.node)) + "[" + std::to_string(s.first_local);
        if (s.count > 1)
            out += "-" + std::to_string(s.first_local + s.count - 1);
        out += "]";
    }
    if (shown < st.devices.size())
        out += ",... (" + std::to_string(st.devices.size()) + " nodes)";
    return out;
}

std::string pad(std::string s, std::size_t w)
{
    if (s.size() < w)
        s += std::string(w - s.size(), ' ');
    return s;
}

// `experts`: the model has experts; a dense model's table has no EP, ETP and EDP columns.
// note: a line under the plan's heading (what sets it apart from an earlier alternative).
void printPlan(std::ostream& os, const RankedPlan& rp, const Cluster& cluster, const ModelSpec& model,
               const std::string& note = {})
{
    const bool experts = model.isMoe();
    const Plan& p = rp.plan;
    const Prediction& pr = rp.prediction;
    os << p.name << "  (target " << toString(p.target) << ", PP " << p.pp() << (p.vpp > 1 ? ", VPP " + std::to_string(p.vpp) : std::string())
       << ", " << p.numDevices() << " devices, "
       << pr.num_microbatches << (pr.num_microbatches == 1 ? " micro-batch of " : " micro-batches of ");
    const int sequences = p.stages.empty() ? 0 : p.stages.front().dp * p.stages.front().micro_batch_size;
    os << sequences << (sequences == 1 ? " sequence" : " sequences");
    if (p.optimizer_offload_fraction > 0)
        os << ", optimizer " << (p.optimizer_offload_fraction < 1 ? fmt("%.0f%% ", 100 * p.optimizer_offload_fraction) : "")
           << "in host memory: " << fmt("%.0f", pr.host_memory_per_node_gib)
           << (pr.host_memory_capacity_gib > 0 ? fmt(" of %.0f", pr.host_memory_capacity_gib) : std::string()) << " GiB on the busiest node";
    os << ")\n";
    if (!note.empty())
        os << "  " << note << "\n";
    // The devices column is as wide as its longest entry, so long node lists keep the table aligned.
    std::vector<std::string> devices;
    std::size_t devWidth = 25;
    for (const StagePlan& st : p.stages) {
        devices.push_back(std::to_string(st.numDevices()) + " " + devicesText(st, cluster));
        devWidth = std::max(devWidth, devices.back().size() + 1);
    }
    const std::vector<std::string> layerRanges = stageLayerRanges(p, model.mtp_num_layers);
    std::size_t layersWidth = 8;
    for (const std::string& r : layerRanges)
        layersWidth = std::max(layersWidth, r.size() + 1);
    std::size_t recomputeWidth = 12;   // "selective moe_act,layernorm" is wider
    for (const StagePlan& st : p.stages)
        recomputeWidth = std::max(recomputeWidth, recomputeText(st).size() + 1);
    os << "  stage  device       " << pad("devices", devWidth) << " " << pad("layers", layersWidth)
       << " TP CP DP  " << (experts ? "EP ETP EDP  " : "") << "MBS  " << pad("recompute", recomputeWidth) << "memory GiB  time ms\n";
    for (int i = 0; i < p.pp(); ++i) {
        const StagePlan& st = p.stages[static_cast<std::size_t>(i)];
        const StageEstimate* e = i < static_cast<int>(pr.stages.size()) ? &pr.stages[static_cast<std::size_t>(i)] : nullptr;
        std::ostringstream line;
        line << "  " << pad(std::to_string(i), 6) << " " << pad(st.device_type, 12) << " "
             << pad(devices[static_cast<std::size_t>(i)], devWidth) << " "
             << pad(layerRanges[static_cast<std::size_t>(i)], layersWidth) << " "
             << pad(std::to_string(st.tp), 3) << pad(std::to_string(st.cp), 3) << pad(std::to_string(st.dp), 4);
        if (experts)
            line << pad(std::to_string(st.ep), 4) << pad(std::to_string(st.etp), 4) << pad(std::to_string(st.edp), 5);
        line << pad(std::to_string(st.micro_batch_size), 5) << pad(recomputeText(st), recomputeWidth);
        if (e)
            line << pad(fmt("%.1f", e->memory.total() / (1024.0 * 1024.0 * 1024.0)) + "/" + fmt("%.0f", e->memory.capacity / (1024.0 * 1024.0 * 1024.0)), 12)
                 << decimal((e->t_fwd + e->t_bwd) * 1e3, 1);
        os << line.str() << "\n";
    }
    // A few unused nodes are listed by name; many (a large cluster) are counted per reason.
    constexpr std::size_t kListedUnused = 8;
    if (p.unused.size() <= kListedUnused) {
        for (const UnusedDevices& u : p.unused) {
            const Node* n = cluster.node(u.node);
            os << "  unused: " << u.count << " devices of " << (n ? n->host : std::to_string(u.node)) << " (" << u.reason << ")\n";
        }
    } else {
        std::vector<std::pair<std::string, std::pair<long long, long long>>> byReason;   // reason -> (nodes, devices)
        for (const UnusedDevices& u : p.unused) {
            auto it = std::find_if(byReason.begin(), byReason.end(), [&](const auto& r) { return r.first == u.reason; });
            if (it == byReason.end())
                it = byReason.insert(byReason.end(), {u.reason, {0, 0}});
            it->second.first += 1;
            it->second.second += u.count;
        }
        for (const auto& [reason, counts] : byReason)
            os << "  unused: " << counts.second << " devices on " << counts.first << (counts.first == 1 ? " node" : " nodes") << " ("
               << reason << ")\n";
    }
    os << "  iteration " << decimal(pr.iteration_time_s, 3) << " s, " << fmt("%.0f", pr.tokens_per_s) << " tokens/s, MFU "
       << fmt("%.1f", pr.mfu * 100) << "%, peak memory " << fmt("%.1f", pr.peak_memory_gib) << " GiB";
    if (rp.plain_time_s > 0)
        os << " (" << decimal(rp.plain_time_s, 3) << " s under plain 1F1B)";
    os << "\n";
}

// What the interleaving pass (--max-vpp) made of the plans, a sentence.
std::string interleavingText(const SearchResult& r)
{
    const auto interleaved = std::count_if(r.plans.begin(), r.plans.end(), [](const RankedPlan& p) { return p.plain_time_s > 0; });
    std::string text = "Interleaved 1F1B at VPP 2 to " + std::to_string(r.max_vpp) + " (--max-vpp): ";
    const std::string cut = r.interleave_cut == InterleaveCut::Cancelled ? "the cancel" : "the time limit";
    if (r.interleave_cut != InterleaveCut::No && r.interleave_tried == 0)
        return text + cut + " stopped the pass before it tried a plan: the plans are plain 1F1B.";
    if (r.plans.size() == 1)
        text += interleaved ? "the plan is faster interleaved" : "the plan is not faster interleaved";
    else if (interleaved == 0)
        text += "no plan is faster interleaved";
    else
        text += std::to_string(interleaved) + " of the " + std::to_string(r.plans.size()) + (interleaved == 1 ? " plans is" : " plans are")
            + " faster interleaved";
    if (r.interleave_cut != InterleaveCut::No)
        text += "; " + cut + " stopped the pass after " + std::to_string(r.interleave_tried)
            + (r.interleave_tried == 1 ? " candidate" : " candidates") + ", before it had tried them all";
    return text + (interleaved && r.exact_check == ExactCheck::Finished ? ". (The exact check ranks the plans under plain 1F1B.)" : ".");
}

std::string joinInts(const std::vector<int>& values)
{
    std::string out;
    for (const int v : values)
        out += (out.empty() ? "" : ", ") + std::to_string(v);
    return out;
}

// "--mbs 1,2,4": each an integer from 1 that divides the global batch, each once, ascending.
std::vector<int> microBatchList(const std::string& text, int gbs)
{
    std::vector<int> out;
    std::size_t from = 0;
    for (;;) {
        const std::size_t comma = text.find(',', from);
        const std::string item = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        const bool digits = !item.empty() && item.size() <= 7 && std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
        errno = 0;
        char* end = nullptr;
        const long long n = std::strtoll(item.c_str(), &end, 10);
        if (!digits || *end != '\0' || errno == ERANGE || n < 1 || n > 1000000)
            throw UsageError("--mbs: expected a micro-batch size from 1 to 1000000, a list of them such as 1,2,4, or \"auto\"; got \""
                             + item + "\" in \"" + text + "\"");
        if (gbs % n != 0)
            throw UsageError("--mbs: the global batch " + std::to_string(gbs) + " is not a multiple of the micro-batch size "
                             + std::to_string(n) + " (in \"" + text + "\")");
        if (std::find(out.begin(), out.end(), static_cast<int>(n)) == out.end())
            out.push_back(static_cast<int>(n));
        if (comma == std::string::npos)
            break;
        from = comma + 1;
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

namespace {

// Ctrl-C or SIGTERM during the search stops it as the studio's Cancel does (runSearch's cancel
// flag): the best plans so far are printed and written, and the exit status is the signal's,
// 128 + its number. A second one ends the program at once, as the signal would.
std::atomic<bool> g_interrupted{false};
volatile std::sig_atomic_t g_interruptSignal = 0;
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void onSearchInterrupt(int signal)
{
    if (g_interrupted.load()) {
        std::signal(signal, SIG_DFL);
        std::raise(signal);
        return;
    }
    g_interruptSignal = signal;
    g_interrupted.store(true);
}

// The handlers of SIGINT and SIGTERM while it lives: onSearchInterrupt, then those before.
class SearchInterrupts {
public:
    SearchInterrupts()
    {
        g_interrupted.store(false);
        g_interruptSignal = 0;
        m_int = std::signal(SIGINT, onSearchInterrupt);
        m_term = std::signal(SIGTERM, onSearchInterrupt);
    }
    ~SearchInterrupts()
    {
        std::signal(SIGINT, m_int == SIG_ERR ? SIG_DFL : m_int);
        std::signal(SIGTERM, m_term == SIG_ERR ? SIG_DFL : m_term);
    }
    SearchInterrupts(const SearchInterrupts&) = delete;
    SearchInterrupts& operator=(const SearchInterrupts&) = delete;

private:
    void (*m_int)(int) = SIG_DFL;
    void (*m_term)(int) = SIG_DFL;
};

// The exit status of an interrupted search, else `code`.
int interruptedOr(int code)
{
    if (g_interruptSignal == 0)
        return code;
    std::cerr << "hapmoe plan: interrupted (" << (g_interruptSignal == SIGINT ? "SIGINT" : "SIGTERM")
              << "): the search stopped there, and what it had found is above\n";
    return 128 + g_interruptSignal;
}

} // namespace

int cmdPlan(const Args& args)
{
    const CliArgs a(args, planValueOptions(), planSwitches(), {"script-env"});
    if (a.has("help")) {
        std::cout << kPlanUsage;
        return Success;
    }
    if (!a.positionals().empty())
        throw UsageError("unexpected argument \"" + a.positionals().front() + "\"", kPlanUsage);

    checkScriptInputsHaveScript(a);
    if (a.has("script") && a.has("model"))
        throw UsageError("--model cannot be combined with --script (the script gives the model)");
    // The output is checked before the search, which may run for a while.
    if (auto out = a.value("o"))
        checkOutputPath("-o", *out, givenInputs(a, {"model", "cluster", "profile", "script", "devices"}));

    // A cluster taken from a plan document comes with the device types it was costed with.
    const DeviceCatalog catalog = catalogForDocuments(a, {a.required("cluster"), a.value("model").value_or("")});
    Warnings warnings;
    const Cluster cluster = resolveCluster(a.required("cluster"), catalog, &warnings);
    requireConnected(cluster, catalog, a.required("cluster"));
    // --script: the script's model and current configuration (core/megatron/ScriptImport.h).
    std::optional<ScriptConfiguration> script;
    if (auto s = a.value("script")) {
        script = loadScriptConfiguration(*s, cluster, catalog, scriptInputs(a));
        for (const auto& w : script->script.warnings)
            warnings.push_back(*s + ": " + w);
        if (const std::string note = scriptOverlapNote(script->script); !note.empty())
            warnings.push_back(*s + ": " + note + " (\"hapmoe estimate --script\" gives the script's own time)");
    }
    ModelSpec model = script ? script->model : resolveModel(a.required("model"), &warnings);
    if (const std::string note = applyFp8(a, model); !note.empty())
        std::cerr << "warning: " << note << "\n";
    // The current configuration is costed as the plans are, in the precision --fp8 gives, so
    // that the comparison is of the parallel plans alone: say where the script's differs.
    if (script) {
        const TrainingSpec& own = script->model.training;
        const TrainingSpec& searched = model.training;
        const auto fp8Text = [](const TrainingSpec& t) {
            return t.fp8() ? std::string("in FP8 (") + toString(t.fp8_format) + ", " + toString(t.fp8_recipe) + " scaling)"
                           : std::string("without FP8");
        };
        if (own.fp8_format != searched.fp8_format || (searched.fp8() && own.fp8_recipe != searched.fp8_recipe))
            warnings.push_back(*a.value("script") + ": the script runs " + fp8Text(own) + "; the plans and the current configuration "
                               + "are costed " + fp8Text(searched) + ", as "
                               + (a.has("fp8") && a.has("fp8-recipe") ? "--fp8 and --fp8-recipe say" : a.has("fp8") ? "--fp8 says" : "--fp8-recipe says")
                               + " (\"hapmoe estimate --script\" gives the script's own time)");
    }
    std::unique_ptr<Profile> profile;
    if (auto path = a.value("profile")) {
        profile = std::make_unique<Profile>(readCommandProfile(*path, model, catalog, warnings));
    }

    SearchOptions opt;
    if (script)
        opt.current = script->plan;
    if (auto v = a.value("target"))
        opt.target = parseTarget(*v);
    // A Megatron-LM script, no target asked for: a plan Megatron-LM runs within 1 % of a faster
    // one only FlagScale runs comes first (a few tenths of a per cent are not worth moving
    // the job to another framework; docs/search.md section 1).
    if (script && !a.has("target") && script->script.parallel.meshes.empty()
        && script->script.entry_script.find("flagscale/") == std::string::npos)
        opt.prefer_megatron_within = 0.01;
    if (auto v = a.value("algorithm"))
        opt.algorithm = parseAlgorithm(*v);
    opt.exact = a.has("exact");
    if (auto v = a.intValue("top", 1, kMaxTop))
        opt.top_k = *v;
    if (auto v = a.doubleValue("delta", 0)) {
        if (*v >= 1)
            throw UsageError("--delta: expected a tolerance in [0, 1), got " + fmt("%g", *v));
        opt.delta = *v;
    }
    if (auto v = a.intValue("max-vpp", 1, kMaxVpp))
        opt.max_vpp = *v;
    if (auto v = a.intValue("exact-check", 0))
        opt.exact_check_work = *v;
    if (auto v = a.doubleValue("eta", std::numeric_limits<double>::lowest())) {   // > 0, said below
        if (*v <= 0)
            throw UsageError("--eta: expected a finite number > 0, got " + fmt("%g", *v));
        opt.eta = *v;
    }
    // Beyond 1e7 s (about four months) a limit means nothing; it would also overflow the
    // search's clock.
    if (auto v = a.doubleValue("time-limit", 0))
        opt.time_limit_s = *v > kNoTimeLimitAbove ? 0 : *v;
    else
        opt.time_limit_s = kDefaultTimeLimit;
    if (auto v = a.value("optimizer-offload"))
        opt.optimizer_offload = parseOffload(*v);
    if (auto v = a.intValue("gbs", 1))
        opt.global_batch_size = *v;
    const int gbs = opt.global_batch_size.value_or(model.training.global_batch_size);
    const auto isAuto = [](std::string v) {
        std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return v == "auto";
    };
    if (auto v = a.value("mbs"); v && (isAuto(*v) || v->find(',') != std::string::npos)) {
        // Several sizes, each searched (SearchOptions::micro_batch_sizes).
        opt.micro_batch_sizes = isAuto(*v) ? microBatchCandidates(gbs, model.training.micro_batch_size) : microBatchList(*v, gbs);
    } else {
        if (auto n = a.intValue("mbs", 1))
            opt.micro_batch_size = *n;
        const int mbs = opt.micro_batch_size.value_or(model.training.micro_batch_size);
        if (gbs % mbs != 0)
            throw UsageError(std::string(a.has("gbs") || !a.has("mbs") ? "--gbs" : "--mbs") + ": the global batch " + std::to_string(gbs) + " is not a multiple of the micro-batch size (--mbs) "
                             + std::to_string(mbs));
    }

    if (opt.max_vpp > 1 && opt.target == Target::FlagScale)
        warnings.push_back("--max-vpp " + std::to_string(opt.max_vpp)
                           + " is not used: FlagScale runs no virtual pipeline, so its plans are plain 1F1B");
    else if (opt.max_vpp > 1 && (opt.algorithm == Algorithm::Uniform || opt.algorithm == Algorithm::MetisStyle))
        warnings.push_back("--max-vpp " + std::to_string(opt.max_vpp) + " is not used: the " + toString(opt.algorithm)
                           + " baseline is plain 1F1B, as the paper's baselines are");
    // The prunings' tolerances and the exact check belong to HS-DP's pruned search: say when
    // they have nothing to act on, as for --max-vpp.
    if (opt.algorithm != Algorithm::HsDp || opt.exact) {
        const std::string why = opt.algorithm != Algorithm::HsDp
            ? std::string("the ") + toString(opt.algorithm) + " search has no prunings"
            : "--exact searches without the prunings";
        for (const char* knob : {"delta", "eta", "exact-check"})
            if (a.has(knob))
                warnings.push_back(std::string("--") + knob + " is not used: " + why);
        if (opt.exact && opt.algorithm != Algorithm::HsDp)
            warnings.push_back("--exact is not used: " + why);
    }
    for (const std::string& w : warnings)
        std::cerr << "hapmoe plan: warning: " << w << "\n";

    // With a script every plan is costed as its exported launcher runs (exportCostOptions).
    CostOptions costOptions = script ? exportCostOptions(script->script) : CostOptions{};
    costOptions.memory_headroom = memoryHeadroom(a);
    const CostModel cost(model, cluster, catalog, profile.get(), costOptions);
    const SearchResult r = [&] {
        const SearchInterrupts interrupts;
        return runSearch(cost, opt, &g_interrupted);
    }();

    if (r.plans.empty()) {
        // --json and -o: the same document shape, with no plan and the reason (docs/formats.md).
        if (a.has("json") || a.has("o")) {
            const std::string text = writeNoPlan(model, cluster, r, typesBeyondBuiltin(cluster, catalog));
            if (auto out = a.value("o"))
                saveFileAtomically(*out, text);
            if (a.has("json"))
                std::cout << text;
        }
        std::cerr << "hapmoe plan: no feasible plan: " << r.no_plan_reason << "\n";
        if ((r.uniform_baseline || r.metis_baseline) && opt.target != Target::Any)
            std::cerr << "  (a baseline was found, but not on target " << toString(opt.target) << ")\n";
        return interruptedOr(NoFeasiblePlan);
    }

    PlanDocument doc;
    doc.model = model;
    doc.cluster = cluster;
    doc.plan = r.plans.front().plan;
    doc.prediction = r.plans.front().prediction;
    doc.search = r;
    doc.devices = typesBeyondBuiltin(cluster, catalog);
    if (a.has("o") || a.has("json")) {
        const std::string text = writePlan(doc);
        // A document hapmoe cannot read back (a thousand alternatives on a large cluster) is
        // not written: fewer alternatives are.
        try {
            checkReadsBack(text, a.value("o").value_or("the plan document"));
        } catch (const InputError& e) {
            throw InputError(e.file(), "--top", "the plan document with its " + std::to_string(r.plans.size()) + " plans would be "
                                                    + std::to_string(text.size() >> 20) + " MiB, more than hapmoe reads back (at most "
                                                    + std::to_string(kMaxDocumentBytes >> 20)
                                                    + " MiB and 5 million JSON values): give a smaller --top");
        }
        if (auto out = a.value("o"))
            saveFileAtomically(*out, text);
        if (a.has("json")) {
            std::cout << text;
            return interruptedOr(Success);
        }
    }

    std::ostream& os = std::cout;
    os << "HAPMoE plan for " << model.name << " on " << (cluster.name.empty() ? a.required("cluster") : cluster.name) << " ("
       << cluster.totalDevices() << (cluster.totalDevices() == 1 ? " device" : " devices") << "), search " << toString(r.algorithm) << (opt.exact ? " exact" : "")
       << (r.micro_batch_sizes.empty() ? std::string() : " over micro-batch sizes " + joinInts(r.micro_batch_sizes)) << " in "
       << fmt("%.2f", r.time_s) << " s: " << r.states << " states, pruned " << r.pruned.load_balance << " by load balance, "
       << r.pruned.memory << " by memory, " << r.pruned.communication << " by communication"
       << (r.timed_out ? " (time limit reached: best plan so far)" : r.cancelled ? " (interrupted: best plan so far)" : "") << "\n";
    if (r.list_cut)
        os << "The time limit ended the list at " << r.plans.size() << " of the " << opt.top_k
           << " plans --top asked for (each is costed again and checked after the search).\n";
    // The check replaced the pruned best by a faster plan, or (if needed) by a slower one on the devices.
    const bool checkFoundFaster = r.offload_needed || r.plans.front().prediction.iteration_time_s < r.pruned_best_s;
    const std::string checkTime = fmt("%.2f", r.exact_check_s) + " s without the prunings";
    switch (r.exact_check) {
    case ExactCheck::Finished:
        if (r.pruned_best_s > 0)
            os << "The exact check (" << checkTime << ") found "
               << (checkFoundFaster ? "a faster plan than the pruned search's " + decimal(r.pruned_best_s, 3) + " s"
                                    : "a plan with the optimizer on the devices, which the pruned search had not (it needed offload, "
                                          + decimal(r.pruned_best_s, 3) + " s)")
               << "; the plans below are the exact best" << (checkFoundFaster ? "" : " with the optimizer on the devices") << ".\n";
        else
            os << "The exact check (" << checkTime << ") found nothing faster than the pruned search's best: the plans below are the exact best.\n";
        break;
    case ExactCheck::WorkBudget:
    case ExactCheck::TimeLimit: {
        const std::string why = r.exact_check == ExactCheck::WorkBudget ? "its work budget, " + std::to_string(r.exact_check_budget) + " a pass"
                                                                        : "the time limit, after " + checkTime;
        const std::string more = r.exact_check == ExactCheck::WorkBudget ? "larger --exact-check" : "longer --time-limit";
        // The others: the pruned search's, not known to be the next best; or, where the check
        // found the best plan on the devices that the pruned search's offloaded plans yield
        // to, none (which others its first pass met depends on the threads' timing).
        if (r.exact_check_best)
            os << "The exact check found the best plan"
               << (r.pruned_best_s <= 0 ? ", the pruned search's own"
                   : checkFoundFaster   ? ", faster than the pruned search's " + decimal(r.pruned_best_s, 3) + " s"
                                        : " with the optimizer on the devices (the pruned search's offloaded it, "
                                              + decimal(r.pruned_best_s, 3) + " s)")
               << ", then stopped before the " << opt.top_k << " best were known (" << why << "): plan #1 is the exact best"
               << (r.plans.size() == 1   ? "; the next are not known (a " + more + " or --exact finds them).\n"
                   : r.plans.size() == 2 ? "; the other is the best the search had met after it, not known to be the next best"
                                         : "; the " + std::to_string(r.plans.size() - 1)
                                               + " others are the best the search had met, not known to be the next best")
               << (r.plans.size() == 1 ? "" : " (a " + more + " or --exact may find faster ones).\n");
        else
            os << "The exact check stopped before its end (" << why << "); the plans below are the pruned search's (a " << more
               << " or --exact may find faster ones).\n";
        break;
    }
    case ExactCheck::NotTriedWork:
    case ExactCheck::NotTriedTime:
        os << "The exact check was not tried ("
           << (r.exact_check == ExactCheck::NotTriedWork
                   ? "the pruned search alone did more than its " + std::to_string(r.exact_check_budget)
                         + " units of work (partial plans extended)"
                   : std::string("the time limit left less than twice the pruned search's time"))
           << "); the plans below are the pruned search's (--exact searches without the prunings).\n";
        break;
    case ExactCheck::Cancelled:
    case ExactCheck::Off: break;
    }
    if (r.offload_needed && opt.optimizer_offload != OptimizerOffload::Fastest)
        os << "The search found no plan with the optimizer states on the devices; these keep them in host memory\n"
              "(--optimizer-cpu-offload; see --optimizer-offload"
           << (r.exactChecked() || r.exact_fallback ? ").\n" : "; --exact also looks for unbalanced plans on the devices).\n");
    else if (const double share = r.plans.front().plan.optimizer_offload_fraction;
             opt.optimizer_offload == OptimizerOffload::Fastest && share > 0)
        os << "Keeping " << offloadShareText(share)
           << " of the optimizer states in host memory gives the fastest plan (--optimizer-offload fastest;\n"
              "--optimizer-cpu-offload).\n";
    if (!r.devices_left_out.empty())
        os << "Note: " << r.devices_left_out << ".\n";
    if (r.max_vpp > 1)
        os << interleavingText(r) << "\n";
    if (r.exact_fallback)
        os << "The load-balance and communication prunings left no feasible plan; searched again without them\n"
              "(as --exact)"
           << (r.plans.front().plan.name.find("baseline") != std::string::npos ? ", and nothing beats the baseline" : "")
           << ".\n";
    os << "\n";
    printPlan(os, r.plans.front(), cluster, model);
    // An alternative that holds an earlier plan's stages in another order says so: its figures
    // are that plan's give or take the links between its stages.
    std::vector<const Plan*> ranked;
    for (const RankedPlan& rp : r.plans)
        ranked.push_back(&rp.plan);
    const std::vector<int> reordered = reorderedFrom(ranked);
    for (std::size_t i = 1; i < r.plans.size(); ++i) {
        os << "\n";
        const int of = reordered[i];
        printPlan(os, r.plans[i], cluster, model,
                  of < 0 ? std::string() : "(the stages of " + r.plans[static_cast<std::size_t>(of)].plan.name + " in another order)");
    }
    const double best = r.plans.front().prediction.iteration_time_s;
    auto compare = [&](const char* label, const std::optional<RankedPlan>& b) {
        if (!b) {
            // After a time-out (or cancel) a baseline may not have been searched at all.
            os << "  " << pad(label, 22)
               << (r.cancelled ? "not found before the interrupt" : r.timed_out ? "not found before the time limit" : "none feasible") << "\n";
            return;
        }
        const double t = b->prediction.iteration_time_s;
        // A current configuration of another global batch (SearchResult::current_note) is
        // compared per sequence.
        const bool otherBatch = b->plan.global_batch_size != r.plans.front().plan.global_batch_size;
        const double perSequence = secondsPerSequence(r.plans.front());
        os << "  " << pad(label, 22) << decimal(t, 3) << " s  ("
           << decimal(perSequence > 0 ? secondsPerSequence(*b) / perSequence : 0, 2)
           << (otherBatch ? "x the plan's time per sequence, global batch " + std::to_string(b->plan.global_batch_size) : std::string("x the plan's time"))
           << ", PP " << b->plan.pp() << ", " << (b->prediction.feasible ? "fits" : b->prediction.infeasible_reason);
        // The uniform baseline uses every device, and only FlagScale may launch that (two
        // vendors): say so when the plan's target is another.
        if (b->plan.target != Target::Any && b->plan.target != r.plans.front().plan.target) {
            os << ", target " << toString(b->plan.target);
            // Not a plan the search could have returned: the target asked for leaves it out.
            if (r.searched_target && *r.searched_target != Target::Any && *r.searched_target != b->plan.target)
                os << ", which --target " << toString(*r.searched_target) << " leaves out";
        }
        os << ")\n";
    };
    os << "\nCompared in the same cost model" << (r.baselines_cut && !r.cancelled ? " (the time limit also cut the baselines' searches short: "
                                                              "they may be slower than their best, or missing)" : "")
       << ":\n";
    os << "  " << pad("this plan", 22) << decimal(best, 3) << " s\n";
    if (r.algorithm != Algorithm::Uniform)
        compare("uniform baseline", r.uniform_baseline);
    if (r.algorithm != Algorithm::MetisStyle)
        compare("Metis-style baseline", r.metis_baseline);
    if (r.current)
        compare("current", r.current);
    else if (!r.current_error.empty())
        os << "  " << pad("current", 22) << "not estimated: " << r.current_error << "\n";
    if (r.current && !r.current_note.empty())
        os << "note: " << r.current_note << "\n";
    if (const std::string note = currentConfigurationNote(r); !note.empty())
        os << "note: " << note << "\n";
    for (const std::string& n : r.plans.front().prediction.notes)
        os << "note: " << n << "\n";
    if (const std::string note = nearlyFullNote(r.plans.front().plan, r.plans.front().prediction); !note.empty())
        os << "note: " << note << "\n";
    os.flush();
    return interruptedOr(Success);
}

} // namespace hapmoe::cli
