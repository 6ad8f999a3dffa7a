#include "megatron/LauncherExport.h"

#include "cost/LayerShape.h"
#include "hardware/DeviceCatalog.h"
#include "megatron/FlagList.h"
#include "megatron/MoeLayerPattern.h"
#include "megatron/PipelineLayout.h"
#include "megatron/ShellQuote.h"
#include "plan/Deployability.h"
#include "util/Strings.h"

#include <algorithm>
#include <iomanip>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <numeric>
#include <sstream>

// Flag spellings, rules and the FlagScale formats: ../shared/reference/megatron-and-flagscale.md
// (sections 2-7, 9 and 11) and flagscale-hetero-flags.txt. docs/megatron.md describes the
// launcher layout.

namespace hapmoe {

namespace {

// Checks whose failure is the cause of others for Megatron-LM (a world size their product does
// not divide): a refusal names them first.
constexpr const char* kUniformKnobsCheck = "same TP, CP, DP, EP, ETP, MBS on every stage";
constexpr const char* kOneRecomputeCheck = "one recompute setting";

// A fraction as Megatron's float flags take it: "1.0", "0.5", "0.25".
std::string formatFraction(double f, int digits = 4)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.*g", digits, f);
    std::string out = buf;
    if (out.find_first_of(".e") == std::string::npos)
        out += ".0";
    return out;
}

// One flag with its values, as emitted (values are quoted when the script is written).
struct Arg {
    std::string flag;
    std::vector<std::string> values;
    bool single_quote = false;   // patterns bash would interpret (layout, layer-freq lists)
    bool environment_words = false;   // flag is "${NAME:-}": the words of a variable, unquoted
    // values[0] is "${NAME:-default}rest" (the original's hook, safe characters only), written
    // in double quotes as it is.
    bool hooked = false;
    bool entry_own = false;   // a flag the original's foreign entry script adds to Megatron-LM's parser
};

struct ArgGroup {
    std::string name;            // bash array name
    std::string comment;
    std::vector<Arg> args;
};

const DeviceType* typeOf(const DeviceCatalog& cat, const std::string& name) { return cat.find(name); }

std::string libraryOf(const DeviceCatalog& cat, const std::string& typeName)
{
    const DeviceType* t = typeOf(cat, typeName);
    if (!t)
        return "NCCL";
    return t->library();
}

std::string vendorOf(const DeviceCatalog& cat, const std::string& typeName)
{
    const DeviceType* t = typeOf(cat, typeName);
    return t ? t->vendor : std::string("NVIDIA");
}

// The variable that restricts the visible devices for each vendor's runtime.
std::string visibleDevicesVariable(const DeviceCatalog& cat, const std::string& typeName)
{
    const std::string v = vendorOf(cat, typeName);
    if (v == "AMD")
        return "HIP_VISIBLE_DEVICES";
    if (v == "Huawei")
        return "ASCEND_RT_VISIBLE_DEVICES";
    if (v == "Intel")
        return "HABANA_VISIBLE_MODULES";
    return "CUDA_VISIBLE_DEVICES";
}

// Environment per collective library. CUDA_DEVICE_MAX_CONNECTIONS=1 is asserted by
// Megatron-LM's validate_args when TP or CP > 1 (reference section 2); MindSpeed's Ascend
// scripts export it as well so that the same check passes. HCCL_CONNECT_TIMEOUT=1200 is the
// value MindSpeed's example scripts use for multi-node jobs.
std::vector<std::pair<std::string, std::string>> vendorEnvironment(const DeviceCatalog& cat, const std::string& typeName, bool needsMaxConnections)
{
    std::vector<std::pair<std::string, std::string>> env;
    const std::string lib = libraryOf(cat, typeName);
    if (needsMaxConnections || lib == "HCCL")
        env.push_back({"CUDA_DEVICE_MAX_CONNECTIONS", "1"});
    if (lib == "HCCL")
        env.push_back({"HCCL_CONNECT_TIMEOUT", "${HCCL_CONNECT_TIMEOUT:-1200}"});
    else if (lib == "RCCL" || lib == "NCCL")
        env.push_back({"NCCL_DEBUG", "${NCCL_DEBUG:-WARN}"});   // RCCL reads the NCCL_* variables too
    return env;
}

// The plan's device types under the original's own labels (FlagScale's --hetero-device-types,
// which the hostfile's type= and a configuration's device_type_specific keys name too), where a
// label is another name of the catalog's type ("Ascend910B" for 910B-376T): the launcher keeps
// them. Applied after withCatalogNames, to stages and nodes alike.
PlanDocument withOriginalLabels(PlanDocument doc, const ExportOptions& options, const DeviceCatalog& catalog)
{
    if (!options.original)
        return doc;
    std::map<std::string, std::string> label;
    for (const ProcessMesh& mesh : options.original->parallel.meshes)
        if (!mesh.device_type.empty() && catalog.find(mesh.device_type))
            label.emplace(catalog.canonicalName(mesh.device_type), mesh.device_type);
    for (StagePlan& st : doc.plan.stages)
        if (const auto it = label.find(st.device_type); it != label.end())
            st.device_type = it->second;
    for (Node& n : doc.cluster.nodes)
        if (const auto it = label.find(n.device_type); it != label.end())
            n.device_type = it->second;
    return doc;
}

// Text that goes into a comment line: no line breaks or control characters, so that a
// name cannot end the comment and start a command.
std::string commentSafe(const std::string& s)
{
    std::string out;
    for (char c : s)
        out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
    return out;
}

// An environment value of the original as a launcher writes it: $(pwd) is ${PWD}, which
// bash sets to the folder it starts in, so no command is needed for it.
// 1 to 65535 in decimal digits.
bool isPortNumber(const std::string& p)
{
    const bool digits = !p.empty() && p.size() <= 5 && std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
    return digits && std::stoi(p) >= 1 && std::stoi(p) <= 65535;
}

std::string pwdAsVariable(std::string v)
{
    for (const std::string_view command : {std::string_view("$(pwd)"), std::string_view("`pwd`")})
        for (std::size_t at = v.find(command); at != std::string::npos; at = v.find(command, at + 6))
            v.replace(at, command.size(), "${PWD}");
    return v;
}

// Whether a value runs a command when bash expands it: $( ... ) (not the arithmetic $(( )))
// or backticks. A launcher runs no command of the original's.
bool runsCommand(const std::string& v)
{
    if (v.find('`') != std::string::npos)
        return true;
    for (std::size_t at = v.find("$("); at != std::string::npos; at = v.find("$(", at + 2))
        if (at + 2 >= v.size() || v[at + 2] != '(')
            return true;
    return false;
}

// The variables a script (without its comments) sets: assigned (NAME=, NAME+=, with export,
// local or readonly) or a for loop's.
std::set<std::string> namesSetIn(const std::string& code)
{
    static const std::regex assigned(R"((?:^|[\s;])(?:export\s+|local\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)\+?=)",
                                     std::regex::multiline);
    static const std::regex loopVar(R"(\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b)");
    std::set<std::string> names;
    for (const std::regex* re : {&assigned, &loopVar})
        for (auto it = std::sregex_iterator(code.begin(), code.end(), *re); it != std::sregex_iterator(); ++it)
            names.insert((*it)[1].str());
    return names;
}

// A note as comment lines of at most `width` characters, "# " included, broken at blanks
// (a word longer than the line stays whole), the lines after the first indented.
std::string commentLines(const std::string& note, std::size_t width = 100)
{
    std::string out, line = "#";
    std::istringstream words(commentSafe(note));
    std::string word;
    bool first = true;
    while (words >> word) {
        if (!first && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line = "#  ";
        }
        line += " " + word;
        first = false;
    }
    return out + line + "\n";
}

// The script without its comments: a '#' that begins a word outside quotes runs to the end
// of the line (GNU Bash Reference Manual section 3.1.3). A name in a comment (a plan called
// "${X}") is text, not a value the script reads.
std::string withoutComments(const std::string& script)
{
    std::string out;
    char quote = 0;
    bool comment = false;
    for (std::size_t i = 0; i < script.size(); ++i) {
        const char c = script[i];
        if (comment) {
            if (c == '\n') {
                comment = false;
                out += c;
            }
            continue;
        }
        if (c == '\\' && quote != '\'' && i + 1 < script.size()) {
            out += c;
            out += script[++i];
            continue;
        }
        if (quote) {
            if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '#' && (i == 0 || script[i - 1] == ' ' || script[i - 1] == '\t' || script[i - 1] == '\n')) {
            comment = true;
            continue;
        }
        out += c;
    }
    return out;
}


struct NodeSlots {
    int node = 0;
    std::vector<int> locals;   // local device indices used, in order
};

// Node-rank order for a plan: nodes in the order their stages come (each stage's devices
// become consecutive global ranks). Returns an empty list and a reason when the ranks do
// not land on the stages' nodes.
std::vector<NodeSlots> orderNodes(const Plan& plan, const Cluster& cluster, std::string& problem)
{
    std::vector<NodeSlots> order;
    std::map<int, std::size_t> index;
    for (const StagePlan& st : plan.stages)
        for (const DeviceSlot& d : st.devices) {
            if (!index.count(d.node)) {
                index[d.node] = order.size();
                order.push_back({d.node, {}});
            }
            for (int l = d.first_local; l < d.first_local + d.count; ++l)
                order[index[d.node]].locals.push_back(l);
        }
    // Check: rank r (node by node) belongs to a node of the stage that owns r.
    std::vector<int> rankNode;
    for (const NodeSlots& n : order)
        for (std::size_t k = 0; k < n.locals.size(); ++k)
            rankNode.push_back(n.node);
    std::size_t rank = 0;
    for (int s = 0; s < plan.pp(); ++s) {
        const StagePlan& st = plan.stages[static_cast<std::size_t>(s)];
        std::set<int> nodes;
        int size = 0;
        for (const DeviceSlot& d : st.devices) {
            nodes.insert(d.node);
            size += d.count;
        }
        for (int k = 0; k < size; ++k, ++rank)
            if (rank >= rankNode.size() || !nodes.count(rankNode[rank])) {
                const Node* n = rank < rankNode.size() ? cluster.node(rankNode[rank]) : nullptr;
                problem = "stage " + std::to_string(s) + " does not own consecutive ranks: rank " + std::to_string(rank)
                    + " falls on " + (n ? n->host : std::string("no node"));
                return {};
            }
    }
    return order;
}

class Exporter {
public:
    // noHooks: variables whose defaults are written as read even where a hook could be kept
    // (exportLauncher: the launcher itself sets them).
    // readings: the original's readings per device type, when an earlier exporter made them
    // (typeReadings).
    Exporter(const PlanDocument& doc, const ExportOptions& options, std::set<std::string> noHooks = {},
             std::optional<std::vector<ImportedScript>> readings = std::nullopt)
        : m_doc(withOriginalLabels(withCatalogNames(doc, options.catalog ? *options.catalog : DeviceCatalog::builtin()), options,
                                   options.catalog ? *options.catalog : DeviceCatalog::builtin())),
          m_opt(options),
          m_cat(options.catalog ? *options.catalog : DeviceCatalog::builtin()),
          m_noHooks(std::move(noHooks)),
          m_typeReadings(std::move(readings))
    {
    }

    // The original read again per device type (readOtherDeviceTypes): read when the launcher is
    // written, not for its checks alone, and once.
    const std::vector<ImportedScript>& typeReadings() const
    {
        if (!m_typeReadings)
            m_typeReadings = m_opt.original ? readOtherDeviceTypes(*m_opt.original) : std::vector<ImportedScript>{};
        return *m_typeReadings;
    }

    // The variables whose hooks the launcher keeps (hookFor).
    const std::set<std::string>& hookedNames() const { return m_hooked; }

    std::vector<ExportCheck> checks()
    {
        std::vector<ExportCheck> out;
        const Plan& plan = m_doc.plan;
        const ModelSpec& model = m_doc.model;
        const Target target = m_opt.format == LauncherFormat::Megatron ? Target::Megatron : Target::FlagScale;
        std::vector<DeploymentProblem> problems = deploymentProblems(plan, model, m_doc.cluster, m_cat, target);
        if (flexWithoutTpEpLimit())
            std::erase_if(problems, [](const DeploymentProblem& p) { return p.rule == "moe.flex-needs-tp-ep"; });
        // The rule takes grouped GEMM where the launcher writes it on its own; an original that
        // asks for it (ROCm's Mixtral example, say) brings it to other devices too.
        if (wantsGroupedGemm())
            std::erase_if(problems, [](const DeploymentProblem& p) { return p.rule == "recompute.moe-act-needs-grouped-gemm"; });
        // A check holds every problem of its rules: per rule, the first problem's message and
        // how many more of that rule (one rule broken on several stages is one line, not one
        // per stage); the rules of one check in turn, joined by "; ".
        std::vector<bool> covered(problems.size(), false);
        auto ruleCheck = [&](const std::string& label, std::vector<std::string> ids) {
            ExportCheck c;
            c.rule = label;
            for (const std::string& id : ids) {
                std::string first;
                int more = -1;
                bool perStage = true;   // Deployability's per-stage messages start "stage N (type): "
                for (std::size_t i = 0; i < problems.size(); ++i)
                    if (problems[i].rule == id) {
                        covered[i] = true;
                        if (first.empty())
                            first = problems[i].message;
                        perStage = perStage && problems[i].message.rfind("stage ", 0) == 0;
                        ++more;
                    }
                if (more < 0)
                    continue;
                if (more > 0)
                    first += " (and " + std::to_string(more) + (perStage ? (more == 1 ? " more stage" : " more stages") : " more")
                        + " alike)";
                c.message += (c.ok ? "" : "; ") + first;
                c.ok = false;
            }
            out.push_back(c);
        };
        // Reference section 11, in its order, then the plan's own consistency.
        ruleCheck("plan has stages, knobs and devices", {"plan.empty", "stage.knobs-positive", "stage.knob-product", "stage.devices",
                                                         "stage.device-type", "layers.cover", "plan.vpp"});
        if (target == Target::Megatron) {
            ruleCheck("world % (TP*PP*CP) == 0", {"megatron.world-size"});
            ruleCheck("world % (ETP*EP*PP) == 0", {"megatron.expert-world-size", "stage.expert-grid"});
            ruleCheck(kUniformKnobsCheck, {"megatron.uniform-knobs"});
            ruleCheck(kOneRecomputeCheck, {"megatron.one-recompute"});
            ruleCheck("one collective library", {"megatron.one-vendor"});
            ruleCheck("stage s on ranks [s*W/PP, (s+1)*W/PP) of its device type", {"megatron.node-order"});
            // Only for an interleaved schedule: without virtual stages it cannot apply.
            if (plan.vpp > 1 || std::any_of(problems.begin(), problems.end(),
                                            [](const DeploymentProblem& p) { return p.rule.rfind("megatron.vpp-", 0) == 0; }))
                ruleCheck("interleaved pipeline: PP > 1, M % PP == 0",
                          {"megatron.vpp-needs-pp", "megatron.vpp-microbatches"});
        } else {
            ruleCheck("mesh world % (ETP*EP*PP) == 0", {"stage.expert-grid"});
            ruleCheck("CP == 1 (FlagScale ParallelContext)", {"flagscale.cp"});
            ruleCheck("no virtual pipeline", {"flagscale.no-vpp"});
            ruleCheck("mesh MBS = DP0*MBS0/DP_i, integral", {"flagscale.mesh-mbs"});
            ruleCheck("device types contiguous in mesh order", {"flagscale.device-type-order"});
            ruleCheck("tied embeddings: first and last mesh same TP", {"flagscale.tied-embeddings", "flagscale.shared-embedding-dp"});
            ruleCheck("per-stage recompute expressible", {"flagscale.selective-recompute"});
        }
        // The MoE rules are listed for MoE models; on a dense model a plan they refuse (EP > 1)
        // still shows its problem below, as any rule not listed does.
        if (model.isMoe())
            ruleCheck("num_experts % EP == 0", {"model.experts-divisible-by-ep"});
        ruleCheck("heads % TP == 0", {"model.heads-divisible-by-tp"});
        ruleCheck("query groups % TP == 0 or TP % groups == 0", {"model.query-groups-tp"});
        ruleCheck("hidden % heads == 0 (no kv_channels)", {"model.hidden-divisible-by-heads"});
        ruleCheck("GBS % (MBS*DP) == 0, same M on every mesh", {"batch.divisible", "batch.same-microbatches"});
        // A rule on a size above 1 or on a recompute module is listed when some stage has it
        // (or breaks it), as the interleaved check above: one that cannot apply is not passed.
        auto anyStage = [&plan](auto&& pred) { return std::any_of(plan.stages.begin(), plan.stages.end(), pred); };
        auto broken = [&problems](const char* id) {
            return std::any_of(problems.begin(), problems.end(), [id](const DeploymentProblem& p) { return p.rule == id; });
        };
        if (anyStage([](const StagePlan& st) { return st.cp > 1; }) || broken("seq.context-parallel"))
            ruleCheck("seq % (2*CP) == 0 when CP > 1", {"seq.context-parallel"});
        if (model.isMoe()) {
            if (anyStage([](const StagePlan& st) { return st.etp > 1; }) || broken("moe.bias-needs-etp1"))
                ruleCheck("MoE with ETP > 1 needs --disable-bias-linear", {"moe.bias-needs-etp1"});
            if (anyStage([](const StagePlan& st) { return st.tp > 1; }) || broken("moe.tp-needs-sp"))
                ruleCheck("MoE with TP > 1 needs --sequence-parallel", {"moe.tp-needs-sp"});
        }
        if (anyStage([](const StagePlan& st) {
                return st.recompute == Recompute::Selective && (st.recompute_modules & recompute_module::moe_act);
            }) || broken("recompute.moe-act-needs-grouped-gemm"))
            ruleCheck("moe_act recompute needs --moe-grouped-gemm", {"recompute.moe-act-needs-grouped-gemm"});
        if (model.usesFlexDispatcher()) {
            if (!flexWithoutTpEpLimit())
                ruleCheck("flex dispatcher needs ETP*EP > 1 on every stage", {"moe.flex-needs-tp-ep"});
            ruleCheck("flex dispatcher needs devices DeepEP runs on", {"moe.flex-needs-deepep-device"});
        }
        // The layers' divisibility by the sizes above 1, and sequence parallelism's conditions.
        if (anyStage([](const StagePlan& st) { return st.tp > 1 || st.etp > 1; }) || broken("model.ffn-divisible-by-tp")
            || broken("model.expert-ffn-divisible-by-etp"))
            ruleCheck("FFN % TP == 0, expert FFN % ETP == 0", {"model.ffn-divisible-by-tp", "model.expert-ffn-divisible-by-etp"});
        if ((plan.sequence_parallel && anyStage([](const StagePlan& st) { return st.tp > 1; })) || broken("seq.sequence-parallel"))
            ruleCheck("with SP and TP > 1: seq % (CP*TP) == 0", {"seq.sequence-parallel"});
        if (target == Target::FlagScale
            && (anyStage([&plan](const StagePlan& st) { return st.tp != plan.stages.front().tp; }) || broken("flagscale.tp-change-needs-sp")))
            ruleCheck("meshes of unlike TP need --sequence-parallel", {"flagscale.tp-change-needs-sp"});
        // Any other rule still refuses the plan, in words and one line per rule like the above.
        static const std::map<std::string, std::string> kWords = {
            {"flagscale.query-groups-tp", "query groups % TP == 0 (FlagScale)"},
            {"moe.shared-expert-bias", "shared experts need --disable-bias-linear"},
            {"optimizer.offload-needs-distributed", "optimizer offload needs --use-distributed-optimizer"},
            {"recompute.fp8-delayed", "no moe_act or layernorm recompute under delayed FP8 scaling"},
            {"recompute.mla-up-proj-needs-mla", "mla_up_proj recompute needs multi-latent attention"},
            {"recompute.one-module-set", "one --recompute-modules for every stage"},
            {"fp8-needs-device", "FP8 needs devices with FP8 tensor cores"}};
        for (std::size_t i = 0; i < problems.size(); ++i)
            if (!covered[i]) {
                const auto words = kWords.find(problems[i].rule);
                ruleCheck(words == kWords.end() ? problems[i].rule : words->second, {problems[i].rule});
            }

        // Exporter checks: values that reach the script.
        ExportCheck pos{"max-position-embeddings >= seq-length", true, {}};
        if (model.maxPositions() < model.seq_length) {
            pos.ok = false;
            pos.message = "max_position_embeddings " + std::to_string(model.max_position_embeddings) + " < seq_length "
                + std::to_string(model.seq_length);
        }
        out.push_back(pos);
        ExportCheck hosts{"host names are valid (labels of letters, digits, '-' and '_' joined by '.')", true, {}};
        ExportCheck labels{"device-type labels are [A-Za-z0-9._-]", true, {}};
        std::set<int> used;
        for (const StagePlan& st : plan.stages) {
            for (const DeviceSlot& d : st.devices) used.insert(d.node);
            if (!ShellQuote::isValidLabel(st.device_type) && labels.ok) {
                labels.ok = false;
                labels.message = "device type \"" + st.device_type + "\" cannot be a FlagScale type= label";
            }
        }
        for (int id : used) {
            const Node* n = m_doc.cluster.node(id);
            if (!n || !hosts.ok)
                continue;
            if (const std::string why = hostNameProblem(n->host); !why.empty()) {
                hosts.ok = false;
                hosts.message = "host name \"" + shortenedForMessage(n->host) + "\" of node " + std::to_string(id) + " " + why
                    + "; it is refused rather than written into a shell script";
            }
        }
        out.push_back(hosts);
        if (target == Target::FlagScale)
            out.push_back(labels);
        ExportCheck port{"master port is 1..65535", true, {}};
        {
            const std::string p = masterPort();
            if (!isPortNumber(p)) {
                port.ok = false;
                port.message = "master port \"" + p + "\" is not a port number";
            }
        }
        out.push_back(port);
        // --moe-grouped-gemm asserts compute capability >= 8.0 (reference section 2). Listed
        // only when the launcher would carry the flag and a stage runs on NVIDIA devices (a
        // CUDA compute capability says nothing of Ascend or ROCm): a check that cannot apply
        // is not passed.
        const bool anyNvidia = std::any_of(plan.stages.begin(), plan.stages.end(), [&](const StagePlan& st) {
            const DeviceType* t = typeOf(m_cat, st.device_type);
            return t && t->vendor == "NVIDIA";
        });
        if (wantsGroupedGemm() && anyNvidia) {
            ExportCheck gemm{"--moe-grouped-gemm needs compute capability >= 8.0", true, {}};
            for (const StagePlan& st : plan.stages) {
                const DeviceType* t = typeOf(m_cat, st.device_type);
                if (t && t->vendor == "NVIDIA" && t->compute_capability > 0 && t->compute_capability < 8.0) {
                    gemm.ok = false;
                    gemm.message = st.device_type + " has compute capability " + std::to_string(t->compute_capability).substr(0, 3)
                        + "; the original script asks for --moe-grouped-gemm";
                    break;
                }
            }
            out.push_back(gemm);
        }
        // Megatron-LM d98e8a64's --recompute-modules takes one or more names (nargs '+',
        // reference section 1), and an empty one in FlagScale's 8479eb35 (nargs '*') would not
        // say what the plan was costed with either: a selective plan without a module the model
        // knows is written only where an original's list brings modules of its own that the
        // target accepts.
        const bool noModule = std::any_of(plan.stages.begin(), plan.stages.end(), [](const StagePlan& st) {
            return st.recompute == Recompute::Selective && st.recompute_modules == 0;
        });
        if (noModule && carriedRecomputeModules().empty())
            out.push_back({"selective recompute names a module", false,
                           "the plan's selective recompute has no module, which --recompute-modules cannot say (it takes one "
                           "or more); make it recompute none, or name a module"});
        // FlagScale's pre_validate_args treats MTP like tied embeddings: the first and last
        // mesh need the same TP, and DPs that divide one another (flagscale-hetero-flags.txt).
        if (target == Target::FlagScale && mtpLayers() > 0 && !plan.stages.empty()) {
            ExportCheck mtp{"MTP (--mtp-num-layers): first and last mesh same TP, DPs divide", true, {}};
            const std::vector<PlanMesh> ms = planMeshes(plan);
            const StagePlan& a = plan.stages[static_cast<std::size_t>(ms.front().first_stage)];
            const StagePlan& b = plan.stages[static_cast<std::size_t>(ms.back().first_stage)];
            if (a.tp != b.tp) {
                mtp.ok = false;
                mtp.message = "--mtp-num-layers needs the first and last mesh to have the same TP ("
                    + std::to_string(a.tp) + " vs " + std::to_string(b.tp) + ")";
            } else if (a.dp != b.dp && plan.distributed_optimizer && a.dp % b.dp != 0 && b.dp % a.dp != 0) {
                mtp.ok = false;
                mtp.message = "--mtp-num-layers with the distributed optimizer needs the first and last mesh DP to divide one another ("
                    + std::to_string(a.dp) + " vs " + std::to_string(b.dp) + ")";
            }
            out.push_back(mtp);
        }
        // The plan's offload brings both flags; an original script's offload without the plan's
        // is not carried over, so only the plan's fraction matters here, and only when it has one.
        if (plan.optimizer_offload_fraction != 0) {
            ExportCheck offload{"--optimizer-cpu-offload needs --use-precision-aware-optimizer", true, {}};
            if (plan.optimizer_offload_fraction < 0 || plan.optimizer_offload_fraction > 1) {
                offload.ok = false;
                offload.message = "the plan's optimizer offload fraction is outside [0, 1]";
            }
            out.push_back(offload);
        }
        return out;
    }

    ExportResult run()
    {
        ExportResult r;
        r.checks = checks();
        // Stages that differ are the cause, for Megatron-LM, of a world size their product does
        // not divide: the refusal names them first, and FlagScale, which runs them.
        for (const char* cause : {kUniformKnobsCheck, kOneRecomputeCheck}) {
            const auto c = std::find_if(r.checks.begin(), r.checks.end(), [&](const ExportCheck& k) { return !k.ok && k.rule == cause; });
            if (m_opt.format == LauncherFormat::Megatron && c != r.checks.end()) {
                r.refusal = c->rule + ": " + c->message;
                if (deploymentProblems(m_doc.plan, m_doc.model, m_doc.cluster, m_cat, Target::FlagScale).empty())
                    r.refusal += m_doc.plan.target == Target::FlagScale
                        ? "; the plan was made for FlagScale, which runs stages that differ: export it for FlagScale"
                        : "; FlagScale runs stages that differ: export it for FlagScale";
                return r;
            }
        }
        for (const ExportCheck& c : r.checks)
            if (!c.ok) {
                r.refusal = c.rule + ": " + c.message;
                return r;
            }
        std::string problem;
        m_nodes = orderNodes(m_doc.plan, m_doc.cluster, problem);
        if (m_nodes.empty()) {
            r.refusal = "node order: " + problem;
            return r;
        }
        for (const NodeSlots& n : m_nodes)
            r.node_order.push_back(m_doc.cluster.node(n.node)->host);
        buildGroups();
        // Every emitted flag must be an option of the target (reference flag lists); the words
        // of an environment variable the original passed on are the user's own.
        const FlagList& list = m_opt.format == LauncherFormat::Megatron ? FlagList::megatron() : FlagList::flagscale();
        for (const ArgGroup& g : m_groups)
            for (const Arg& a : g.args)
                if (!list.contains(a.flag) && !a.environment_words && !a.entry_own) {
                    r.checks.push_back({"every flag is an option of the target", false, a.flag + " is not in the target's flag list"});
                    r.refusal = "every flag is an option of the target: " + a.flag + " is not in the target's flag list";
                    return r;
                }
        r.checks.push_back({"every flag is an option of the target", true, {}});
        decideMaxConnections();
        notePythonPath();
        noteCommandValues();
        noteTypeReadings();
        r.script = requireOutsideValues(writeScript());
        r.hostfile = writeHostfile();
        r.notes = m_notes;
        r.ok = true;
        return r;
    }

private:
    // Values the script reads but never sets: the original's positional parameters (kept as
    // ${ARGn}) and variables it took from the environment (kept as ${NAME}). Under `set -u`
    // bash would stop at the first use with a bare "unbound variable"; a check right after
    // `set -euo pipefail` names each one and where it came from, and a note lists them.
    std::string requireOutsideValues(std::string script)
    {
        static const std::regex bareUse(R"(\$\{([A-Za-z_][A-Za-z0-9_]*)\})");
        const std::string code = withoutComments(script);
        const std::set<std::string> set = namesSetIn(code);
        std::vector<std::string> outside;
        for (auto it = std::sregex_iterator(code.begin(), code.end(), bareUse); it != std::sregex_iterator(); ++it) {
            const std::string name = (*it)[1].str();
            if (name == "PWD")   // bash sets it to the folder it starts in
                continue;
            if (!set.count(name) && std::find(outside.begin(), outside.end(), name) == outside.end())
                outside.push_back(name);
        }
        if (outside.empty())
            return script;
        std::sort(outside.begin(), outside.end());
        static const std::regex argN("ARG([0-9]+)");
        std::ostringstream block;
        block << "# Set these before running; the original script took them from outside:\n";
        std::vector<std::string> described;
        for (const std::string& name : outside) {
            std::smatch m;
            const bool positional = std::regex_match(name, m, argN);
            // In the check's double-quoted word "\$" is a literal dollar sign.
            const std::string from = positional ? "its positional parameter \\$" + m[1].str() : "the environment";
            block << ": \"${" << name << "?is not set: the original script took it from " << from << " (export " << name
                  << "=... before running)}\"\n";
            described.push_back(name + " (" + (positional ? "$" + m[1].str() : "environment") + ")");
        }
        block << "\n";
        const std::string marker = "set -euo pipefail\n\n";
        const std::size_t at = script.find(marker);
        if (at != std::string::npos)
            script.insert(at + marker.size(), block.str());
        m_notes.push_back("set before running (the original took them from outside): " + join(described, ", "));
        return script;
    }

    // The original's CUDA_DEVICE_MAX_CONNECTIONS, if it exports one.
    std::optional<std::string> originalMaxConnections() const
    {
        if (!m_opt.original)
            return std::nullopt;
        static const std::string kName = "CUDA_DEVICE_MAX_CONNECTIONS=";
        for (const std::string& e : m_opt.original->environment)
            if (e.rfind(kName, 0) == 0)
                return e.substr(kName.size());
        return std::nullopt;
    }

    // What the launcher exports for CUDA_DEVICE_MAX_CONNECTIONS, with a note wherever the
    // original's value does not survive. Megatron-LM asserts 1 when TP or CP > 1 (reference
    // section 2), but only warns with --overlap-moe-expert-parallel-comm, whose recipes raise
    // it; without TP or CP the original's value is free.
    void decideMaxConnections()
    {
        const std::optional<std::string> original = originalMaxConnections();
        const StagePlan& s0 = first();
        if (m_opt.format == LauncherFormat::Megatron) {
            const auto env = vendorEnvironment(m_cat, s0.device_type, s0.tp > 1 || s0.cp > 1);
            const bool needsOne = std::any_of(env.begin(), env.end(), [](const auto& e) { return e.first == "CUDA_DEVICE_MAX_CONNECTIONS"; });
            if (original && *original != "1" && a2aOverlapCarried()) {
                m_maxConnections = *original;
                m_notes.push_back("CUDA_DEVICE_MAX_CONNECTIONS=" + *original
                                  + " kept from the original: with --overlap-moe-expert-parallel-comm Megatron-LM warns instead of asserting 1");
            } else if (needsOne) {
                m_maxConnections = "1";
                if (original && *original != "1")
                    m_notes.push_back("CUDA_DEVICE_MAX_CONNECTIONS: the original's " + *original
                                      + " is replaced by 1 (Megatron-LM asserts it when TP or CP > 1)");
            } else if (original) {
                m_maxConnections = *original;
                m_maxConnectionsFree = true;   // no rule holds it: the environment may still override it
            }
        } else if (original && *original != "1") {
            m_notes.push_back("CUDA_DEVICE_MAX_CONNECTIONS: the original's " + *original
                              + " is not carried over; each device type's block sets 1 where TP or CP > 1 (Megatron-LM asserts it)");
        }
    }

    // What the readings per device type brought (readOtherDeviceTypes), and the plan's types
    // the original was not read for.
    void noteTypeReadings()
    {
        if (!m_opt.original || typeReadings().empty())
            return;
        std::vector<std::string> read{m_opt.original->current_device_type};
        for (const ImportedScript& r : typeReadings())
            read.push_back(r.current_device_type);
        const std::set<std::string> perType = perTypeNames();
        std::string what = perType.empty() ? std::string() : "its exports that differ by type ("
                + join(std::vector<std::string>(perType.begin(), perType.end()), ", ") + ")";
        bool setup = false;
        for (const ImportedScript* r : allReadings())
            setup = setup || !setupLines(*r, Setup::PerType, "").empty();
        if (setup)
            what += std::string(what.empty() ? "" : " and ") + "its cd and source commands of one type";
        std::set<std::string> missing;
        for (const StagePlan& st : m_doc.plan.stages)
            if (!readingFor(st.device_type))
                missing.insert(st.device_type);
        if (!what.empty())
            m_notes.push_back("the original was read as a node of each of its device types (" + join(read, ", ")
                              + ", NODE_RANK set to a node of each): " + what + " are written for "
                              + (m_opt.format == LauncherFormat::FlagScale ? "each type in its case branch" : "this launcher's type"));
        if (!missing.empty() && !what.empty())
            m_notes.push_back("no node of the original runs " + join(std::vector<std::string>(missing.begin(), missing.end()), ", ")
                              + ": the launcher gives " + (missing.size() > 1 ? "them" : "it")
                              + " none of the original's settings per type (set them by hand)");
    }

    std::vector<const ImportedScript*> allReadings() const
    {
        std::vector<const ImportedScript*> out{&*m_opt.original};
        for (const ImportedScript& r : typeReadings())
            out.push_back(&r);
        return out;
    }

    // The original's variables whose value runs a command ($(hostname), `nvidia-smi ...`): the
    // launcher does not run it, writes the assignment as a comment, and leaves the variable to
    // the environment the launcher runs in (a check stops it when the launcher reads the
    // variable and it is not set).
    void noteCommandValues()
    {
        if (!m_opt.original)
            return;
        std::vector<std::string> names;
        for (const std::string& e : m_opt.original->environment) {
            const std::size_t eq = e.find('=');
            if (eq != std::string::npos && runsCommand(pwdAsVariable(e.substr(eq + 1))) && !skipsOriginalExport(e.substr(0, eq)))
                names.push_back(e.substr(0, eq));
        }
        if (!names.empty())
            m_notes.push_back("left to the environment (the original runs a command for them, which the launcher does not): "
                              + join(names, ", "));
    }

    // The original's PYTHONPATH in a Megatron-LM launcher made from a FlagScale script: it
    // points at FlagScale and its own Megatron-LM, where the launcher runs Megatron-LM's entry.
    bool dropsFlagScalePythonPath() const
    {
        return m_opt.format == LauncherFormat::Megatron && m_opt.original && m_opt.entry_script.empty()
            && isFlagScaleEntry(m_opt.original->entry_script);
    }

    // FlagScale runs its own patched Megatron-LM (FLAGSCALE_HOME/third_party/Megatron-LM,
    // reference section 9), which must come first on the import path, as FlagScale's runner
    // puts it. An original's PYTHONPATH usually names another Megatron-LM checkout; it is not
    // carried over, and the environment's PYTHONPATH still follows FlagScale's paths.
    void notePythonPath()
    {
        if (dropsFlagScalePythonPath()) {
            static const std::string kName = "PYTHONPATH=";
            for (const std::string& e : m_opt.original->environment)
                if (e.rfind(kName, 0) == 0)
                    m_notes.push_back("PYTHONPATH: the original's " + e.substr(kName.size())
                                      + " (FlagScale's) is not carried over; the Megatron-LM launcher keeps the PYTHONPATH "
                                        "of the environment it runs in");
            return;
        }
        if (m_opt.format != LauncherFormat::FlagScale || !m_opt.original)
            return;
        static const std::string kName = "PYTHONPATH=";
        for (const std::string& e : m_opt.original->environment)
            if (e.rfind(kName, 0) == 0)
                m_notes.push_back("PYTHONPATH: the original's " + e.substr(kName.size())
                                  + " is not carried over; the launcher puts FlagScale and its Megatron-LM (FLAGSCALE_HOME and "
                                    "FLAGSCALE_HOME/third_party/Megatron-LM) first, then the PYTHONPATH of the environment it runs in");
    }

    bool originalHas(const std::string& flag) const { return originalValues(flag) != nullptr; }
    // Whether the original gave a flag the importer maps to the model (and so does not carry).
    bool originalGave(const std::string& flag) const { return m_opt.original && m_opt.original->given_flags.count(flag) > 0; }
    // The original's first value of a flag, unquoted, or Megatron-LM's default.
    std::string originalFirst(const std::string& flag, const std::string& fallback) const
    {
        const std::vector<std::string>* v = originalValues(flag);
        return v && !v->empty() ? ShellQuote::unquoted(v->front()) : fallback;
    }

    bool allWriteGroupedGemm() const
    {
        return std::all_of(m_doc.plan.stages.begin(), m_doc.plan.stages.end(),
                           [&](const StagePlan& st) { return writesGroupedGemm(m_cat, st.device_type); });
    }

    // The model's router recipe where it is not Megatron-LM's default (DeepSeek-V3's sigmoid
    // scores, expert bias, group-limited routing, scaled weights); left at the defaults, an
    // original's router flags are carried over as they were. FlagScale's Megatron-LM 8479eb35
    // has no sqrtsoftplus (reference section 1): that score, and the expert bias that needs
    // it, are not written, with a note (the carried-over path notes an original's).
    void addRouterRecipe(ArgGroup& moe)
    {
        const ModelSpec& m = m_doc.model;
        const bool scoreDropped = m.moe_router_score_function == RouterScore::SqrtSoftplus && m_opt.format != LauncherFormat::Megatron;
        if (m.moe_router_score_function != RouterScore::Softmax && !scoreDropped)
            moe.args.push_back({"--moe-router-score-function", {toString(m.moe_router_score_function)}});
        if (scoreDropped && !originalHas("--moe-router-score-function"))
            m_notes.push_back("--moe-router-score-function sqrtsoftplus: not written (FlagScale's Megatron-LM 8479eb35 does not "
                              "accept this value); the router runs softmax scores"
                              + std::string(m.moe_router_enable_expert_bias ? ", without the expert bias, which needs sigmoid" : ""));
        if (m.moe_router_enable_expert_bias && !scoreDropped)
            moe.args.push_back({"--moe-router-enable-expert-bias", {}});
        if (m.moe_router_num_groups > 0) {
            moe.args.push_back({"--moe-router-num-groups", {std::to_string(m.moe_router_num_groups)}});
            moe.args.push_back({"--moe-router-group-topk", {std::to_string(m.moe_router_group_topk)}});
        }
        if (m.moe_router_topk_scaling_factor > 0)
            moe.args.push_back({"--moe-router-topk-scaling-factor", {formatFraction(m.moe_router_topk_scaling_factor, 15)}});
    }

    // The model's multi-token-prediction depths (--mtp-num-layers; 0 without).
    int mtpLayers() const { return std::max(0, m_doc.model.mtp_num_layers); }

    // The flex dispatcher without the TPxEP > 1 limit: Megatron-LM's HybridEP backend, when
    // the original chooses it (--moe-flex-dispatcher-backend does not exist in FlagScale's 8479eb35).
    bool flexWithoutTpEpLimit() const
    {
        const std::vector<std::string>* v = originalValues("--moe-flex-dispatcher-backend");
        return m_opt.format == LauncherFormat::Megatron && v && !v->empty() && ShellQuote::unquoted(v->front()) == "hybridep";
    }

    // Grouped GEMM: kept when the original asks for it, added for MoE on sm80+ NVIDIA devices
    // when there is no original script or the plan recomputes the experts' activation
    // (TransformerConfig: "moe_act in recompute_modules is only supported with moe_grouped_gemm").
    bool wantsGroupedGemm() const
    {
        if (!m_doc.model.isMoe())
            return false;
        if (m_opt.original && originalHas("--moe-grouped-gemm"))
            return true;
        return (!m_opt.original || recomputesMoeAct()) && allWriteGroupedGemm();
    }

    // A --recompute-modules entry FlagScale's Megatron-LM 8479eb35 does not accept (reference
    // section 1: gdn_*, gdp_* and mhc are Megatron-LM d98e8a64's).
    bool headOnlyRecomputeModule(const std::string& v) const
    {
        return m_opt.format == LauncherFormat::FlagScale && (v.rfind("gdn_", 0) == 0 || v.rfind("gdp_", 0) == 0 || v == "mhc");
    }

    // The original's --recompute-modules entries the launcher carries beside the plan's: those
    // the cost model does not know (the attention variants'), where the target accepts them.
    std::vector<std::string> carriedRecomputeModules() const
    {
        std::vector<std::string> out;
        if (const std::vector<std::string>* v = originalValues("--recompute-modules"))
            for (const std::string& w : *v) {
                const std::string name = ShellQuote::unquoted(w);
                if (recomputeModuleBit(name) == 0 && !headOnlyRecomputeModule(name))
                    out.push_back(name);
            }
        return out;
    }

    bool recomputesMoeAct() const
    {
        return std::any_of(m_doc.plan.stages.begin(), m_doc.plan.stages.end(), [](const StagePlan& st) {
            return st.recompute == Recompute::Selective && (st.recompute_modules & recompute_module::moe_act);
        });
    }

    const StagePlan& first() const { return m_doc.plan.stages.front(); }

    // Layers per stage; uniform when all equal.
    std::vector<int> split() const
    {
        std::vector<int> s;
        for (const StagePlan& st : m_doc.plan.stages)
            s.push_back(st.num_layers);
        return s;
    }

    void buildGroups()
    {
        const ModelSpec& m = m_doc.model;
        const Plan& plan = m_doc.plan;
        const bool megatron = m_opt.format == LauncherFormat::Megatron;
        const StagePlan& s0 = first();

        ArgGroup model{"MODEL_ARGS", "model shape", {}};
        model.args.push_back({"--num-layers", {std::to_string(m.num_layers)}});
        model.args.push_back({"--hidden-size", {std::to_string(m.hidden_size)}});
        model.args.push_back({"--ffn-hidden-size", {std::to_string(m.ffn_hidden_size)}});
        model.args.push_back({"--num-attention-heads", {std::to_string(m.num_attention_heads)}});
        if (m.multi_latent_attention) {
            // Megatron-LM's MLA flags (arguments.py _add_mla_args); --q-lora-rank left out is
            // None, the query projected from the hidden state.
            model.args.push_back({"--multi-latent-attention", {}});
            if (m.q_lora_rank > 0)
                model.args.push_back({"--q-lora-rank", {std::to_string(m.q_lora_rank)}});
            model.args.push_back({"--kv-lora-rank", {std::to_string(m.kv_lora_rank)}});
            model.args.push_back({"--qk-head-dim", {std::to_string(m.qk_head_dim)}});
            model.args.push_back({"--qk-pos-emb-head-dim", {std::to_string(m.qk_pos_emb_head_dim)}});
            model.args.push_back({"--v-head-dim", {std::to_string(m.v_head_dim)}});
        } else {
            if (m.num_query_groups > 0 && m.num_query_groups != m.num_attention_heads) {
                model.args.push_back({"--group-query-attention", {}});
                model.args.push_back({"--num-query-groups", {std::to_string(m.num_query_groups)}});
            }
            if (m.kv_channels > 0)
                model.args.push_back({"--kv-channels", {std::to_string(m.kv_channels)}});
        }
        // A multimodal original runs the language model at --decoder-seq-length (the plan's
        // sequence); its --seq-length is the vision encoder's, written back as it was.
        if (m_opt.original && m_opt.original->multimodal_encoder_seq_length > 0) {
            model.args.push_back({"--seq-length", {std::to_string(m_opt.original->multimodal_encoder_seq_length)}});
            model.args.push_back({"--decoder-seq-length", {std::to_string(m.seq_length)}});
        } else {
            model.args.push_back({"--seq-length", {std::to_string(m.seq_length)}});
        }
        model.args.push_back({"--max-position-embeddings", {std::to_string(m.maxPositions())}});
        if (m.swiglu)
            model.args.push_back({"--swiglu", {}});
        if (!m.add_bias_linear)
            model.args.push_back({"--disable-bias-linear", {}});
        if (m.untie_embeddings_and_output_weights)
            model.args.push_back({"--untie-embeddings-and-output-weights", {}});
        model.args.push_back({"--normalization", {m.normalization.empty() ? std::string("RMSNorm") : m.normalization}});
        if (m.qk_layernorm)
            model.args.push_back({"--qk-layernorm", {}});
        if (m.mtp_num_layers > 0)
            model.args.push_back({"--mtp-num-layers", {std::to_string(m.mtp_num_layers)}});
        // The embedding and output layer were costed for the vocabulary padded to this times TP
        // (docs/cost-model.md section 1); Megatron-LM's default is 128. An original that gives
        // --padded-vocab-size pads nothing: that flag, carried over, states the vocabulary.
        if ((m.make_vocab_size_divisible_by != 128 || originalHas("--make-vocab-size-divisible-by"))
            && !originalHas("--padded-vocab-size"))
            model.args.push_back({"--make-vocab-size-divisible-by", {std::to_string(m.make_vocab_size_divisible_by)}});
        addPositionEmbedding(model);
        // The dropouts decide which masks the activations keep (docs/cost-model.md section 5.2);
        // Megatron-LM's default is 0.1 each.
        if (m.attention_dropout != 0.1 || originalGave("--attention-dropout"))
            model.args.push_back({"--attention-dropout", {formatFraction(m.attention_dropout, 15)}});
        if (m.hidden_dropout != 0.1 || originalGave("--hidden-dropout"))
            model.args.push_back({"--hidden-dropout", {formatFraction(m.hidden_dropout, 15)}});
        m_groups.push_back(model);

        if (m.isMoe()) {
            ArgGroup moe{"MOE_ARGS", "mixture of experts", {}};
            moe.args.push_back({"--num-experts", {std::to_string(m.num_experts)}});
            moe.args.push_back({"--moe-router-topk", {std::to_string(m.moe_router_topk)}});
            // Megatron-Core's TransformerConfig raises "Please use --moe-router-pre-softmax when
            // topk is 1" for softmax scores without Sinkhorn balancing: a softmax over one
            // selected logit is 1 and its gradient 0.
            if (m.moe_router_topk == 1 && m.moe_router_score_function == RouterScore::Softmax
                && originalFirst("--moe-router-score-function", "softmax") == "softmax"
                && originalFirst("--moe-router-load-balancing-type", "aux_loss") != "sinkhorn") {
                moe.args.push_back({"--moe-router-pre-softmax", {}});
                if (!originalHas("--moe-router-pre-softmax"))
                    m_notes.push_back("--moe-router-pre-softmax: written, as Megatron-LM needs it for top-1 routing with softmax scores "
                                      "(the softmax of one selected logit has no gradient)");
            }
            if (m.moe_ffn_hidden_size > 0)
                moe.args.push_back({"--moe-ffn-hidden-size", {std::to_string(m.moe_ffn_hidden_size)}});
            if (!m.moe_layer_pattern.empty())
                moe.args.push_back({"--moe-layer-freq", {MoeLayerPattern::expression(m.moe_layer_pattern)}, true});
            else if (m.moe_layer_freq > 1)
                moe.args.push_back({"--moe-layer-freq", {std::to_string(m.moe_layer_freq)}});
            if (m.moe_shared_expert_intermediate_size > 0)
                moe.args.push_back({"--moe-shared-expert-intermediate-size", {std::to_string(m.moe_shared_expert_intermediate_size)}});
            addRouterRecipe(moe);
            moe.args.push_back({"--moe-token-dispatcher-type", {toString(m.moe_token_dispatcher_type)}});
            // FlagScale's Megatron-LM 8479eb35 asserts --moe-enable-deepep in MoEFlexTokenDispatcher
            // (it has no --moe-flex-dispatcher-backend; reference section 1); Megatron-LM d98e8a64
            // defaults the backend to deepep.
            if (!megatron && m.moe_token_dispatcher_type == TokenDispatcher::Flex)
                moe.args.push_back({"--moe-enable-deepep", {}});
            if (wantsGroupedGemm()) {
                moe.args.push_back({"--moe-grouped-gemm", {}});
                // Megatron-LM d98e8a64's TEGroupedMLP asserts not (add_bias_linear and
                // bias_dropout_fusion), and the fusion is on by default (moe/experts.py).
                if (megatron && m.add_bias_linear)
                    moe.args.push_back({"--no-bias-dropout-fusion", {}});
            }
            moe.args.push_back({"--expert-model-parallel-size", {std::to_string(s0.ep)}});
            moe.args.push_back({"--expert-tensor-parallel-size", {std::to_string(s0.etp)}});
            m_groups.push_back(moe);
        }

        ArgGroup par{"PARALLEL_ARGS", "parallel configuration", {}};
        par.args.push_back({"--tensor-model-parallel-size", {std::to_string(s0.tp)}});
        par.args.push_back({"--pipeline-model-parallel-size", {std::to_string(plan.pp())}});
        par.args.push_back({"--context-parallel-size", {std::to_string(s0.cp)}});
        const bool anyTp = std::any_of(plan.stages.begin(), plan.stages.end(), [](const StagePlan& st) { return st.tp > 1; });
        if (plan.sequence_parallel && anyTp)
            par.args.push_back({"--sequence-parallel", {}});
        if (plan.distributed_optimizer)
            par.args.push_back({"--use-distributed-optimizer", {}});
        // The prediction hides the gradient reduction behind the backward and, with the
        // distributed optimizer, the parameter all-gather behind the forward (docs/cost-model.md
        // section 7); Megatron-LM does so only with these switches (both default off, and the
        // second needs the first and the distributed optimizer: reference section 6).
        par.args.push_back({"--overlap-grad-reduce", {}});
        if (plan.distributed_optimizer)
            par.args.push_back({"--overlap-param-gather", {}});
        // A plan costed with that traffic exposed (an imported script without the switches,
        // Prediction::overlap) runs faster than its prediction with them: say which.
        if (m_doc.prediction) {
            std::vector<std::string> exposed;
            if (!m_doc.prediction->overlap.grad_reduce)
                exposed.push_back("--overlap-grad-reduce");
            if (plan.distributed_optimizer && !m_doc.prediction->overlap.param_gather)
                exposed.push_back("--overlap-param-gather");
            if (!exposed.empty())
                m_notes.push_back(join(exposed, ", ") + ": written, as in every exported launcher, but the plan was costed "
                                  "without " + (exposed.size() > 1 ? "them" : "it") + "; its data-parallel traffic may hide "
                                  "behind the compute and the run be faster than predicted (hapmoe estimate --script on this "
                                  "launcher costs it with the overlap)");
        }
        // A prediction that assumed --tp-comm-overlap (a search for a script that switches it
        // on, Prediction::overlap) gets it, unless the original's own flag is carried over.
        // Transformer Engine's userbuffers are set up for one TP size (Megatron-LM's
        // initialize_ub takes --tensor-model-parallel-size), so stages of different TP go without.
        // The cost model applies it only when every stage has the same TP (StageContext).
        if (m_doc.prediction && m_doc.prediction->overlap.tp_comm && plan.sequence_parallel && anyTp
            && !(m_opt.original && m_opt.original->given_flags.count("--tp-comm-overlap"))) {
            if (plan.oneTpSize())
                par.args.push_back({"--tp-comm-overlap", {}});
            else
                m_notes.push_back("--tp-comm-overlap: not written: the stages' TP sizes differ and Transformer Engine's "
                                  "userbuffers take one");
        }
        if (plan.optimizer_offload_fraction > 0) {
            // megatron/core/optimizer/cpu_offloading/README.md: the three flags together, and
            // --use-precision-aware-optimizer is asserted with the offload (reference section 6).
            par.args.push_back({"--optimizer-cpu-offload", {}});
            par.args.push_back({"--optimizer-offload-fraction", {formatFraction(plan.optimizer_offload_fraction)}});
            par.args.push_back({"--use-precision-aware-optimizer", {}});
            par.args.push_back({"--overlap-cpu-optimizer-d2h-h2d", {}});
        }
        const std::vector<int> layers = split();
        const bool uniform = std::all_of(layers.begin(), layers.end(), [&](int n) { return n == layers.front(); });
        // Chunks a layout placed unevenly within a rank are written back as a layout.
        std::vector<std::vector<int>> chunks;
        bool evenChunks = true;
        for (const StagePlan& st : plan.stages) {
            chunks.push_back(st.chunks(plan.vpp));
            evenChunks = evenChunks && chunks.back() == chunkLayers(st.num_layers, plan.vpp);
        }
        if (megatron) {
            if (!uniform || !evenChunks || (plan.vpp > 1 && layers.front() % plan.vpp != 0)) {
                // With the model's --mtp-num-layers, the layout places those MTP layers too:
                // validate_layer_layout asserts that it holds exactly that many.
                par.args.push_back({"--pipeline-model-parallel-layout",
                                    {PipelineLayout::fromChunks(chunks, m_opt.layout_shorthand, mtpLayers())}, true});
            } else if (plan.vpp > 1) {
                par.args.push_back({"--num-layers-per-virtual-pipeline-stage", {std::to_string(layers.front() / plan.vpp)}});
            }
        }
        addRecompute(par);
        m_groups.push_back(par);

        if (!megatron)
            m_groups.push_back(heteroGroup());

        ArgGroup train{"TRAINING_ARGS", "batch and precision", {}};
        train.args.push_back({"--micro-batch-size", {std::to_string(s0.micro_batch_size)}});
        train.args.push_back({"--global-batch-size", {std::to_string(plan.global_batch_size)}});
        train.args.push_back({m.training.precision == Precision::FP16 ? "--fp16" : "--bf16", {}});
        if (m.training.fp8())
            train.args.push_back({"--fp8-format", {toString(m.training.fp8_format)}});
        // The recipe the casts were costed with (section 3.7), where it is not Megatron-LM's
        // default or the original spelled it out.
        if (m.training.fp8() && (m.training.fp8_recipe != Fp8Recipe::Delayed || originalGave("--fp8-recipe")))
            train.args.push_back({"--fp8-recipe", {toString(m.training.fp8_recipe)}});
        // FP8 weights (section 5.1 of docs/cost-model.md), from the plan's model: Megatron-LM
        // gathers them only with the distributed optimizer or an FSDP variant, and with optimizer
        // offload only under the delayed recipe, the default (reference sections 3 and 6).
        if (m.training.fp8() && m.training.fp8_param_gather) {
            const std::string recipe = toString(m.training.fp8_recipe);
            if (!plan.distributed_optimizer)
                m_notes.push_back("--fp8-param-gather -> not written (it needs the distributed optimizer or an FSDP variant; "
                                  "the plan does not use the distributed optimizer)");
            else if (plan.optimizer_offload_fraction > 0 && recipe != "delayed")
                m_notes.push_back("--fp8-param-gather -> not written (with the plan's optimizer CPU offload it needs "
                                  "--fp8-recipe delayed, not " + recipe + ")");
            else
                train.args.push_back({"--fp8-param-gather", {}});
        }
        // The gradient precision the plan was costed with, where it is not the precision's default.
        if (m.training.precision == Precision::FP16 && m.training.fp32Gradients())
            train.args.push_back({"--accumulate-allreduce-grads-in-fp32", {}});
        else if (m.training.precision == Precision::BF16 && !m.training.fp32Gradients())
            train.args.push_back({"--grad-reduce-in-bf16", {}});
        // The cross-entropy's kernels the last stage was costed with (docs/cost-model.md 3.6).
        if (m.training.cross_entropy_loss_fusion) {
            train.args.push_back({"--cross-entropy-loss-fusion", {}});
            // Megatron-LM d98e8a64 refuses Transformer Engine's fused cross-entropy
            // (validate_args asserts not (cross_entropy_loss_fusion and impl == 'te'), "disabled
            // due to stability issues"); FlagScale's Megatron-LM 8479eb35 runs it.
            const bool teRefused = megatron && m.training.cross_entropy_fusion_impl == CrossEntropyFusionImpl::TE;
            if (teRefused) {
                train.args.push_back({"--cross-entropy-fusion-impl", {"native"}});
                m_notes.push_back(std::string("--cross-entropy-fusion-impl te -> native (Megatron-LM d98e8a64 refuses Transformer "
                                              "Engine's fused cross-entropy; ")
                                  + (m_doc.plan.target == Target::Megatron
                                         ? "the plan, made for Megatron-LM, was costed with native"
                                         : std::string(m_doc.plan.target == Target::FlagScale ? "the plan, made for FlagScale"
                                                                                               : "the plan, made for either framework")
                                               + ", was costed with te, and native's passes over the logits make the last "
                                                 "stage slower: estimate or search with the target megatron")
                                  + "; docs/cost-model.md section 3.6)");
            } else if (m_doc.plan.target == Target::Megatron
                       && m.training.cross_entropy_fusion_impl == CrossEntropyFusionImpl::TE) {
                // A plan made for Megatron-LM was costed with native (the te kernels it refuses):
                // the FlagScale launcher runs what was costed.
                train.args.push_back({"--cross-entropy-fusion-impl", {"native"}});
                m_notes.push_back("--cross-entropy-fusion-impl te -> native (the plan, made for Megatron-LM, was costed with "
                                  "native, which Megatron-LM d98e8a64 runs in place of te; FlagScale runs te, faster on the last "
                                  "stage: estimate or search with the target flagscale for a plan costed with it; "
                                  "docs/cost-model.md section 3.6)");
            } else if (m.training.cross_entropy_fusion_impl != CrossEntropyFusionImpl::Native
                       || originalGave("--cross-entropy-fusion-impl")) {
                train.args.push_back({"--cross-entropy-fusion-impl", {toString(m.training.cross_entropy_fusion_impl)}});
            }
        }
        if (!m_opt.original) {
            // A runnable benchmark without the user's data: mock data and a null tokenizer.
            train.args.push_back({"--train-iters", {"100"}});
            train.args.push_back({"--lr", {"1.0e-4"}});
            train.args.push_back({"--log-interval", {"1"}});
        }
        m_groups.push_back(train);

        if (!m_opt.original) {
            ArgGroup data{"DATA_ARGS", "mock data for a benchmark run; replace with --data-path and a tokenizer", {}};
            data.args.push_back({"--mock-data", {}});
            data.args.push_back({"--tokenizer-type", {"NullTokenizer"}});
            // Megatron-LM d98e8a64's NullTokenizer has exactly its --vocab-size; the one of
            // FlagScale's Megatron-LM 8479eb35 (the same null_tokenizer.py, earlier) adds the
            // end-of-document token (vocab_size returns _vocab_size_without_eod + 1).
            data.args.push_back({"--vocab-size", {std::to_string(megatron ? m.vocab_size : std::max(1, m.vocab_size - 1))}});
            m_groups.push_back(data);
        } else {
            m_groups.push_back(carriedOver());
            // Megatron-LM builds no tokenizer without --tokenizer-type (build_tokenizer raises
            // for None): an original that names its tokenizer otherwise (a fork's own flag,
            // dropped above) leaves the launcher without one.
            const bool named = std::any_of(m_groups.begin(), m_groups.end(), [](const ArgGroup& g) {
                return std::any_of(g.args.begin(), g.args.end(), [](const Arg& a) { return a.flag == "--tokenizer-type"; });
            });
            if (!named)
                m_notes.push_back("--tokenizer-type: not written, as the original passes none the launcher keeps (a fork's own "
                                  "tokenizer flag is left out above); Megatron-LM builds no tokenizer without it: add "
                                  "--tokenizer-type with its files (for a benchmark, mock data and NullTokenizer with --vocab-size)");
        }
    }

    // Megatron-LM builds a learned absolute position table unless told otherwise
    // (--position-embedding-type defaults to learned_absolute: megatron-lm-flags-detailed.tsv). The cost
    // model counts that table only for the models LayerShape gives learned positions
    // (docs/cost-model.md section 1), so every other model is written with rope. An original
    // script that chooses the position embedding keeps its choice (carried over); a choice
    // that disagrees with the costed model is noted.
    void addPositionEmbedding(ArgGroup& g)
    {
        const bool learned = LayerShape::of(m_doc.model).learnedPositions;
        const std::optional<std::string> original = originalPositionEmbedding();
        if (!original) {
            if (!learned)
                g.args.push_back({"--position-embedding-type", {"rope"}});
            return;
        }
        if ((*original == "learned_absolute") != learned)
            m_notes.push_back("--position-embedding-type: the original's " + *original + " is kept, but the plan was costed for "
                              + m_doc.model.normalization
                              + (learned ? " with learned absolute positions (a position table)" : " with rotary positions (no position table)"));
    }

    // The position embedding the original script chooses, as Megatron-LM resolves it
    // (arguments.py: the deprecated --use-rotary-position-embeddings means rope and
    // --no-position-embedding none), or nothing when it leaves the default.
    std::optional<std::string> originalPositionEmbedding() const
    {
        if (const std::vector<std::string>* v = originalValues("--position-embedding-type"); v && !v->empty())
            return ShellQuote::unquoted(v->front());
        if (originalHas("--use-rotary-position-embeddings"))
            return std::string("rope");
        if (originalHas("--no-position-embedding"))
            return std::string("none");
        return std::nullopt;
    }

    // Layers a stage recomputes: 0 without full recompute, all of them when recompute_layers
    // is 0 or reaches the stage's layers (the plan's convention), else recompute_layers.
    static int recomputedLayers(const StagePlan& st)
    {
        if (st.recompute != Recompute::Full)
            return 0;
        return st.recompute_layers <= 0 || st.recompute_layers >= st.num_layers ? st.num_layers : st.recompute_layers;
    }

    // Whether one --recompute-granularity/-method/-num-layers reproduces every stage: the same
    // granularity everywhere and, with full recompute, either every layer of every stage
    // (uniform 1) or a count n whose block method gives every stage its layers (block n
    // recomputes the first n layers of a stage, or of each model chunk with VPP, all of them
    // where it has n or fewer; reference section 5): stages of 7 and 25 layers recomputing 7
    // each are block 7. Megatron-LM has one setting by construction (megatron.one-recompute).
    bool oneRecomputeSetting() const
    {
        const Plan& plan = m_doc.plan;
        const StagePlan& s0 = first();
        const auto all = [&](auto pred) { return std::all_of(plan.stages.begin(), plan.stages.end(), pred); };
        if (!all([&](const StagePlan& st) { return st.recompute == s0.recompute; }))
            return false;
        if (s0.recompute != Recompute::Full)
            return true;
        return all([](const StagePlan& st) { return recomputedLayers(st) == st.num_layers; }) || blockRecomputeNumLayers(m_doc.plan) > 0;
    }

    void addRecompute(ArgGroup& g)
    {
        const Plan& plan = m_doc.plan;
        const StagePlan& s0 = first();
        if (m_opt.format == LauncherFormat::Megatron || oneRecomputeSetting()) {
            if (s0.recompute == Recompute::Selective) {
                g.args.push_back({"--recompute-granularity", {"selective"}});
                // Megatron-Core's default (core attention) goes unwritten. An original's list is
                // carried over with the plan's modules in place of those the model knows.
                if (s0.recompute_modules != recompute_module::defaults && !originalHas("--recompute-modules"))
                    g.args.push_back({"--recompute-modules", recomputeModuleNames(s0.recompute_modules)});
            } else if (s0.recompute == Recompute::Full) {
                // Every layer: uniform in chunks of 1; k layers per stage: block k (reference section 5).
                g.args.push_back({"--recompute-granularity", {"full"}});
                const bool everyLayer = std::all_of(plan.stages.begin(), plan.stages.end(),
                                                    [](const StagePlan& st) { return recomputedLayers(st) == st.num_layers; });
                if (everyLayer) {
                    g.args.push_back({"--recompute-method", {"uniform"}});
                    g.args.push_back({"--recompute-num-layers", {"1"}});
                } else {
                    // The count per stage, or per model chunk with a virtual pipeline (checks()
                    // made sure one fits there; megatron.one-recompute without).
                    const int n = blockRecomputeNumLayers(m_doc.plan);
                    g.args.push_back({"--recompute-method", {"block"}});
                    g.args.push_back({"--recompute-num-layers", {std::to_string(n)}});
                }
            }
            return;
        }
        // FlagScale per-stage lists: [n_stages, M, flag] per run of stages with one setting
        // (reference section 9). Base setting: full, uniform, 1.
        g.args.push_back({"--recompute-granularity", {"full"}});
        g.args.push_back({"--recompute-method", {"uniform"}});
        g.args.push_back({"--recompute-num-layers", {"1"}});
        const int mb = plan.numMicrobatches();
        Arg gran{"--recompute-granularity-per-stage-micro-batch", {}, true};
        Arg method{"--recompute-method-per-stage-micro-batch", {}, true};
        Arg num{"--recompute-num-layers-per-stage-micro-batch", {}, true};
        // A stage's three flags: off (0, 0, 0), every layer (1, uniform 0, 1), or the first k
        // layers (1, block 1, k). Stages with equal flags share a token, whatever their
        // recompute_layers say (4 of 4 layers is every layer, 4 of 5 is block 4).
        const auto flags = [](const StagePlan& st) {
            const int k = recomputedLayers(st);
            if (k == 0)
                return std::array<int, 3>{0, 0, 0};
            if (k == st.num_layers)
                return std::array<int, 3>{1, 0, 1};
            return std::array<int, 3>{1, 1, k};
        };
        for (int s = 0; s < plan.pp();) {
            const std::array<int, 3> f = flags(plan.stages[static_cast<std::size_t>(s)]);
            int e = s + 1;
            while (e < plan.pp() && flags(plan.stages[static_cast<std::size_t>(e)]) == f)
                ++e;
            auto token = [&](int flag) {
                return "[" + std::to_string(e - s) + ", " + std::to_string(mb) + ", " + std::to_string(flag) + "]";
            };
            gran.values.push_back(token(f[0]));
            method.values.push_back(token(f[1]));
            num.values.push_back(token(f[2]));
            s = e;
        }
        g.args.push_back(gran);
        g.args.push_back(method);
        g.args.push_back(num);
    }

    ArgGroup heteroGroup()
    {
        const Plan& plan = m_doc.plan;
        ArgGroup g{"HETERO_ARGS", "FlagScale heterogeneous meshes: TP CP EP DP PP per mesh", {}};
        g.args.push_back({"--enable-hetero", {}});
        Arg meshes{"--hetero-process-meshes", {}};
        Arg types{"--hetero-device-types", {}};
        Arg etp{"--expert-tensor-parallel-size-per-process-mesh", {}};
        for (const PlanMesh& mesh : planMeshes(plan)) {
            const StagePlan& st = plan.stages[static_cast<std::size_t>(mesh.first_stage)];
            for (int v : {st.tp, st.cp, st.ep, st.dp, mesh.num_stages})
                meshes.values.push_back(std::to_string(v));
            types.values.push_back(st.device_type);
            etp.values.push_back(std::to_string(st.etp));
        }
        g.args.push_back(meshes);
        g.args.push_back(types);
        g.args.push_back({"--hetero-current-device-type", {"${CURRENT_DEVICE_TYPE}"}});
        Arg layerSplit{"--hetero-pipeline-layer-split", {}};
        for (const StagePlan& st : plan.stages)
            layerSplit.values.push_back(std::to_string(st.num_layers));
        g.args.push_back(layerSplit);
        if (m_doc.model.isMoe())
            g.args.push_back(etp);
        // Meshes whose collective libraries cannot talk cross through gloo on the CPU.
        std::set<std::string> libs;
        for (const StagePlan& st : plan.stages)
            libs.insert(libraryOf(m_cat, st.device_type));
        if (libs.size() > 1)
            g.args.push_back({"--hetero-use-cpu-communication", {}});
        const std::vector<PlanMesh> ms = planMeshes(plan);
        const StagePlan& a = plan.stages[static_cast<std::size_t>(ms.front().first_stage)];
        const StagePlan& b = plan.stages[static_cast<std::size_t>(ms.back().first_stage)];
        // Tied embeddings or MTP with the distributed optimizer and different DP on the first
        // and last mesh (flagscale-hetero-flags.txt; pre_validate_args asserts it).
        if ((!m_doc.model.untie_embeddings_and_output_weights || mtpLayers() > 0) && plan.distributed_optimizer && a.dp != b.dp)
            g.args.push_back({"--use-partial-reduce-for-shared-embedding", {}});
        return g;
    }

    // The values of a flag of the original script, or null when there is no original or it
    // does not give the flag.
    const std::vector<std::string>* originalValues(const std::string& name) const
    {
        if (!m_opt.original)
            return nullptr;
        for (const ScriptFlag& f : m_opt.original->other_flags)
            if (f.name == name)
                return &f.values;
        return nullptr;
    }

    // --rampup-batch-size START STEP SAMPLES: Megatron-Core's RampupBatchsizeNumMicroBatchesCalculator
    // asserts that the ramp reaches the global batch (GBS - START >= 0 and a multiple of STEP),
    // and every batch of it (START + k STEP) is a multiple of MBS x DP ("current global batch
    // size ... is not divisible by micro_batch_size * data_parallel_size") unless the original
    // lets Megatron-LM round it down (--decrease-batch-size-if-needed). Why the plan cannot
    // carry the ramp, or empty when it can.
    static std::string rampProblem(const ScriptFlag& f, int globalBatch, int step, bool roundsDown)
    {
        const auto value = [&](std::size_t i) { return f.values.size() > i ? ShellQuote::unquoted(f.values[i]) : std::string(); };
        const long start = std::strtol(value(0).c_str(), nullptr, 10);
        const long increment = std::strtol(value(1).c_str(), nullptr, 10);
        if (f.values.size() != 3 || start <= 0 || increment <= 0 || globalBatch < start || (globalBatch - start) % increment != 0)
            return "the ramp from " + value(0) + " by " + value(1) + " does not reach the plan's global batch " + std::to_string(globalBatch)
                + " (Megatron-Core's RampupBatchsizeNumMicroBatchesCalculator asserts that it does)";
        if (!roundsDown && (step <= 0 || start % step != 0 || increment % step != 0))
            return "every batch of the ramp must be a multiple of the plan's micro-batch step MBS x DP = " + std::to_string(step)
                + " (Megatron-Core's RampupBatchsizeNumMicroBatchesCalculator asserts it), and its start " + value(0) + " and step "
                + value(1) + " are not";
        return {};
    }

    // Megatron-LM's schedule needs PP <= N <= M and M % N either 0 or >= PP (reference section 2).
    static bool microbatchGroupFits(const ScriptFlag& f, int pp, int microbatches)
    {
        if (f.values.empty())
            return false;
        const long n = std::strtol(ShellQuote::unquoted(f.values.front()).c_str(), nullptr, 10);
        return n >= pp && n <= microbatches && (microbatches % n == 0 || microbatches % n >= pp);
    }

    // Why the plan cannot run Megatron-LM's EP all-to-all overlap (reference section 5), or
    // empty when it can.
    std::string a2aOverlapConflict() const
    {
        const Plan& plan = m_doc.plan;
        const auto anyStage = [&](auto pred) { return std::any_of(plan.stages.begin(), plan.stages.end(), pred); };
        if (!anyStage([](const StagePlan& st) { return st.ep > 1; }))
            return "it needs EP > 1";
        if (plan.pp() > 1 && plan.vpp <= 1)
            return "it needs a virtual pipeline when PP > 1";
        if (m_doc.model.moe_token_dispatcher_type == TokenDispatcher::AllGather)
            return "it needs the alltoall or flex dispatcher";
        if (anyStage([](const StagePlan& st) { return st.recompute == Recompute::Full; }))
            return "it cannot be combined with full recompute";
        // Megatron-LM d98e8a64 (TransformerConfig: "disable moe in recompute_modules when
        // enabling overlap_moe_expert_parallel_comm"); FlagScale's 8479eb35 has no such rule.
        if (m_opt.format == LauncherFormat::Megatron && anyStage([](const StagePlan& st) {
                return st.recompute == Recompute::Selective && (st.recompute_modules & recompute_module::moe);
            }))
            return "it cannot be combined with recomputing the whole MoE layer (moe)";
        return {};
    }

    // The original's --overlap-moe-expert-parallel-comm goes into the launcher (and with it
    // --delay-wgrad-compute, which transformer_config.py allows only with it).
    bool a2aOverlapCarried() const
    {
        return m_opt.original && m_opt.original->given_flags.count("--overlap-moe-expert-parallel-comm") > 0
            && a2aOverlapConflict().empty();
    }

    // The values the launcher writes for a flag, or nothing when it does not write it.
    std::optional<std::vector<std::string>> emittedValues(const std::string& flag) const
    {
        for (const ArgGroup& g : m_groups)
            for (const Arg& a : g.args)
                if (a.flag == flag)
                    return a.values;
        return std::nullopt;
    }

    // One note per parallel, recompute or batch flag of the original whose value the plan
    // replaces ("--expert-model-parallel-size 8 -> 4 (the plan's)"), or that the launcher no
    // longer writes, with why. The original's values are those the importer mapped
    // (ParallelConfig); the model's shape flags are the plan model's (see the note on
    // another model).
    void noteReplacedValues()
    {
        const ImportedScript& o = *m_opt.original;
        if (m_opt.format == LauncherFormat::Megatron && m_opt.entry_script.empty() && isFlagScaleEntry(o.entry_script))
            m_notes.push_back("the original's entry " + o.entry_script + " -> pretrain_gpt.py (a Megatron-LM launcher runs "
                              "Megatron-LM's entry; FlagScale's needs its PYTHONPATH, which --format flagscale writes)");
        const ParallelConfig& op = o.parallel;
        const Plan& plan = m_doc.plan;
        const StagePlan& s0 = first();
        const auto given = [&](const std::string& flag) { return o.given_flags.count(flag) > 0; };
        // origFlag with origValues was given; the plan's launcher writes planFlag (the same
        // flag, or the one an alias stands for), unchanged when it carries planValues.
        const auto compare = [&](const std::string& origFlag, const std::vector<std::string>& origValues,
                                 const std::string& planFlag, const std::vector<std::string>& planValues, const std::string& whyAbsent) {
            const std::optional<std::vector<std::string>> now = emittedValues(planFlag);
            if (now && *now == planValues)
                return;
            std::string line = origFlag;
            for (const std::string& v : origValues)
                line += " " + v;
            line += " ->";
            if (now) {
                if (planFlag != origFlag)
                    line += " " + planFlag;
                for (const std::string& v : *now)
                    line += " " + v;
                line += " (the plan's)";
            } else {
                line += " not written (" + whyAbsent + ")";
            }
            m_notes.push_back(line);
        };
        const auto same = [&](const std::string& flag, const std::vector<std::string>& values, const std::string& whyAbsent) {
            if (given(flag))
                compare(flag, values, flag, values, whyAbsent);
        };
        const auto num = [](long long v) { return std::vector<std::string>{std::to_string(v)}; };
        const std::string noExperts = "the plan's model has no experts";

        same("--tensor-model-parallel-size", num(op.tp), "");
        // Deprecated: the importer ignores it (Megatron-LM asserts it is unset).
        if (given("--model-parallel-size"))
            m_notes.push_back("--model-parallel-size -> not written (deprecated, Megatron-LM asserts it is unset; the plan's "
                              "--tensor-model-parallel-size is " + std::to_string(s0.tp) + ")");
        same("--pipeline-model-parallel-size", num(op.pp), "");
        same("--context-parallel-size", num(op.cp), "");
        same("--expert-model-parallel-size", num(op.ep), noExperts);
        if (op.etp > 0)
            same("--expert-tensor-parallel-size", num(op.etp), noExperts);
        same("--sequence-parallel", {},
             plan.sequence_parallel ? "sequence parallelism needs TP > 1, the plan's TP is " + std::to_string(s0.tp)
                                    : "the plan has no sequence parallelism");
        same("--use-distributed-optimizer", {}, "the plan does not use the distributed optimizer");

        const std::string recompute = "the plan's recompute is " + std::string(toString(s0.recompute));
        if (emittedValues("--recompute-granularity-per-stage-micro-batch")) {
            if (op.recompute != Recompute::None)
                m_notes.push_back(std::string("--recompute-granularity ") + (op.recompute == Recompute::Full ? "full" : "selective")
                                  + " -> the plan's recompute per stage (--recompute-*-per-stage-micro-batch)");
        } else if (op.recompute != Recompute::None)
            same("--recompute-granularity", {op.recompute == Recompute::Full ? "full" : "selective"}, recompute);
        if (given("--recompute-activations") && !given("--recompute-granularity") && !emittedValues("--recompute-granularity-per-stage-micro-batch"))
            compare("--recompute-activations", {}, "--recompute-granularity", {"selective"}, recompute);
        if (op.recompute == Recompute::Full && !op.recompute_method.empty())
            same("--recompute-method", {op.recompute_method}, recompute);
        if (op.recompute == Recompute::Full && op.recompute_method == "block")
            same("--recompute-num-layers", num(op.recompute_layers), recompute);
        else if (op.recompute == Recompute::Full && op.recompute_num_layers > 0)
            same("--recompute-num-layers", num(op.recompute_num_layers), recompute);   // uniform: its chunk

        same("--micro-batch-size", num(op.micro_batch_size), "");
        if (op.global_batch_size > 0)
            same("--global-batch-size", num(op.global_batch_size), "");
        if (m_doc.model.training.precision == Precision::BF16)
            same("--fp16", {}, "the plan's model trains in bf16");
        else
            same("--bf16", {}, "the plan's model trains in fp16");
        if (m_doc.model.training.fp8())
            same("--fp8-format", {toString(m_doc.model.training.fp8_format)}, "");
        else
            same("--fp8-format", {}, "the plan's model runs its GEMMs in "
                                         + std::string(toString(m_doc.model.training.precision)) + ", not FP8");
        if (m_doc.model.training.fp8())
            same("--fp8-recipe", {toString(m_doc.model.training.fp8_recipe)}, "");
        else
            same("--fp8-recipe", {}, "the plan's model does not train in FP8 (no --fp8-format)");
        if (given("--fp8-param-gather") && !(m_doc.model.training.fp8() && m_doc.model.training.fp8_param_gather))
            same("--fp8-param-gather", {}, "the plan's model keeps its weights in " + std::string(toString(m_doc.model.training.precision)));
        // The precision of the gradient reduction: the plan's model's, which its data-parallel
        // traffic was costed with (4 bytes per gradient in fp32, 2 in bf16 or fp16).
        if (m_doc.model.training.fp32Gradients())
            same("--grad-reduce-in-bf16", {}, "the plan's model reduces gradients in fp32");
        else
            same("--accumulate-allreduce-grads-in-fp32", {}, "the plan's model reduces gradients in its training precision");

        // The virtual pipeline and the layer split: the plan writes its own.
        const std::string vppWhy = plan.vpp > 1 ? "the plan's split is written as --pipeline-model-parallel-layout"
                                                : "the plan has no virtual pipeline";
        // The original's value, with the embedding and loss counted as layers when its
        // account-for flags say so (validate_args; reference section 2).
        const int counted = o.model.num_layers + (given("--account-for-embedding-in-pipeline-split") ? 1 : 0)
            + (given("--account-for-loss-in-pipeline-split") ? 1 : 0);
        if (op.vpp > 1 && op.pp > 0 && counted % (op.pp * op.vpp) == 0)
            same("--num-layers-per-virtual-pipeline-stage", num(counted / (op.pp * op.vpp)), vppWhy);
        else if (op.vpp <= 1 && op.pp > 0 && counted % op.pp == 0)   // a chunk as large as the rank's layers (VPP 1): named too
            same("--num-layers-per-virtual-pipeline-stage", num(counted / op.pp), vppWhy);
        // The plan's split is written layer by layer (or evenly): counting the embedding or the
        // loss as a layer is the original's way of writing its own split.
        for (const char* f : {"--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"})
            if (given(f))
                m_notes.push_back(std::string(f) + ": not written (the plan's decoder layers per stage are written "
                                  + (emittedValues("--pipeline-model-parallel-layout") ? "as --pipeline-model-parallel-layout" : "as an even split")
                                  + ", with the embedding and the loss where the plan costs them)");
        if (given("--num-virtual-stages-per-pipeline-rank") && op.vpp != plan.vpp)
            m_notes.push_back("--num-virtual-stages-per-pipeline-rank " + std::to_string(op.vpp) + " -> not written (the plan's VPP is "
                              + std::to_string(plan.vpp) + ")");
        if (!op.layer_split.empty() && op.layer_split != split()) {
            std::string flag;
            for (const char* f : {"--pipeline-model-parallel-layout", "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers"})
                if (given(f))
                    flag += (flag.empty() ? "" : "/") + std::string(f);
            const auto list = [](const std::vector<int>& v) {
                std::string out;
                for (int n : v)
                    out += (out.empty() ? "" : ",") + std::to_string(n);
                return out;
            };
            if (!flag.empty())
                m_notes.push_back(flag + ": layers per stage " + list(op.layer_split) + " -> " + list(split()) + " (the plan's)");
        }
    }

    // The original script's other flags, minus those the plan sets or that conflict with it.
    ArgGroup carriedOver()
    {
        ArgGroup g{"OTHER_ARGS", "carried over from " + commentSafe(m_opt.original->file), {}};
        const Plan& plan = m_doc.plan;
        const bool megatron = m_opt.format == LauncherFormat::Megatron;
        // An original for another model still lends its data, tokenizer and logging flags,
        // but the user should know that the two were not made for each other.
        const ModelSpec& om = m_opt.original->model;
        const ModelSpec& pm = m_doc.model;
        if (om.num_layers != pm.num_layers || om.hidden_size != pm.hidden_size
            || om.num_attention_heads != pm.num_attention_heads || om.num_experts != pm.num_experts)
            m_notes.push_back("the original script describes another model (" + std::to_string(om.num_layers) + " layers, hidden "
                              + std::to_string(om.hidden_size) + ", " + std::to_string(om.num_experts) + " experts) than the plan ("
                              + std::to_string(pm.num_layers) + " layers, hidden " + std::to_string(pm.hidden_size) + ", "
                              + std::to_string(pm.num_experts) + " experts); the plan's model is written");
        noteReplacedValues();
        const FlagList& list = megatron ? FlagList::megatron() : FlagList::flagscale();
        std::set<std::string> emitted;
        for (const ArgGroup& grp : m_groups)
            for (const Arg& a : grp.args)
                emitted.insert(a.flag);
        const StagePlan& s0 = first();
        const bool selective = s0.recompute == Recompute::Selective;
        const std::string a2aConflict = a2aOverlapConflict();
        const bool a2aCarried = a2aOverlapCarried();
        // Megatron-LM d98e8a64 (TransformerConfig, not FlagScale's 8479eb35) refuses two of the
        // MoE recipes' switches with the whole MoE layer recomputed: Transformer Engine's CUDA
        // graphs of the moe_router scope ("moe recompute is not supported with moe_router CUDA
        // graph") and fine-grained offloading of activations inside the layer ("Cannot offload
        // ... while recomputing the entire MoE layer"). Neither is modelled; the plan runs
        // without them.
        const bool recomputesMoe = megatron && std::any_of(plan.stages.begin(), plan.stages.end(), [](const StagePlan& st) {
            return st.recompute == Recompute::Selective && (st.recompute_modules & recompute_module::moe);
        });
        const auto originalListHas = [&](const std::string& flag, std::initializer_list<const char*> names) {
            const std::vector<std::string>* v = originalValues(flag);
            return v && std::any_of(v->begin(), v->end(), [&](const std::string& w) {
                       const std::string name = ShellQuote::unquoted(w);
                       return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
                   });
        };
        // (--cuda-graph-modules, or --cuda-graph-scope, its deprecated alias in arguments.py.)
        const bool graphConflict = recomputesMoe
            && (originalFirst("--cuda-graph-impl", "none") == "transformer_engine" || originalHas("--external-cuda-graph"))
            && (originalListHas("--cuda-graph-modules", {"moe_router"}) || originalListHas("--cuda-graph-scope", {"moe_router"}));
        const bool offloadConflict = recomputesMoe && originalHas("--fine-grained-activation-offloading")
            && originalListHas("--offload-modules", {"moe_act", "expert_fc1", "fused_group_mlp"});
        const bool anyRecompute = std::any_of(plan.stages.begin(), plan.stages.end(),
                                              [](const StagePlan& st) { return st.recompute != Recompute::None; });
        const int microbatches = plan.numMicrobatches();
        // --hierarchical-context-parallel-sizes must multiply to CP, and --cp-comm-type a2a+p2p
        // needs it (reference section 2).
        const std::vector<std::string>* hierarchical = originalValues("--hierarchical-context-parallel-sizes");
        bool hierarchicalFits = hierarchical != nullptr;
        if (hierarchical) {
            double product = 1;
            for (const std::string& v : *hierarchical)
                product *= std::strtod(ShellQuote::unquoted(v).c_str(), nullptr);
            hierarchicalFits = product == s0.cp;
        }
        const auto firstValue = [&](const std::string& flag) -> std::optional<std::string> {
            const std::vector<std::string>* v = originalValues(flag);
            if (!v || v->empty())
                return std::nullopt;
            return ShellQuote::unquoted(v->front());
        };
        // Megatron-LM asserts "not use_dist_ckpt" for --overlap-param-gather-with-optimizer-step,
        // and checkpoints are distributed unless --ckpt-format is torch (default torch_dist:
        // reference section 6 and megatron-lm-flags-detailed.tsv).
        const std::string ckptFormat = firstValue("--ckpt-format").value_or("torch_dist");
        // Values only Megatron-LM d98e8a64 accepts (reference section 1): FlagScale's 8479eb35
        // allows softmax and sigmoid score functions, no quantile_balancing, and none of the
        // gdn_*, gdp_* and mhc recompute modules. List flags lose those entries, and
        // --moe-aux-loss-coeff, given one coefficient per load-balancing type, loses theirs.
        const auto headOnlyValue = [&](const std::string& flag, const std::string& v) {
            if (megatron)
                return false;
            if (flag == "--moe-router-score-function")
                return v == "sqrtsoftplus";
            if (flag == "--moe-router-load-balancing-type")
                return v == "quantile_balancing";
            if (flag == "--recompute-modules")
                return headOnlyRecomputeModule(v);
            return false;
        };
        const bool scoreFunctionDropped = headOnlyValue("--moe-router-score-function", firstValue("--moe-router-score-function").value_or(""));
        // Without --fp8-format (the plan's model trains without FP8) the other FP8 flags have
        // nothing to tune. (An FP8 plan with a stage on a device without FP8, which Transformer
        // Engine's check_fp8_support stops, is refused before: fp8-needs-device.)
        const std::string noFp8 = m_doc.model.training.fp8() ? std::string()
                                                             : "the plan's model does not train in FP8 (no --fp8-format)";
        std::vector<bool> balancingDropped;   // per load-balancing type of the original
        if (const std::vector<std::string>* types = originalValues("--moe-router-load-balancing-type"))
            for (const std::string& v : *types)
                balancingDropped.push_back(headOnlyValue("--moe-router-load-balancing-type", ShellQuote::unquoted(v)));
        // A --padded-vocab-size is the one size of every stage (every FlagScale mesh too), so it
        // is padded for the least common multiple of their TPs (one TP in a Megatron-LM plan).
        int tpMultiple = 1;
        for (const StagePlan& st : plan.stages)
            tpMultiple = std::lcm(tpMultiple, std::max(1, st.tp));
        const std::string paddedVocab = std::to_string(static_cast<long long>(m_doc.model.paddedVocabSize(tpMultiple)));
        // What --vocab-size says for the plan's vocabulary: one less under the NullTokenizer of
        // FlagScale's Megatron-LM, which adds its end-of-document token (Megatron-LM d98e8a64's
        // does not).
        const int vocabFlag = !megatron && originalFirst("--tokenizer-type", "") == "NullTokenizer"
            ? std::max(1, m_doc.model.vocab_size - 1)
            : m_doc.model.vocab_size;
        // An entry script of another project (Pai-Megatron-Patch's pretrain_qwen.py, Megatron-LM's
        // examples/multimodal/train.py) adds flags of its own to Megatron-LM's parser
        // (extra_args_provider): its flags outside Megatron-LM's list are carried over for it.
        const std::string runEntry = megatron ? entry("pretrain_gpt.py") : std::string();
        const std::string entryBase = runEntry.substr(runEntry.rfind('/') + 1);
        const bool foreignEntry = megatron && entryBase != "pretrain_gpt.py" && entryBase != "pretrain_mamba.py"
            && entryBase != "pretrain_hybrid.py" && entryBase != "pretrain_bert.py" && entryBase != "pretrain_t5.py";
        std::vector<std::string> foreignFlags;   // kept for the foreign entry, named in one note
        // Per variable of the original's environment, the carried-over flags whose values it gave.
        std::vector<std::pair<std::string, std::vector<std::string>>> frozen, kept;
        for (const ScriptFlag& f : m_opt.original->other_flags) {
            std::string why;
            const std::string ramp = f.name == "--rampup-batch-size"
                ? rampProblem(f, plan.global_batch_size, plan.global_batch_size / std::max(1, microbatches),
                              originalHas("--decrease-batch-size-if-needed"))
                : std::string();
            if (ShellQuote::isReference(f.name)) {
                // Words from a variable the original took from the environment (EXTRA_ARGS):
                // unquoted, bash splits them into the arguments the variable holds, none when
                // it is unset or empty, as in the original.
                const std::string name = f.name.substr(2, f.name.size() - 3);
                g.args.push_back({"${" + name + ":-}", {}, false, true});
                m_notes.push_back(f.name + ": carried over unquoted, so bash splits it into the arguments " + name
                                  + " holds when the launcher runs (none when it is unset), as in the original");
                continue;
            }
            if (f.name.size() < 2 || f.name[0] != '-')
                why = "a value without a flag";
            else if (f.name.rfind("--fp8-", 0) == 0 && !noFp8.empty())
                why = noFp8;
            else if (!ramp.empty())
                why = ramp;
            else if (emitted.count(f.name))
                why = "the plan sets it";
            else if (!list.contains(f.name) && !foreignEntry)
                why = std::string("not an option of ") + (megatron ? "Megatron-LM d98e8a64" : "FlagScale's Megatron-LM 8479eb35");
            else if (f.name == "--moe-grouped-gemm")
                why = "the plan's devices decide it";
            else if ((f.name == "--mtp-num-layers" || f.name == "--mtp-loss-scaling-factor") && m_doc.model.mtp_num_layers <= 0)
                why = "the plan's model has no multi-token prediction, and was costed without";
            else if (f.name == "--recompute-modules" && !selective)
                why = "only used with selective recompute";
            else if (f.name == "--distribute-saved-activations" && (s0.recompute != Recompute::Full || s0.tp == 1 || plan.sequence_parallel))
                why = "needs full recompute, TP > 1 and no sequence parallelism";
            else if (f.name == "--moe-layer-recompute")
                why = "deprecated; the plan's recompute is written instead";
            else if (f.name == "--overlap-param-gather-with-optimizer-step" && !emitted.count("--overlap-param-gather"))
                why = "it needs --overlap-param-gather, which needs the distributed optimizer; the plan does not use it";
            else if ((f.name == "--microbatch-group-size-per-virtual-pipeline-stage" || f.name == "--overlap-param-gather-with-optimizer-step")
                     && plan.vpp == 1)
                why = "needs a virtual pipeline";
            else if (f.name == "--overlap-param-gather-with-optimizer-step" && ckptFormat != "torch")
                why = "it is not supported with distributed checkpointing, which --ckpt-format " + ckptFormat
                    + (originalHas("--ckpt-format") ? "" : " (Megatron-LM's default)") + " is; --ckpt-format torch allows it";
            else if (f.name == "--hybrid-context-parallel" && plan.pp() > 1)
                why = "it cannot be used with PP > 1; the plan's PP is " + std::to_string(plan.pp());
            else if (f.name == "--moe-router-enable-expert-bias" && scoreFunctionDropped)
                why = "it needs --moe-router-score-function sigmoid, and the original's sqrtsoftplus is not carried over";
            else if (f.name == "--overlap-param-gather" && !plan.distributed_optimizer)
                why = "needs the distributed optimizer";
            else if ((f.name == "--optimizer-cpu-offload" || f.name == "--optimizer-offload-fraction"
                      || f.name == "--overlap-cpu-optimizer-d2h-h2d" || f.name == "--use-torch-optimizer-for-cpu-offload")
                     && plan.optimizer_offload_fraction <= 0)
                why = "the plan keeps the optimizer on the devices";
            else if ((f.name == "--cp-comm-type" || f.name == "--hierarchical-context-parallel-sizes") && s0.cp == 1)
                why = "context parallelism is off";
            else if (f.name == "--tp-comm-overlap" && (s0.tp == 1 || !plan.sequence_parallel))
                why = "needs TP > 1 with sequence parallelism";
            else if (f.name == "--tp-comm-overlap" && !plan.oneTpSize())
                why = "the stages' TP sizes differ, and Transformer Engine's userbuffers take one";
            else if (f.name == "--use-tp-pp-dp-mapping")
                why = "it changes the rank order that places stages on nodes";
            else if (f.name == "--num-distributed-optimizer-instances")
                why = "the plan's DP decides the optimizer sharding";
            else if (f.name.rfind("--hetero-", 0) == 0 || f.name == "--enable-hetero"
                     || f.name == "--expert-tensor-parallel-size-per-process-mesh"
                     || f.name.find("-per-stage-micro-batch") != std::string::npos
                     || f.name == "--use-partial-reduce-for-shared-embedding")
                why = "the plan's meshes decide it";
            else if (f.name == "--standalone-embedding-stage" && !megatron)
                why = "FlagScale's heterogeneous mode forbids it";
            else if (f.name == "--vocab-size" && !f.values.empty() && ShellQuote::unquoted(f.values.front()) != std::to_string(vocabFlag)
                     && !originalHas("--padded-vocab-size")) {
                // (With --padded-vocab-size the model's vocabulary is that one, and --vocab-size
                // the tokenizer's, which is kept.)
                // The plan was costed with its model's vocabulary: that one is written.
                m_notes.push_back("--vocab-size: the original's " + ShellQuote::unquoted(f.values.front()) + " is replaced by the plan model's "
                                  + std::to_string(m_doc.model.vocab_size)
                                  + (vocabFlag != m_doc.model.vocab_size ? " (" + std::to_string(vocabFlag) + " for the NullTokenizer of FlagScale's Megatron-LM, which adds one)" : ""));
                g.args.push_back({"--vocab-size", {std::to_string(vocabFlag)}});
                continue;
            }
            else if (f.name == "--padded-vocab-size" && !f.values.empty() && ShellQuote::unquoted(f.values.front()) != paddedVocab) {
                // The vocabulary the plan's layers were costed with (padded for its TP).
                m_notes.push_back("--padded-vocab-size: the original's " + ShellQuote::unquoted(f.values.front()) + " is replaced by the plan model's "
                                  + paddedVocab);
                g.args.push_back({"--padded-vocab-size", {paddedVocab}});
                continue;
            }
            else if (f.name == "--no-overlap-p2p-communication" && plan.vpp > 1 && plan.pp() <= 2)
                why = "with a virtual pipeline it needs PP > 2";
            else if (f.name == "--microbatch-group-size-per-virtual-pipeline-stage" && !microbatchGroupFits(f, plan.pp(), microbatches))
                why = "it must be from PP to the " + std::to_string(microbatches) + " micro-batches per iteration, and leave M % N 0 or >= PP";
            else if (f.name == "--hierarchical-context-parallel-sizes" && !hierarchicalFits)
                why = "its sizes must multiply to the plan's CP " + std::to_string(s0.cp);
            else if (f.name == "--cp-comm-type" && !hierarchicalFits
                     && std::any_of(f.values.begin(), f.values.end(), [](const std::string& v) { return ShellQuote::unquoted(v).find("a2a+p2p") != std::string::npos; }))
                why = "a2a+p2p needs --hierarchical-context-parallel-sizes that multiply to the plan's CP";
            else if (f.name == "--cpu-offloading-num-layers" && (plan.pp() > 1 || anyRecompute))
                why = "activation offload cannot be combined with PP > 1 or recompute";
            else if (f.name == "--use-megatron-fsdp" || f.name == "--use-torch-fsdp2" || f.name == "--data-parallel-sharding-strategy"
                     || (f.name == "--ckpt-format" && !f.values.empty() && ShellQuote::unquoted(f.values.front()) == "fsdp_dtensor"))
                why = "the plan is costed and written for the distributed optimizer, not FSDP";
            else if (f.name == "--overlap-moe-expert-parallel-comm" && !a2aConflict.empty())
                why = a2aConflict + " in this plan";
            else if (f.name == "--delay-wgrad-compute" && !a2aCarried)
                why = "it needs --overlap-moe-expert-parallel-comm";
            else if (graphConflict && (f.name == "--cuda-graph-impl" || f.name == "--external-cuda-graph" || f.name == "--cuda-graph-scope"
                                       || f.name == "--cuda-graph-modules"))
                why = "Megatron-LM does not run Transformer Engine's CUDA graphs of the moe_router scope with the whole MoE layer "
                      "recomputed (moe) in this plan";
            else if (offloadConflict && (f.name == "--fine-grained-activation-offloading" || f.name == "--offload-modules"))
                why = "Megatron-LM does not offload activations inside the MoE layer (moe_act, expert_fc1, fused_group_mlp) "
                      "that this plan recomputes whole (moe)";
            else if (f.name == "--use-dualpipev")
                why = "another pipeline schedule; the plan is costed and written for 1F1B";
            else if (f.name == "--moe-fb-overlap")
                why = "it needs DualPipeV and cannot be combined with --overlap-grad-reduce, which the plan's script switches on";
            if (why == "the plan sets it") {
                // Written again from the plan; say so when the plan's values differ (FlagScale's
                // mesh flags of a heterogeneous original, for example).
                const std::optional<std::vector<std::string>> now = emittedValues(f.name);
                std::vector<std::string> before;
                for (const std::string& v : f.values)
                    before.push_back(ShellQuote::unquoted(v));
                if (now && *now != before && f.name != "--hetero-current-device-type")
                    m_notes.push_back(f.name + (before.empty() ? "" : " " + join(before, " ")) + " -> "
                                      + (now->empty() ? "written without values" : join(*now, " ")) + " (the plan's)");
                continue;
            }
            if (!why.empty()) {
                m_notes.push_back(f.name + ": not carried over (" + why + ")");
                continue;
            }
            const bool entryOwn = foreignEntry && !list.contains(f.name);
            if (entryOwn)
                foreignFlags.push_back(f.name);
            // The original's --tp-comm-overlap is kept, but a plan costed without it predicts
            // its tensor-parallel collectives exposed: the run may be faster than predicted.
            if (f.name == "--tp-comm-overlap" && m_doc.prediction && !m_doc.prediction->overlap.tp_comm)
                m_notes.push_back("--tp-comm-overlap: kept from the original, but the plan was costed without it; its "
                                  "tensor-parallel communication may hide behind the GEMMs and the run be faster than predicted "
                                  "(hapmoe estimate --script on this launcher costs it with the overlap)");
            // Megatron-LM's validate_args asserts Transformer Engine >= 2.8.0 for delayed
            // weight gradients with --overlap-grad-reduce, which the plan's script switches on.
            if (f.name == "--delay-wgrad-compute" && !m_opt.original->parallel.overlap_grad_reduce)
                m_notes.push_back("--delay-wgrad-compute: kept; with --overlap-grad-reduce it needs Transformer Engine >= 2.8.0");
            Arg a{f.name, {}};
            a.entry_own = entryOwn;
            std::vector<std::string> refused;
            for (std::size_t k = 0; k < f.values.size(); ++k) {
                // $(pwd) and `pwd` are the launcher's folder, ${PWD}; another command the
                // original ran for the value ($(date +%F)) is not run: its text is written, and said.
                const std::string v = pwdAsVariable(ShellQuote::unquoted(f.values[k]));
                // The import kept a value with its quote characters, as bash passed it (a
                // "flag value" array element); the launcher passes the value without them.
                if (ShellQuote::isQuoted(f.values[k]))
                    m_notes.push_back(f.name + ": the original passes " + f.values[k] + " with its quote characters, which "
                                      "Megatron-LM would take as part of the value; written without them, " + v);
                if (runsCommand(v))
                    m_notes.push_back(f.name + ": the original ran a command for its value, which the launcher does not run; "
                                      "written as the text " + v + " (set it by hand)");
                const bool coefficientOfDropped = f.name == "--moe-aux-loss-coeff" && f.values.size() == balancingDropped.size()
                    && balancingDropped[k];
                if (headOnlyValue(f.name, v) || coefficientOfDropped)
                    refused.push_back(v);
                else if (f.name != "--recompute-modules")
                    a.values.push_back(v);
            }
            // The plan's modules (it was costed with them), then the original's others.
            if (f.name == "--recompute-modules") {
                a.values = recomputeModuleNames(s0.recompute_modules);
                const std::vector<std::string> carried = carriedRecomputeModules();
                a.values.insert(a.values.end(), carried.begin(), carried.end());
            }
            if (!refused.empty()) {
                const bool several = refused.size() > 1;
                const std::string because = f.name == "--moe-aux-loss-coeff"
                    ? std::string("one coefficient per load-balancing type, and ") + (several ? "those types are" : "that type is")
                        + " not carried over"
                    : "FlagScale's Megatron-LM 8479eb35 does not accept " + std::string(several ? "these values" : "this value");
                if (a.values.empty()) {
                    m_notes.push_back(f.name + " " + join(refused, " ") + ": not carried over (" + because + ")");
                    continue;
                }
                m_notes.push_back(f.name + " " + join(refused, " ") + ": not carried over (" + because + "); " + join(a.values, " ")
                                  + " kept");
            }
            // A value the original computed from a default of its own for a variable of its
            // environment is written as it was read. The flag's words read the variable, and
            // the value holds the default's text where that text is distinctive: a path
            // anywhere when the flag's own words read it (${DATA:-/data/mix}2/train), else as
            // a whole part (a name: gpt in /logs/gpt/tb, not in gpt2; or any text where only a
            // string of flags bash split read it, whose every word shares the reads of the
            // whole). A number or a short text (${LOG_INTERVAL:-10}) counts only as the whole
            // value, read by the flag's own words.
            std::vector<std::string> gave;   // the variables that gave this flag's values
            for (const std::string& name : f.environment_reads) {
                const auto defaults = m_opt.original->environment_defaults.find(name);
                if (defaults == m_opt.original->environment_defaults.end())
                    continue;
                const bool own = readsItself(f, name);
                auto holds = [&](const std::string& text) {
                    const bool distinctive = text.size() >= 3 && text.find_first_not_of("0123456789.-+eE") != std::string::npos;
                    return !text.empty() && (distinctive || own) && std::any_of(a.values.begin(), a.values.end(), [&](const std::string& v) {
                        if (!distinctive)
                            return v == text;
                        const bool path = text.find('/') != std::string::npos;
                        return own && path ? v.find(text) != std::string::npos : holdsPart(v, text);
                    });
                };
                if (std::none_of(defaults->second.begin(), defaults->second.end(), holds))
                    continue;
                gave.push_back(name);
            }
            // One value from one variable, by the flag's own words, that is the default's text
            // or a path under it: the launcher keeps the hook, "${DATA_HOME:-/data/mix}/train",
            // so that the environment still changes it as it did the original's.
            const std::string hookedName = gave.size() == 1 ? hookFor(gave.front(), f, a) : std::string();
            for (const std::string& name : gave) {
                auto& list = name == hookedName ? kept : frozen;
                auto at = std::find_if(list.begin(), list.end(), [&](const auto& e) { return e.first == name; });
                if (at == list.end())
                    at = list.insert(list.end(), {name, {}});
                if (std::find(at->second.begin(), at->second.end(), f.name) == at->second.end())
                    at->second.push_back(f.name);
            }
            g.args.push_back(a);
        }
        if (!foreignFlags.empty())
            m_notes.push_back("kept for the original's entry " + runEntry + ", which adds flags of its own to Megatron-LM's "
                              "(not options of Megatron-LM d98e8a64): " + join(foreignFlags, ", "));
        noteFrozenEnvironment(frozen, kept);
        return g;
    }

    // Whether the value holds the text as a part of its own: not inside a longer name or
    // number ("gpt" is a part of /logs/gpt/tb and gpt_run, not of gpt2-vocab.json).
    static bool holdsPart(const std::string& value, const std::string& text)
    {
        auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
        for (std::size_t at = value.find(text); at != std::string::npos; at = value.find(text, at + 1)) {
            const std::size_t end = at + text.size();
            const bool starts = at == 0 || !alnum(value[at - 1]) || !alnum(text.front());
            const bool ends = end == value.size() || !alnum(value[end]) || !alnum(text.back());
            if (starts && ends)
                return true;
        }
        return false;
    }

    // The flag's own words read the variable (ScriptFlag::exact_environment_reads).
    static bool readsItself(const ScriptFlag& f, const std::string& name)
    {
        return std::find(f.exact_environment_reads.begin(), f.exact_environment_reads.end(), name) != f.exact_environment_reads.end();
    }

    // Rewrites a's one value as the original's hook on `name` where it can (see above) and
    // returns the name, else "".
    std::string hookFor(const std::string& name, const ScriptFlag& f, Arg& a)
    {
        // The plan was costed with these values: the environment must not change them.
        static const std::set<std::string> costed = {"--vocab-size", "--padded-vocab-size", "--recompute-modules"};
        if (a.values.size() != 1 || !ShellQuote::isValidName(name) || m_noHooks.count(name) || costed.count(f.name)
            || !readsItself(f, name))
            return {};
        const auto defaults = m_opt.original->environment_defaults.find(name);
        if (defaults == m_opt.original->environment_defaults.end())
            return {};
        const std::string& v = a.values.front();
        for (const std::string& text : defaults->second) {
            if (text.empty() || !ShellQuote::isSafe(text) || v.compare(0, text.size(), text) != 0)
                continue;
            const std::string rest = v.substr(text.size());
            if (!rest.empty() && (rest.front() != '/' || !ShellQuote::isSafe(rest)))
                continue;
            a.values.front() = "${" + name + ":-" + text + "}" + rest;
            a.hooked = true;
            m_hooked.insert(name);
            return name;
        }
        return {};
    }

    // The original's values that came from variables of its environment (DATA_HOME, unset
    // when it was read, so that its default ${DATA_HOME:-/data/mix} stood in) are written
    // into the launcher as they were read: the environment no longer changes them.
    void noteFrozenEnvironment(const std::vector<std::pair<std::string, std::vector<std::string>>>& frozen,
                               const std::vector<std::pair<std::string, std::vector<std::string>>>& kept)
    {
        auto listOf = [](const std::vector<std::pair<std::string, std::vector<std::string>>>& byName) {
            std::vector<std::string> parts;
            for (const auto& [name, flags] : byName)
                parts.push_back(name + " (" + join(flags, ", ") + ")");
            return join(parts, "; ");
        };
        if (!kept.empty())
            m_notes.push_back("the original's defaults for variables of its environment are kept, so that the environment "
                              "changes these values as it did the original's: " + listOf(kept));
        if (!frozen.empty())
            m_notes.push_back("values from the original's environment, written as they were when it was read (its defaults where "
                              "unset): " + listOf(frozen) + ". Edit them here: the environment no longer changes them");
        // A default that gave no words (${MORE_ARGS:-}): the environment could give some.
        std::vector<std::string> vanished;
        const auto& defaults = m_opt.original->environment_defaults;
        for (const std::string& name : m_opt.original->vanished_environment_reads) {
            const auto d = defaults.find(name);
            const bool emptyDefault = d != defaults.end()
                && std::any_of(d->second.begin(), d->second.end(), [](const std::string& text) { return text.find_first_not_of(" \t\n") == std::string::npos; });
            auto named = [&](const auto& e) { return e.first == name; };
            // A switch's empty default (USE_FP8=${USE_FP8:-}, then ${USE_FP8:+...}) has its own note.
            if (emptyDefault && std::none_of(frozen.begin(), frozen.end(), named) && std::none_of(kept.begin(), kept.end(), named)
                && !m_opt.original->environment_switches.count(name))
                vanished.push_back(name);
        }
        if (!vanished.empty())
            m_notes.push_back("the original's launch command also takes arguments from " + join(vanished, ", ")
                              + ", which gave none when it was read; add any such arguments here");
        // Words a variable of the environment switches on (${USE_FP8:+--fp8-format hybrid}).
        std::vector<std::string> switched;
        for (const auto& [name, words] : m_opt.original->environment_switches)
            switched.push_back(name + " (" + join(words, "; ") + ")");
        if (!switched.empty())
            m_notes.push_back("the original's launch command switches on these words when a variable of its environment is set; "
                              "each was unset when the original was read, so neither the plan nor this launcher has them: "
                              + join(switched, ", ") + ". Add them here if the run needs them");
        // Words a branch gives where a test on the environment or the arguments goes the other way.
        std::vector<std::string> branches;
        for (const ImportedScript::SkippedWords& s : m_opt.original->skipped_by_test)
            branches.push_back("line " + std::to_string(s.line) + " (" + join(s.reads, ", ") + "): " + s.words);
        if (!branches.empty())
            m_notes.push_back("the original's launch command has more words where a test on its environment or arguments goes "
                              "the other way; that branch was skipped when the original was read, so neither the plan nor this "
                              "launcher has them: " + join(branches, "; ") + ". Add them here if the run needs them");
    }

    std::string quoteValue(const Arg& a, const std::string& v) const
    {
        if (a.single_quote)
            return ShellQuote::single(v);
        if (a.flag == "--hetero-current-device-type" && v == "${CURRENT_DEVICE_TYPE}")
            return "\"${CURRENT_DEVICE_TYPE}\"";
        if (a.hooked)
            return "\"" + v + "\"";   // hookFor: a name and safe characters only
        return ShellQuote::value(v);
    }

    std::string writeGroups() const
    {
        std::ostringstream o;
        for (const ArgGroup& g : m_groups) {
            o << "# " << g.comment << "\n" << g.name << "=(\n";
            for (const Arg& a : g.args) {
                o << "    " << a.flag;
                for (const std::string& v : a.values)
                    o << " " << quoteValue(a, v);
                o << "\n";
            }
            o << ")\n\n";
        }
        return o.str();
    }

    std::string header(const std::string& title) const
    {
        const Plan& plan = m_doc.plan;
        std::ostringstream o;
        o << "#!/usr/bin/env bash\n";
        o << "# " << title << "\n";
        o << "# Plan: " << commentSafe(plan.name) << "; model: " << commentSafe(m_doc.model.name) << " ("
          << m_doc.model.num_layers << " layers)";
        if (!m_doc.cluster.name.empty())
            o << "; cluster: " << commentSafe(m_doc.cluster.name);
        o << "\n# Global batch " << plan.global_batch_size << ", " << plan.numMicrobatches() << " micro-batches per iteration";
        if (plan.vpp > 1)
            o << ", " << plan.vpp << " virtual chunks per pipeline rank";
        o << ".\n# Stages:\n";
        // The decoder layers each pipeline rank holds: one range, or one per virtual chunk.
        const std::vector<std::string> ranges = PipelineLayout::rankLayerRanges(plan);
        int rank = 0;
        for (int s = 0; s < plan.pp(); ++s) {
            const StagePlan& st = plan.stages[static_cast<std::size_t>(s)];
            o << "#   stage " << s << ": " << commentSafe(st.device_type) << ", layers " << ranges[static_cast<std::size_t>(s)]
              << " (" << st.num_layers << ")"
              << (s + 1 == plan.pp() && mtpLayers() > 0 ? " and " + std::to_string(mtpLayers()) + " MTP" : std::string())
              << ", TP" << st.tp << " CP" << st.cp << " DP"
              << st.dp << " EP" << st.ep << " ETP" << st.etp << " MBS" << st.micro_batch_size << ", recompute "
              << toString(st.recompute);
            if (st.recompute == Recompute::Full && st.recompute_layers > 0)
                o << " (" << st.recompute_layers << (st.recompute_layers == 1 ? " layer)" : " layers)");
            if (st.recompute == Recompute::Selective)
                o << " (" << recomputeModulesLabel(st.recompute_modules) << ")";
            o << ", ranks " << rank << "-" << rank + st.numDevices() - 1 << "\n";
            rank += st.numDevices();
        }
        o << "# Node order (node rank: host, device type, devices):\n";
        for (std::size_t r = 0; r < m_nodes.size(); ++r) {
            const Node* n = m_doc.cluster.node(m_nodes[r].node);
            o << "#   " << r << ": " << n->host << " (" << commentSafe(n->device_type) << ", " << m_nodes[r].locals.size() << ")\n";
        }
        // Megatron-LM runs on CUDA and ROCm devices as it is; Ascend and Gaudi devices run it
        // through their vendor's layer, which the launcher does not install.
        std::set<std::string> libraries;
        for (const StagePlan& st : plan.stages)
            libraries.insert(libraryOf(m_cat, st.device_type));
        // FlagScale's own releases carry the vendors' adaptations (its multi-backend mechanism,
        // FlagScale v0.8.0; hardware plugins from v1.0), on the vendor's software stack.
        if (m_opt.format == LauncherFormat::FlagScale && (libraries.count("HCCL") || libraries.count("HCCL-Gaudi")))
            o << commentLines("FlagScale runs the Ascend or Gaudi stages through its vendor adaptation (the multi-backend "
                              "mechanism of FlagScale v0.8.0, hardware plugins from v1.0) on the vendor's software (torch_npu "
                              "and CANN on Ascend, the Intel Gaudi software stack on Gaudi), which this launcher does not "
                              "install: the FlagScale build on those nodes must have them.");
        else if (m_opt.format == LauncherFormat::Megatron && libraries.count("HCCL"))
            o << commentLines("Ascend NPUs run Megatron-LM through MindSpeed (torch_npu and CANN; source the toolkit's set_env.sh "
                              "and add `import mindspeed.megatron_adaptor` after `import torch` in the entry script, as the "
                              "Ascend/MindSpeed README's quick start says).");
        if (m_opt.format == LauncherFormat::Megatron && libraries.count("HCCL-Gaudi"))
            o << commentLines("Intel Gaudi devices run Megatron-LM through Intel's port (HabanaAI/Megatron-LM) and the Intel "
                              "Gaudi software stack.");
        for (const std::string& note : m_notes)
            o << commentLines(note);
        return o.str();
    }

    // NODE_RANK from the first argument or the environment, checked against the node count. A
    // leading zero is refused: bash's arithmetic reads 010 as octal 8 (and 09 not at all) where
    // torchrun reads 10, so the node would pick another rank's arrays.
    std::string nodeRankBlock(const std::string& usage) const
    {
        std::ostringstream o;
        o << "NODE_RANK=\"${1:-${NODE_RANK:-}}\"\n";
        o << "if [[ ! \"${NODE_RANK}\" =~ ^(0|[1-9][0-9]*)$ ]] || [[ \"${NODE_RANK}\" -ge \"${NNODES}\" ]]; then\n";
        o << "    echo \"usage: $0 NODE_RANK (0 to $((NNODES - 1)), or set NODE_RANK); " << usage << "\" >&2\n";
        o << "    exit 2\n";
        o << "fi\n";
        if (const std::string addr = originalMasterAddress(); !addr.empty())
            o << "# The original's master address (" << commentSafe(m_opt.original->file)
              << "): node rank 0 runs the rendezvous, so it must run on that host.\n"
              << "MASTER_ADDR=\"${MASTER_ADDR:-" << addr << "}\"\n";
        else
            o << "MASTER_ADDR=\"${MASTER_ADDR:-${NODE_HOSTS[0]}}\"\n";
        o << "MASTER_PORT=\"${MASTER_PORT:-" << masterPort() << "}\"\n";
        // What the node prints, kept in a file as well: Megatron-LM prints its iteration
        // lines on the last rank (print_rank_last), so the last node's file is the log
        // `hapmoe calibrate --log` reads.
        o << "# This node's output, also kept in LOG_FILE; the last node's holds the iteration lines\n"
             "# that `hapmoe calibrate --log` reads.\n";
        o << "LOG_FILE=\"${LOG_FILE:-train_node${NODE_RANK}.log}\"\n\n";
        return o.str();
    }

    std::string hostsArray() const
    {
        std::string out = "NODE_HOSTS=(";
        for (const NodeSlots& n : m_nodes)
            out += " " + ShellQuote::word(m_doc.cluster.node(n.node)->host);
        return out + " )\n";
    }

    // Per-node visible devices, only when a node's used devices are not 0..n-1.
    std::string visibleDevicesBlock() const
    {
        bool needed = false;
        for (const NodeSlots& n : m_nodes)
            for (std::size_t k = 0; k < n.locals.size(); ++k)
                if (n.locals[k] != static_cast<int>(k)) needed = true;
        if (!needed)
            return {};
        std::ostringstream o;
        o << "# Devices each node uses (the plan leaves the others idle)\nNODE_DEVICES=(";
        for (const NodeSlots& n : m_nodes) {
            std::vector<std::string> ids;
            for (int l : n.locals) ids.push_back(std::to_string(l));
            o << " " << join(ids, ",");
        }
        o << " )\n";
        o << "NODE_VISIBLE_VARIABLE=(";
        for (const NodeSlots& n : m_nodes)
            o << " " << visibleDevicesVariable(m_cat, m_doc.cluster.node(n.node)->device_type);
        o << " )\n";
        o << "export \"${NODE_VISIBLE_VARIABLE[${NODE_RANK}]}=${NODE_DEVICES[${NODE_RANK}]}\"\n\n";
        return o.str();
    }

    // Whether the original script exports the variable with a value of its own, not with the
    // default this exporter writes (`"${NCCL_DEBUG:-WARN}"`): an exported launcher exported
    // again keeps each vendor's defaults in its case branch rather than for every node.
    bool originalSetsOwnValue(const std::string& name, const std::string& ourDefault) const
    {
        return m_opt.original && originalSetsOwnValue(name, ourDefault, *m_opt.original);
    }
    // The same of one reading of the original (readingFor).
    bool originalSetsOwnValue(const std::string& name, const std::string& ourDefault, const ImportedScript& src) const
    {
        if (!exportsVariable(src, name))
            return false;
        const std::optional<std::string> raw = originalAssignment(name, src);
        return !raw || *raw != ourDefault;
    }

    // The original's assignment of the variable as written, without enclosing double quotes.
    std::optional<std::string> originalAssignment(const std::string& name) const { return originalAssignment(name, *m_opt.original); }
    static std::optional<std::string> originalAssignment(const std::string& name, const ImportedScript& src)
    {
        const auto it = src.environment_raw.find(name);
        if (it == src.environment_raw.end())
            return std::nullopt;
        std::string raw = it->second;
        if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"')
            raw = raw.substr(1, raw.size() - 2);
        return raw;
    }

    // Whether the original script exports the variable.
    bool originalExportsVariable(const std::string& name) const { return m_opt.original && exportsVariable(*m_opt.original, name); }
    static bool exportsVariable(const ImportedScript& src, const std::string& name) { return exportedValue(src, name).has_value(); }
    static std::optional<std::string> exportedValue(const ImportedScript& src, const std::string& name)
    {
        for (const std::string& e : src.environment)
            if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=')
                return e.substr(name.size() + 1);
        return std::nullopt;
    }

    // The original read again as a node of each of its other device types (a FlagScale script
    // that takes its node's type from its node rank, NODE_RANK from the environment: `if [
    // "$DEVICE_TYPE" = Ascend910B ]; then source set_env.sh; export HCCL_...`): the first
    // reading of each --hetero-current-device-type label, NODE_RANK set to each rank of its
    // --nnodes in turn. A reading that fails is passed over.
    static std::vector<ImportedScript> readOtherDeviceTypes(const ImportedScript& original)
    {
        std::vector<ImportedScript> out;
        if (original.current_device_type.empty() || original.nnodes < 2 || original.file.empty()
            || !(original.environment_defaults.count("NODE_RANK") || original.inputs.environment.count("NODE_RANK")))
            return out;
        std::set<std::string> labels, seen{original.current_device_type};
        for (const ProcessMesh& mesh : original.parallel.meshes)
            labels.insert(mesh.device_type);
        for (int r = 0; r < original.nnodes && seen.size() < labels.size(); ++r) {
            ScriptInputs inputs = original.inputs;
            inputs.environment["NODE_RANK"] = std::to_string(r);
            try {
                ImportedScript other = importMegatronScriptFile(original.file, inputs);
                if (!other.current_device_type.empty() && seen.insert(other.current_device_type).second)
                    out.push_back(std::move(other));
            } catch (const std::exception&) {
            }
        }
        return out;
    }

    // The reading of the original for nodes of a device type of the plan: the one read as a
    // node of that type, or the original as read when it was not read per type; nullptr when
    // it was and none is of this type.
    const ImportedScript* readingFor(const std::string& deviceType) const
    {
        if (!m_opt.original)
            return nullptr;
        if (typeReadings().empty())
            return &*m_opt.original;
        if (m_cat.sameType(m_opt.original->current_device_type, deviceType))
            return &*m_opt.original;
        for (const ImportedScript& r : typeReadings())
            if (m_cat.sameType(r.current_device_type, deviceType))
                return &r;
        return nullptr;
    }

    // The variables the readings per device type export with different values (or only some
    // of them): each type's block sets its own. The rendezvous, PYTHONPATH and
    // CUDA_DEVICE_MAX_CONNECTIONS keep their own rules.
    std::set<std::string> perTypeNames() const
    {
        std::set<std::string> out;
        if (typeReadings().empty())
            return out;
        std::set<std::string> names;
        auto collect = [&](const ImportedScript& src) {
            for (const std::string& e : src.environment)
                names.insert(e.substr(0, e.find('=')));
        };
        collect(*m_opt.original);
        for (const ImportedScript& r : typeReadings())
            collect(r);
        for (const std::string& name : names) {
            if (skipsOriginalExport(name) || name == "PYTHONPATH" || name == "CUDA_DEVICE_MAX_CONNECTIONS")
                continue;
            const std::optional<std::string> first = exportedValue(*m_opt.original, name);
            if (std::any_of(typeReadings().begin(), typeReadings().end(),
                            [&](const ImportedScript& r) { return exportedValue(r, name) != first; }))
                out.insert(name);
        }
        return out;
    }

    // The setup commands (cd, source) of a reading as launcher lines, each with where it
    // came from: all of them, those some other reading does not run alike (PerType: a type's
    // case branch), or those every reading runs (Common: for all nodes).
    enum class Setup { All, PerType, Common };
    std::string setupLines(const ImportedScript& src, Setup which, const std::string& indent) const
    {
        std::ostringstream o;
        for (const ImportedScript::SetupCommand& c : src.setup_commands) {
            auto runs = [&](const ImportedScript& r) {
                return std::any_of(r.setup_commands.begin(), r.setup_commands.end(),
                                   [&](const ImportedScript::SetupCommand& d) { return d.words == c.words; });
            };
            const bool everywhere = runs(*m_opt.original)
                && std::all_of(typeReadings().begin(), typeReadings().end(), runs);
            if ((which == Setup::PerType && everywhere) || (which == Setup::Common && !everywhere))
                continue;
            std::vector<std::string> words;
            for (const std::string& w : c.words)
                words.push_back(ShellQuote::word(pwdAsVariable(w)));
            o << indent << join(words, " ") << "   # from " << commentSafe(src.file) << " line " << c.line << "\n";
        }
        return o.str();
    }

    // The original's variables a launcher never carries over: the rendezvous the launcher
    // sets per node, and FlagScale's PYTHONPATH in a Megatron-LM launcher.
    bool skipsOriginalExport(const std::string& name) const
    {
        return name == "NODE_RANK" || name == "MASTER_ADDR" || name == "MASTER_PORT" || name == "WORLD_SIZE"
            || (name == "PYTHONPATH" && dropsFlagScalePythonPath());
    }

    std::string originalExports(const std::set<std::string>& skip) const
    {
        if (!m_opt.original)
            return {};
        return originalExports(skip, *m_opt.original, "", "");
    }
    // Those of one reading, with the names in `only` alone when it is not empty.
    std::string originalExports(const std::set<std::string>& skip, const ImportedScript& src, const std::string& indent,
                                const std::string& readAs, const std::set<std::string>* only = nullptr) const
    {
        std::ostringstream o;
        const std::string from = "   # from " + commentSafe(src.file) + readAs;
        for (const std::string& e : src.environment) {
            const std::size_t eq = e.find('=');
            const std::string name = e.substr(0, eq);
            if (!ShellQuote::isValidName(name) || skip.count(name) || skipsOriginalExport(name) || (only && !only->count(name)))
                continue;
            std::string value = pwdAsVariable(e.substr(eq + 1));
            // NAME=${NAME}:more (PYTHONPATH, LD_LIBRARY_PATH): the environment's value, empty
            // when it is unset, which the launcher's set -u would refuse as ${NAME}.
            for (std::size_t at = value.find("${" + name + "}"); at != std::string::npos;
                 at = value.find("${" + name + "}", at + name.size() + 4))
                value.replace(at, name.size() + 3, "${" + name + ":-}");
            if (runsCommand(value)) {   // left to the environment (noteCommandValues)
                o << indent << "# " << name << " is left to the environment: the original runs a command for it, export " << name
                  << "=" << commentSafe(value) << from << "\n";
                continue;
            }
            const std::optional<std::string> fallback = environmentDefault(name, value, src);
            o << indent << "export " << name << "=" << (fallback ? "\"${" + name + ":-" + *fallback + "}\"" : ShellQuote::value(value))
              << from << "\n";
        }
        return o.str();
    }

    // The original wrote NAME=${NAME:-default} (or :=), so that the environment can override
    // it: the default, when that is what the import expanded it to and it needs no quoting;
    // else nothing (the expanded value is written).
    std::optional<std::string> environmentDefault(const std::string& name, const std::string& value) const
    {
        return environmentDefault(name, value, *m_opt.original);
    }
    static std::optional<std::string> environmentDefault(const std::string& name, const std::string& value, const ImportedScript& src)
    {
        const std::optional<std::string> assigned = originalAssignment(name, src);
        if (!assigned)
            return std::nullopt;
        const std::string& raw = *assigned;
        for (const char* op : {":-", ":="}) {
            const std::string head = "${" + name + op;
            if (raw.size() > head.size() && raw.compare(0, head.size(), head) == 0 && raw.back() == '}') {
                const std::string fallback = raw.substr(head.size(), raw.size() - head.size() - 1);
                if (ShellQuote::isSafe(fallback) && fallback == value)
                    return fallback;
            }
        }
        return std::nullopt;
    }

    // The default master port: the one given, else the original's own
    // (MASTER_PORT=${MASTER_PORT:-29500}), else 6000.
    // The original script's master address (torchrun's --master_addr or rendezvous endpoint)
    // when it names a host the launcher can write as it is; not a loopback address, which only
    // a single node can use.
    std::string originalMasterAddress() const
    {
        if (!m_opt.original)
            return {};
        const std::string& a = m_opt.original->master_addr;
        if (a.empty() || !ShellQuote::isSafe(a) || a.find('$') != std::string::npos)
            return {};
        if (a == "localhost" || a.rfind("127.", 0) == 0 || a == "::1")
            return {};
        return a;
    }

    std::string masterPort() const
    {
        if (!m_opt.master_port.empty())
            return m_opt.master_port;
        if (m_opt.original && isPortNumber(m_opt.original->master_port))
            return m_opt.original->master_port;
        return "6000";
    }

    std::string entry(const std::string& fallback) const
    {
        if (!m_opt.entry_script.empty())
            return m_opt.entry_script;
        // `pwd`/pretrain_gpt.py (Megatron-LM's old GPT-3 script): the launcher's folder, ${PWD}.
        if (m_opt.format == LauncherFormat::Megatron && m_opt.original && !m_opt.original->entry_script.empty()
            && !isFlagScaleEntry(m_opt.original->entry_script))
            return pwdAsVariable(m_opt.original->entry_script);
        return fallback;
    }

    // FlagScale's training entry (flagscale/train/train_gpt.py ...): it runs only with
    // FlagScale's folders on PYTHONPATH, which a Megatron-LM launcher does not set.
    static bool isFlagScaleEntry(const std::string& entry) { return entry.find("flagscale/train/") != std::string::npos; }

    std::string launchLine(const std::string& entryScript) const
    {
        std::ostringstream o;
        o << "torchrun \"${DISTRIBUTED_ARGS[@]}\" " << ShellQuote::value(entryScript);
        for (const ArgGroup& g : m_groups)
            o << " \\\n    \"${" << g.name << "[@]}\"";
        // pipefail (set at the top) gives the run's exit status through tee.
        o << " \\\n    2>&1 | tee \"${LOG_FILE}\"\n";
        return o.str();
    }

    // The launcher's own name as a shell word in a comment ("launch.sh" when none is given).
    std::string usageName() const
    {
        return commentSafe(ShellQuote::word(m_opt.script_name.empty() ? std::string("launch.sh") : m_opt.script_name));
    }

    std::string writeScript() const
    {
        return m_opt.format == LauncherFormat::Megatron ? writeMegatron() : writeFlagScale();
    }

    std::string writeMegatron() const
    {
        const Plan& plan = m_doc.plan;
        const StagePlan& s0 = first();
        std::ostringstream o;
        o << header("Megatron-LM launcher (hapmoe export). Run the same script on every node.");
        o << "# Usage: bash " << usageName() << " NODE_RANK   (or export NODE_RANK). Node rank r must run on NODE_HOSTS[r]:\n"
             "# pipeline stage s owns global ranks [s*W/PP, (s+1)*W/PP), so this order puts each stage on its device type.\n";
        o << "set -euo pipefail\n\n";
        o << hostsArray();
        // The device type of each node, for the reader (`hapmoe import` takes the cluster from
        // it): Megatron-LM itself does not read it.
        o << "NODE_TYPES=(";
        for (const NodeSlots& n : m_nodes)
            o << " " << ShellQuote::word(stageTypeOfNode(n.node));
        o << " )   # device type of each node\n";
        o << "NNODES=" << m_nodes.size() << "\n";
        o << "GPUS_PER_NODE=" << m_nodes.front().locals.size() << "\n";
        o << nodeRankBlock("run it on NODE_HOSTS[NODE_RANK]");
        // Environment: one vendor for a Megatron-LM job (checked above).
        const bool maxConn = s0.tp > 1 || s0.cp > 1;
        std::set<std::string> written;
        o << "# Environment for " << commentSafe(libraryOf(m_cat, s0.device_type)) << " (" << commentSafe(vendorOf(m_cat, s0.device_type)) << ")";
        if (maxConn && m_maxConnections == "1")
            o << "; Megatron-LM asserts CUDA_DEVICE_MAX_CONNECTIONS=1 when TP or CP > 1";
        o << "\n";
        // decideMaxConnections chose the value (and noted what happened to the original's).
        if (m_maxConnections) {
            // The original's ${CUDA_DEVICE_MAX_CONNECTIONS:-1} stays overridable where no rule fixes it.
            const std::optional<std::string> fallback =
                m_maxConnectionsFree ? environmentDefault("CUDA_DEVICE_MAX_CONNECTIONS", *m_maxConnections) : std::nullopt;
            o << "export CUDA_DEVICE_MAX_CONNECTIONS="
              << (fallback ? "\"${CUDA_DEVICE_MAX_CONNECTIONS:-" + *fallback + "}\"" : ShellQuote::value(*m_maxConnections)) << "\n";
        }
        written.insert("CUDA_DEVICE_MAX_CONNECTIONS");
        // The original as read for this device type (readingFor: a FlagScale script read per type).
        const ImportedScript* reading = readingFor(s0.device_type);
        if (!reading && m_opt.original)
            reading = &*m_opt.original;   // noted (noteTypeReadings)
        for (const auto& [name, value] : vendorEnvironment(m_cat, s0.device_type, false)) {
            // The original's own value (NCCL_DEBUG=INFO) wins over the default; it is written below.
            if (name == "CUDA_DEVICE_MAX_CONNECTIONS" || (reading && originalSetsOwnValue(name, value, *reading)))
                continue;
            o << "export " << name << "=" << (value.find("${") != std::string::npos ? "\"" + value + "\"" : value) << "\n";
            written.insert(name);
        }
        if (reading) {
            const std::string readAs = typeReadings().empty() || reading == &*m_opt.original
                ? std::string()
                : " (as read for the " + commentSafe(reading->current_device_type) + " nodes)";
            o << setupLines(*reading, Setup::All, "");
            o << originalExports(written, *reading, "", readAs);
        }
        o << "\n";
        o << visibleDevicesBlock();
        o << "DISTRIBUTED_ARGS=(\n"
             "    --nproc_per_node \"${GPUS_PER_NODE}\"\n"
             "    --nnodes \"${NNODES}\"\n"
             "    --node_rank \"${NODE_RANK}\"\n"
             "    --master_addr \"${MASTER_ADDR}\"\n"
             "    --master_port \"${MASTER_PORT}\"\n"
             ")\n\n";
        o << writeGroups();
        o << launchLine(entry("pretrain_gpt.py"));
        (void)plan;
        return o.str();
    }

    std::string writeFlagScale() const
    {
        std::ostringstream o;
        o << header("FlagScale heterogeneous launcher (hapmoe export). Run the same script on every node,\n"
                    "# from the FlagScale source folder (or set FLAGSCALE_HOME).");
        o << "# Usage: bash " << usageName() << " NODE_RANK   (or export NODE_RANK). ";
        if (!m_opt.hostfile_written)
            o << "NODE_HOSTS lists the nodes in rank order\n# (hapmoe export -o FILE also writes a hostfile in that order).\n";
        else
            o << (m_opt.hostfile_name.empty() ? std::string("The hostfile beside it")
                                              : "The hostfile " + commentSafe(ShellQuote::word(m_opt.hostfile_name)))
              << " lists the same order.\n";
        o << "set -euo pipefail\n\n";
        o << hostsArray();
        o << "NODE_TYPES=(";
        for (const NodeSlots& n : m_nodes)
            o << " " << ShellQuote::word(stageTypeOfNode(n.node));
        o << " )\nNODE_SLOTS=(";
        for (const NodeSlots& n : m_nodes)
            o << " " << n.locals.size();
        o << " )\n";
        o << "NNODES=" << m_nodes.size() << "\n";
        o << nodeRankBlock("run it on NODE_HOSTS[NODE_RANK]");
        o << "CURRENT_DEVICE_TYPE=\"${NODE_TYPES[${NODE_RANK}]}\"\n";
        o << "GPUS_PER_NODE=\"${NODE_SLOTS[${NODE_RANK}]}\"\n";
        o << "FLAGSCALE_HOME=\"${FLAGSCALE_HOME:-$(pwd)}\"\n";
        // The caller's PYTHONPATH after FlagScale's, and no empty entry (the current folder to
        // Python) when it is unset.
        o << "export PYTHONPATH=\"${FLAGSCALE_HOME}:${FLAGSCALE_HOME}/third_party/Megatron-LM${PYTHONPATH:+:${PYTHONPATH}}\"\n\n";
        // The default entry is found through FLAGSCALE_HOME, so the launcher may run from any
        // folder (relative paths of the original's flags stay relative to it).
        const std::string defaultEntry = "${FLAGSCALE_HOME}/flagscale/train/train_gpt.py";
        const std::string entryScript = entry(defaultEntry);
        if (entryScript == defaultEntry) {
            o << "if [[ ! -f \"" << defaultEntry << "\" ]]; then\n";
            o << "    echo \"$0: " << defaultEntry << " not found; run it from the FlagScale source folder or set FLAGSCALE_HOME\" >&2\n";
            o << "    exit 2\n";
            o << "fi\n\n";
        }
        // Environment per device type (FlagScale's experiment.envs.device_type_specific).
        // The original's PYTHONPATH is not written (notePythonPath). Its CUDA_DEVICE_MAX_CONNECTIONS
        // is carried over (after the blocks, for every device type) when it is 1, which every
        // rule allows; another value gives way to the blocks' 1 (decideMaxConnections notes it).
        const bool originalMaxOne = originalMaxConnections() == std::optional<std::string>("1");
        std::set<std::string> skip{"PYTHONPATH"};
        if (!originalMaxOne)
            skip.insert("CUDA_DEVICE_MAX_CONNECTIONS");
        // The original's own settings per device type (readOtherDeviceTypes) join each type's
        // branch; the rest, the same for every type, come after the blocks.
        const std::set<std::string> perType = perTypeNames();
        o << "# Environment per device type\ncase \"${CURRENT_DEVICE_TYPE}\" in\n";
        std::vector<std::string> seen;
        for (const PlanMesh& mesh : planMeshes(m_doc.plan)) {
            const StagePlan& st = m_doc.plan.stages[static_cast<std::size_t>(mesh.first_stage)];
            if (std::find(seen.begin(), seen.end(), st.device_type) != seen.end())
                continue;
            seen.push_back(st.device_type);
            bool maxConn = false;
            for (const StagePlan& other : m_doc.plan.stages)
                if (other.device_type == st.device_type && (other.tp > 1 || other.cp > 1))
                    maxConn = true;
            o << "    " << ShellQuote::word(st.device_type) << ")\n";
            o << "        # " << commentSafe(libraryOf(m_cat, st.device_type)) << " (" << commentSafe(vendorOf(m_cat, st.device_type)) << ")\n";
            const ImportedScript* reading = readingFor(st.device_type);
            for (const auto& [name, value] : vendorEnvironment(m_cat, st.device_type, maxConn)) {
                // The original's own value of a default (NCCL_DEBUG=INFO) is written after the
                // block, or in it when the original sets it per type.
                const ImportedScript* own = perType.count(name) ? reading : (m_opt.original ? &*m_opt.original : nullptr);
                if (name != "CUDA_DEVICE_MAX_CONNECTIONS" && own && originalSetsOwnValue(name, value, *own))
                    continue;
                o << "        export " << name << "=" << (value.find("${") != std::string::npos ? "\"" + value + "\"" : value) << "\n";
                if (name != "CUDA_DEVICE_MAX_CONNECTIONS" || !originalMaxOne)
                    skip.insert(name);
            }
            if (reading && !typeReadings().empty()) {
                // In the original's order: its commands (a vendor's set_env.sh) before its exports.
                const std::string readAs = " (as read for the " + commentSafe(reading->current_device_type) + " nodes)";
                o << setupLines(*reading, Setup::PerType, "        ");
                o << originalExports({}, *reading, "        ", readAs, &perType);
            }
            o << "        ;;\n";
        }
        o << "esac\n";
        std::set<std::string> common = skip;
        common.insert(perType.begin(), perType.end());
        if (m_opt.original)
            o << setupLines(*m_opt.original, typeReadings().empty() ? Setup::All : Setup::Common, "");
        o << originalExports(common);
        o << "\n";
        o << visibleDevicesBlock();
        o << "DISTRIBUTED_ARGS=(\n"
             "    --nproc_per_node \"${GPUS_PER_NODE}\"\n"
             "    --nnodes \"${NNODES}\"\n"
             "    --node_rank \"${NODE_RANK}\"\n"
             "    --rdzv_id \"${RDZV_ID:-hapmoe}\"\n"
             "    --rdzv_backend static\n"
             "    --rdzv_endpoint \"${MASTER_ADDR}:${MASTER_PORT}\"\n"
             ")\n\n";
        o << writeGroups();
        o << launchLine(entryScript);
        return o.str();
    }

    std::string stageTypeOfNode(int node) const
    {
        for (const StagePlan& st : m_doc.plan.stages)
            for (const DeviceSlot& d : st.devices)
                if (d.node == node)
                    return st.device_type;
        return {};
    }

    std::string writeHostfile() const
    {
        std::ostringstream o;
        o << "# node-rank order; FlagScale hostfile format \"<host> slots=<N> type=<TYPE>\"\n";
        for (const NodeSlots& n : m_nodes)
            o << m_doc.cluster.node(n.node)->host << " slots=" << n.locals.size() << " type=" << commentSafe(stageTypeOfNode(n.node)) << "\n";
        return o.str();
    }

    const PlanDocument m_doc;   // withCatalogNames, withOriginalLabels: FlagScale's type= labels, --hetero-device-types and the environment per type agree
    const ExportOptions& m_opt;
    const DeviceCatalog& m_cat;
    std::vector<NodeSlots> m_nodes;
    std::vector<ArgGroup> m_groups;
    std::vector<std::string> m_notes;
    std::set<std::string> m_noHooks;   // Exporter()
    mutable std::optional<std::vector<ImportedScript>> m_typeReadings;   // typeReadings()
    std::set<std::string> m_hooked;    // hookedNames()
    std::optional<std::string> m_maxConnections;   // CUDA_DEVICE_MAX_CONNECTIONS to export, if any
    bool m_maxConnectionsFree = false;             // the original's, where no rule fixes it
};

} // namespace

std::vector<ExportCheck> launcherChecks(const PlanDocument& doc, const ExportOptions& options)
{
    return Exporter(doc, options).checks();
}

ExportResult exportLauncher(const PlanDocument& doc, const ExportOptions& options)
{
    Exporter first(doc, options);
    ExportResult r = first.run();
    if (!r.ok || first.hookedNames().empty())
        return r;
    // A hook on a variable the launcher sets itself (NODE_RANK, MASTER_PORT, a vendor's
    // environment, its *_ARGS arrays) would read the launcher's value, not the environment's:
    // those defaults are written as read. (The original's own exports, written again with
    // their hooks, give the flags the same value.)
    std::set<std::string> clash;
    for (const std::string& name : namesSetIn(withoutComments(r.script)))
        if (first.hookedNames().count(name) && !(options.original && options.original->environment_raw.count(name)))
            clash.insert(name);
    return clash.empty() ? r : Exporter(doc, options, clash, first.typeReadings()).run();
}

} // namespace hapmoe
