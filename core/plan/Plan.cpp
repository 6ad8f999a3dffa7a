#include "plan/Plan.h"

#include <algorithm>

namespace hapmoe {

const char* toString(Recompute r)
{
    switch (r) {
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
    case Recompute::None: break;
    }
    return "none";
}

const char* toString(Target t)
{
    switch (t) {
    case Target::Megatron: return "megatron";
    case Target::FlagScale: return "flagscale";
    case Target::Any: break;
    }
    return "any";
}

namespace {

struct ModuleName {
    unsigned bit;
    const char* name;
};
// Megatron-Core's order (TransformerConfig.recompute_modules).
constexpr ModuleName kModules[] = {
    {recompute_module::core_attn, "core_attn"}, {recompute_module::moe_act, "moe_act"},
    {recompute_module::layernorm, "layernorm"}, {recompute_module::mla_up_proj, "mla_up_proj"}, {recompute_module::mlp, "mlp"},
    {recompute_module::moe, "moe"},             {recompute_module::shared_experts, "shared_experts"},
};

} // namespace

unsigned recomputeModuleBit(std::string_view name)
{
    for (const ModuleName& m : kModules)
        if (name == m.name)
            return m.bit;
    return 0;
}

std::string recomputeModulesString(unsigned modules, std::string_view separator)
{
    std::string out;
    for (const ModuleName& m : kModules)
        if (modules & m.bit) {
            if (!out.empty())
                out += separator;
            out += m.name;
        }
    return out;
}

std::vector<std::string> recomputeModuleNames(unsigned modules)
{
    std::vector<std::string> out;
    for (const ModuleName& m : kModules)
        if (modules & m.bit)
            out.push_back(m.name);
    return out;
}

std::string recomputeModulesLabel(unsigned modules, std::string_view separator)
{
    return modules ? recomputeModulesString(modules, separator) : std::string("no module");
}

int Plan::numDevices() const
{
    int n = 0;
    for (const auto& s : stages)
        n += s.numDevices();
    return n;
}

bool Plan::oneTpSize() const
{
    return std::all_of(stages.begin(), stages.end(), [&](const StagePlan& st) { return st.tp == stages.front().tp; });
}

std::vector<int> chunkLayers(int layers, int vpp)
{
    vpp = std::max(1, vpp);
    std::vector<int> out;
    out.reserve(static_cast<std::size_t>(vpp));
    for (int c = 0; c < vpp; ++c)
        out.push_back(layers / vpp + (c < layers % vpp ? 1 : 0));
    return out;
}

int blockRecomputedLayers(const std::vector<int>& chunks, int n)
{
    int recomputed = 0;
    for (int c : chunks)
        recomputed += std::min(n, c);
    return recomputed;
}

int blockRecomputeLayersOfStage(const std::vector<int>& chunks, int n)
{
    int layers = 0;
    for (int c : chunks)
        layers += c;
    const int recomputed = blockRecomputedLayers(chunks, n);
    return recomputed >= layers ? 0 : recomputed;
}

std::vector<std::vector<LayerRange>> rankLayers(const std::vector<std::vector<int>>& chunksPerRank)
{
    const std::size_t pp = chunksPerRank.size();
    std::size_t vpp = 0;
    for (const std::vector<int>& c : chunksPerRank)
        vpp = std::max(vpp, c.size());
    std::vector<std::vector<LayerRange>> out(pp);
    int next = 0;
    for (std::size_t c = 0; c < vpp; ++c)
        for (std::size_t r = 0; r < pp; ++r)
            if (c < chunksPerRank[r].size()) {
                const int n = std::max(0, chunksPerRank[r][c]);
                out[r].push_back({next, n});
                next += n;
            }
    return out;
}

std::vector<std::vector<LayerRange>> rankLayers(const std::vector<int>& layersPerRank, int vpp)
{
    std::vector<std::vector<int>> chunks;
    chunks.reserve(layersPerRank.size());
    for (int n : layersPerRank)
        chunks.push_back(chunkLayers(n, vpp));
    return rankLayers(chunks);
}

std::vector<int> StagePlan::chunks(int vpp) const
{
    vpp = std::max(1, vpp);
    if (chunk_layers.size() == static_cast<std::size_t>(vpp)) {
        int sum = 0;
        bool valid = true;
        for (int n : chunk_layers) {
            sum += n;
            valid = valid && n >= 0;
        }
        if (valid && sum == num_layers)
            return chunk_layers;
    }
    return chunkLayers(num_layers, vpp);
}

std::vector<std::vector<LayerRange>> Plan::rankLayers() const
{
    std::vector<std::vector<int>> chunks;
    chunks.reserve(stages.size());
    for (const StagePlan& st : stages)
        chunks.push_back(st.chunks(vpp));
    return hapmoe::rankLayers(chunks);
}

int Plan::numMicrobatches() const
{
    if (stages.empty())
        return 0;
    const int perStep = stages.front().dp * stages.front().micro_batch_size;
    return perStep > 0 ? global_batch_size / perStep : 0;
}

} // namespace hapmoe
