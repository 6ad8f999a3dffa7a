// hapmoe import SCRIPT [-o project.hapmoe] [--cluster C]: reads a Megatron-LM launch script
// as text (nothing in it is executed), prints the model, training and parallel
// configuration it recovered with every warning, and writes a project.

#include "CliArgs.h"
#include "util/Strings.h"
#include "Commands.h"

#include "cost/CostModel.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "io/Presets.h"
#include "megatron/ScriptImport.h"
#include "plan/Deployability.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

namespace hapmoe::cli {

namespace {

constexpr const char* kHelp = R"HELP(Usage: hapmoe import SCRIPT [-o project.hapmoe] [--cluster C | --device TYPE] [--devices FILE]
                     [--script-args WORDS] [--script-env NAME=VALUE ...]

Reads a Megatron-LM or FlagScale launch script (bash: variables with defaults, exported
variables, arrays, line continuations, torchrun or python -m torch.distributed.run) as
text; nothing in it is executed. Prints the model, training and parallel configuration it recovered,
the flags kept verbatim, and a warning for every flag it could not map. A model Megatron-LM
would refuse (a required flag missing, a value that is not a number, --moe-router-topk
above --num-experts, ...) is an error naming the flag (exit code 2), and nothing is written;
so is a configuration the processes the script starts cannot run (a world size TP x PP x CP
does not divide, a global batch DP x micro-batch does not divide), also without --cluster.
A FlagScale heterogeneous script (--enable-hetero --hetero-process-meshes ...) is read mesh
by mesh: one line per mesh with its device-type label, TP CP EP ETP DP PP, micro-batch size,
stages and layers; a value that breaks FlagScale's rules is an error the same way.

Options:
  -o FILE          write a hapmoe.project with the model (and, with --cluster, the cluster
                   and the script's configuration as a saved plan)
  --cluster C      place the configuration on a cluster (preset, file or shorthand such as
                   "H800:4x8") in node order and estimate it
  --device TYPE    without --cluster: the device type of the script's nodes (a script does
                   not say it; default H100-SXM), giving the cluster TYPE:NNODESxNPROC
  --devices FILE   a hapmoe.devices catalog adding or overriding device types
  --script-args WORDS
                   the script's arguments, as `bash SCRIPT WORDS` gets them (split as bash
                   splits words): a script that picks its configuration with
                   [ "$1" = 70B ] or case "$1" in ... takes it from them. Without them the
                   script's arguments are not known: a test on one reads it as empty (with a
                   warning), and an exit guarded by one is read as not taken
  --script-env NAME=VALUE
                   a variable of the script's environment, as `NAME=VALUE bash SCRIPT` sets
                   it (repeatable). A name neither the script nor these set is read as
                   unset by a test ([ -z "$NAME" ] holds), and a flag that uses it keeps
                   ${NAME} for the run's environment to fill in, with a warning (so does
                   NAME="$NAME --flag" in a loop: the launcher writes ${NAME:-})
)HELP";

// Full recompute of a stage as FlagScale's per-stage lists give it.
std::string describeStageRecompute(const StageRecompute& r)
{
    if (!r.full)
        return "none";
    return r.layers > 0 ? "full (" + std::to_string(r.layers) + (r.layers == 1 ? " layer)" : " layers)") : "full";
}

// The global stages and layers of a FlagScale mesh, with their per-stage recompute.
std::string describeStages(const ParallelConfig& p, const ProcessMesh& mesh)
{
    std::ostringstream o;
    const int last = mesh.first_stage + mesh.pp - 1;
    o << (mesh.pp == 1 ? "stage " + std::to_string(mesh.first_stage)
                       : "stages " + std::to_string(mesh.first_stage) + "-" + std::to_string(last))
      << ", layers [";
    for (int s = mesh.first_stage; s <= last && s < static_cast<int>(p.layer_split.size()); ++s)
        o << (s > mesh.first_stage ? "," : "") << p.layer_split[static_cast<std::size_t>(s)];
    o << "]";
    if (!p.stage_recompute.empty()) {
        o << ", recompute ";
        for (int s = mesh.first_stage; s <= last && s < static_cast<int>(p.stage_recompute.size()); ++s)
            o << (s > mesh.first_stage ? ", " : "") << describeStageRecompute(p.stage_recompute[static_cast<std::size_t>(s)]);
    }
    return o.str();
}

std::string describeRecompute(const ParallelConfig& p)
{
    if (p.hetero() && !p.stage_recompute.empty())
        return "per stage (see the meshes)";
    if (p.hetero() && p.recompute == Recompute::Full && p.recompute_layers > 0)
        return "full (block, " + std::to_string(p.recompute_layers) + " layers per stage, all of a stage with fewer)";
    switch (p.recompute) {
    case Recompute::None: return "none";
    case Recompute::Selective:
        return p.recompute_modules == recompute_module::defaults ? std::string("selective")
                                                                 : "selective (" + recomputeModulesLabel(p.recompute_modules) + ")";
    case Recompute::Full:
        return p.recompute_layers > 0 ? "full (block, " + std::to_string(p.recompute_layers)
                                            + (p.vpp > 1 ? " layers per virtual chunk)" : " layers per stage)")
                                      : "full (" + (p.recompute_method.empty() ? std::string("uniform") : p.recompute_method)
                                            + ", every layer)";
    }
    return "none";
}

} // namespace

int cmdImport(const Args& args)
{
    const CliArgs a(args, {"o", "cluster", "device", "devices", "script-args"}, {"help"}, {"script-env"});
    if (a.has("help")) {
        std::cout << kHelp;
        return Success;
    }
    if (a.positionals().size() != 1)
        throw UsageError("expected one SCRIPT", kHelp);
    const std::string file = a.positionals().front();
    if (a.has("cluster") && a.has("device"))
        throw UsageError("--device cannot be combined with --cluster (the cluster gives the devices)");
    if (auto out = a.value("o"))
        checkOutputPath("-o", *out, givenInputs(a, {"cluster", "devices"}, {{"SCRIPT", file}}));
    // A --cluster plan or project brings its own device types, as for estimate and plan.
    const DeviceCatalog catalog = catalogForDocuments(a, {a.value("cluster").value_or("")});
    // An unknown --device is refused before the script is read and anything is printed.
    if (auto device = a.value("device"))
        catalog.get(*device, "--device");
    const ScriptInputs inputs = scriptInputs(a);
    const ImportedScript s = importMegatronScriptFile(file, inputs);
    // The model must be one the other commands accept: a script without --hidden-size, or
    // with --moe-router-topk above --num-experts, is refused here with the flag, before
    // anything is printed or written.
    try {
        validateScriptModel(s);
    } catch (const InputError& e) {
        // What the reading noticed (a variable unset, a flag not known) often says why a
        // required flag is missing: said before that error.
        // A value that could not be read ("$(( 32/0 ))") is explained by the warning that
        // names it ("... could not be evaluated (division by 0, ...)"): said before it too.
        auto explains = [&](const std::string& w) {
            // Only a value the reading kept as text (an expansion it could not evaluate): a
            // short literal such as "-1" would match unrelated warnings.
            return std::any_of(s.invalid_values.begin(), s.invalid_values.end(), [&](const InvalidFlagValue& v) {
                return v.value.find_first_of("$`") != std::string::npos && w.find(v.value) != std::string::npos;
            });
        };
        const bool missing = e.detail().starts_with("missing:");
        for (const std::string& w : s.warnings)
            if (missing || explains(w))
                std::cerr << "warning: " << printableText(file + ": " + w) << "\n";
        throw;
    }
    const ModelSpec& m = s.model;
    const ParallelConfig& p = s.parallel;

    std::cout << "script: " << printableText(file) << " (" << printableText(s.launcher) << " " << printableText(s.entry_script)
              << ", line " << s.command_line << ")\n";
    std::cout << "world: " << s.nnodes << " nodes x ";
    const bool sameEverywhere = std::all_of(s.node_processes.begin(), s.node_processes.end(),
                                            [&](int n) { return n == s.node_processes.front(); });
    if (!s.node_processes.empty() && !sameEverywhere) {
        std::cout << "(";
        for (std::size_t r = 0; r < s.node_processes.size(); ++r)
            std::cout << (r ? " " : "") << s.node_processes[r];
        std::cout << ") processes";
    } else if (s.nproc_per_node > 0) {
        std::cout << s.nproc_per_node << " processes";
    } else {
        std::cout << "one process per device";   // --nproc_per_node gpu, or a command's count
    }
    if (s.world_size > 0)
        std::cout << " = " << s.world_size;
    std::cout << "\n";
    std::cout << "model: " << m.num_layers << " layers, hidden " << m.hidden_size << ", FFN " << m.ffn_hidden_size << ", "
              << m.num_attention_heads << " heads";
    if (m.multi_latent_attention) {
        // DeepSeek-V3: "MLA (query latent 1536, key/value latent 512, query/key head dim 128 + 64 rotary, value head dim 128)".
        std::cout << ", MLA (query latent ";
        if (m.q_lora_rank > 0)
            std::cout << m.q_lora_rank;
        else
            std::cout << "none";
        std::cout << ", key/value latent " << m.kv_lora_rank << ", query/key head dim " << m.qk_head_dim << " + "
                  << m.qk_pos_emb_head_dim << " rotary, value head dim " << m.v_head_dim << ")";
    } else {
        if (m.num_query_groups > 0)
            std::cout << ", " << m.num_query_groups << " query groups";
        // Head dimensions that --kv-channels sets apart from hidden / heads (Qwen3: 32 x 128 on 2048).
        if (m.kv_channels > 0 && m.num_attention_heads > 0 && m.kv_channels * m.num_attention_heads != m.hidden_size)
            std::cout << ", " << m.kv_channels << " channels per head";
    }
    if (m.mtp_num_layers > 0)
        std::cout << ", " << m.mtp_num_layers << " MTP depth" << (m.mtp_num_layers > 1 ? "s" : "");
    std::cout << ", seq " << m.seq_length << ", vocab " << m.vocab_size;
    // As Megatron-LM builds the embedding and output layer (padded to a multiple of
    // --make-vocab-size-divisible-by x TP).
    const int tp = std::max(1, s.parallel.tp);
    if (const auto padded = static_cast<long long>(m.paddedVocabSize(tp)); padded != m.vocab_size)
        std::cout << " (" << padded << " as built at TP " << tp << ")";
    std::cout << ", " << m.normalization << (m.qk_layernorm ? ", QK norm" : "") << (m.swiglu ? ", SwiGLU" : "")
              << (m.add_bias_linear ? ", linear bias" : ", no linear bias")
              << (m.untie_embeddings_and_output_weights ? ", untied embeddings" : ", tied embeddings");
    if (m.attention_dropout == m.hidden_dropout)
        std::cout << (m.hidden_dropout > 0 ? ", dropout " + numberForMessage(m.hidden_dropout, 6) : std::string(", no dropout"));
    else
        std::cout << ", attention dropout " << numberForMessage(m.attention_dropout, 6) << ", hidden dropout "
                  << numberForMessage(m.hidden_dropout, 6);
    std::cout << "\n";
    if (m.isMoe()) {
        std::cout << "experts: " << m.num_experts << " top-" << m.moe_router_topk << ", expert FFN " << m.expertFfn();
        if (m.moe_shared_expert_intermediate_size > 0)
            std::cout << ", shared expert FFN " << m.moe_shared_expert_intermediate_size;
        std::cout << ", dispatcher " << toString(m.moe_token_dispatcher_type) << ", " << m.numMoeLayers() << " MoE layers\n";
    }
    if (p.hetero()) {
        // FlagScale's meshes: what every rank runs (the global TP, CP, EP flags are replaced).
        std::cout << "parallel: FlagScale heterogeneous, " << p.meshes.size() << (p.meshes.size() == 1 ? " mesh" : " meshes")
                  << ", PP" << p.pp << " (sum of the meshes' PP), no VPP" << (p.hetero_cpu_communication ? ", CPU communication" : "")
                  << "\n";
        for (std::size_t i = 0; i < p.meshes.size(); ++i) {
            const ProcessMesh& mesh = p.meshes[i];
            std::cout << "  mesh " << i << ": " << mesh.device_type << ", TP" << mesh.tp << " CP" << mesh.cp << " EP" << mesh.ep
                      << " ETP" << mesh.etp << " DP" << mesh.dp << " PP" << mesh.pp << ", micro-batch " << mesh.micro_batch_size
                      << ", " << describeStages(p, mesh) << "\n";
        }
        std::cout << "          recompute " << describeRecompute(p) << ", "
                  << (p.distributed_optimizer ? "distributed optimizer" : "no distributed optimizer") << ", "
                  << (p.sequence_parallel ? "sequence parallel (meshes with TP > 1)" : "no sequence parallel") << "\n";
    } else {
        // A dense model has no experts: its ETP is 1 whatever the flags (the plan's), and
        // Megatron's default of ETP = TP applies to MoE layers only.
        std::cout << "parallel: TP" << p.tp << " PP" << p.pp << " CP" << p.cp;
        if (m.isMoe())
            std::cout << " EP" << p.ep << " ETP" << (p.etp > 0 ? std::to_string(p.etp) : std::to_string(p.tp) + " (= TP)");
        std::cout << " VPP" << p.vpp;
        if (!p.layout.empty())
            std::cout << " layout \"" << p.layout << "\"";
        if (!p.layer_split.empty()) {
            std::cout << " split [";
            for (std::size_t i = 0; i < p.layer_split.size(); ++i)
                std::cout << (i ? "," : "") << p.layer_split[i];
            std::cout << "]";
        }
        std::cout << "\n          recompute " << describeRecompute(p) << ", "
                  << (p.distributed_optimizer ? "distributed optimizer" : "no distributed optimizer") << ", "
                  << (p.sequence_parallel && p.tp > 1 ? "sequence parallel"
                      : p.sequence_parallel       ? "no sequence parallel (--sequence-parallel is off at TP 1)"
                                                  : "no sequence parallel")
                  << "\n";
    }
    // What runs beside the compute, and where the optimizer lives: Megatron-LM's switches as the
    // script sets them (each off unless given; p2p overlap on unless switched off), which
    // "hapmoe estimate --script" costs.
    std::cout << "overlap: " << (p.overlap_grad_reduce ? "gradient reduce" : "no gradient reduce") << ", "
              << (p.overlap_param_gather ? "parameter gather" : "no parameter gather") << ", "
              << (p.tp_comm_overlap ? "TP communication" : "no TP communication");
    if (p.vpp > 1)   // overlap_p2p_comm acts on the interleaved schedule only
        std::cout << ", " << (p.overlap_p2p ? "pipeline sends" : "no pipeline sends");
    if (p.optimizer_offload_fraction > 0)
        std::cout << "; optimizer offload " << numberForMessage(p.optimizer_offload_fraction * 100, 4) << " % to the host";
    std::cout << "\n";
    std::cout << "training: micro-batch " << p.micro_batch_size << (p.hetero() ? " (mesh 0)" : "") << ", global batch "
              << (p.global_batch_size > 0 ? std::to_string(p.global_batch_size) : std::string("MBS x DP")) << ", "
              << toString(m.training.precision)
              << (m.training.fp8() ? std::string(", FP8 GEMMs (") + toString(m.training.fp8_format) + ", " + toString(m.training.fp8_recipe)
                                         + " scaling)"
                                   : std::string())
              << (m.training.fp8_param_gather ? ", FP8 weights" : "")
              << (m.training.cross_entropy_loss_fusion
                      ? std::string(", fused cross-entropy (") + toString(m.training.cross_entropy_fusion_impl) + ")"
                      : std::string())
              << "\n";
    std::cout << "other flags kept verbatim: " << s.other_flags.size() << "\n";
    for (const ScriptFlag& f : s.other_flags) {
        std::cout << "  " << f.name;
        for (const std::string& v : f.values)
            std::cout << " " << v;
        std::cout << "\n";
    }
    if (!s.environment.empty()) {
        std::cout << "exported variables:\n";
        for (const std::string& e : s.environment)
            std::cout << "  " << e << "\n";
    }
    for (const std::string& w : s.warnings)
        std::cerr << "warning: " << printableText(file + ": " + w) << "\n";

    Project project;
    project.name = m.name;
    project.model = m;
    // Absolute, so that commands run from another folder (export) find it.
    {
        std::error_code ec;
        const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
        project.current_script = ec ? file : absolute.lexically_normal().string();
    }
    project.current_script_inputs = inputs;
    // The cluster: as given, or the script's own nodes of one device type.
    std::optional<std::string> clusterSpec = a.value("cluster");
    const bool ownCluster = !clusterSpec;
    // A cluster made here takes the hosts the script names (NODE_HOSTS of an exported
    // launcher), one per node in node-rank order; hosts the cluster could not have are the
    // script's fault, said as such.
    if (ownCluster && !s.node_hosts.empty()) {
        std::set<std::string> seen;
        for (std::size_t i = 0; i < s.node_hosts.size(); ++i) {
            const std::string& h = s.node_hosts[i];
            if (const std::string why = hostNameProblem(h); !why.empty())
                throw InputError(file, "NODE_HOSTS[" + std::to_string(i) + "]", "expected a host name, got " + quotedValue(h) + " (" + why + ")");
            if (!seen.insert(h).second)
                throw InputError(file, "NODE_HOSTS[" + std::to_string(i) + "]", "host " + quotedValue(h) + " is named twice: a node rank "
                                                                                  "runs on one host of its own");
        }
        if (static_cast<int>(s.node_hosts.size()) != s.nnodes)
            throw InputError(file, "NODE_HOSTS", "names " + std::to_string(s.node_hosts.size()) + " hosts for the script's "
                                                     + std::to_string(s.nnodes) + " nodes; give the cluster it runs on with --cluster");
    }
    const auto takeScriptHosts = [&s](Cluster& c) {
        if (s.node_hosts.size() != c.nodes.size())
            return;
        for (std::size_t i = 0; i < s.node_hosts.size(); ++i)
            c.nodes[i].host = s.node_hosts[i];
    };
    // The script's defaults may start fewer nodes than its real runs (NNODES from the
    // scheduler): a rule broken on the nodes the script starts says where the world comes
    // from and how to give another.
    const auto worldHint = [&s](const InputError& e) {
        return InputError(e.file(), e.where(),
                          e.detail() + " (the world is the " + std::to_string(s.nnodes * s.nproc_per_node)
                              + " processes the script starts as read; if its environment or arguments start more, "
                                "give them with --script-env or --script-args)");
    };
    // Whether the project's cluster is the script's own nodes (no --cluster), on which the
    // rules are checked with the hint above.
    const bool scriptNodes = !clusterSpec && s.nproc_per_node > 0 && !s.parallel.hetero();
    // A FlagScale script names its meshes' device types (--hetero-device-types): without
    // --cluster or --device, the project's cluster is those meshes' devices, in whole nodes of
    // the script's processes per node, where the catalog knows every label; otherwise an
    // error that a label matches no node says how to give the cluster.
    std::string meshCluster, unknownLabel;
    if (s.parallel.hetero() && s.nproc_per_node > 0) {
        bool wholeNodes = true;
        for (const ProcessMesh& mesh : s.parallel.meshes) {
            const DeviceType* type = catalog.find(mesh.device_type);
            if (!type && unknownLabel.empty())
                unknownLabel = mesh.device_type;
            const int nodes = mesh.numDevices() / s.nproc_per_node;
            wholeNodes = wholeNodes && nodes > 0 && mesh.numDevices() % s.nproc_per_node == 0;
            meshCluster += (meshCluster.empty() ? "" : ",") + (type ? type->name : mesh.device_type) + ":" + std::to_string(nodes)
                + "x" + std::to_string(s.nproc_per_node);
        }
        if (!wholeNodes)
            meshCluster.clear();
    }
    if (!clusterSpec && !a.has("device") && a.has("o") && !meshCluster.empty() && unknownLabel.empty()) {
        clusterSpec = meshCluster;
        std::cerr << "note: " << file << ": the project's cluster is the meshes' devices, " << meshCluster
                  << " (--hetero-device-types; pass --cluster to give the nodes as they are)\n";
    }
    // A launcher exported before (NODE_TYPES=( MI300X ... ), one type, as many as its nodes):
    // the project's cluster is those nodes.
    if (!clusterSpec && !a.has("device") && a.has("o") && !s.parallel.hetero() && s.nproc_per_node > 0
        && static_cast<int>(s.node_types.size()) == s.nnodes
        && std::all_of(s.node_types.begin(), s.node_types.end(), [&](const std::string& t) { return t == s.node_types.front(); })
        && catalog.find(s.node_types.front())) {
        clusterSpec = catalog.get(s.node_types.front()).name + ":" + std::to_string(s.nnodes) + "x" + std::to_string(s.nproc_per_node);
        std::cerr << "note: " << file << ": the project's cluster is the script's NODE_TYPES, " << *clusterSpec
                  << " (pass --cluster to give the nodes as they are)\n";
    }
    if (!clusterSpec && (a.has("device") || a.has("o"))) {
        const DeviceType& type = catalog.get(a.value("device").value_or("H100-SXM"), "--device");
        const int perNode = s.nproc_per_node > 0 ? s.nproc_per_node : type.default_devices_per_node;
        clusterSpec = type.name + ":" + std::to_string(s.nnodes) + "x" + std::to_string(perNode);
        if (!a.has("device") && !s.parallel.hetero())   // a FlagScale script names them (above)
            std::cerr << "warning: " << file << ": the script does not say which devices it runs on; the project uses "
                      << *clusterSpec << " (pass --cluster or --device)\n";
    }
    if (!clusterSpec && scriptNodes) {
        // Megatron-LM's rules that do not depend on the device type (the world size over
        // TP x PP x CP, the global batch over DP x micro-batch, CP and the sequence) hold on
        // the nodes the script starts: checked there, as the launch would, with the flag named.
        Cluster own = resolveCluster("H100-SXM:" + std::to_string(s.nnodes) + "x" + std::to_string(s.nproc_per_node), catalog,
                                     nullptr);
        own.name = "its " + std::to_string(s.nnodes) + (s.nnodes == 1 ? " node" : " nodes") + " of "
            + std::to_string(s.nproc_per_node) + " processes";
        takeScriptHosts(own);
        try {
            planFromScript(s, own, catalog);
        } catch (const InputError& e) {
            throw worldHint(e);
        }
    }
    if (!clusterSpec && s.parallel.hetero() && s.nproc_per_node > 0) {
        // FlagScale's world check holds whatever the devices are: the meshes' ranks are the
        // processes the script starts.
        try {
            checkMeshWorld(s, 1LL * s.nnodes * s.nproc_per_node);
        } catch (const InputError& e) {
            throw worldHint(e);
        }
    }
    if (clusterSpec) {
        const std::string& c = *clusterSpec;
        Warnings w;
        project.cluster = resolveCluster(c, catalog, &w);
        if (ownCluster)
            takeScriptHosts(project.cluster);
        for (const auto& x : w)
            std::cerr << "warning: " << printableText(x) << "\n";
        Plan plan;
        try {
            plan = planFromScript(s, project.cluster, catalog);
        } catch (const InputError& e) {
            if (ownCluster && s.parallel.hetero() && e.where() == "--hetero-device-types")
                throw InputError(e.file(), e.where(),
                                 e.detail() + "; give the cluster it runs on with --cluster"
                                     + (meshCluster.empty() ? std::string() : " (its meshes: " + meshCluster + ")")
                                     + (unknownLabel.empty() ? std::string()
                                                             : ", and the device type " + unknownLabel
                                                                   + ", which the catalog does not have, in a hapmoe.devices file "
                                                                     "with --devices"));
            if (!scriptNodes)
                throw;
            throw worldHint(e);
        }
        // A rule of the launcher the script targets that its placement on this cluster breaks
        // (one --nproc_per_node for nodes of two sizes, ...): the import goes on, as the script
        // is what the user runs today, but says that it would not start here. A Megatron-LM configuration that
        // only FlagScale launches on this cluster (two collective libraries) targets FlagScale.
        const LauncherChoice launcher = chooseLauncher(plan, project.model, project.cluster, catalog);
        if (launcher.retargeted(plan))
            std::cerr << "warning: " << file << ": Megatron-LM cannot launch this configuration on the cluster: "
                      << launcher.megatron.front().message << "; the project's plan targets flagscale (export it with --format flagscale)\n";
        else if (const auto& problems = launcher.problems(); !problems.empty())
            std::cerr << "warning: " << file << ": " << (plan.target == Target::FlagScale ? "FlagScale" : "Megatron-LM")
                      << " would refuse this configuration: " << problems.front().message
                      << (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : std::string()) << "\n";
        plan.target = launcher.target;
        project.model.training.global_batch_size = plan.global_batch_size;
        // Printed: the script as it runs. Saved: the plan as a search with this script costs
        // it (exportCostOptions), so that the GUI's What-if and searches start from it.
        const CostModel cost(project.model, project.cluster, catalog, nullptr, scriptCostOptions(s));
        const Prediction pred = cost.estimate(plan);
        const CostModel searchCost(project.model, project.cluster, catalog, nullptr, exportCostOptions(s));
        const Prediction saved = searchCost.estimate(plan);
        std::cout << "on " << (project.cluster.name.empty() ? c : project.cluster.name) << ":\n";
        const std::vector<std::string> layerRanges = stageLayerRanges(plan, project.model.mtp_num_layers);
        for (int i = 0; i < plan.pp(); ++i) {
            const StagePlan& st = plan.stages[static_cast<std::size_t>(i)];
            std::cout << "  stage " << i << ": " << st.device_type << ", layers " << layerRanges[static_cast<std::size_t>(i)]
                      << ", " << st.numDevices() << " devices\n";
        }
        std::cout << std::fixed << std::setprecision(3) << "  predicted iteration " << pred.iteration_time_s << " s, "
                  << std::setprecision(1) << pred.peak_memory_gib << " GiB peak"
                  << (pred.feasible ? std::string() : ", infeasible: " + pred.infeasible_reason) << "\n";
        if (std::abs(saved.iteration_time_s - pred.iteration_time_s) > 1e-9 * pred.iteration_time_s)
            std::cout << std::setprecision(3) << "  with the data-parallel overlap of exported scripts " << saved.iteration_time_s
                      << " s (searches compare plans with it; the project keeps this prediction)\n";
        project.plans.push_back({plan, saved, SavedPlan::Source::Current});
    }
    if (auto out = a.value("o")) {
        // What "hapmoe validate" checks in a project; planFromScript has checked the same
        // things, so a failure here names the script the project comes from.
        validateModel(project.model, file);
        validateCluster(project.cluster, catalog, file);
        for (const SavedPlan& saved : project.plans)
            validatePlanDocument(PlanDocument{project.model, project.cluster, saved.plan, std::nullopt, std::nullopt, {}}, catalog,
                                 file);
        // The types of its own the cluster uses (--devices), so the studio and the other
        // commands cost the project as this one did.
        project.devices = typesBeyondBuiltin(project.cluster, catalog);
        saveFileAtomically(*out, writeProject(project));
        std::cout << "wrote " << *out << "\n";
    }
    return Success;
}

} // namespace hapmoe::cli
