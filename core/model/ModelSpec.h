#pragma once
// The model and training specification. Field names follow Megatron-LM's flags in
// snake_case (see ../shared/reference/megatron-and-flagscale.md section 3), so that the
// hapmoe.model JSON format and the script importer speak the same language.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hapmoe {

enum class Precision { BF16, FP16 };
// Megatron-LM's --fp8-format: the linear layers' GEMMs in FP8 through Transformer Engine, on
// top of the bf16/fp16 precision of everything else (docs/cost-model.md section 3.7).
enum class Fp8Format { None, Hybrid, E4M3 };
// Megatron-LM's --fp8-recipe: how Transformer Engine scales the FP8 tensors. Delayed takes each
// tensor's scale from an amax history; tensorwise measures the tensor's amax before casting it
// (current scaling); mxfp8 scales blocks of 32 elements (Blackwell); blockwise scales 1x128
// and 128x128 blocks (DeepSeek-V3's recipe). The casts and the devices differ (section 3.7).
enum class Fp8Recipe { Delayed, Tensorwise, MXFP8, Blockwise };
enum class TokenDispatcher { AllToAll, AllGather, Flex };
// Megatron-LM's --moe-router-score-function: how the router turns logits into scores.
enum class RouterScore { Softmax, Sigmoid, SqrtSoftplus };
// Megatron-LM's --cross-entropy-fusion-impl: Megatron-Core's own fused kernels ("native") or
// Transformer Engine's parallel cross-entropy ("te"); docs/cost-model.md section 3.6.
enum class CrossEntropyFusionImpl { Native, TE };

struct TrainingSpec {
    int micro_batch_size = 1;
    int global_batch_size = 256;
    Precision precision = Precision::BF16;
    Fp8Format fp8_format = Fp8Format::None;
    Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;   // Megatron-LM's default
    // Megatron-LM's --fp8-param-gather: the linear layers' weights held in FP8 (with their
    // transposes) in place of the bf16 ones, and gathered in FP8 by the distributed optimizer.
    bool fp8_param_gather = false;
    bool use_distributed_optimizer = true;
    // Megatron-LM's --cross-entropy-loss-fusion and --cross-entropy-fusion-impl: the loss over
    // the vocabulary in fewer passes, and with Transformer Engine's kernel without the fp32
    // copy of the logits (docs/cost-model.md sections 3.6 and 5.2).
    bool cross_entropy_loss_fusion = false;
    CrossEntropyFusionImpl cross_entropy_fusion_impl = CrossEntropyFusionImpl::Native;
    // Router imbalance rho = max_i |T_i| / mean_j |T_j| >= 1 (paper section 3.2) and its
    // weight gamma in [0, 1]; the MoE critical path is scaled by 1 + gamma (min(rho, EP) - 1).
    double router_imbalance = 1.2;
    double imbalance_weight = 1.0;
    // Megatron-LM's --accumulate-allreduce-grads-in-fp32: gradients accumulated and reduced in
    // fp32, the buffer then serving as the optimizer's main gradient. Unset means Megatron-LM's
    // default, which arguments.py forces on for bf16 (off with --grad-reduce-in-bf16) and
    // leaves off for fp16 (reference megatron-and-flagscale.md, --bf16 / --fp16).
    std::optional<bool> accumulate_allreduce_grads_in_fp32;
    bool fp8() const { return fp8_format != Fp8Format::None; }
    bool fp32Gradients() const { return accumulate_allreduce_grads_in_fp32.value_or(precision == Precision::BF16); }
};

struct ModelSpec {
    std::string name;
    std::string source;      // where the shape comes from (paper, model card, config file)
    std::string description;

    int num_layers = 0;
    int hidden_size = 0;
    int ffn_hidden_size = 0;          // dense FFN (also used by non-MoE layers of an MoE model)
    int num_attention_heads = 0;
    int num_query_groups = 0;         // GQA groups; 0 means multi-head attention (= heads)
    int kv_channels = 0;              // 0 means hidden_size / num_attention_heads
    int vocab_size = 0;
    // Megatron-LM's --make-vocab-size-divisible-by: the word embedding and output layer are
    // built for the vocabulary padded to a multiple of this times TP (paddedVocabSize).
    int make_vocab_size_divisible_by = 128;
    int seq_length = 0;
    int max_position_embeddings = 0;  // 0 means seq_length
    bool swiglu = false;
    bool add_bias_linear = false;     // Megatron default is true; MoE recipes disable it
    bool untie_embeddings_and_output_weights = false;
    std::string normalization = "RMSNorm";   // or "LayerNorm"
    // Megatron --qk-layernorm: a norm of each head's query and key, over its kv_channels
    // (Qwen3; Qwen3 technical report, arXiv:2505.09388, section 2).
    bool qk_layernorm = false;
    // Megatron-LM's --attention-dropout (on the attention probabilities) and --hidden-dropout
    // (on each sub-layer's output before the residual add, and on the embedding), 0.1 each by
    // default. A dropout above 0 keeps a 1-byte mask per element for backward and writes it in
    // forward; at 0 PyTorch runs no dropout kernel and keeps nothing (docs/cost-model.md
    // sections 3.3 and 5.2). Recipes of recent models train with both at 0.
    double attention_dropout = 0.1;
    double hidden_dropout = 0.1;

    // Multi-latent attention (Megatron-LM's --multi-latent-attention; DeepSeek-V2 report,
    // arXiv:2405.04434, section 2.1): the query (when q_lora_rank > 0) and the key/value pass
    // through low-rank latents whose down projections every TP rank holds whole; queries and
    // keys have qk_head_dim channels without and qk_pos_emb_head_dim with rotary positions,
    // values v_head_dim. num_query_groups and kv_channels do not apply. Defaults are
    // Megatron-LM's flags' (arguments.py _add_mla_args); q_lora_rank 0 is its None, a query
    // projected straight from the hidden state. With qk_layernorm the two latents are
    // normalised (docs/cost-model.md section 3.8).
    bool multi_latent_attention = false;
    int q_lora_rank = 0;
    int kv_lora_rank = 32;
    int qk_head_dim = 128;
    int qk_pos_emb_head_dim = 64;
    int v_head_dim = 128;
    // Megatron-LM's --mtp-num-layers (DeepSeek-V3 report, arXiv:2412.19437, section 2.2):
    // multi-token-prediction depths after the last decoder layer, each a projection of the
    // next token's embedding with the hidden state, one transformer layer of the last
    // layer's kind and the output layer again, all on the last pipeline stage
    // (docs/cost-model.md section 3.9). 0 is Megatron-LM's None.
    int mtp_num_layers = 0;

    // Mixture of experts. num_experts == 0 is a dense model.
    int num_experts = 0;
    int moe_ffn_hidden_size = 0;      // 0 means ffn_hidden_size
    int moe_router_topk = 2;
    int moe_layer_freq = 1;           // every k-th layer is MoE (layer i is MoE when i % k == 0)
    std::vector<std::uint8_t> moe_layer_pattern;  // explicit 0/1 per layer; overrides the frequency
    int moe_shared_expert_intermediate_size = 0;  // 0 means no shared expert
    TokenDispatcher moe_token_dispatcher_type = TokenDispatcher::AllToAll;
    // The router's recipe (Megatron-LM's --moe-router-score-function, --moe-router-enable-
    // expert-bias, --moe-router-num-groups, --moe-router-group-topk, --moe-router-topk-scaling-
    // factor; 0 is None): DeepSeek-V3 routes by sigmoid scores with an expert bias, to 4 of 8
    // expert groups, and scales the top-k weights by 2.5. The cost model costs every router the
    // same (one h x E GEMM and its scores, docs/cost-model.md section 3.4); the launchers write
    // them, so that the run trains the model's router.
    RouterScore moe_router_score_function = RouterScore::Softmax;
    bool moe_router_enable_expert_bias = false;
    int moe_router_num_groups = 0;
    int moe_router_group_topk = 0;
    double moe_router_topk_scaling_factor = 0;

    TrainingSpec training;

    bool isMoe() const { return num_experts > 0; }
    // The last stage holds a copy of the word embedding, whose gradient it all-reduces with
    // the first stage's: tied embeddings (the output layer), or the MTP depths' input.
    bool embeddingOnLastStage() const { return !untie_embeddings_and_output_weights || mtp_num_layers > 0; }
    // An MTP depth's layer is of the last decoder layer's kind (Megatron-Core builds it from
    // that layer's spec; training.py counts it so).
    bool mtpLayerIsMoe() const { return isMoeLayer(num_layers - 1); }
    // MoE layers dispatch through Megatron's flex dispatcher (DeepEP).
    bool usesFlexDispatcher() const { return isMoe() && moe_token_dispatcher_type == TokenDispatcher::Flex; }
    bool isMoeLayer(int layer) const;
    int numMoeLayers() const;
    // Number of MoE layers among [first, first + count).
    int numMoeLayers(int first, int count) const;
    int queryGroups() const { return num_query_groups > 0 ? num_query_groups : num_attention_heads; }
    int kvChannels() const { return kv_channels > 0 ? kv_channels : (num_attention_heads > 0 ? hidden_size / num_attention_heads : 0); }
    int expertFfn() const { return moe_ffn_hidden_size > 0 ? moe_ffn_hidden_size : ffn_hidden_size; }
    // The vocabulary Megatron-LM builds the embedding and the output layer for at tensor
    // parallelism tp: vocab_size rounded up to a multiple of make_vocab_size_divisible_by * tp
    // (megatron/core/tokenizers/utils/build_tokenizer.py vocab_size_with_padding; reference
    // megatron-and-flagscale.md section 2). LLaMA's 32000 at TP 8 becomes 32768.
    double paddedVocabSize(int tp) const;
    int maxPositions() const { return max_position_embeddings > 0 ? max_position_embeddings : seq_length; }
    int bytesPerElement() const { return 2; }  // bf16 and fp16 activations and weights
    // The largest router imbalance an MoE model can have: an expert gets each token at most
    // once, so its share is at most E / k of the mean (rho = E / k when every token goes to
    // every expert). 0 for a dense model or a top-k not yet set.
    double maxRouterImbalance() const
    {
        return isMoe() && moe_router_topk > 0 ? static_cast<double>(num_experts) / moe_router_topk : 0.0;
    }
    // Lowers training.router_imbalance to maxRouterImbalance() when it is above it; returns
    // whether it did. For a value that was not chosen for this shape (the default 1.2, or the
    // one a shape edit left behind); a value given with the model is validated, not capped.
    bool capRouterImbalance();
};

// vocab rounded up to a multiple of divisibleBy * tp (ModelSpec::paddedVocabSize).
double paddedVocabSize(double vocab, int divisibleBy, int tp);

const char* toString(Precision p);
const char* toString(Fp8Format f);   // "none", "hybrid", "e4m3": --fp8-format's values
const char* toString(Fp8Recipe r);   // "delayed", "tensorwise", "mxfp8", "blockwise": --fp8-recipe's values
std::optional<Fp8Recipe> parseFp8Recipe(std::string_view name);   // toString's inverse; nullopt for another name
const char* toString(TokenDispatcher d);
const char* toString(RouterScore r);   // "softmax", "sigmoid", "sqrtsoftplus": --moe-router-score-function's values
const char* toString(CrossEntropyFusionImpl i);   // "native", "te": --cross-entropy-fusion-impl's values

} // namespace hapmoe
