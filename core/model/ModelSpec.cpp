#include "model/ModelSpec.h"

#include <algorithm>
#include <cmath>

namespace hapmoe {

bool ModelSpec::isMoeLayer(int layer) const
{
    if (num_experts <= 0 || layer < 0 || layer >= num_layers)
        return false;
    if (!moe_layer_pattern.empty())
        return layer < static_cast<int>(moe_layer_pattern.size()) && moe_layer_pattern[layer] != 0;
    const int freq = moe_layer_freq > 0 ? moe_layer_freq : 1;
    return layer % freq == 0;
}

int ModelSpec::numMoeLayers(int first, int count) const
{
    int n = 0;
    for (int l = first; l < first + count; ++l)
        n += isMoeLayer(l) ? 1 : 0;
    return n;
}

int ModelSpec::numMoeLayers() const { return numMoeLayers(0, num_layers); }

double paddedVocabSize(double vocab, int divisibleBy, int tp)
{
    const double multiple = static_cast<double>(std::max(1, divisibleBy)) * std::max(1, tp);
    return std::ceil(vocab / multiple) * multiple;
}

double ModelSpec::paddedVocabSize(int tp) const
{
    return hapmoe::paddedVocabSize(vocab_size, make_vocab_size_divisible_by, tp);
}

bool ModelSpec::capRouterImbalance()
{
    const double cap = maxRouterImbalance();
    if (cap <= 0.0 || !(training.router_imbalance > cap))
        return false;
    training.router_imbalance = cap;
    return true;
}

const char* toString(Precision p) { return p == Precision::FP16 ? "fp16" : "bf16"; }

const char* toString(Fp8Format f)
{
    switch (f) {
    case Fp8Format::Hybrid: return "hybrid";
    case Fp8Format::E4M3: return "e4m3";
    case Fp8Format::None: break;
    }
    return "none";
}

const char* toString(Fp8Recipe r)
{
    switch (r) {
    case Fp8Recipe::Tensorwise: return "tensorwise";
    case Fp8Recipe::MXFP8: return "mxfp8";
    case Fp8Recipe::Blockwise: return "blockwise";
    case Fp8Recipe::Delayed: break;
    }
    return "delayed";
}

std::optional<Fp8Recipe> parseFp8Recipe(std::string_view name)
{
    for (Fp8Recipe r : {Fp8Recipe::Delayed, Fp8Recipe::Tensorwise, Fp8Recipe::MXFP8, Fp8Recipe::Blockwise})
        if (name == toString(r))
            return r;
    return std::nullopt;
}

const char* toString(RouterScore r)
{
    switch (r) {
    case RouterScore::Sigmoid: return "sigmoid";
    case RouterScore::SqrtSoftplus: return "sqrtsoftplus";
    case RouterScore::Softmax: break;
    }
    return "softmax";
}

const char* toString(TokenDispatcher d)
{
    switch (d) {
    case TokenDispatcher::AllGather: return "allgather";
    case TokenDispatcher::Flex: return "flex";
    case TokenDispatcher::AllToAll: break;
    }
    return "alltoall";
}

const char* toString(CrossEntropyFusionImpl i)
{
    return i == CrossEntropyFusionImpl::TE ? "te" : "native";
}

} // namespace hapmoe
