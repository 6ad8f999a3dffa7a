#pragma once
// The shape of one transformer layer as the cost model needs it (sizes as doubles so that
// products never overflow). Internal to core/cost.

#include "cost/Prediction.h"
#include "model/ModelSpec.h"

namespace hapmoe {

struct LayerShape {
    double h = 0;          // hidden size
    int heads = 0;
    int groups = 0;        // query groups (GQA)
    int kvc = 0;           // channels per head
    double q = 0;          // heads * kvc (query projection width)
    double kv = 0;         // groups * kvc (key or value projection width)
    double ffn = 0;        // dense FFN size
    double effn = 0;       // expert FFN size
    double shared = 0;     // shared expert FFN size (0 = none)
    int experts = 0;
    int topk = 0;
    double gated = 1;      // 2 with SwiGLU (gate and up projection), else 1
    double vocab = 0;      // the model's vocabulary, unpadded
    int vocabMultiple = 128;   // make_vocab_size_divisible_by
    double seq = 0;
    bool bias = false;
    double normParams = 0; // parameters of one norm (2h for LayerNorm, h for RMSNorm)
    double qkNormParams = 0; // the query and key norms of --qk-layernorm (two norms over kvc)
    bool learnedPositions = false;
    // Multi-latent attention (ModelSpec::multi_latent_attention, docs/cost-model.md section
    // 3.8). Then q is the query and key width heads x (dNope + dRope), groups == heads, and
    // qkNormParams holds the two latents' norms.
    bool mla = false;
    double qLora = 0;      // query latent (0: the query is projected from the hidden state)
    double kvLora = 0;     // key/value latent
    double dNope = 0;      // query/key channels per head without rotary positions
    double dRope = 0;      // query/key channels per head with them (one shared key part)
    double dV = 0;         // value channels per head
    // Dropout above 0 (ModelSpec::attention_dropout, hidden_dropout): a mask kept per element.
    bool attentionDropout = true;
    bool hiddenDropout = true;

    static LayerShape of(const ModelSpec& m);

    double attentionParams() const;     // QKV, projection, both norms
    // Key (or value) projection width on one of tp ranks: kv / tp while the groups split
    // over TP, one whole group (kvc) when TP is a multiple of the groups (Megatron-Core then
    // replicates each group on tp / groups ranks; reference megatron-and-flagscale.md section 2).
    double kvPerRank(int tp) const { return groups >= tp ? kv / tp : static_cast<double>(kvc); }
    // The key and value widths together on one of tp ranks: what attention keeps of them and
    // what context parallelism passes round its ring.
    double keyValuePerRank(int tp) const { return mla ? heads * (dNope + dRope + dV) / tp : 2 * kvPerRank(tp); }
    // Width of the attention core's output, the output projection's input: heads x channels
    // of a value.
    double valueWidth() const { return mla ? heads * dV : q; }
    // MLA: the input width of the query projection (the latent, or the hidden state), and the
    // width a TP rank gathers under sequence parallelism before its column-parallel
    // projections (that query input, the key/value latent and the shared rotary key part;
    // h without MLA).
    double mlaQueryIn() const { return qLora > 0 ? qLora : h; }
    double attentionGatherWidth() const { return mla ? mlaQueryIn() + kvLora + dRope : h; }
    // MLA: the down projections' output width (the latents and the rotary key part), 0
    // without MLA, and their parameters, which every TP rank holds whole (with their biases).
    double mlaDownWidth() const { return mla ? kvLora + dRope + qLora : 0.0; }
    double mlaDownParams() const { return (h + (bias ? 1.0 : 0.0)) * mlaDownWidth(); }
    // Forward FLOPs of the scores and the weighted values of T tokens over all s keys, split
    // over tp (the full s x s; the causal kernel does half).
    double coreFlops(double T, int tp) const { return 2.0 * T * seq * (q + valueWidth()) / tp; }
    // Parameters of one layer's attention a rank holds beyond attentionParams() / tp: the
    // replicated key/value groups when TP is a multiple of the groups (0 otherwise).
    double replicatedKvParams(int tp) const;
    // Parameters Megatron-Core keeps whole on every TP rank (docs/cost-model.md section 5.1):
    // the norms, the query and key norms and the row-parallel output projection's bias.
    double attentionTpReplicated() const;
    double denseFfnParams() const;
    double denseFfnTpReplicated() const;  // fc2's bias (row parallel)
    double expertParams() const;        // all experts of one MoE layer
    double expertEtpReplicated() const; // every expert's fc2 bias, whole on each ETP rank
    double sharedExpertParams() const;
    double routerParams() const;        // weight and bias; replicated over TP (plain parameters of Megatron-Core's Router)

    double forwardFlopsPerToken(bool moeLayer, FlopCounting counting = FlopCounting::CausalHalf) const;
    // The vocabulary as built at tensor parallelism tp (ModelSpec::paddedVocabSize).
    double paddedVocab(int tp) const;
    // The output layer's forward FLOPs per token over the vocabulary padded for tp, as
    // Megatron-LM counts them (args.padded_vocab_size).
    double logitsFlopsPerToken(int tp) const;
    // One multi-token-prediction depth's forward FLOPs per token: its layer, eh_proj (2h to h)
    // and the output layer again (training.py; docs/cost-model.md section 3.9).
    double mtpFlopsPerToken(bool moeLayer, int tp, FlopCounting counting = FlopCounting::CausalHalf) const
    {
        return forwardFlopsPerToken(moeLayer, counting) + 2 * 2 * h * h + logitsFlopsPerToken(tp);
    }
};

} // namespace hapmoe
