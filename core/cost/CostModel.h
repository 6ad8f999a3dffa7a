#pragma once
// The MoE-aware cost model (paper section 3.2-3.3, DESIGN section 4). Every formula used
// is written down in docs/cost-model.md with its source.
//
// Contract for the search: estimateStage() is cheap (table look-ups and arithmetic) and
// deterministic; estimate() assembles stages into the iteration time and the memory
// feasibility of every stage. For plain 1F1B (vpp == 1) the assembly is fixed:
//
//   c_i    = t_fwd_i + t_bwd_i       (per micro-batch; t_fwd_i includes the activation send
//                                     to stage i+1 and t_bwd_i the gradient send back from it,
//                                     both costed on the link between stage i and ctx.next)
//   T_pipe = sum_i c_i + (M - 1) * max_i c_i          (paper eq. 4-5, appendix B)
//   T_iter = T_pipe + max(max_i (sync_i - d_i), max(sync_0, sync_last - d_last) + AR_tied)
//            + max_i step_i
//            (sync_i: the stage's exposed gradient reduce-scatter, from its own last
//             backward, which ends d_i = sum_{j<i} t_bwd_j before stage 0's; AR_tied: the tied
//             embeddings' all-reduce between the end stages once both have synced; step_i: its
//             optimizer step and exposed parameter all-gather; the gradient-norm all-reduce
//             between the two spans every stage: StageEstimate::beforeBarrier / afterBarrier,
//             barrierWait)
//
// so that a search can minimise it exactly (carry the maxima, minimise the sum).
// The event simulator (cost/Schedule.h) gives the exact schedule; tests bound the gap.
// With interleaving (vpp > 1, plans the search does not build) T_pipe is the simulated
// schedule's end with each chunk's own time (StageEstimate::chunk_fwd), and d_i where rank
// i's last backward ends before it (simulateInterleaved, which extrapolates a schedule of more
// than kMaxSimulatedBlocks blocks from two shorter ones); where it cannot, the closed form
// sum_i c_i / v + (M v - 1) max_i c_i / v, exact for equal chunks, stands in.

#include "cost/Prediction.h"
#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"
#include "model/ModelSpec.h"
#include "plan/Plan.h"
#include "profile/Profile.h"

#include <memory>

namespace hapmoe {

// The fraction of the catalog's maximum achievable matmul throughput (MAMF, the best of a
// shape sweep) that a large training-shaped GEMM reaches, applied to every device type
// without a profile efficiency: on A100 cuBLASLt 8192^3 runs at 253.7 TFLOP/s (Azure)
// against a MAMF of 271.2 (ml-engineering). docs/cost-model.md section 2.
inline constexpr double kLargeGemmOverMamf = 253.7 / 271.2;

struct CostOptions {
    double memory_headroom = 0.0;   // fraction of capacity kept free (0 = use all)
    // Attention as one fused (flash) kernel, as Megatron-Core with Transformer Engine runs it:
    // the s x s scores are neither written to memory nor stored for backward, and the causal
    // mask halves the work. false = the unfused softmax path of Megatron-LM in 2022.
    bool fused_attention = true;
    // Megatron-LM's overlap switches (Prediction.h); every prediction records them.
    OverlapSwitches overlap;
    // Megatron-LM's scatter-gather of pipeline sends (on in Megatron-LM of 2021-2022, gone from
    // Megatron-Core): without sequence parallelism each TP rank sent its 1/TP share and the
    // next stage all-gathered it. Off, every TP rank sends the whole activation; with sequence
    // parallelism a rank's activation is its 1/TP share either way.
    bool p2p_scatter_gather = false;
    // Memory the runtime keeps besides the model state (CUDA context, NCCL buffers, allocator
    // slack) when the profile has no calibration for the device type.
    double runtime_overhead_gib = 2.0;
    // Fraction of the HBM bandwidth that element-wise kernels and the optimizer reach, for
    // device types without a published STREAM copy figure (docs/cost-model.md section 2).
    double hbm_efficiency = 0.8;
    // Use the published STREAM copy fraction where there is one (A100 1.61 of 2.039 TB/s,
    // H100 2.90 of 3.35, H200 4.01 of 4.8: ../shared/reference/device-specs.md section 4).
    bool stream_hbm_fraction = true;
    // Optimizer CPU offload (Plan::optimizer_offload_fraction > 0; docs/cost-model.md section 7.3).
    // Host link per device and direction where the cluster's node gives no
    // host_link_gbytes_per_s: PCIe Gen4 x16, 32 GB/s (NVIDIA's L40S datasheet,
    // ../shared/reference/device-specs.md section 1).
    double host_link_gbytes_per_s = 32.0;
    // Adam on the host, parameters per second for one node's CPUs: DeepSpeed's vectorised
    // CPU-Adam stepped an 11.6e9-parameter GPT-2 in 8.2 s (deepspeedai/DeepSpeed pull request 735).
    double host_adam_params_per_s = 11.6e9 / 8.2;
};

// Where a stage sits in its pipeline; needed for activations in flight (min(PP - i, M)),
// the embedding/output layer, and the send to the next stage.
struct StageContext {
    int stage_index = 0;
    int num_stages = 1;
    int num_microbatches = 1;
    int vpp = 1;
    bool sequence_parallel = true;
    bool distributed_optimizer = true;
    // CostOptions::overlap.tp_comm applies: false when the plan's stages differ in TP, since
    // Transformer Engine's userbuffers are set up for one TP size and the launcher leaves
    // --tp-comm-overlap off (LauncherExport).
    bool tp_comm_overlap = true;
    double optimizer_offload_fraction = 0.0;   // Plan::optimizer_offload_fraction
    // The framework the plan is for (Plan::target). Megatron-LM d98e8a64 refuses Transformer
    // Engine's fused cross-entropy, and its launcher writes the native fusion instead: a
    // Megatron-LM plan's last stage is costed with that (docs/cost-model.md section 3.6).
    Target target = Target::Any;
    const StagePlan* next = nullptr;   // the following stage (for the p2p send), or null
    // Interleaved 1F1B (vpp > 1): the last rank also sends its chunk outputs to rank 0.
    const StagePlan* wrap = nullptr;
    // The layers the rank runs when they are not the stage's own range: with vpp > 1 its
    // interleaved chunks (Plan::rankLayers); empty means [first_layer, first_layer + num_layers).
    std::vector<LayerRange> layers;
    // Write StageEstimate::notes (which numbers came from a profile); the search, which costs
    // millions of candidate stages and reads only their times, turns it off.
    bool notes = true;
};

// Keeps copies of the model and the cluster; the catalog and the profile must outlive it.
class CostModel {
public:
    CostModel(const ModelSpec& model, const Cluster& cluster, const DeviceCatalog& catalog,
              const Profile* profile = nullptr, CostOptions options = {});
    ~CostModel();
    CostModel(const CostModel&) = delete;
    CostModel& operator=(const CostModel&) = delete;

    StageEstimate estimateStage(const StagePlan& stage, const StageContext& ctx) const;
    Prediction estimate(const Plan& plan) const;
    // Tied embeddings, PP > 1 (docs/cost-model.md section 7.1): the all-reduce of the word
    // embedding's gradient between the rank of the first stage and that of the last, after
    // their data-parallel sync; 0 for untied embeddings. estimate() adds it once to the
    // iteration; the search adds it when it closes a pipeline.
    // With the distributed optimizer and different DP on the two stages the launcher runs
    // FlagScale's partial reduce: each rank all-reduces only its shard of the gradient.
    double tiedEmbeddingSync(const StagePlan& first, const StagePlan& last, bool distributedOptimizer) const;
    // The same with the model's training setting for the distributed optimizer.
    double tiedEmbeddingSync(const StagePlan& first, const StagePlan& last) const;

    // Memory one device of the type may fill (bytes: its capacity less the headroom); 0 for a
    // type the catalog does not know.
    double deviceCapacityBytes(std::string_view deviceType) const;
    // Least device memory any plan of the model needs over all its devices together: every
    // parameter once with its bf16 weight and fp32 gradient (6 bytes), and the optimizer's
    // 12 bytes (fp32 copy, Adam m and v) of it less the share offloaded to the host
    // (docs/search.md section 1). Activations and runtime overhead only add to it.
    double minimumModelStateBytes(double optimizerOffloadFraction) const;
    const ModelSpec& model() const;
    const Cluster& cluster() const;
    const DeviceCatalog& catalog() const;
    const CostOptions& options() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

// Model FLOPs of one iteration, Megatron's counting (megatron/training/training.py
// num_floating_point_operations; ../shared/reference/published-runs.md 2.1): the causal half
// of the attention core as Megatron-LM counts it now, or the full square of core_r0.8.0 to
// compare with figures published from it. The output layer counts the vocabulary padded for
// the tensor parallelism tp (args.padded_vocab_size; ModelSpec::paddedVocabSize).
double modelFlopsPerIteration(const ModelSpec& model, int globalBatch, int tp = 1,
                              FlopCounting counting = FlopCounting::CausalHalf);

// Parameter counts (embedding and output included; untied output counted once more).
struct ParameterCount {
    double total = 0;
    double active = 0;          // with top-k of the experts (plus shared experts)
    double embedding = 0;       // input embedding (and output layer when untied)
    double dense_per_layer = 0; // attention + norms (+ dense FFN for non-MoE layers excluded)
    double expert_per_layer = 0;  // all experts of one MoE layer
    // The multi-token-prediction depths (their layers, eh_proj and norms; the embedding and
    // output layer they share are counted above), which published counts and total leave out
    // (DeepSeek-V3: 671B without its MTP module); docs/cost-model.md section 3.9.
    double mtp = 0;
};
ParameterCount countParameters(const ModelSpec& model);

} // namespace hapmoe
