// The shape of a transformer layer: weight counts as Megatron-LM builds them and the model
// FLOPs per token as Megatron counts them (docs/cost-model.md section 1).

#include "cost/LayerShape.h"

namespace hapmoe {

LayerShape LayerShape::of(const ModelSpec& m)
{
    LayerShape s;
    s.h = m.hidden_size;
    s.heads = m.num_attention_heads;
    s.groups = m.queryGroups();
    s.kvc = m.kvChannels();
    s.q = static_cast<double>(s.heads) * s.kvc;
    s.kv = static_cast<double>(s.groups) * s.kvc;
    s.ffn = m.ffn_hidden_size;
    s.effn = m.expertFfn();
    s.shared = m.moe_shared_expert_intermediate_size;
    s.experts = m.num_experts;
    s.topk = m.isMoe() ? m.moe_router_topk : 0;
    s.gated = m.swiglu ? 2.0 : 1.0;
    s.vocab = m.vocab_size;
    s.vocabMultiple = m.make_vocab_size_divisible_by;
    s.seq = m.seq_length;
    s.bias = m.add_bias_linear;
    s.normParams = m.normalization == "LayerNorm" ? 2.0 * s.h : s.h;
    s.qkNormParams = m.qk_layernorm ? 2.0 * (m.normalization == "LayerNorm" ? 2.0 : 1.0) * s.kvc : 0.0;
    s.learnedPositions = m.normalization == "LayerNorm";
    if (m.multi_latent_attention) {
        // Megatron-Core MLASelfAttention (multi_latent_attention.py): every head has its own
        // query and key of qk_head_dim + qk_pos_emb_head_dim channels and value of v_head_dim.
        s.mla = true;
        s.qLora = m.q_lora_rank;
        s.kvLora = m.kv_lora_rank;
        s.dNope = m.qk_head_dim;
        s.dRope = m.qk_pos_emb_head_dim;
        s.dV = m.v_head_dim;
        s.groups = s.heads;
        s.kvc = m.qk_head_dim + m.qk_pos_emb_head_dim;
        s.q = static_cast<double>(s.heads) * s.kvc;
        s.kv = 0;   // no key/value projections of their own: keyValuePerRank gives K and V
        // --qk-layernorm normalises the latents (fused into the up projections' TE
        // LayerNormColumnParallelLinear, gpt_layer_specs.py): one norm over each latent.
        s.qkNormParams = m.qk_layernorm ? (m.normalization == "LayerNorm" ? 2.0 : 1.0) * (s.qLora + s.kvLora) : 0.0;
    }
    s.attentionDropout = m.attention_dropout > 0;
    s.hiddenDropout = m.hidden_dropout > 0;
    return s;
}

double LayerShape::attentionParams() const
{
    if (mla) {
        // down projections (linear_q_down_proj h x q_lora, linear_kv_down_proj h x (kv_lora +
        // rope part)), up projections (q_lora x q, or linear_q_proj h x q; kv_lora x heads
        // (nope + v)), output projection heads v x h
        const double kvUp = heads * (dNope + dV);
        double p = mlaDownParams() + mlaQueryIn() * q + kvLora * kvUp + valueWidth() * h;
        if (bias)
            p += q + kvUp + h;
        return p + 2 * normParams + qkNormParams;
    }
    double p = h * (q + 2 * kv) + q * h;
    if (bias)
        p += (q + 2 * kv) + h;
    return p + 2 * normParams + qkNormParams;   // input norm, pre-MLP norm, query and key norms
}

double LayerShape::attentionTpReplicated() const
{
    return 2 * normParams + qkNormParams + (bias ? h : 0.0) + mlaDownParams();
}

double LayerShape::replicatedKvParams(int tp) const
{
    const double extra = 2 * (kvPerRank(tp) - kv / tp);   // key and value widths
    return extra * h + (bias ? extra : 0.0);
}

double LayerShape::denseFfnParams() const
{
    double p = h * ffn * gated + ffn * h;
    if (bias)
        p += ffn * gated + h;
    return p;
}

double LayerShape::denseFfnTpReplicated() const { return bias ? h : 0.0; }

double LayerShape::expertParams() const
{
    double p = h * effn * gated + effn * h;
    if (bias)
        p += effn * gated + h;
    return p * experts;
}

double LayerShape::expertEtpReplicated() const { return bias ? h * experts : 0.0; }

double LayerShape::sharedExpertParams() const
{
    if (shared <= 0)
        return 0;
    return h * shared * gated + shared * h;
}

double LayerShape::routerParams() const
{
    // Megatron-Core's Router: an (E, h) weight, and an E bias with --add-bias-linear.
    return h * experts + (bias ? experts : 0.0);
}

double LayerShape::forwardFlopsPerToken(bool moeLayer, FlopCounting counting) const
{
    // Megatron-LM's counting per token and layer, forward only (2 FLOPs per multiply-add;
    // backward counts twice forward, so 3x this gives the published 12 h^2 form):
    //   attention: 2 h (q + 2 kv) + 2 q h (projections) + 4 s q (scores and values over the
    //              full s x s, core_r0.8.0), or 2 s q (the causal half, d98e8a64)
    //   FFN      : 2 h F (gated + 1), experts: k times with the expert F, plus shared experts
    //   MLA      : 2 (down projections + up projections + output projection) + 2 s (q + heads
    //              v) over the full s x s, or s (q + heads v) (training.py's MLA branch, which
    //              also counts 2 (q_lora + kv_lora) for the latents' norms, left out here)
    const double core = counting == FlopCounting::FullSquare ? coreFlops(1.0, 1) : 0.5 * coreFlops(1.0, 1);
    double f = mla ? 2 * (h * mlaDownWidth() + mlaQueryIn() * q + kvLora * heads * (dNope + dV) + valueWidth() * h) + core
                   : 2 * h * (q + 2 * kv) + 2 * q * h + core;
    if (moeLayer)
        f += 2 * h * effn * (gated + 1) * topk + (shared > 0 ? 2 * h * shared * (gated + 1) : 0.0);
    else
        f += 2 * h * ffn * (gated + 1);
    return f;
}

double LayerShape::paddedVocab(int tp) const { return paddedVocabSize(vocab, vocabMultiple, tp); }

double LayerShape::logitsFlopsPerToken(int tp) const { return 2 * h * paddedVocab(tp); }

} // namespace hapmoe
