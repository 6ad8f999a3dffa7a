#pragma once
// A parallel plan: a pipeline of stages, each on one device type with its own knobs
// (DESIGN section 3). Consecutive stages with the same device type and knobs form a mesh.
// Attention grid TP*CP*DP and expert grid EP*ETP*EDP cover the same devices of a stage
// (Megatron's MoE parallel folding).

#include <string>
#include <string_view>
#include <vector>

namespace hapmoe {

enum class Recompute { None, Selective, Full };
enum class Target { Megatron, FlagScale, Any };
const char* toString(Recompute r);
const char* toString(Target t);

// What selective recompute repeats: Megatron-Core's --recompute-modules (TransformerConfig,
// d98e8a64), a set of bits. Megatron-Core's default is core attention alone.
namespace recompute_module {
inline constexpr unsigned core_attn = 1u << 0;       // the attention core (Korthikanti et al.)
inline constexpr unsigned moe_act = 1u << 1;         // the experts' activation function
inline constexpr unsigned layernorm = 1u << 2;       // the norms that are modules of their own
inline constexpr unsigned mlp = 1u << 3;             // the dense MLP
inline constexpr unsigned moe = 1u << 4;             // the whole MoE layer
inline constexpr unsigned shared_experts = 1u << 5;  // the MoE layer's shared experts
inline constexpr unsigned mla_up_proj = 1u << 6;     // multi-latent attention's up projections and RoPE
inline constexpr unsigned all = (1u << 7) - 1;
inline constexpr unsigned defaults = core_attn;
} // namespace recompute_module

// The bit of a module's Megatron-Core name ("core_attn"), 0 if unknown.
unsigned recomputeModuleBit(std::string_view name);
// The names of a set, in Megatron-Core's order, joined by `separator` ("core_attn moe_act").
std::string recomputeModulesString(unsigned modules, std::string_view separator = " ");
std::vector<std::string> recomputeModuleNames(unsigned modules);
// As plans show it: the names, or "no module" for the empty set.
std::string recomputeModulesLabel(unsigned modules, std::string_view separator = ", ");

// Devices [first_local, first_local + count) of one node.
struct DeviceSlot {
    int node = 0;        // Node::id
    int first_local = 0;
    int count = 0;
};

struct StagePlan {
    std::string device_type;              // catalog canonical name
    std::vector<DeviceSlot> devices;
    int first_layer = 0;
    int num_layers = 0;
    int tp = 1, cp = 1, dp = 1;           // attention / dense grid
    int ep = 1, etp = 1, edp = 1;         // expert grid; tp*cp*dp == ep*etp*edp == devices
    Recompute recompute = Recompute::None;
    int recompute_layers = 0;             // Full: number of this stage's layers recomputed (0 = all)
    unsigned recompute_modules = recompute_module::defaults;   // Selective: what it repeats
    int micro_batch_size = 1;             // per data-parallel replica of this stage's mesh
    // With interleaving, the decoder layers of each of the rank's vpp model chunks when a
    // --pipeline-model-parallel-layout placed them unevenly; empty means chunkLayers'
    // even spread. Used only when it has vpp entries summing to num_layers.
    std::vector<int> chunk_layers;

    int numDevices() const { return tp * cp * dp; }
    // The layers of each of the rank's vpp chunks: chunk_layers when they fit, else even.
    std::vector<int> chunks(int vpp) const;
};

// Decoder layers [first, first + count) of the model.
struct LayerRange {
    int first = 0;
    int count = 0;
};

// The decoder layers of each of a rank's vpp model chunks, as Megatron-LM's
// --num-layers-per-virtual-pipeline-stage and the layouts this project writes spread them:
// as evenly as possible, the earlier chunks taking the extra layer.
std::vector<int> chunkLayers(int layers, int vpp);

// Layers of a rank with these chunks that Megatron-LM's block recompute covers with
// --recompute-num-layers n: the first n of every chunk (megatron/core/recompute.py runs over
// one chunk's TransformerBlock), the sum over chunks of min(n, chunk).
int blockRecomputedLayers(const std::vector<int>& chunks, int n);
// The same as a plan stores it (StagePlan::recompute_layers under Recompute::Full): the
// layers covered, 0 when they are all of the rank's.
int blockRecomputeLayersOfStage(const std::vector<int>& chunks, int n);

// The decoder layers each pipeline rank runs, given the layers per rank. With vpp 1 rank r
// holds one range after rank r - 1's; with vpp > 1 its chunk c is virtual stage c * PP + r
// (Megatron-LM's interleaved schedule, reference section 4a), so rank 0 of 4 ranks of 12
// layers at vpp 2 runs layers 0-5 and 24-29. A rank keeps its empty chunks (count 0), so
// entry c is its chunk c.
std::vector<std::vector<LayerRange>> rankLayers(const std::vector<int>& layersPerRank, int vpp);
// The same for given chunks: chunksPerRank[r][c] layers in chunk c of rank r, every rank with
// the same number of chunks.
std::vector<std::vector<LayerRange>> rankLayers(const std::vector<std::vector<int>>& chunksPerRank);

struct UnusedDevices {
    int node = 0;
    int count = 0;
    std::string reason;

    // How the search's reason starts for devices a plan is faster without (as opposed to
    // devices it could not use: types left out, nodes a script does not start).
    static constexpr std::string_view kLeftIdle = "left idle";
    bool leftIdle() const { return std::string_view(reason).substr(0, kLeftIdle.size()) == kLeftIdle; }
};

// The most virtual stages per pipeline rank a plan may have. Megatron-LM sets no bound (a
// layout may leave chunks empty: 'E|||t|t|||L' is VPP 4 on 2 layers); this one keeps the
// chunks a plan is costed with, PP x VPP of them, and its schedule's blocks in reach.
inline constexpr int kMaxVpp = 512;

struct Plan {
    std::string name;                     // "HS-DP #1", "uniform baseline", "current (train.sh)"
    std::vector<StagePlan> stages;
    int vpp = 1;                          // virtual stages per pipeline rank (interleaved 1F1B)
    int global_batch_size = 0;
    bool sequence_parallel = true;
    bool distributed_optimizer = true;
    // Megatron-Core's --optimizer-cpu-offload --optimizer-offload-fraction F: the fraction of
    // each rank's optimizer shard (fp32 master weights, Adam moments) kept in host memory and
    // updated there. 0 = no offload.
    double optimizer_offload_fraction = 0.0;
    Target target = Target::Any;
    std::vector<UnusedDevices> unused;

    int pp() const { return static_cast<int>(stages.size()); }
    int numDevices() const;
    // M = GBS / (DP_0 * mbs_0): every mesh runs the same number of micro-batches.
    int numMicrobatches() const;
    // Every stage has the same TP: what --tp-comm-overlap needs, since Transformer Engine's
    // userbuffers are set up for one TP size (cost model and launcher export).
    bool oneTpSize() const;
    // rankLayers for the stages' num_layers and this plan's vpp.
    std::vector<std::vector<LayerRange>> rankLayers() const;
};

} // namespace hapmoe
