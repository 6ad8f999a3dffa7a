// Parameter counts and model FLOPs. Sources (docs/cost-model.md section 1):
//  - shapes of the weights as Megatron-LM builds them (GPTModel with TransformerLayer:
//    linear_qkv h x (q + 2 g c), linear_proj q x h, linear_fc1 h x F (2F with SwiGLU),
//    linear_fc2 F x h, router h x E, two norms per layer, final norm);
//  - learned absolute position embeddings for LayerNorm (GPT-style) models, rotary for RMSNorm
//    models (Narayanan et al. 2021 eq. 2 counts s*h position parameters; LLaMA has none);
//  - FLOPs: megatron/training/training.py num_floating_point_operations at core_r0.8.0.

#include "cost/CostModel.h"
#include "cost/LayerShape.h"

#include <algorithm>

namespace hapmoe {

ParameterCount countParameters(const ModelSpec& model)
{
    const LayerShape s = LayerShape::of(model);
    ParameterCount c;
    const int moeLayers = model.numMoeLayers();
    const int denseLayers = model.num_layers - moeLayers;
    c.dense_per_layer = s.attentionParams();
    c.expert_per_layer = s.expertParams();
    const double moeNonExpert = s.routerParams() + s.sharedExpertParams();

    const double inputEmbedding = s.vocab * s.h + (s.learnedPositions ? static_cast<double>(model.maxPositions()) * s.h : 0.0);
    const double output = model.untie_embeddings_and_output_weights ? s.vocab * s.h : 0.0;
    c.embedding = inputEmbedding + output;

    const double finalNorm = s.normParams;
    const double common = model.num_layers * c.dense_per_layer + denseLayers * s.denseFfnParams()
        + moeLayers * moeNonExpert + c.embedding + finalNorm;
    c.total = common + moeLayers * c.expert_per_layer;
    const double activeExperts = s.experts > 0 ? c.expert_per_layer * s.topk / s.experts : 0.0;
    c.active = common + moeLayers * activeExperts;
    // Each MTP depth: a layer of the last decoder layer's kind, eh_proj (2h x h), enorm, hnorm
    // and its final norm.
    const double mtpLayer = c.dense_per_layer + (model.mtpLayerIsMoe() ? moeNonExpert + c.expert_per_layer : s.denseFfnParams());
    c.mtp = std::max(0, model.mtp_num_layers) * (mtpLayer + 2 * s.h * s.h + 3 * s.normParams);
    return c;
}

double modelFlopsPerIteration(const ModelSpec& model, int globalBatch, int tp, FlopCounting counting)
{
    // 3x forward (forward + backward at twice the forward), over every token of the batch.
    const LayerShape s = LayerShape::of(model);
    const int moeLayers = model.numMoeLayers();
    const int denseLayers = model.num_layers - moeLayers;
    const double perToken = moeLayers * s.forwardFlopsPerToken(true, counting) + denseLayers * s.forwardFlopsPerToken(false, counting)
        + s.logitsFlopsPerToken(tp)
        + model.mtp_num_layers * s.mtpFlopsPerToken(model.mtpLayerIsMoe(), tp, counting);
    return 3.0 * perToken * static_cast<double>(globalBatch) * model.seq_length;
}

} // namespace hapmoe
