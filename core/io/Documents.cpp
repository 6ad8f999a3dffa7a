#include "io/Documents.h"

#include "cost/Schedule.h"
#include "hardware/DeviceCatalog.h"
#include "io/JsonNode.h"
#include "io/Migrations.h"
#include "megatron/ShellQuote.h"
#include "profile/ProfileLimits.h"
#include "util/Strings.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hapmoe {

namespace {

using io::JsonContext;
using io::JsonNode;
using Json = nlohmann::ordered_json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// --- enum names (the strings of the file formats) ----------------------------------------

const std::vector<std::string_view> kPrecisionNames = {"bf16", "fp16"};
// In the order of Fp8Format.
const std::vector<std::string_view> kFp8Names = {"none", "hybrid", "e4m3"};
// In the order of Fp8Recipe.
const std::vector<std::string_view> kFp8RecipeNames = {"delayed", "tensorwise", "mxfp8", "blockwise"};
const std::vector<std::string_view> kCrossEntropyImplNames = {"native", "te"};
const std::vector<std::string_view> kDispatcherNames = {"alltoall", "allgather", "flex"};
const std::vector<std::string_view> kRouterScoreNames = {"softmax", "sigmoid", "sqrtsoftplus"};   // RouterScore's order
const std::vector<std::string_view> kRecomputeNames = {"none", "selective", "full"};
const std::vector<std::string_view> kTargetNames = {"megatron", "flagscale", "any"};
const std::vector<std::string_view> kAlgorithmNames = {"hs-dp", "exhaustive", "uniform", "metis-style"};
// In the order of OptimizerOffload.
const std::vector<std::string_view> kOffloadNames = {"never", "if-needed", "always", "fastest"};
const std::vector<std::string_view> kCollectiveNames = {"all_reduce", "all_gather", "reduce_scatter",
                                                                      "all_to_all", "send_recv"};
const std::vector<std::string_view> kLinkClassNames = {"intra_node", "inter_node", "cross_type"};
// In the order of InterleaveCut (toString gives the same spellings).
const std::vector<std::string_view> kInterleaveCutNames = {"no", "time-limit", "cancelled"};
// In the order of ExactCheck (toString gives the same spellings).
const std::vector<std::string_view> kExactCheckNames = {"off", "finished", "work-budget", "time-limit",
                                                        "cancelled", "not-tried-work", "not-tried-time"};
// ModelSpec::normalization holds these spellings (Megatron-LM's --normalization values).
const std::vector<std::string_view> kNormalizationNames = {"RMSNorm", "LayerNorm"};

const char* algorithmName(Algorithm a)
{
    switch (a) {
    case Algorithm::Exhaustive: return "exhaustive";
    case Algorithm::Uniform: return "uniform";
    case Algorithm::MetisStyle: return "metis-style";
    case Algorithm::HsDp: break;
    }
    return "hs-dp";
}

Precision precisionAt(int i) { return i == 1 ? Precision::FP16 : Precision::BF16; }
TokenDispatcher dispatcherAt(int i)
{
    return i == 1 ? TokenDispatcher::AllGather : (i == 2 ? TokenDispatcher::Flex : TokenDispatcher::AllToAll);
}
Recompute recomputeAt(int i) { return i == 1 ? Recompute::Selective : (i == 2 ? Recompute::Full : Recompute::None); }
Target targetAt(int i) { return i == 0 ? Target::Megatron : (i == 1 ? Target::FlagScale : Target::Any); }
Algorithm algorithmAt(int i)
{
    static const Algorithm all[] = {Algorithm::HsDp, Algorithm::Exhaustive, Algorithm::Uniform, Algorithm::MetisStyle};
    return all[i];
}
Collective collectiveAt(int i)
{
    static const Collective all[] = {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                                     Collective::AllToAll, Collective::SendRecv};
    return all[i];
}
LinkClass linkClassAt(int i) { return i == 1 ? LinkClass::InterNode : (i == 2 ? LinkClass::CrossType : LinkClass::IntraNode); }

// --- model --------------------------------------------------------------------------------

#define HAPMOE_TRAINING_KEYS                                                                                           \
    "micro_batch_size", "global_batch_size", "precision", "fp8_format", "fp8_recipe", "fp8_param_gather",               \
        "use_distributed_optimizer", "cross_entropy_loss_fusion", "cross_entropy_fusion_impl",                          \
        "accumulate_allreduce_grads_in_fp32", "router_imbalance", "imbalance_weight"

void readTraining(const JsonNode& n, TrainingSpec& t)
{
    n.requireObject();
    n.warnUnknownKeys({HAPMOE_TRAINING_KEYS});
    t.micro_batch_size = n.optInt("micro_batch_size", t.micro_batch_size, 1);
    t.global_batch_size = n.optInt("global_batch_size", t.global_batch_size, 1);
    t.precision = precisionAt(n.optChoice("precision", kPrecisionNames, t.precision == Precision::FP16 ? 1 : 0));
    t.fp8_format = static_cast<Fp8Format>(n.optChoice("fp8_format", kFp8Names, static_cast<int>(t.fp8_format)));
    t.fp8_recipe = static_cast<Fp8Recipe>(n.optChoice("fp8_recipe", kFp8RecipeNames, static_cast<int>(t.fp8_recipe)));
    t.fp8_param_gather = n.optBool("fp8_param_gather", t.fp8_param_gather);
    t.use_distributed_optimizer = n.optBool("use_distributed_optimizer", t.use_distributed_optimizer);
    t.cross_entropy_loss_fusion = n.optBool("cross_entropy_loss_fusion", t.cross_entropy_loss_fusion);
    t.cross_entropy_fusion_impl = static_cast<CrossEntropyFusionImpl>(
        n.optChoice("cross_entropy_fusion_impl", kCrossEntropyImplNames, static_cast<int>(t.cross_entropy_fusion_impl)));
    if (n.has("accumulate_allreduce_grads_in_fp32"))
        t.accumulate_allreduce_grads_in_fp32 = n.optBool("accumulate_allreduce_grads_in_fp32", true);
    t.router_imbalance = n.optDouble("router_imbalance", t.router_imbalance, 1.0);
    t.imbalance_weight = n.optDouble("imbalance_weight", t.imbalance_weight, 0.0, false, 1.0);
}

ModelSpec readModelObject(const JsonNode& n)
{
    n.requireObject();
    // A training setting beside the shape (where version 1 had it, and where Megatron-LM's
    // flat flags would put it) would be ignored and its default taken: refused, with its place.
    for (std::string_view key : {HAPMOE_TRAINING_KEYS})
        if (n.has(key))
            n.fail(key, "expected under \"training\" (a hapmoe.model of version 2 keeps the training settings there; "
                        "version 1 had them beside the shape)");
    n.warnUnknownKeys({"format", "version", "name", "source", "description", "num_layers", "hidden_size",
                       "ffn_hidden_size", "num_attention_heads", "num_query_groups", "kv_channels", "vocab_size",
                       "make_vocab_size_divisible_by", "seq_length", "max_position_embeddings", "swiglu", "add_bias_linear",
                       "untie_embeddings_and_output_weights", "normalization", "qk_layernorm", "multi_latent_attention",
                       "q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim", "mtp_num_layers", "attention_dropout",
                       "hidden_dropout", "num_experts", "moe_ffn_hidden_size",
                       "moe_router_topk", "moe_layer_freq", "moe_shared_expert_intermediate_size",
                       "moe_token_dispatcher_type", "moe_router_score_function", "moe_router_enable_expert_bias",
                       "moe_router_num_groups", "moe_router_group_topk", "moe_router_topk_scaling_factor", "training"});
    ModelSpec m;
    m.name = n.optLine("name");
    m.source = n.optString("source");
    m.description = n.optString("description");
    m.num_layers = n.reqInt("num_layers", 1);
    m.hidden_size = n.reqInt("hidden_size", 1);
    m.num_attention_heads = n.reqInt("num_attention_heads", 1);
    m.swiglu = n.optBool("swiglu", false);
    // Megatron-LM's default when --ffn-hidden-size is not given (megatron/training/arguments.py):
    // 4h, or for SwiGLU int(4h * 2/3 / 64) * 64.
    const double defaultFfn = m.swiglu ? std::floor(4.0 * m.hidden_size * 2.0 / 3.0 / 64.0) * 64.0 : 4.0 * m.hidden_size;
    if (!n.has("ffn_hidden_size") && defaultFfn > std::numeric_limits<int>::max())
        n.fail("hidden_size", "expected a size whose default ffn_hidden_size (" + std::string(m.swiglu ? "8/3" : "4")
                                  + " x hidden_size) is at most 2147483647, got " + std::to_string(m.hidden_size)
                                  + "; give ffn_hidden_size");
    m.ffn_hidden_size = n.optInt("ffn_hidden_size", static_cast<int>(defaultFfn), 1);
    m.num_query_groups = n.optInt("num_query_groups", 0, 0);
    m.kv_channels = n.optInt("kv_channels", 0, 0);
    m.vocab_size = n.reqInt("vocab_size", 1);
    m.make_vocab_size_divisible_by = n.optInt("make_vocab_size_divisible_by", m.make_vocab_size_divisible_by, 1);
    m.seq_length = n.reqInt("seq_length", 1);
    m.max_position_embeddings = n.optInt("max_position_embeddings", 0, 0);
    m.add_bias_linear = n.optBool("add_bias_linear", false);
    m.untie_embeddings_and_output_weights = n.optBool("untie_embeddings_and_output_weights", false);
    m.normalization = kNormalizationNames[static_cast<std::size_t>(
        n.optChoice("normalization", kNormalizationNames, m.normalization == "LayerNorm" ? 1 : 0))];
    m.qk_layernorm = n.optBool("qk_layernorm", false);
    m.multi_latent_attention = n.optBool("multi_latent_attention", false);
    m.q_lora_rank = n.optInt("q_lora_rank", m.q_lora_rank, 0);
    m.kv_lora_rank = n.optInt("kv_lora_rank", m.kv_lora_rank, 1);
    m.qk_head_dim = n.optInt("qk_head_dim", m.qk_head_dim, 1);
    m.qk_pos_emb_head_dim = n.optInt("qk_pos_emb_head_dim", m.qk_pos_emb_head_dim, 0);
    m.v_head_dim = n.optInt("v_head_dim", m.v_head_dim, 1);
    m.mtp_num_layers = n.optInt("mtp_num_layers", 0, 0, kMaxLayers);
    m.attention_dropout = n.optDouble("attention_dropout", m.attention_dropout, 0.0, false, 1.0);
    m.hidden_dropout = n.optDouble("hidden_dropout", m.hidden_dropout, 0.0, false, 1.0);
    m.num_experts = n.optInt("num_experts", 0, 0);
    m.moe_ffn_hidden_size = n.optInt("moe_ffn_hidden_size", 0, 0);
    m.moe_router_topk = n.optInt("moe_router_topk", m.num_experts > 0 ? 2 : 0, 0);
    if (m.num_experts == 0 && !n.has("moe_router_topk"))
        m.moe_router_topk = 2;   // the ModelSpec default; unused by dense models
    if (auto f = n.optChild("moe_layer_freq")) {
        if (f->value().is_array()) {
            if (f->value().size() != static_cast<std::size_t>(m.num_layers))
                f->failHere("the pattern has " + std::to_string(f->value().size()) + " entries but num_layers is "
                            + std::to_string(m.num_layers));
            for (const auto& e : f->elements()) {
                if (e.value().is_boolean())
                    m.moe_layer_pattern.push_back(e.value().get<bool>() ? 1 : 0);
                else
                    m.moe_layer_pattern.push_back(static_cast<std::uint8_t>(e.asInt(0, 1)));
            }
            if (m.moe_layer_pattern.empty())
                f->failHere("expected a positive integer or a non-empty array of 0/1 per layer, got an empty array");
            m.moe_layer_freq = 1;
        } else if (f->value().is_number()) {
            m.moe_layer_freq = f->asInt(1);
        } else {
            f->failHere("expected a positive integer or an array of 0/1 per layer, got " + JsonNode::describe(f->value()));
        }
    }
    m.moe_shared_expert_intermediate_size = n.optInt("moe_shared_expert_intermediate_size", 0, 0);
    m.moe_token_dispatcher_type = dispatcherAt(n.optChoice("moe_token_dispatcher_type", kDispatcherNames, 0));
    m.moe_router_score_function = static_cast<RouterScore>(n.optChoice("moe_router_score_function", kRouterScoreNames, 0));
    m.moe_router_enable_expert_bias = n.optBool("moe_router_enable_expert_bias", false);
    m.moe_router_num_groups = n.optInt("moe_router_num_groups", 0, 0);
    m.moe_router_group_topk = n.optInt("moe_router_group_topk", 0, 0);
    m.moe_router_topk_scaling_factor = n.optDouble("moe_router_topk_scaling_factor", 0.0, 0.0);
    // A dense model with the sizes of a MoE one: num_experts left out or misspelt, which would
    // plan another model. The writers give a dense model's MoE fields their neutral values (no
    // expert FFN, no shared expert, every layer's flag 0).
    if (m.num_experts == 0) {
        std::string moe;
        if (m.moe_ffn_hidden_size > 0)
            moe = "moe_ffn_hidden_size " + std::to_string(m.moe_ffn_hidden_size);
        else if (m.moe_shared_expert_intermediate_size > 0)
            moe = "moe_shared_expert_intermediate_size " + std::to_string(m.moe_shared_expert_intermediate_size);
        else if (std::count(m.moe_layer_pattern.begin(), m.moe_layer_pattern.end(), 1) > 0)
            moe = "moe_layer_freq with " + std::to_string(std::count(m.moe_layer_pattern.begin(), m.moe_layer_pattern.end(), 1))
                + " MoE layers";
        if (!moe.empty())
            n.fail("num_experts", std::string(n.has("num_experts") ? "expected at least 1" : "missing") + " for a model with "
                                      + moe + " (without experts the model is dense and those fields are unused)");
    }
    const auto training = n.optChild("training");
    if (training)
        readTraining(*training, m.training);
    // The default imbalance (1.2, paper section 3.2) is capped at E / k, the most an expert can
    // get (each token once): a model of 2 experts, top-2, is balanced by construction. A value
    // given above E / k is the model's error (validateModel).
    if (!(training && training->has("router_imbalance")))
        m.capRouterImbalance();
    return m;
}

#undef HAPMOE_TRAINING_KEYS

Json modelJson(const ModelSpec& m)
{
    Json j;
    j["name"] = m.name;
    if (!m.source.empty())
        j["source"] = m.source;
    if (!m.description.empty())
        j["description"] = m.description;
    j["num_layers"] = m.num_layers;
    j["hidden_size"] = m.hidden_size;
    j["ffn_hidden_size"] = m.ffn_hidden_size;
    j["num_attention_heads"] = m.num_attention_heads;
    j["num_query_groups"] = m.num_query_groups;
    j["kv_channels"] = m.kv_channels;
    j["vocab_size"] = m.vocab_size;
    j["make_vocab_size_divisible_by"] = m.make_vocab_size_divisible_by;
    j["seq_length"] = m.seq_length;
    j["max_position_embeddings"] = m.max_position_embeddings;
    j["swiglu"] = m.swiglu;
    j["add_bias_linear"] = m.add_bias_linear;
    j["untie_embeddings_and_output_weights"] = m.untie_embeddings_and_output_weights;
    j["normalization"] = m.normalization;
    j["qk_layernorm"] = m.qk_layernorm;
    if (m.multi_latent_attention) {   // written only for MLA models: the rest do not have them
        j["multi_latent_attention"] = true;
        j["q_lora_rank"] = m.q_lora_rank;
        j["kv_lora_rank"] = m.kv_lora_rank;
        j["qk_head_dim"] = m.qk_head_dim;
        j["qk_pos_emb_head_dim"] = m.qk_pos_emb_head_dim;
        j["v_head_dim"] = m.v_head_dim;
    }
    if (m.mtp_num_layers > 0)
        j["mtp_num_layers"] = m.mtp_num_layers;
    j["attention_dropout"] = m.attention_dropout;
    j["hidden_dropout"] = m.hidden_dropout;
    j["num_experts"] = m.num_experts;
    j["moe_ffn_hidden_size"] = m.moe_ffn_hidden_size;
    j["moe_router_topk"] = m.moe_router_topk;
    if (!m.moe_layer_pattern.empty()) {
        Json a = Json::array();
        for (auto v : m.moe_layer_pattern)
            a.push_back(static_cast<int>(v));
        j["moe_layer_freq"] = a;
    } else {
        j["moe_layer_freq"] = m.moe_layer_freq;
    }
    j["moe_shared_expert_intermediate_size"] = m.moe_shared_expert_intermediate_size;
    j["moe_token_dispatcher_type"] = toString(m.moe_token_dispatcher_type);
    // The router's recipe, where it is not Megatron-LM's default.
    if (m.moe_router_score_function != RouterScore::Softmax)
        j["moe_router_score_function"] = toString(m.moe_router_score_function);
    if (m.moe_router_enable_expert_bias)
        j["moe_router_enable_expert_bias"] = true;
    if (m.moe_router_num_groups > 0) {
        j["moe_router_num_groups"] = m.moe_router_num_groups;
        j["moe_router_group_topk"] = m.moe_router_group_topk;
    }
    if (m.moe_router_topk_scaling_factor > 0)
        j["moe_router_topk_scaling_factor"] = m.moe_router_topk_scaling_factor;
    Json t;
    t["micro_batch_size"] = m.training.micro_batch_size;
    t["global_batch_size"] = m.training.global_batch_size;
    t["precision"] = toString(m.training.precision);
    if (m.training.fp8())
        t["fp8_format"] = toString(m.training.fp8_format);
    if (m.training.fp8() && m.training.fp8_recipe != Fp8Recipe::Delayed)   // without FP8 it scales nothing
        t["fp8_recipe"] = toString(m.training.fp8_recipe);
    if (m.training.fp8_param_gather)
        t["fp8_param_gather"] = true;
    t["use_distributed_optimizer"] = m.training.use_distributed_optimizer;
    if (m.training.cross_entropy_loss_fusion) {
        t["cross_entropy_loss_fusion"] = true;
        t["cross_entropy_fusion_impl"] = toString(m.training.cross_entropy_fusion_impl);
    }
    if (m.training.accumulate_allreduce_grads_in_fp32)
        t["accumulate_allreduce_grads_in_fp32"] = *m.training.accumulate_allreduce_grads_in_fp32;
    t["router_imbalance"] = m.training.router_imbalance;
    t["imbalance_weight"] = m.training.imbalance_weight;
    j["training"] = t;
    return j;
}

// --- cluster ------------------------------------------------------------------------------

Cluster readClusterObject(const JsonNode& n)
{
    n.requireObject();
    n.warnUnknownKeys({"format", "version", "name", "description", "source", "nodes", "switches", "links", "cross_vendor"});
    Cluster c;
    c.name = n.optLine("name");
    c.description = n.optString("description");
    c.source = n.optString("source");
    int index = 0;
    for (const auto& e : n.array("nodes", true)) {
        e.requireObject();
        e.warnUnknownKeys({"id", "host", "device_type", "count", "nics", "nic_gbit", "host_memory_gib", "host_link_gbytes_per_s",
                           "x", "y"});
        Node node;
        node.id = e.reqInt("id", 0);
        node.host = e.optString("host", "node" + std::to_string(index));
        node.device_type = e.reqString("device_type");
        node.count = e.reqInt("count", 1);
        node.nics = e.optInt("nics", 0, 0);
        node.nic_gbit = e.optDouble("nic_gbit", 0, 0);
        node.host_memory_gib = e.optDouble("host_memory_gib", 0, 0);
        node.host_link_gbytes_per_s = e.optDouble("host_link_gbytes_per_s", 0, 0);
        node.x = e.optDouble("x", 0);
        node.y = e.optDouble("y", 0);
        c.nodes.push_back(std::move(node));
        ++index;
    }
    for (const auto& e : n.array("switches")) {
        e.requireObject();
        e.warnUnknownKeys({"id", "name", "x", "y"});
        Switch s;
        s.id = e.reqInt("id", 0);
        s.name = e.optLine("name");
        s.x = e.optDouble("x", 0);
        s.y = e.optDouble("y", 0);
        c.switches.push_back(std::move(s));
    }
    for (const auto& e : n.array("links")) {
        e.requireObject();
        e.warnUnknownKeys({"a", "b", "bandwidth_gbytes_per_s", "latency_us"});
        Link l;
        l.a = e.reqInt("a", 0);
        l.b = e.reqInt("b", 0);
        l.bandwidth_gbytes_per_s = e.reqDouble("bandwidth_gbytes_per_s", 0, true);
        l.latency_us = e.optDouble("latency_us", 0, 0);
        c.links.push_back(l);
    }
    if (auto cv = n.optObject("cross_vendor")) {
        cv->warnUnknownKeys({"method", "bandwidth_gbytes_per_s", "latency_us"});
        c.cross_vendor.method = cv->optString("method", c.cross_vendor.method);
        c.cross_vendor.bandwidth_gbytes_per_s = cv->optDouble("bandwidth_gbytes_per_s", c.cross_vendor.bandwidth_gbytes_per_s, 0, true);
        c.cross_vendor.latency_us = cv->optDouble("latency_us", c.cross_vendor.latency_us, 0);
    }
    return c;
}

Json clusterJson(const Cluster& c)
{
    Json j;
    j["name"] = c.name;
    if (!c.description.empty())
        j["description"] = c.description;
    if (!c.source.empty())
        j["source"] = c.source;
    Json nodes = Json::array();
    for (const auto& n : c.nodes) {
        Json e;
        e["id"] = n.id;
        e["host"] = n.host;
        e["device_type"] = n.device_type;
        e["count"] = n.count;
        e["nics"] = n.nics;
        e["nic_gbit"] = n.nic_gbit;
        if (n.host_memory_gib > 0)
            e["host_memory_gib"] = n.host_memory_gib;
        if (n.host_link_gbytes_per_s > 0)
            e["host_link_gbytes_per_s"] = n.host_link_gbytes_per_s;
        e["x"] = n.x;
        e["y"] = n.y;
        nodes.push_back(e);
    }
    j["nodes"] = nodes;
    Json switches = Json::array();
    for (const auto& s : c.switches)
        switches.push_back(Json{{"id", s.id}, {"name", s.name}, {"x", s.x}, {"y", s.y}});
    j["switches"] = switches;
    Json links = Json::array();
    for (const auto& l : c.links)
        links.push_back(Json{{"a", l.a}, {"b", l.b}, {"bandwidth_gbytes_per_s", l.bandwidth_gbytes_per_s}, {"latency_us", l.latency_us}});
    j["links"] = links;
    j["cross_vendor"] = Json{{"method", c.cross_vendor.method},
                             {"bandwidth_gbytes_per_s", c.cross_vendor.bandwidth_gbytes_per_s},
                             {"latency_us", c.cross_vendor.latency_us}};
    return j;
}

// --- plan and prediction ------------------------------------------------------------------

Plan readPlanObject(const JsonNode& n)
{
    n.requireObject();
    n.warnUnknownKeys({"name", "target", "vpp", "global_batch_size", "sequence_parallel", "distributed_optimizer",
                       "optimizer_offload_fraction", "stages", "unused"});
    Plan p;
    p.name = n.optLine("name");
    p.target = targetAt(n.optChoice("target", kTargetNames, 2));
    p.vpp = n.optInt("vpp", 1, 1);
    p.global_batch_size = n.reqInt("global_batch_size", 1);
    p.sequence_parallel = n.optBool("sequence_parallel", true);
    p.distributed_optimizer = n.optBool("distributed_optimizer", true);
    p.optimizer_offload_fraction = n.optDouble("optimizer_offload_fraction", 0.0, 0.0, false, 1.0);
    for (const auto& e : n.array("stages", true)) {
        e.requireObject();
        e.warnUnknownKeys({"device_type", "devices", "first_layer", "num_layers", "tp", "cp", "dp", "ep", "etp", "edp",
                           "recompute", "recompute_layers", "recompute_modules", "micro_batch_size", "chunk_layers"});
        StagePlan s;
        s.device_type = e.reqString("device_type");
        for (const auto& d : e.array("devices", true)) {
            d.requireObject();
            d.warnUnknownKeys({"node", "first_local", "count"});
            DeviceSlot slot;
            slot.node = d.reqInt("node", 0);
            slot.first_local = d.optInt("first_local", 0, 0);
            slot.count = d.reqInt("count", 1);
            s.devices.push_back(slot);
        }
        s.first_layer = e.reqInt("first_layer", 0);
        s.num_layers = e.reqInt("num_layers", 1);
        s.tp = e.optInt("tp", 1, 1);
        s.cp = e.optInt("cp", 1, 1);
        s.dp = e.optInt("dp", 1, 1);
        s.ep = e.optInt("ep", 1, 1);
        s.etp = e.optInt("etp", 1, 1);
        s.edp = e.optInt("edp", 1, 1);
        s.recompute = recomputeAt(e.optChoice("recompute", kRecomputeNames, 0));
        s.recompute_layers = e.optInt("recompute_layers", 0, 0);
        if (e.has("recompute_modules")) {
            // Megatron-Core's --recompute-modules, which only selective recompute reads.
            if (s.recompute != Recompute::Selective)
                e.fail("recompute_modules", std::string("only selective recompute takes modules; got recompute \"")
                                                + toString(s.recompute) + "\"");
            s.recompute_modules = 0;
            for (const auto& m : e.array("recompute_modules")) {
                const unsigned bit = m.value().is_string() ? recomputeModuleBit(m.value().get<std::string>()) : 0;
                if (bit == 0)
                    m.failHere("expected one of " + recomputeModulesString(recompute_module::all, ", ") + ", got "
                               + JsonNode::describe(m.value()));
                s.recompute_modules |= bit;
            }
        }
        s.micro_batch_size = e.optInt("micro_batch_size", 1, 1);
        if (e.has("chunk_layers"))
            for (const auto& c : e.array("chunk_layers"))
                s.chunk_layers.push_back(c.asInt(0));
        p.stages.push_back(std::move(s));
    }
    for (const auto& e : n.array("unused")) {
        e.requireObject();
        e.warnUnknownKeys({"node", "count", "reason"});
        UnusedDevices u;
        u.node = e.reqInt("node", 0);
        u.count = e.reqInt("count", 1);
        u.reason = e.optString("reason");
        p.unused.push_back(std::move(u));
    }
    return p;
}

Json planJson(const Plan& p)
{
    Json j;
    j["name"] = p.name;
    j["target"] = toString(p.target);
    j["vpp"] = p.vpp;
    j["global_batch_size"] = p.global_batch_size;
    j["sequence_parallel"] = p.sequence_parallel;
    j["distributed_optimizer"] = p.distributed_optimizer;
    if (p.optimizer_offload_fraction > 0)
        j["optimizer_offload_fraction"] = p.optimizer_offload_fraction;
    Json stages = Json::array();
    for (const auto& s : p.stages) {
        Json e;
        e["device_type"] = s.device_type;
        Json devices = Json::array();
        for (const auto& d : s.devices)
            devices.push_back(Json{{"node", d.node}, {"first_local", d.first_local}, {"count", d.count}});
        e["devices"] = devices;
        e["first_layer"] = s.first_layer;
        e["num_layers"] = s.num_layers;
        e["tp"] = s.tp;
        e["cp"] = s.cp;
        e["dp"] = s.dp;
        e["ep"] = s.ep;
        e["etp"] = s.etp;
        e["edp"] = s.edp;
        e["recompute"] = toString(s.recompute);
        e["recompute_layers"] = s.recompute_layers;
        if (s.recompute == Recompute::Selective) {
            e["recompute_modules"] = recomputeModuleNames(s.recompute_modules);
        }
        e["micro_batch_size"] = s.micro_batch_size;
        if (!s.chunk_layers.empty() && s.chunks(p.vpp) == s.chunk_layers)   // only chunks that still fit the stage
            e["chunk_layers"] = s.chunk_layers;
        stages.push_back(e);
    }
    j["stages"] = stages;
    Json unused = Json::array();
    for (const auto& u : p.unused)
        unused.push_back(Json{{"node", u.node}, {"count", u.count}, {"reason", u.reason}});
    j["unused"] = unused;
    return j;
}

std::vector<std::string> readStrings(const JsonNode& n, std::string_view key)
{
    std::vector<std::string> out;
    for (const auto& e : n.array(key)) {
        if (!e.value().is_string())
            e.failHere("expected a string, got " + JsonNode::describe(e.value()));
        out.push_back(e.value().get<std::string>());
    }
    return out;
}

Prediction readPredictionObject(const JsonNode& n)
{
    n.requireObject();
    n.warnUnknownKeys({"iteration_time_s", "tokens_per_s", "tflops_per_device", "mfu", "peak_memory_gib",
                       "host_memory_per_node_gib", "host_memory_capacity_gib", "num_microbatches", "feasible", "infeasible_reason", "memory_shortfall_gib", "used_profile",
                       "breakdown", "stages", "notes", "overlap", "memory_headroom"});
    Prediction p;
    p.iteration_time_s = n.optDouble("iteration_time_s", 0, 0);
    p.tokens_per_s = n.optDouble("tokens_per_s", 0, 0);
    p.tflops_per_device = n.optDouble("tflops_per_device", 0, 0);
    p.mfu = n.optDouble("mfu", 0, 0);
    p.peak_memory_gib = n.optDouble("peak_memory_gib", 0, 0);
    p.host_memory_per_node_gib = n.optDouble("host_memory_per_node_gib", 0, 0);
    p.host_memory_capacity_gib = n.optDouble("host_memory_capacity_gib", 0, 0);
    p.num_microbatches = n.optInt("num_microbatches", 0, 0);
    p.feasible = n.optBool("feasible", true);
    p.infeasible_reason = n.optString("infeasible_reason");
    p.memory_shortfall_gib = n.optDouble("memory_shortfall_gib", 0, 0);
    p.used_profile = n.optBool("used_profile", false);
    p.memory_headroom = n.optDouble("memory_headroom", 0, 0, false, 0.5);
    // Absent (documents written before it): the cost model's default switches.
    if (auto o = n.optObject("overlap")) {
        o->warnUnknownKeys({"grad_reduce", "param_gather", "tp_comm", "p2p"});
        const OverlapSwitches d;
        p.overlap.grad_reduce = o->optBool("grad_reduce", d.grad_reduce);
        p.overlap.param_gather = o->optBool("param_gather", d.param_gather);
        p.overlap.tp_comm = o->optBool("tp_comm", d.tp_comm);
        p.overlap.p2p = o->optBool("p2p", d.p2p);
    }
    if (auto b = n.optObject("breakdown")) {
        b->warnUnknownKeys({"compute", "tensor_parallel", "expert_dispatch", "pipeline_send", "pipeline_bubble",
                            "data_parallel_sync", "optimizer"});
        p.breakdown.compute = b->optDouble("compute", 0, 0);
        p.breakdown.tensor_parallel = b->optDouble("tensor_parallel", 0, 0);
        p.breakdown.expert_dispatch = b->optDouble("expert_dispatch", 0, 0);
        p.breakdown.pipeline_send = b->optDouble("pipeline_send", 0, 0);   // absent before: part of the bubble
        p.breakdown.pipeline_bubble = b->optDouble("pipeline_bubble", 0, 0);
        p.breakdown.dp_sync = b->optDouble("data_parallel_sync", 0, 0);
        p.breakdown.optimizer = b->optDouble("optimizer", 0, 0);
    }
    for (const auto& e : n.array("stages")) {
        e.requireObject();
        e.warnUnknownKeys({"t_fwd_s", "t_bwd_s", "compute_s", "tensor_parallel_s", "expert_dispatch_s", "p2p_s",
                           "dp_sync_s", "embedding_sync_s", "param_gather_s", "optimizer_s", "model_flops", "memory_gib", "notes",
                           "chunk_fwd_s", "chunk_bwd_s"});
        StageEstimate s;
        s.t_fwd = e.optDouble("t_fwd_s", 0, 0);
        s.t_bwd = e.optDouble("t_bwd_s", 0, 0);
        s.compute = e.optDouble("compute_s", 0, 0);
        s.tensor_parallel = e.optDouble("tensor_parallel_s", 0, 0);
        s.expert_dispatch = e.optDouble("expert_dispatch_s", 0, 0);
        s.p2p_send = e.optDouble("p2p_s", 0, 0);
        s.dp_sync = e.optDouble("dp_sync_s", 0, 0);
        s.embedding_sync = std::min(s.dp_sync, e.optDouble("embedding_sync_s", 0, 0));
        // Absent before the gradient-norm barrier was modelled: all of the sync before it.
        s.param_gather = std::min(s.dp_sync - s.embedding_sync, e.optDouble("param_gather_s", 0, 0));
        s.optimizer = e.optDouble("optimizer_s", 0, 0);
        s.model_flops = e.optDouble("model_flops", 0, 0);
        if (auto m = e.optObject("memory_gib")) {
            // "total" is derived (MemoryBreakdown::total) and not read back.
            m->warnUnknownKeys({"weights", "gradients", "optimizer", "activations", "moe_buffers", "overhead", "total", "capacity",
                                "host_optimizer", "host_capacity"});
            s.memory.weights = m->optDouble("weights", 0, 0) * kGiB;
            s.memory.gradients = m->optDouble("gradients", 0, 0) * kGiB;
            s.memory.optimizer = m->optDouble("optimizer", 0, 0) * kGiB;
            s.memory.activations = m->optDouble("activations", 0, 0) * kGiB;
            s.memory.moe_buffers = m->optDouble("moe_buffers", 0, 0) * kGiB;
            s.memory.overhead = m->optDouble("overhead", 0, 0) * kGiB;
            s.memory.capacity = m->optDouble("capacity", 0, 0) * kGiB;
            s.memory.host = m->optDouble("host_optimizer", 0, 0) * kGiB;
            s.memory.host_capacity = m->optDouble("host_capacity", 0, 0) * kGiB;
        }
        // Interleaved: each chunk's forward and backward (StageEstimate::chunk_fwd), which
        // place the stage's blocks and its drain.
        for (auto [key, times] : {std::pair{"chunk_fwd_s", &s.chunk_fwd}, std::pair{"chunk_bwd_s", &s.chunk_bwd}})
            if (e.has(key))
                for (const auto& t : e.array(key))
                    times->push_back(t.asDouble(0));
        s.notes = readStrings(e, "notes");
        p.stages.push_back(std::move(s));
    }
    p.notes = readStrings(n, "notes");
    return p;
}

// A stage's chunk times (chunk_fwd_s, chunk_bwd_s): one per virtual stage of the plan, adding
// up to the stage's forward and backward, as CostModel::estimate writes them. Times that do
// not fit (the plan's vpp edited since, or the times themselves) belong to another
// prediction: dropped with a warning, so the stage's chunks are drawn as equal shares and
// `hapmoe estimate --plan` costs the plan afresh.
void checkChunkTimes(const JsonNode& prediction, const Plan& plan, Prediction& p)
{
    std::string first;
    int dropped = 0;
    for (std::size_t i = 0; i < p.stages.size(); ++i) {
        StageEstimate& st = p.stages[i];
        if (st.chunk_fwd.empty() && st.chunk_bwd.empty())
            continue;
        std::string problem;
        for (auto [key, times, totalKey, total] : {std::tuple{"chunk_fwd_s", &st.chunk_fwd, "t_fwd_s", st.t_fwd},
                                                   std::tuple{"chunk_bwd_s", &st.chunk_bwd, "t_bwd_s", st.t_bwd}}) {
            if (!problem.empty())
                break;
            const std::string at = prediction.path() + ".stages[" + std::to_string(i) + "]." + key;
            double sum = 0;
            for (double t : *times)
                sum += t;
            if (plan.vpp < 2 || times->size() != static_cast<std::size_t>(plan.vpp))
                problem = at + ": " + std::to_string(times->size()) + " entries for the plan's vpp " + std::to_string(plan.vpp);
            else if (!(std::fabs(sum - total) <= 1e-6 * total))
                problem = at + ": the times add up to " + numberForMessage(sum) + " s, not the stage's " + totalKey + " ("
                    + numberForMessage(total) + " s)";
        }
        if (problem.empty())
            continue;
        if (first.empty())
            first = problem;
        ++dropped;
        st.chunk_fwd.clear();
        st.chunk_bwd.clear();
    }
    // One warning for the document: after an edit of vpp every stage's times are stale.
    if (dropped > 0)
        prediction.warn(first + (dropped > 1 ? " (and the same on " + std::to_string(dropped - 1) + " more stage" + (dropped > 2 ? "s" : "") + ")" : std::string())
                        + "; the chunk times are of another prediction and are left out (hapmoe estimate --plan "
                          "estimates the plan again)");
}

Json predictionJson(const Prediction& p)
{
    Json j;
    j["iteration_time_s"] = p.iteration_time_s;
    j["tokens_per_s"] = p.tokens_per_s;
    j["tflops_per_device"] = p.tflops_per_device;
    j["mfu"] = p.mfu;
    j["peak_memory_gib"] = p.peak_memory_gib;
    if (p.host_memory_per_node_gib > 0)
        j["host_memory_per_node_gib"] = p.host_memory_per_node_gib;
    if (p.host_memory_capacity_gib > 0)
        j["host_memory_capacity_gib"] = p.host_memory_capacity_gib;
    j["num_microbatches"] = p.num_microbatches;
    j["feasible"] = p.feasible;
    j["infeasible_reason"] = p.infeasible_reason;
    j["memory_shortfall_gib"] = p.memory_shortfall_gib;
    j["used_profile"] = p.used_profile;
    if (p.memory_headroom > 0)
        j["memory_headroom"] = p.memory_headroom;
    j["overlap"] = Json{{"grad_reduce", p.overlap.grad_reduce},
                        {"param_gather", p.overlap.param_gather},
                        {"tp_comm", p.overlap.tp_comm},
                        {"p2p", p.overlap.p2p}};
    j["breakdown"] = Json{{"compute", p.breakdown.compute},
                          {"tensor_parallel", p.breakdown.tensor_parallel},
                          {"expert_dispatch", p.breakdown.expert_dispatch},
                          {"pipeline_send", p.breakdown.pipeline_send},
                          {"pipeline_bubble", p.breakdown.pipeline_bubble},
                          {"data_parallel_sync", p.breakdown.dp_sync},
                          {"optimizer", p.breakdown.optimizer}};
    Json stages = Json::array();
    for (const auto& s : p.stages) {
        Json e;
        e["t_fwd_s"] = s.t_fwd;
        e["t_bwd_s"] = s.t_bwd;
        e["compute_s"] = s.compute;
        e["tensor_parallel_s"] = s.tensor_parallel;
        e["expert_dispatch_s"] = s.expert_dispatch;
        e["p2p_s"] = s.p2p_send;
        e["dp_sync_s"] = s.dp_sync;
        if (s.embedding_sync > 0)
            e["embedding_sync_s"] = s.embedding_sync;
        if (s.param_gather > 0)
            e["param_gather_s"] = s.param_gather;
        e["optimizer_s"] = s.optimizer;
        if (!s.chunk_fwd.empty()) {
            e["chunk_fwd_s"] = s.chunk_fwd;
            e["chunk_bwd_s"] = s.chunk_bwd;
        }
        e["model_flops"] = s.model_flops;
        e["memory_gib"] = Json{{"weights", s.memory.weights / kGiB},
                               {"gradients", s.memory.gradients / kGiB},
                               {"optimizer", s.memory.optimizer / kGiB},
                               {"activations", s.memory.activations / kGiB},
                               {"moe_buffers", s.memory.moe_buffers / kGiB},
                               {"overhead", s.memory.overhead / kGiB},
                               {"total", s.memory.total() / kGiB},
                               {"capacity", s.memory.capacity / kGiB}};
        if (s.memory.host > 0)
            e["memory_gib"]["host_optimizer"] = s.memory.host / kGiB;
        if (s.memory.host > 0 && s.memory.host_capacity > 0)
            e["memory_gib"]["host_capacity"] = s.memory.host_capacity / kGiB;
        e["notes"] = s.notes;
        stages.push_back(e);
    }
    j["stages"] = stages;
    j["notes"] = p.notes;
    return j;
}

// savedPlan: an entry of a project's plans[], which also has its source.
// A prediction of another plan: stages of its own, not as many as the plan's (the stages
// edited by hand; a prediction of no stages is none).
bool ofAnotherPlan(const Prediction& p, const Plan& plan)
{
    return !p.stages.empty() && p.stages.size() != plan.stages.size();
}

// The warning where such a prediction is left out and the plan estimated again; `at` is the
// prediction's path.
std::string anotherPlanLeftOut(const std::string& at, const Prediction& p, const Plan& plan)
{
    return at + ".stages: " + std::to_string(p.stages.size()) + " stages for the plan's " + std::to_string(plan.stages.size())
        + " (a prediction of another plan): left out, and the plan is estimated again";
}

RankedPlan readRankedPlan(const JsonNode& n, bool savedPlan = false)
{
    n.requireObject();
    if (savedPlan)
        n.warnUnknownKeys({"plan", "prediction", "source", "plain_time_s"});
    else
        n.warnUnknownKeys({"plan", "prediction", "plain_time_s"});
    RankedPlan r;
    r.plan = readPlanObject(n.object("plan"));
    r.plain_time_s = n.optDouble("plain_time_s", 0, 0);
    if (auto p = n.optObject("prediction")) {
        r.prediction = readPredictionObject(*p);
        // A prediction of another plan (the stages edited by hand; one of no stages is none):
        // the search's plans are refused with it (left out, for comparison only); a project's
        // saved plan keeps its plan and is estimated again (readProject).
        if (!savedPlan && ofAnotherPlan(r.prediction, r.plan))
            p->fail("stages", "expected one per stage of the plan (" + std::to_string(r.plan.stages.size()) + "), got "
                                  + std::to_string(r.prediction.stages.size()) + ": the prediction is of another plan");
        checkChunkTimes(*p, r.plan, r.prediction);
        // Derived from the stages' backward (their chunks' when interleaved), not stored.
        setDrains(r.prediction.stages, r.plan.vpp);
        simulateInterleaved(r.prediction.stages, r.prediction.num_microbatches, r.plan.vpp);
    }
    return r;
}

Json rankedJson(const RankedPlan& r)
{
    Json j{{"plan", planJson(r.plan)}, {"prediction", predictionJson(r.prediction)}};
    if (r.plain_time_s > 0)
        j["plain_time_s"] = r.plain_time_s;
    return j;
}

SearchResult readSearchObject(const JsonNode& n)
{
    n.requireObject();
    n.warnUnknownKeys({"algorithm", "target", "time_s", "states", "pruned", "timed_out", "cancelled", "list_cut", "no_plan_reason",
                       "optimizer_offload", "optimizer_offload_needed", "exact_fallback", "exact_check", "devices_left_out", "alternatives",
                       "baselines", "micro_batch_sizes", "max_vpp", "interleave_cut", "searched_target"});
    SearchResult r;
    r.algorithm = algorithmAt(n.optChoice("algorithm", kAlgorithmNames, 0));
    r.target = targetAt(n.optChoice("target", kTargetNames, 2));
    if (n.has("searched_target"))
        r.searched_target = targetAt(n.optChoice("searched_target", kTargetNames, 2));
    r.time_s = n.optDouble("time_s", 0, 0);
    r.states = n.optInt64("states", 0, 0);
    if (auto p = n.optObject("pruned")) {
        p->warnUnknownKeys({"load_balance", "memory", "communication"});
        r.pruned.load_balance = p->optInt64("load_balance", 0, 0);
        r.pruned.memory = p->optInt64("memory", 0, 0);
        r.pruned.communication = p->optInt64("communication", 0, 0);
    }
    r.timed_out = n.optBool("timed_out", false);
    r.cancelled = n.optBool("cancelled", false);
    r.list_cut = n.optBool("list_cut", false);
    r.optimizer_offload = static_cast<OptimizerOffload>(n.optChoice("optimizer_offload", kOffloadNames, 1));
    r.offload_needed = n.optBool("optimizer_offload_needed", false);
    r.exact_fallback = n.optBool("exact_fallback", false);
    if (auto c = n.optObject("exact_check")) {
        c->warnUnknownKeys({"status", "finished", "time_s", "work", "budget", "pruned_best_s", "best_exact"});
        r.exact_check_s = c->optDouble("time_s", 0, 0);
        r.exact_check_work = c->optInt64("work", 0, 0);
        r.exact_check_budget = c->optInt64("budget", 0, 0);
        r.pruned_best_s = c->optDouble("pruned_best_s", 0, 0);
        // Documents without a status (the first version of the check) say only whether it
        // finished; one that ran and did not finish is taken as stopped by its budget.
        const bool finished = c->optBool("finished", false);
        const int fallback = finished ? 1 : r.exact_check_s > 0 ? 2 : 0;
        r.exact_check = static_cast<ExactCheck>(c->optChoice("status", kExactCheckNames, fallback));
        if (c->has("status") && c->has("finished") && finished != r.exactChecked())
            c->fail("finished", std::string("expected ") + (r.exactChecked() ? "true" : "false") + " with status \""
                                    + toString(r.exact_check) + "\"");
        r.exact_check_best = c->optBool("best_exact", false);
        const bool stopped = r.exact_check == ExactCheck::WorkBudget || r.exact_check == ExactCheck::TimeLimit
            || r.exact_check == ExactCheck::Cancelled;
        if (r.exact_check_best && !stopped)
            c->fail("best_exact", "expected only with a check that stopped before its end (status \"work-budget\", "
                                  "\"time-limit\" or \"cancelled\"), got status \"" + std::string(toString(r.exact_check)) + "\"");
    }
    r.no_plan_reason = n.optString("no_plan_reason");
    r.devices_left_out = n.optString("devices_left_out");
    for (const auto& e : n.array("micro_batch_sizes"))
        r.micro_batch_sizes.push_back(e.asInt(1));
    r.max_vpp = n.optInt("max_vpp", 1, 1, kMaxVpp);
    r.interleave_cut = static_cast<InterleaveCut>(n.optChoice("interleave_cut", kInterleaveCutNames, 0));
    // The search's plans are kept for comparison only (docs/formats.md): one that cannot be
    // read is left out with a warning, not a reason to refuse the document.
    auto readOrWarn = [](const JsonNode& e) -> std::optional<RankedPlan> {
        try {
            return readRankedPlan(e);
        } catch (const InputError& err) {
            e.warn(err.where() + ": " + err.detail() + "; left out (the search's plans are kept for comparison only)");
            return std::nullopt;
        }
    };
    for (const auto& e : n.array("alternatives"))
        if (auto plan = readOrWarn(e))
            r.plans.push_back(std::move(*plan));
    if (auto b = n.optObject("baselines")) {
        b->warnUnknownKeys({"uniform", "metis_style", "current"});
        if (auto u = b->optChild("uniform"))
            r.uniform_baseline = readOrWarn(*u);
        if (auto m = b->optChild("metis_style"))
            r.metis_baseline = readOrWarn(*m);
        if (auto c = b->optChild("current"))
            r.current = readOrWarn(*c);
    }
    return r;
}

Json searchJson(const SearchResult& r)
{
    Json j;
    j["algorithm"] = algorithmName(r.algorithm);
    j["target"] = toString(r.target);
    if (r.searched_target)
        j["searched_target"] = toString(*r.searched_target);
    j["time_s"] = r.time_s;
    j["states"] = r.states;
    j["pruned"] = Json{{"load_balance", r.pruned.load_balance}, {"memory", r.pruned.memory}, {"communication", r.pruned.communication}};
    j["timed_out"] = r.timed_out;
    j["cancelled"] = r.cancelled;
    if (r.list_cut)
        j["list_cut"] = true;
    j["optimizer_offload"] = toString(r.optimizer_offload);
    j["optimizer_offload_needed"] = r.offload_needed;
    if (r.exact_fallback)
        j["exact_fallback"] = true;
    if (r.exact_check != ExactCheck::Off) {
        Json c{{"status", toString(r.exact_check)}, {"finished", r.exactChecked()}, {"time_s", r.exact_check_s},
               {"work", r.exact_check_work}, {"budget", r.exact_check_budget}};
        if (r.pruned_best_s > 0)
            c["pruned_best_s"] = r.pruned_best_s;
        if (r.exact_check_best)
            c["best_exact"] = true;
        j["exact_check"] = c;
    }
    j["no_plan_reason"] = r.no_plan_reason;
    if (!r.devices_left_out.empty())
        j["devices_left_out"] = r.devices_left_out;
    if (!r.micro_batch_sizes.empty())
        j["micro_batch_sizes"] = r.micro_batch_sizes;
    if (r.max_vpp > 1)
        j["max_vpp"] = r.max_vpp;
    if (r.interleave_cut != InterleaveCut::No)
        j["interleave_cut"] = toString(r.interleave_cut);
    Json alts = Json::array();
    for (const auto& p : r.plans)
        alts.push_back(rankedJson(p));
    j["alternatives"] = alts;
    Json b;
    b["uniform"] = r.uniform_baseline ? rankedJson(*r.uniform_baseline) : Json(nullptr);
    b["metis_style"] = r.metis_baseline ? rankedJson(*r.metis_baseline) : Json(nullptr);
    b["current"] = r.current ? rankedJson(*r.current) : Json(nullptr);
    j["baselines"] = b;
    return j;
}

// --- documents ----------------------------------------------------------------------------

nlohmann::json loadDocument(std::string_view text, std::string_view format, const JsonContext& ctx,
                            io::MovedKeys* moved = nullptr)
{
    nlohmann::json doc = JsonNode::parse(text, ctx.file);
    io::Migrations::upgrade(doc, format, ctx, moved);
    return doc;
}

// Reads a document of a format with migrations: an error on a key a migration moved names
// the key as the file has it (Migrations::restate).
template <typename Reader>
auto readMigrated(std::string_view text, const std::string& fileName, Warnings* warnings, std::string_view format,
                  const char* root, Reader read)
{
    const JsonContext ctx{fileName, warnings};
    io::MovedKeys moved;
    const nlohmann::json doc = loadDocument(text, format, ctx, &moved);
    try {
        return read(JsonNode(doc, root, ctx));
    } catch (const InputError& e) {
        throw io::Migrations::restate(e, moved, root);
    }
}

std::string finish(Json body, const char* format)
{
    Json doc;
    doc["format"] = format;
    doc["version"] = io::Migrations::currentVersion(format);
    for (auto it = body.begin(); it != body.end(); ++it)
        doc[it.key()] = it.value();
    // Names may come from scripts in any encoding; invalid UTF-8 is replaced rather than
    // making a save fail.
    return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string formatBound(double v)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

} // namespace

namespace {

std::string formatOf(const JsonNode& root)
{
    root.requireObject();
    if (!root.has("format"))
        root.fail("format", "missing required key (expected one of \"hapmoe.model\", \"hapmoe.cluster\", "
                            "\"hapmoe.profile\", \"hapmoe.plan\", \"hapmoe.project\", \"hapmoe.devices\")");
    return root.reqString("format");
}

// The top-level "format" and "version" of a document, read up to the point where both have
// been seen: the writers put them first, and a plan document of a thousand alternatives is
// megabytes that the reader parses whole right after. Empty when the text does not give a
// string format (and, with `wantVersion`, a scalar version) before it ends or before a JSON
// error: the whole parse then says what is wrong, as before.
std::optional<nlohmann::json> formatAndVersion(std::string_view text, bool wantVersion)
{
    class Scan : public nlohmann::json_sax<nlohmann::json> {
    public:
        explicit Scan(bool wantVersion) : m_wantVersion(wantVersion) {}
        bool null() override { return scalar(nullptr); }
        bool boolean(bool v) override { return scalar(v); }
        bool number_integer(number_integer_t v) override { return scalar(v); }
        bool number_unsigned(number_unsigned_t v) override { return scalar(v); }
        bool number_float(number_float_t v, const string_t&) override { return v != 0 && scalar(v); }   // 0 or underflow: the parse decides
        bool string(string_t& v) override { return scalar(v); }
        bool binary(binary_t&) override { return false; }
        bool start_object(std::size_t) override { return open(); }
        bool start_array(std::size_t) override { return open(); }
        bool end_object() override { --m_depth; m_key.clear(); return true; }
        bool end_array() override { --m_depth; m_key.clear(); return true; }
        bool key(string_t& k) override
        {
            if (m_depth == 1) {
                if (m_found.contains(k)) {
                    m_twice = true;   // given twice: the parse names it
                    return false;
                }
                m_key = k;
            }
            return true;
        }
        bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

        bool complete() const
        {
            return !m_twice && m_found.contains("format") && m_found["format"].is_string()
                && (!m_wantVersion || m_found.contains("version"));
        }
        nlohmann::json m_found = nlohmann::json::object();

    private:
        bool open()
        {
            ++m_depth;
            m_key.clear();   // a container value of a top-level key is no format or version
            return true;
        }
        bool scalar(const nlohmann::json& v)
        {
            if (m_depth == 1 && (m_key == "format" || m_key == "version"))
                m_found[m_key] = v;
            m_key.clear();
            return !complete();   // stop once both are known
        }
        bool m_wantVersion;
        bool m_twice = false;
        int m_depth = 0;
        std::string m_key;
    };
    Scan scan(wantVersion);
    try {
        nlohmann::json::sax_parse(text.begin(), text.end(), &scan);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (!scan.complete())
        return std::nullopt;
    return scan.m_found;
}

} // namespace

std::string detectFormat(std::string_view text, const std::string& fileName)
{
    const JsonContext ctx{fileName, nullptr};   // a JsonNode keeps a pointer to it
    if (const auto head = formatAndVersion(text, false))
        return formatOf(JsonNode(*head, "", ctx));
    const nlohmann::json doc = JsonNode::parse(text, fileName);
    return formatOf(JsonNode(doc, "", ctx));
}

DocumentVersion documentVersion(std::string_view text, const std::string& fileName)
{
    const std::optional<nlohmann::json> head = formatAndVersion(text, true);
    const nlohmann::json doc = head ? *head : JsonNode::parse(text, fileName);
    const JsonContext ctx{fileName, nullptr};
    const JsonNode root(doc, "", ctx);
    DocumentVersion v;
    v.format = formatOf(root);
    v.current = io::Migrations::currentVersion(v.format);
    try {
        v.version = root.optInt("version", 0, 1);   // Migrations::upgrade's rule
    } catch (const InputError&) {
        v.version = 0;   // the format's reader says what is wrong with it
    }
    return v;
}

ModelSpec readModel(std::string_view text, const std::string& fileName, Warnings* warnings)
{
    return readMigrated(text, fileName, warnings, kModelFormat, "model", readModelObject);
}

Cluster readCluster(std::string_view text, const std::string& fileName, Warnings* warnings)
{
    return readMigrated(text, fileName, warnings, kClusterFormat, "cluster", readClusterObject);
}

// The checks run inside readMigrated, so that their errors, too, name the keys as the file has
// them (a version-1 model's top-level global_batch_size, a version-1 node's gpus).
ModelSpec readValidModel(std::string_view text, const std::string& fileName, Warnings* warnings)
{
    return readMigrated(text, fileName, warnings, kModelFormat, "model", [&fileName](const JsonNode& n) {
        ModelSpec m = readModelObject(n);
        validateModel(m, fileName);
        return m;
    });
}

Cluster readValidCluster(std::string_view text, const std::string& fileName, const DeviceCatalog& catalog, Warnings* warnings)
{
    return readMigrated(text, fileName, warnings, kClusterFormat, "cluster", [&fileName, &catalog](const JsonNode& n) {
        Cluster c = readClusterObject(n);
        validateCluster(c, catalog, fileName);
        return c;
    });
}

namespace {

// A profile's fields: a hapmoe.profile document's, or a project's "profile" object (the same
// fields without format and version).
Profile readProfileObject(const JsonNode& n)
{
    n.requireObject();
    n.warnUnknownKeys({"format", "version", "name", "source", "compute", "collectives", "memory", "device_efficiency",
                       "router_imbalance"});
    Profile p;
    p.name = n.optLine("name");
    p.source = n.optString("source");
    // One time per table point: a second entry for the same point would make the result
    // depend on the order of the file, so it is refused with both positions named.
    auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    };
    std::map<std::tuple<std::string, int, int, long long>, std::size_t> computePoints;
    std::map<std::tuple<int, int, int, double, std::string>, std::size_t> collectivePoints;
    for (const auto& e : n.array("compute")) {
        e.requireObject();
        e.warnUnknownKeys({"device_type", "tp", "cp", "tokens", "dense_layer_fwd_s", "dense_layer_bwd_s", "ffn_fwd_s", "ffn_bwd_s"});
        ComputeEntry c;
        c.device_type = e.reqString("device_type");
        c.tp = e.optInt("tp", 1, 1);
        c.cp = e.optInt("cp", 1, 1);
        c.tokens = e.reqInt64("tokens", 1);
        c.dense_layer_fwd_s = e.reqDouble("dense_layer_fwd_s", 0, true);
        c.dense_layer_bwd_s = e.reqDouble("dense_layer_bwd_s", 0, true);
        // In range before the FFN times are compared with them, so that an error names the
        // field that is out of range (the bounds of checkProfileLimits, in its words).
        for (const auto& [field, t] : {std::pair{"dense_layer_fwd_s", c.dense_layer_fwd_s}, std::pair{"dense_layer_bwd_s", c.dense_layer_bwd_s}})
            if (!(t >= ProfileLimits::kMinTimeS && t <= ProfileLimits::kMaxTimeS))
                e.fail(field, "expected seconds from " + numberForMessage(ProfileLimits::kMinTimeS, 6) + " to "
                                  + numberForMessage(ProfileLimits::kMaxTimeS, 6) + ", got " + valueForMessage(t));
        // The FFN is part of the layer: an MoE layer's time is the layer's minus the FFN's plus
        // the experts' (docs/cost-model.md section 3.4), so it cannot exceed the layer's.
        c.ffn_fwd_s = e.optDouble("ffn_fwd_s", 0, 0, false, c.dense_layer_fwd_s);
        c.ffn_bwd_s = e.optDouble("ffn_bwd_s", 0, 0, false, c.dense_layer_bwd_s);
        const auto [at, fresh] = computePoints.emplace(std::tuple{lower(c.device_type), c.tp, c.cp, c.tokens}, p.compute.size());
        if (!fresh)
            e.fail("tokens", "compute[" + std::to_string(at->second) + "] already gives this point (device_type, tp, cp, tokens); "
                             "expected one entry per point");
        p.compute.push_back(std::move(c));
    }
    for (const auto& e : n.array("collectives")) {
        e.requireObject();
        e.warnUnknownKeys({"primitive", "link", "group_size", "bytes", "time_s", "device_type"});
        CollectiveEntry c;
        c.primitive = collectiveAt(e.reqChoice("primitive", kCollectiveNames));
        c.link = linkClassAt(e.reqChoice("link", kLinkClassNames));
        c.group_size = e.reqInt("group_size", 2);
        c.bytes = e.reqDouble("bytes", 0, true);
        c.time_s = e.reqDouble("time_s", 0, true);
        c.device_type = e.optString("device_type");
        const auto [at, fresh] = collectivePoints.emplace(
            std::tuple{static_cast<int>(c.primitive), static_cast<int>(c.link), c.group_size, c.bytes, lower(c.device_type)},
            p.collectives.size());
        if (!fresh)
            e.fail("bytes", "collectives[" + std::to_string(at->second) + "] already gives this point (primitive, link, group_size, "
                            "bytes, device_type); expected one entry per point");
        p.collectives.push_back(std::move(c));
    }
    for (const auto& e : n.array("memory")) {
        e.requireObject();
        e.warnUnknownKeys({"device_type", "fixed_overhead_gib", "activation_factor"});
        MemoryCalibration m;
        m.device_type = e.reqString("device_type");
        // Bounds far beyond any device (the largest has 288 GB) and any calibration seen.
        m.fixed_overhead_gib = e.optDouble("fixed_overhead_gib", 0, 0, false, 1024);
        m.activation_factor = e.optDouble("activation_factor", 1, 0, true, 100);
        p.memory.push_back(std::move(m));
    }
    if (auto eff = n.optObject("device_efficiency")) {
        for (auto it = eff->value().begin(); it != eff->value().end(); ++it)
            p.device_efficiency[it.key()] = eff->reqDouble(it.key(), 0, true, 1.0);
    }
    if (n.has("router_imbalance"))
        p.router_imbalance = n.reqDouble("router_imbalance", 1.0, false, 1e4);   // the model bounds it by E / k
    return p;
}

} // namespace

Profile readProfile(std::string_view text, const std::string& fileName, Warnings* warnings)
{
    const JsonContext ctx{fileName, warnings};
    const nlohmann::json doc = loadDocument(text, kProfileFormat, ctx);
    return readProfileObject(JsonNode(doc, "profile", ctx));
}

namespace {

// Whether a parsed document names itself a hapmoe.project (its "format", before the
// migrations check it): a reader of plans says what such a file is, and devices are read from
// either without parsing the text twice.
bool saysProject(const nlohmann::json& doc)
{
    const auto f = doc.is_object() ? doc.find("format") : doc.end();
    return doc.is_object() && f != doc.end() && f->is_string() && f->get<std::string>() == kProjectFormat;
}

// A plan document's "devices", read as a hapmoe.devices document's (the same key at the root,
// so that an error names "devices[2].memory_gib" in either).
std::vector<DeviceType> devicesOf(const JsonNode& root)
{
    if (!root.has("devices"))
        return {};
    const nlohmann::json catalog = {{"format", kDevicesFormat}, {"version", 1}, {"devices", root.value().at("devices")}};
    return DeviceCatalog::fromJson(catalog.dump(), root.context().file, root.context().warnings).types();
}

Json devicesJson(const std::vector<DeviceType>& devices)
{
    return Json::parse(DeviceCatalog(devices).toJson()).at("devices");
}

} // namespace

std::vector<DeviceType> typesBeyondBuiltin(const Cluster& cluster, const DeviceCatalog& catalog)
{
    std::vector<DeviceType> out;
    for (const Node& n : cluster.nodes) {
        const DeviceType* t = catalog.find(n.device_type);
        if (!t || std::any_of(out.begin(), out.end(), [&](const DeviceType& o) { return o.name == t->name; }))
            continue;
        const DeviceType* b = DeviceCatalog::builtin().find(n.device_type);
        if (!b || DeviceCatalog({*b}).toJson() != DeviceCatalog({*t}).toJson())
            out.push_back(*t);
    }
    return out;
}

std::vector<DeviceType> readDocumentDevices(std::string_view text, const std::string& fileName, Warnings* warnings)
{
    // Parsed once: the document's own "format" chooses the migrations.
    const JsonContext ctx{fileName, warnings};
    nlohmann::json doc = JsonNode::parse(text, fileName);
    io::Migrations::upgrade(doc, saysProject(doc) ? kProjectFormat : kPlanFormat, ctx);
    return devicesOf(JsonNode(doc, "", ctx));
}

PlanDocument withCatalogNames(PlanDocument doc, const DeviceCatalog& catalog)
{
    for (StagePlan& st : doc.plan.stages)
        st.device_type = catalog.canonicalName(st.device_type);
    for (Node& n : doc.cluster.nodes)
        n.device_type = catalog.canonicalName(n.device_type);
    return doc;
}

DeviceCatalog catalogWith(const std::vector<DeviceType>& types, const std::string& fileName)
{
    DeviceCatalog catalog = DeviceCatalog::builtin();
    if (!types.empty())
        catalog.merge(DeviceCatalog(types), fileName);
    return catalog;
}

PlanContext readPlanContext(std::string_view text, const std::string& fileName, Warnings* warnings)
{
    const JsonContext ctx{fileName, warnings};
    const nlohmann::json doc = loadDocument(text, kPlanFormat, ctx);
    const JsonNode n(doc, "", ctx);
    PlanContext c;
    c.model = readModelObject(n.object("model"));
    c.cluster = readClusterObject(n.object("cluster"));
    c.devices = devicesOf(n);
    c.has_plan = n.has("plan");
    // A document with a plan is read by readPlan, search and all; one without carries a search
    // of no alternatives, read here for its reason and settings.
    if (!c.has_plan)
        if (auto s = n.optObject("search")) {
            c.search = readSearchObject(*s);
            c.no_plan_reason = c.search->no_plan_reason;
        }
    return c;
}

PlanDocument readPlan(std::string_view text, const std::string& fileName, Warnings* warnings)
{
    const JsonContext ctx{fileName, warnings};
    nlohmann::json doc = JsonNode::parse(text, fileName);
    // A project holds plans too, not as a plan document: say how to get one.
    if (saysProject(doc))
        throw InputError(fileName, "format", "expected \"hapmoe.plan\", got \"hapmoe.project\": a project keeps its plans under "
                                             "\"plans\": save one as a plan document with Save plan JSON in the studio's export dialog, "
                                             "or search again with `hapmoe plan --model FILE --cluster FILE -o plan.json`");
    io::Migrations::upgrade(doc, kPlanFormat, ctx);
    const JsonNode n(doc, "", ctx);
    n.warnUnknownKeys({"format", "version", "model", "cluster", "devices", "plan", "prediction", "search"});
    PlanDocument d;
    d.model = readModelObject(n.object("model"));
    d.cluster = readClusterObject(n.object("cluster"));
    d.devices = devicesOf(n);
    // What "hapmoe plan --json" writes when nothing is feasible (writeNoPlan).
    if (!n.has("plan"))
        if (auto s = n.optObject("search"); s && !s->optString("no_plan_reason").empty())
            n.fail("plan", "the document holds no plan: the search found none (search.no_plan_reason: "
                               + s->optString("no_plan_reason") + ")");
    d.plan = readPlanObject(n.object("plan"));
    if (auto p = n.optObject("prediction")) {
        d.prediction = readPredictionObject(*p);
        if (ofAnotherPlan(*d.prediction, d.plan)) {
            // The plan is what the document asks for, so it is kept and its figures computed again.
            p->warn(anotherPlanLeftOut(p->path(), *d.prediction, d.plan));
            d.prediction.reset();
        } else {
            checkChunkTimes(*p, d.plan, *d.prediction);
            setDrains(d.prediction->stages, d.plan.vpp);
            simulateInterleaved(d.prediction->stages, d.prediction->num_microbatches, d.plan.vpp);
        }
    }
    // The search's figures describe how the plan was found; a document whose search section
    // cannot be read keeps its plan, with a warning.
    if (n.has("search")) {
        try {
            if (auto s = n.optObject("search"))
                d.search = readSearchObject(*s);
        } catch (const InputError& err) {
            n.warn(err.where() + ": " + err.detail() + "; the search section is left out");
        }
    }
    // `hapmoe plan` writes its best plan as both "plan" and the search's first alternative.
    // Where they differ (a document edited by hand), the command line (estimate, export)
    // reads "plan" and the studio the alternatives: say so rather than let the two differ
    // unsaid. (An alternative that cannot be read was warned of above.)
    if (d.search && doc.contains("search") && doc["search"].is_object()) {
        const auto alternatives = doc["search"].find("alternatives");
        if (alternatives != doc["search"].end() && alternatives->is_array() && !alternatives->empty()
            && (*alternatives)[0].is_object() && (*alternatives)[0].contains("plan")) {
            try {
                const JsonContext quiet{fileName, nullptr};
                const Plan first = readPlanObject(JsonNode((*alternatives)[0]["plan"], "search.alternatives[0].plan", quiet));
                if (planJson(first) != planJson(d.plan))
                    n.warn("plan differs from search.alternatives[0], the search's best (edited by hand?): hapmoe estimate and "
                           "export use \"plan\", the studio opens the search's alternatives");
            } catch (const InputError&) {
            }
        }
    }
    return d;
}

namespace {

// {"arguments": [...], "environment": {...}}: what `NAME=VALUE bash SCRIPT ARG...` gives the
// script (megatron/ScriptInputs.h). Strings only, and names the shell takes as variables.
ScriptInputs readScriptInputs(const JsonNode& n)
{
    n.warnUnknownKeys({"arguments", "environment"});
    ScriptInputs inputs;
    for (const auto& e : n.array("arguments")) {
        if (!e.value().is_string())
            e.failHere("expected a string, got " + JsonNode::describe(e.value()));
        inputs.arguments.push_back(e.value().get<std::string>());
    }
    if (auto env = n.optObject("environment")) {
        for (auto it = env->value().begin(); it != env->value().end(); ++it) {
            if (!ShellQuote::isValidName(it.key()))
                env->fail(it.key(), "expected a shell variable name (letters, digits and _, not a digit first)");
            if (!it->is_string())
                env->fail(it.key(), "expected a string, got " + JsonNode::describe(*it));
            inputs.environment[it.key()] = it->get<std::string>();
        }
    }
    return inputs;
}

} // namespace

Project readProject(std::string_view text, const std::string& fileName, Warnings* warnings)
{
    const JsonContext ctx{fileName, warnings};
    const nlohmann::json doc = loadDocument(text, kProjectFormat, ctx);
    const JsonNode n(doc, "", ctx);
    n.warnUnknownKeys({"format", "version", "name", "model", "cluster", "search", "plans", "plans_cancelled", "plans_timed_out",
                       "current_script", "current_script_inputs", "profile", "profile_file", "devices"});
    Project p;
    p.name = n.optLine("name");
    p.model = readModelObject(n.object("model"));
    p.cluster = readClusterObject(n.object("cluster"));
    if (auto s = n.optObject("search")) {
        s->warnUnknownKeys({"algorithm", "target", "top_k", "delta", "eta", "time_limit_s", "exact", "optimizer_offload",
                            "memory_headroom", "search_micro_batch", "max_vpp"});
        p.search.algorithm = algorithmAt(s->optChoice("algorithm", kAlgorithmNames, 0));
        p.search.target = targetAt(s->optChoice("target", kTargetNames, 2));
        p.search.top_k = s->optInt("top_k", p.search.top_k, 1, 1000);   // as hapmoe plan --top
        p.search.delta = s->optDouble("delta", p.search.delta, 0);
        if (p.search.delta >= 1)
            s->fail("delta", "expected a load-balance tolerance in [0, 1), got " + valueForMessage(p.search.delta));
        p.search.eta = s->optDouble("eta", p.search.eta, 0, true, 1e6);
        // Above 1e7 s (four months) a limit means none (search/Search.h).
        p.search.time_limit_s = s->optDouble("time_limit_s", p.search.time_limit_s, 0, false, 1e7);
        p.search.exact = s->optBool("exact", p.search.exact);
        p.search.optimizer_offload = static_cast<OptimizerOffload>(s->optChoice("optimizer_offload", kOffloadNames, 1));
        p.search.memory_headroom = s->optDouble("memory_headroom", p.search.memory_headroom, 0, false, 0.5);
        p.search.search_micro_batch = s->optBool("search_micro_batch", p.search.search_micro_batch);
        p.search.max_vpp = s->optInt("max_vpp", p.search.max_vpp, 1, kMaxVpp);   // as hapmoe plan --max-vpp
    }
    static const std::vector<std::string_view> kSourceNames{"search", "current", "uniform", "metis_style"};
    for (const auto& e : n.array("plans")) {
        const RankedPlan r = readRankedPlan(e, true);
        SavedPlan sp;
        sp.plan = r.plan;
        if (e.has("prediction") && ofAnotherPlan(r.prediction, r.plan))
            e.warn(anotherPlanLeftOut(e.path() + ".prediction", r.prediction, r.plan));
        else if (e.has("prediction"))
            sp.prediction = r.prediction;
        sp.plain_time_s = r.plain_time_s;
        sp.source = static_cast<SavedPlan::Source>(e.optChoice("source", kSourceNames, 0));
        p.plans.push_back(std::move(sp));
    }
    p.plans_cancelled = n.optBool("plans_cancelled", false);
    p.plans_timed_out = n.optBool("plans_timed_out", false);
    p.current_script = n.optRawString("current_script");
    if (auto in = n.optObject("current_script_inputs"))
        p.current_script_inputs = readScriptInputs(*in);
    // The file the profile was loaded from: a string whether or not the profile is there, and
    // kept only with it.
    const std::string profileFile = n.optString("profile_file");
    if (n.has("profile")) {
        p.profile = readProfileObject(n.object("profile"));
        // Its bounds too, as validate and a --profile file are held to (profile.compute[0].tokens).
        checkProfileLimits(*p.profile, fileName);
        p.profile_file = profileFile;
    }
    p.devices = devicesOf(n);
    catalogWith(p.devices, fileName);   // an alias that names another type is refused here
    return p;
}

std::string writeModel(const ModelSpec& model) { return finish(modelJson(model), kModelFormat); }

std::string writeCluster(const Cluster& cluster) { return finish(clusterJson(cluster), kClusterFormat); }

namespace {

Json profileJson(const Profile& profile)
{
    Json j;
    j["name"] = profile.name;
    j["source"] = profile.source;
    Json compute = Json::array();
    for (const auto& c : profile.compute)
        compute.push_back(Json{{"device_type", c.device_type}, {"tp", c.tp}, {"cp", c.cp}, {"tokens", c.tokens},
                               {"dense_layer_fwd_s", c.dense_layer_fwd_s}, {"dense_layer_bwd_s", c.dense_layer_bwd_s},
                               {"ffn_fwd_s", c.ffn_fwd_s}, {"ffn_bwd_s", c.ffn_bwd_s}});
    j["compute"] = compute;
    Json coll = Json::array();
    for (const auto& c : profile.collectives) {
        Json e{{"primitive", toString(c.primitive)}, {"link", toString(c.link)}, {"group_size", c.group_size},
               {"bytes", c.bytes}, {"time_s", c.time_s}};
        if (!c.device_type.empty())
            e["device_type"] = c.device_type;
        coll.push_back(e);
    }
    j["collectives"] = coll;
    Json mem = Json::array();
    for (const auto& m : profile.memory)
        mem.push_back(Json{{"device_type", m.device_type}, {"fixed_overhead_gib", m.fixed_overhead_gib},
                           {"activation_factor", m.activation_factor}});
    j["memory"] = mem;
    Json eff = Json::object();
    for (const auto& [k, v] : profile.device_efficiency)
        eff[k] = v;
    j["device_efficiency"] = eff;
    if (profile.router_imbalance)
        j["router_imbalance"] = *profile.router_imbalance;
    return j;
}

} // namespace

std::string writeProfile(const Profile& profile) { return finish(profileJson(profile), kProfileFormat); }

std::string writePlan(const PlanDocument& doc)
{
    Json j;
    j["model"] = modelJson(doc.model);
    j["cluster"] = clusterJson(doc.cluster);
    if (!doc.devices.empty())
        j["devices"] = devicesJson(doc.devices);
    j["plan"] = planJson(doc.plan);
    if (doc.prediction)
        j["prediction"] = predictionJson(*doc.prediction);
    if (doc.search)
        j["search"] = searchJson(*doc.search);
    return finish(j, kPlanFormat);
}

std::string writeNoPlan(const ModelSpec& model, const Cluster& cluster, const SearchResult& search,
                        const std::vector<DeviceType>& devices)
{
    Json j;
    j["model"] = modelJson(model);
    j["cluster"] = clusterJson(cluster);
    if (!devices.empty())
        j["devices"] = devicesJson(devices);
    j["plan"] = nullptr;
    j["search"] = searchJson(search);
    return finish(j, kPlanFormat);
}

std::string writeProject(const Project& project)
{
    Json j;
    j["name"] = project.name;
    j["model"] = modelJson(project.model);
    j["cluster"] = clusterJson(project.cluster);
    j["search"] = Json{{"algorithm", algorithmName(project.search.algorithm)},
                       {"target", toString(project.search.target)},
                       {"top_k", project.search.top_k},
                       {"delta", project.search.delta},
                       {"eta", project.search.eta},
                       {"time_limit_s", project.search.time_limit_s},
                       {"exact", project.search.exact},
                       {"optimizer_offload", toString(project.search.optimizer_offload)},
                       {"memory_headroom", project.search.memory_headroom},
                       {"search_micro_batch", project.search.search_micro_batch},
                       {"max_vpp", project.search.max_vpp}};
    Json plans = Json::array();
    for (const auto& sp : project.plans) {
        Json e;
        e["plan"] = planJson(sp.plan);
        if (sp.prediction)
            e["prediction"] = predictionJson(*sp.prediction);
        if (sp.plain_time_s > 0)
            e["plain_time_s"] = sp.plain_time_s;
        e["source"] = sp.source == SavedPlan::Source::Current      ? "current"
                      : sp.source == SavedPlan::Source::Uniform    ? "uniform"
                      : sp.source == SavedPlan::Source::MetisStyle ? "metis_style"
                                                                   : "search";
        plans.push_back(e);
    }
    j["plans"] = plans;
    if (project.plans_cancelled)
        j["plans_cancelled"] = true;
    if (project.plans_timed_out)
        j["plans_timed_out"] = true;
    j["current_script"] = project.current_script;
    if (!project.current_script_inputs.empty()) {
        // Both members always, so that a reader sees the shape whatever the script is given.
        Json env = Json::object();
        for (const auto& [name, value] : project.current_script_inputs.environment)
            env[name] = value;
        j["current_script_inputs"] = Json{{"arguments", project.current_script_inputs.arguments}, {"environment", env}};
    }
    if (project.profile) {
        j["profile"] = profileJson(*project.profile);
        if (!project.profile_file.empty())
            j["profile_file"] = project.profile_file;
    }
    if (!project.devices.empty())
        j["devices"] = devicesJson(project.devices);
    return finish(j, kProjectFormat);
}

void validateModel(const ModelSpec& m, const std::string& file)
{
    auto fail = [&](const char* field, const std::string& msg) { throw InputError(file, std::string("model.") + field, msg); };
    auto positive = [&](const char* field, long long v) {
        if (v <= 0)
            fail(field, "expected a positive integer, got " + std::to_string(v));
    };
    positive("num_layers", m.num_layers);
    // The search's work grows with the square of the layer count; published models have
    // at most a few hundred layers.
    if (m.num_layers > kMaxLayers)
        fail("num_layers", "expected at most " + std::to_string(kMaxLayers) + " layers, got " + std::to_string(m.num_layers));
    positive("hidden_size", m.hidden_size);
    positive("ffn_hidden_size", m.ffn_hidden_size);
    positive("num_attention_heads", m.num_attention_heads);
    positive("vocab_size", m.vocab_size);
    positive("make_vocab_size_divisible_by", m.make_vocab_size_divisible_by);
    if (m.make_vocab_size_divisible_by > kMaxVocabMultiple)
        fail("make_vocab_size_divisible_by", "expected at most " + std::to_string(kMaxVocabMultiple) + ", got "
                                                 + std::to_string(m.make_vocab_size_divisible_by));
    positive("seq_length", m.seq_length);
    if (m.num_query_groups < 0)
        fail("num_query_groups", "expected a non-negative integer, got " + std::to_string(m.num_query_groups));
    if (m.num_query_groups > 0 && m.num_attention_heads % m.num_query_groups != 0)
        fail("num_query_groups", "num_attention_heads (" + std::to_string(m.num_attention_heads)
                                     + ") must be divisible by num_query_groups (" + std::to_string(m.num_query_groups) + ")");
    if (m.kv_channels < 0)
        fail("kv_channels", "expected a non-negative integer, got " + std::to_string(m.kv_channels));
    if (m.multi_latent_attention) {
        if (m.q_lora_rank < 0)
            fail("q_lora_rank", "expected a non-negative integer (0 = the query projected from the hidden state), got "
                                    + std::to_string(m.q_lora_rank));
        positive("kv_lora_rank", m.kv_lora_rank);
        positive("qk_head_dim", m.qk_head_dim);
        if (m.qk_pos_emb_head_dim < 0)
            fail("qk_pos_emb_head_dim", "expected a non-negative integer, got " + std::to_string(m.qk_pos_emb_head_dim));
        positive("v_head_dim", m.v_head_dim);
    }
    if (!m.multi_latent_attention && m.kv_channels == 0 && m.hidden_size % m.num_attention_heads != 0)
        fail("num_attention_heads", "hidden_size (" + std::to_string(m.hidden_size) + ") must be divisible by num_attention_heads ("
                                        + std::to_string(m.num_attention_heads) + ") unless kv_channels is given");
    if (m.mtp_num_layers < 0 || m.mtp_num_layers > kMaxLayers)
        fail("mtp_num_layers", "expected an integer from 0 to " + std::to_string(kMaxLayers) + ", got " + std::to_string(m.mtp_num_layers));
    if (m.max_position_embeddings > 0 && m.max_position_embeddings < m.seq_length)
        fail("max_position_embeddings", "must be at least seq_length (" + std::to_string(m.seq_length) + "), got "
                                            + std::to_string(m.max_position_embeddings));
    if (m.num_experts < 0)
        fail("num_experts", "expected a non-negative integer (0 = dense), got " + std::to_string(m.num_experts));
    if (m.num_experts > 0) {
        if (m.moe_router_topk < 1 || m.moe_router_topk > m.num_experts)
            fail("moe_router_topk", "expected an integer in [1, num_experts = " + std::to_string(m.num_experts) + "], got "
                                        + std::to_string(m.moe_router_topk));
        if (m.moe_ffn_hidden_size < 0)
            fail("moe_ffn_hidden_size", "expected a non-negative integer, got " + std::to_string(m.moe_ffn_hidden_size));
        if (m.moe_layer_pattern.empty() && m.moe_layer_freq < 1)
            fail("moe_layer_freq", "expected a positive integer, got " + std::to_string(m.moe_layer_freq));
        if (!m.moe_layer_pattern.empty() && static_cast<int>(m.moe_layer_pattern.size()) != m.num_layers)
            fail("moe_layer_freq", "the pattern has " + std::to_string(m.moe_layer_pattern.size())
                                       + " entries but num_layers is " + std::to_string(m.num_layers));
        if (m.numMoeLayers() == 0)
            fail("moe_layer_freq", "no layer is an MoE layer although num_experts is " + std::to_string(m.num_experts));
        // Megatron-Core's TransformerConfig and Router: the expert bias of aux-loss-free
        // balancing needs sigmoid-like scores; group-limited routing splits the experts into
        // equal groups and picks enough of them for the top-k.
        if (m.moe_router_enable_expert_bias && m.moe_router_score_function == RouterScore::Softmax)
            fail("moe_router_enable_expert_bias", "needs moe_router_score_function sigmoid or sqrtsoftplus (Megatron-Core's expert "
                                                  "bias routing does not take softmax scores)");
        if (m.moe_router_num_groups > 0) {
            if (m.num_experts % m.moe_router_num_groups != 0)
                fail("moe_router_num_groups", "expected a divisor of num_experts = " + std::to_string(m.num_experts) + ", got "
                                                  + std::to_string(m.moe_router_num_groups));
            if (m.moe_router_group_topk < 1 || m.moe_router_group_topk > m.moe_router_num_groups)
                fail("moe_router_group_topk", "expected an integer in [1, moe_router_num_groups = " + std::to_string(m.moe_router_num_groups)
                                                  + "], got " + std::to_string(m.moe_router_group_topk));
            const long long reachable = 1LL * m.moe_router_group_topk * (m.num_experts / m.moe_router_num_groups);
            if (m.moe_router_topk > reachable)
                fail("moe_router_group_topk", "picks " + std::to_string(m.moe_router_group_topk) + " groups of "
                                                  + std::to_string(m.num_experts / m.moe_router_num_groups) + " experts, fewer than moe_router_topk = "
                                                  + std::to_string(m.moe_router_topk));
        }   // a group top-k without groups is ignored, as Megatron-Core's router ignores it
    }
    if (m.moe_shared_expert_intermediate_size < 0)
        fail("moe_shared_expert_intermediate_size", "expected a non-negative integer, got "
                                                        + std::to_string(m.moe_shared_expert_intermediate_size));
    const auto& t = m.training;
    positive("training.micro_batch_size", t.micro_batch_size);
    positive("training.global_batch_size", t.global_batch_size);
    if (t.global_batch_size % t.micro_batch_size != 0)
        fail("training.global_batch_size", "must be divisible by micro_batch_size (" + std::to_string(t.micro_batch_size)
                                               + "), got " + std::to_string(t.global_batch_size));
    if (!(t.router_imbalance >= 1.0) || !std::isfinite(t.router_imbalance))
        fail("training.router_imbalance", "expected a number >= 1 (max over mean expert load), got " + std::to_string(t.router_imbalance));
    // An expert receives at most every token once, k of E experts per token on average: the
    // max over mean load is at most E / k.
    if (m.maxRouterImbalance() > 0.0 && t.router_imbalance > m.maxRouterImbalance())
        fail("training.router_imbalance", "expected at most num_experts / moe_router_topk = " + formatBound(m.maxRouterImbalance())
                                              + " (an expert gets each token at most once), got " + valueForMessage(t.router_imbalance));
    if (!(t.imbalance_weight >= 0.0 && t.imbalance_weight <= 1.0))
        fail("training.imbalance_weight", "expected a number in [0, 1], got " + std::to_string(t.imbalance_weight));
    if (t.fp8_param_gather && !t.fp8())
        fail("training.fp8_param_gather", "needs training.fp8_format hybrid or e4m3 (FP8 weights exist only with FP8 GEMMs, "
                                          "Megatron-LM's --fp8-param-gather with --fp8-format)");
}

// A latency beyond a second is no network's; it would only push predictions past any range.
constexpr double kMaxLatencyUs = 1e6;

void validateCluster(const Cluster& c, const DeviceCatalog& catalog, const std::string& file)
{
    auto where = [](const char* array, std::size_t i, const char* field) {
        return std::string("cluster.") + array + "[" + std::to_string(i) + "]." + field;
    };
    // Checked before the total is counted: the device counts of the nodes sum in an int.
    if (c.nodes.size() > static_cast<std::size_t>(kMaxNodes))
        throw InputError(file, "cluster.nodes", "expected at most " + std::to_string(kMaxNodes) + " nodes, got "
                                                    + std::to_string(c.nodes.size()));
    for (std::size_t i = 0; i < c.nodes.size(); ++i)
        if (c.nodes[i].count > kMaxDevicesPerNode)
            throw InputError(file, where("nodes", i, "count"), "expected at most " + std::to_string(kMaxDevicesPerNode)
                                                                  + " devices in a node, got " + std::to_string(c.nodes[i].count));
    long long devices = 0;
    for (const Node& n : c.nodes)
        devices += std::max(0, n.count);
    if (devices > kMaxDevices)
        throw InputError(file, "cluster.nodes", "expected at most 1,048,576 devices in all, got " + std::to_string(devices));
    if (c.totalDevices() <= 0)
        throw InputError(file, "cluster.nodes", "the cluster has no devices (add at least one node with a positive count)");
    std::map<int, std::string> ids;
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
        const Node& n = c.nodes[i];
        if (n.id < 0)
            throw InputError(file, where("nodes", i, "id"), "expected a non-negative integer, got " + std::to_string(n.id));
        if (auto [it, ok] = ids.emplace(n.id, where("nodes", i, "id")); !ok)
            throw InputError(file, where("nodes", i, "id"), "id " + std::to_string(n.id) + " is already used by " + it->second);
        if (n.count <= 0)
            throw InputError(file, where("nodes", i, "count"), "expected a positive integer, got " + std::to_string(n.count));
        if (!catalog.find(n.device_type)) {
            std::string known;
            for (const auto& t : catalog.types())
                known += (known.empty() ? "" : ", ") + t.name;
            throw InputError(file, where("nodes", i, "device_type"),
                             "unknown device type " + quotedValue(n.device_type) + "; known: " + known);
        }
        if (const std::string why = hostNameProblem(n.host); !why.empty())
            throw InputError(file, where("nodes", i, "host"),
                             "expected a host name (labels of 1-63 letters, digits, '-' and '_' joined by '.'; see docs/formats.md): \""
                                 + shortenedForMessage(n.host) + "\" " + why);
        if (n.nics < 0)
            throw InputError(file, where("nodes", i, "nics"), "expected a non-negative integer, got " + std::to_string(n.nics));
        // Rates below kMinRate would make a time infinite (a 1 GB transfer over 1e-320 GB/s).
        if (!(n.nic_gbit == 0 || (n.nic_gbit >= kMinRate && std::isfinite(n.nic_gbit))))
            throw InputError(file, where("nodes", i, "nic_gbit"), "expected 0 (the device type's rate) or at least 1e-06 Gbit/s, got "
                                                                   + valueForMessage(n.nic_gbit));
        if (!(n.nic_gbit <= kMaxRate))
            throw InputError(file, where("nodes", i, "nic_gbit"), "expected at most 1e+06 Gbit/s, got " + valueForMessage(n.nic_gbit));
        if (!(n.host_memory_gib >= 0))
            throw InputError(file, where("nodes", i, "host_memory_gib"), "expected a non-negative number of GiB");
        // As the studio's node editor takes it: whole GiB up to 1 PiB (a fraction of a GiB
        // would read as "needs 348 GiB of 0.0 GiB").
        if (n.host_memory_gib > 0 && !(n.host_memory_gib >= 1 && n.host_memory_gib <= 1048576))
            throw InputError(file, where("nodes", i, "host_memory_gib"),
                             "expected 0 (not checked) or 1 to 1,048,576 GiB, got " + valueForMessage(n.host_memory_gib));
        if (!(n.host_link_gbytes_per_s == 0 || (n.host_link_gbytes_per_s >= kMinRate && std::isfinite(n.host_link_gbytes_per_s))))
            throw InputError(file, where("nodes", i, "host_link_gbytes_per_s"),
                             "expected 0 (PCIe Gen4's 32 GB/s) or at least 1e-06 GB/s, got " + valueForMessage(n.host_link_gbytes_per_s));
        if (!(n.host_link_gbytes_per_s <= kMaxRate))
            throw InputError(file, where("nodes", i, "host_link_gbytes_per_s"),
                             "expected at most 1e+06 GB/s, got " + valueForMessage(n.host_link_gbytes_per_s));
    }
    // Host names ignore case (RFC 4343): "NODE7" and "node7" are one host for a hostfile.
    std::map<std::string, std::size_t> hosts;
    for (std::size_t i = 0; i < c.nodes.size(); ++i)
        if (auto [it, fresh] = hosts.emplace(lower(c.nodes[i].host), i); !fresh) {
            const std::string& first = c.nodes[it->second].host;
            throw InputError(file, where("nodes", i, "host"),
                             "host \"" + c.nodes[i].host + "\" appears on more than one node"
                                 + (first == c.nodes[i].host ? std::string()
                                                             : " (host names ignore case: nodes[" + std::to_string(it->second)
                                                                   + "] is \"" + first + "\")"));
        }
    for (std::size_t i = 0; i < c.switches.size(); ++i) {
        const Switch& s = c.switches[i];
        if (s.id < 0)
            throw InputError(file, where("switches", i, "id"), "expected a non-negative integer, got " + std::to_string(s.id));
        if (auto [it, ok] = ids.emplace(s.id, where("switches", i, "id")); !ok)
            throw InputError(file, where("switches", i, "id"), "id " + std::to_string(s.id) + " is already used by " + it->second);
    }
    for (std::size_t i = 0; i < c.links.size(); ++i) {
        const Link& l = c.links[i];
        if (!ids.count(l.a))
            throw InputError(file, where("links", i, "a"), "no node or switch has id " + std::to_string(l.a));
        if (!ids.count(l.b))
            throw InputError(file, where("links", i, "b"), "no node or switch has id " + std::to_string(l.b));
        if (l.a == l.b)
            throw InputError(file, where("links", i, "b"), "a link must join two different ids, got " + std::to_string(l.a) + " twice");
        if (!(l.bandwidth_gbytes_per_s >= kMinRate) || !std::isfinite(l.bandwidth_gbytes_per_s))
            throw InputError(file, where("links", i, "bandwidth_gbytes_per_s"),
                             "expected at least 1e-06 GB/s, got " + valueForMessage(l.bandwidth_gbytes_per_s));
        if (!(l.bandwidth_gbytes_per_s <= kMaxLinkRate))
            throw InputError(file, where("links", i, "bandwidth_gbytes_per_s"),
                             "expected at most 1e+09 GB/s, got " + valueForMessage(l.bandwidth_gbytes_per_s));
        if (!(l.latency_us >= 0) || !(l.latency_us <= kMaxLatencyUs))
            throw InputError(file, where("links", i, "latency_us"),
                             "expected a number from 0 to 1e+06 us (one second), got " + valueForMessage(l.latency_us));
    }
    if (!(c.cross_vendor.bandwidth_gbytes_per_s >= kMinRate) || !std::isfinite(c.cross_vendor.bandwidth_gbytes_per_s))
        throw InputError(file, "cluster.cross_vendor.bandwidth_gbytes_per_s",
                         "expected at least 1e-06 GB/s, got " + valueForMessage(c.cross_vendor.bandwidth_gbytes_per_s));
    if (!(c.cross_vendor.bandwidth_gbytes_per_s <= kMaxRate))
        throw InputError(file, "cluster.cross_vendor.bandwidth_gbytes_per_s",
                         "expected at most 1e+06 GB/s, got " + valueForMessage(c.cross_vendor.bandwidth_gbytes_per_s));
    if (!(c.cross_vendor.latency_us >= 0) || !(c.cross_vendor.latency_us <= kMaxLatencyUs))
        throw InputError(file, "cluster.cross_vendor.latency_us",
                         "expected a number from 0 to 1e+06 us (one second), got " + valueForMessage(c.cross_vendor.latency_us));
}

void validatePlanDocument(const PlanDocument& doc, const DeviceCatalog& catalog, const std::string& file)
{
    validateModel(doc.model, file);
    validateCluster(doc.cluster, catalog, file);
    const Plan& p = doc.plan;
    if (p.stages.empty())
        throw InputError(file, "plan.stages", "expected at least one stage");
    // Megatron-Core offloads the optimizer only from the distributed optimizer
    // (megatron/core/optimizer/__init__.py raises otherwise), as `hapmoe estimate` refuses
    // --optimizer-cpu-offload without --distributed-optimizer.
    if (p.optimizer_offload_fraction > 0 && !p.distributed_optimizer)
        throw InputError(file, "plan.distributed_optimizer",
                         "expected true with optimizer_offload_fraction " + valueForMessage(p.optimizer_offload_fraction)
                             + " (Megatron-Core offloads the optimizer only from the distributed optimizer)");
    // Sums and products of the file's integers are taken in 64 bits: each may be up to INT_MAX.
    long long nextLayer = 0;
    std::map<int, std::vector<std::pair<int, int>>> used;   // node id -> per device (stage, slot) + 1, 0 = free
    for (std::size_t i = 0; i < p.stages.size(); ++i) {
        const StagePlan& s = p.stages[i];
        const std::string at = "plan.stages[" + std::to_string(i) + "]";
        const DeviceType* type = catalog.find(s.device_type);
        if (!type)
            throw InputError(file, at + ".device_type", "unknown device type " + quotedValue(s.device_type));
        if (s.first_layer != nextLayer)
            throw InputError(file, at + ".first_layer", "expected " + std::to_string(nextLayer)
                                                          + " (stages must cover the layers in order), got " + std::to_string(s.first_layer));
        nextLayer += s.num_layers;
        if (s.devices.empty())
            throw InputError(file, at + ".devices", "expected at least one device slot");
        long long devices = 0;
        for (std::size_t k = 0; k < s.devices.size(); ++k) {
            const DeviceSlot& d = s.devices[k];
            const std::string dat = at + ".devices[" + std::to_string(k) + "]";
            const Node* node = doc.cluster.node(d.node);
            if (!node)
                throw InputError(file, dat + ".node", "no node has id " + std::to_string(d.node));
            if (catalog.find(node->device_type) != type)
                throw InputError(file, dat + ".node", "node " + std::to_string(d.node) + " holds " + node->device_type
                                                          + ", not the stage's " + s.device_type);
            const long long end = static_cast<long long>(d.first_local) + d.count;
            // The field to blame: first_local when it alone is past the node's devices.
            if (d.first_local < 0 || d.count <= 0 || end > node->count)
                throw InputError(file, dat + (d.first_local < 0 || d.first_local >= node->count ? ".first_local" : ".count"), "devices [" + std::to_string(d.first_local) + ", "
                                                           + std::to_string(end) + ") do not fit node "
                                                           + std::to_string(d.node) + " of " + std::to_string(node->count));
            auto& taken = used[d.node];
            taken.resize(static_cast<std::size_t>(node->count), {0, 0});
            for (int x = d.first_local; x < d.first_local + d.count; ++x) {
                const auto [stage, slot] = taken[static_cast<std::size_t>(x)];
                if (stage > 0)
                    throw InputError(file, dat, "device " + std::to_string(x) + " of node " + std::to_string(d.node)
                                                    + (stage - 1 == static_cast<int>(i)
                                                           ? " is already in devices[" + std::to_string(slot - 1) + "] of this stage"
                                                           : " is also used by stage " + std::to_string(stage - 1)));
                taken[static_cast<std::size_t>(x)] = {static_cast<int>(i) + 1, static_cast<int>(k) + 1};
            }
            devices += d.count;
        }
        // Knobs below 1 can only come from plans built in code (readPlanObject refuses them).
        // Once both products equal the stage's devices, every knob is at most that count and
        // the checks below cannot overflow.
        const long long attention = static_cast<long long>(s.tp) * s.cp * s.dp;
        const long long experts = static_cast<long long>(s.ep) * s.etp * s.edp;
        if (s.tp < 1 || s.cp < 1 || s.dp < 1 || attention != devices)
            throw InputError(file, at, "tp*cp*dp = " + std::to_string(attention) + " but the stage has "
                                           + std::to_string(devices) + " devices");
        if (s.ep < 1 || s.etp < 1 || s.edp < 1 || experts != devices)
            throw InputError(file, at, "ep*etp*edp = " + std::to_string(experts) + " but the stage has "
                                           + std::to_string(devices) + " devices");
        if (doc.model.num_experts == 0 && s.ep > 1)
            throw InputError(file, at + ".ep", "ep " + std::to_string(s.ep)
                                                   + " on a dense model: expert parallelism needs experts (num_experts is 0), expected 1");
        if (doc.model.num_experts > 0 && doc.model.num_experts % s.ep != 0)
            throw InputError(file, at + ".ep", "num_experts (" + std::to_string(doc.model.num_experts)
                                                   + ") must be divisible by ep (" + std::to_string(s.ep) + ")");
        if (doc.model.num_attention_heads % s.tp != 0)
            throw InputError(file, at + ".tp", "num_attention_heads (" + std::to_string(doc.model.num_attention_heads)
                                                   + ") must be divisible by tp (" + std::to_string(s.tp) + ")");
        // Megatron-Core splits the key/value heads over TP, or replicates them when TP is a
        // multiple of the groups (the search's rule, search/SearchSpace.cpp).
        if (const int g = doc.model.queryGroups(); g > 0 && g % s.tp != 0 && s.tp % g != 0)
            throw InputError(file, at + ".tp", "num_query_groups (" + std::to_string(g) + ") and tp (" + std::to_string(s.tp)
                                                   + ") must divide one another");
        // Context parallelism splits each sequence into 2 x CP chunks (load-balanced causal attention).
        if (s.cp > 1 && doc.model.seq_length % (2LL * s.cp) != 0)
            throw InputError(file, at + ".cp", "seq_length (" + std::to_string(doc.model.seq_length)
                                                   + ") must be divisible by 2 x cp (" + std::to_string(2 * s.cp) + ")");
        // Every stage runs the same micro-batches: dp x micro_batch_size sequences each.
        const long long sequences = static_cast<long long>(s.dp) * s.micro_batch_size;
        const long long firstSequences = static_cast<long long>(p.stages.front().dp) * p.stages.front().micro_batch_size;
        if (s.micro_batch_size < 1 || sequences != firstSequences)
            throw InputError(file, at + ".micro_batch_size",
                             "dp x micro_batch_size = " + std::to_string(sequences) + " but stage 0 has "
                                 + std::to_string(firstSequences) + ": every stage must run the same micro-batches");
        if (s.recompute == Recompute::Full && s.recompute_layers > s.num_layers)
            throw InputError(file, at + ".recompute_layers", "expected at most the stage's " + std::to_string(s.num_layers)
                                                                 + " layers (0 = all), got " + std::to_string(s.recompute_layers));
        if (s.recompute != Recompute::Full && s.recompute_layers != 0)
            throw InputError(file, at + ".recompute_layers", "only full recompute takes a layer count; got "
                                                                 + std::to_string(s.recompute_layers) + " with recompute \""
                                                                 + toString(s.recompute) + "\"");
        // The chunks a layout placed (section "plan" of docs/formats.md): one per virtual stage,
        // summing to the stage's layers.
        if (!s.chunk_layers.empty()) {
            long long sum = 0;
            for (std::size_t c = 0; c < s.chunk_layers.size(); ++c) {
                if (s.chunk_layers[c] < 0)
                    throw InputError(file, at + ".chunk_layers[" + std::to_string(c) + "]",
                                     "expected a number of layers >= 0, got " + std::to_string(s.chunk_layers[c]));
                sum += s.chunk_layers[c];
            }
            if (p.vpp < 2)
                throw InputError(file, at + ".chunk_layers", "only an interleaved plan (vpp above 1) splits a stage into model chunks; "
                                                                 "expected no chunk_layers with vpp " + std::to_string(p.vpp));
            if (s.chunk_layers.size() != static_cast<std::size_t>(p.vpp))
                throw InputError(file, at + ".chunk_layers", "expected one entry per virtual stage (vpp " + std::to_string(p.vpp)
                                                                 + "), got " + std::to_string(s.chunk_layers.size()));
            if (sum != s.num_layers)
                throw InputError(file, at + ".chunk_layers", "the chunks hold " + std::to_string(sum) + " layers, the stage has "
                                                                 + std::to_string(s.num_layers));
        }
        // Interleaved 1F1B with fewer layers than chunks leaves chunks empty, as a Megatron-LM
        // layout may (the embedding or the loss alone); the export writes such a layout.
    }
    if (nextLayer != doc.model.num_layers)
        throw InputError(file, "plan.stages", "the stages cover " + std::to_string(nextLayer) + " layers but the model has "
                                                  + std::to_string(doc.model.num_layers));
    const long long perMicrobatch = static_cast<long long>(p.stages.front().dp) * p.stages.front().micro_batch_size;
    if (p.global_batch_size % perMicrobatch != 0)
        throw InputError(file, "plan.global_batch_size", "must be divisible by dp x micro_batch_size ("
                                                             + std::to_string(perMicrobatch) + "), got "
                                                             + std::to_string(p.global_batch_size));
    if (p.vpp > kMaxVpp)
        throw InputError(file, "plan.vpp", "expected at most " + std::to_string(kMaxVpp)
                                               + " virtual stages per pipeline rank, got " + std::to_string(p.vpp));
    // The interleaved schedule runs the micro-batches in groups of PP (Megatron-LM r0.8's
    // forward_backward_pipelining_with_interleaving; the simulator, core/cost/Schedule.cpp,
    // has the same rule), so with vpp > 1 their number is a multiple of the stage count.
    if (p.vpp > 1) {
        const long long microbatches = p.global_batch_size / perMicrobatch;
        const long long stages = static_cast<long long>(p.stages.size());
        if (microbatches % stages != 0)
            throw InputError(file, "plan.vpp", "interleaved 1F1B (vpp " + std::to_string(p.vpp) + ") needs the micro-batches ("
                                                   + std::to_string(microbatches) + " = global_batch_size / (dp x micro_batch_size)) "
                                                   "to be a multiple of the " + std::to_string(stages)
                                                   + " pipeline stages; use vpp 1 or a global batch of a multiple of "
                                                   + std::to_string(perMicrobatch * stages));
    }
    // Several entries may name one node (each with its reason); together they hold at most the
    // devices the stages leave free there.
    std::map<int, long long> idle;   // node id -> devices the entries so far declare unused
    for (std::size_t i = 0; i < p.unused.size(); ++i) {
        const UnusedDevices& u = p.unused[i];
        const std::string at = "plan.unused[" + std::to_string(i) + "]";
        const Node* node = doc.cluster.node(u.node);
        if (!node)
            throw InputError(file, at + ".node", "no node has id " + std::to_string(u.node));
        const auto it = used.find(u.node);
        const int taken = it == used.end() ? 0 : static_cast<int>(std::count_if(it->second.begin(), it->second.end(),
                                                                                       [](const std::pair<int, int>& t) { return t.first > 0; }));
        const long long before = idle[u.node];
        if (u.count > node->count - taken - before)
            throw InputError(file, at + ".count", "node " + std::to_string(u.node) + " has " + std::to_string(node->count - taken)
                                                      + " devices the stages do not use"
                                                      + (before > 0 ? ", " + std::to_string(before) + " of them in earlier entries" : "")
                                                      + ", got " + std::to_string(u.count));
        idle[u.node] = before + u.count;
    }
}

Warnings dropInvalidSearchPlans(PlanDocument& doc, const DeviceCatalog& catalog, const std::string& file)
{
    Warnings warnings;
    if (!doc.search)
        return warnings;
    // The plan's own check, on the document's model and cluster, with the plan's path in the
    // document in front of the error's.
    auto valid = [&](const Plan& plan, const std::string& where) {
        try {
            validatePlanDocument(PlanDocument{doc.model, doc.cluster, plan, std::nullopt, std::nullopt, {}}, catalog, file);
            return true;
        } catch (const InputError& e) {
            warnings.push_back(file + ": search." + where + "." + e.where() + ": " + e.detail()
                               + "; left out (the search's plans are kept for comparison only)");
            return false;
        }
    };
    SearchResult& s = *doc.search;
    std::vector<RankedPlan> kept;
    for (std::size_t i = 0; i < s.plans.size(); ++i)
        if (valid(s.plans[i].plan, "alternatives[" + std::to_string(i) + "]"))
            kept.push_back(std::move(s.plans[i]));
    s.plans = std::move(kept);
    if (s.uniform_baseline && !valid(s.uniform_baseline->plan, "baselines.uniform"))
        s.uniform_baseline.reset();
    if (s.metis_baseline && !valid(s.metis_baseline->plan, "baselines.metis_style"))
        s.metis_baseline.reset();
    if (s.current && !valid(s.current->plan, "baselines.current"))
        s.current.reset();
    return warnings;
}

void validateProfile(const Profile& profile, const DeviceCatalog& catalog, const std::string& fileName)
{
    auto canonical = [&](const std::string& name) {
        std::string key = catalog.canonicalName(name);
        std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return key;
    };
    std::map<std::tuple<std::string, int, int, long long>, std::size_t> compute;
    for (std::size_t i = 0; i < profile.compute.size(); ++i) {
        const ComputeEntry& e = profile.compute[i];
        const auto [at, fresh] = compute.emplace(std::tuple{canonical(e.device_type), e.tp, e.cp, e.tokens}, i);
        if (!fresh)
            throw InputError(fileName, "profile.compute[" + std::to_string(i) + "].device_type",
                             "\"" + e.device_type + "\" and compute[" + std::to_string(at->second) + "]'s \""
                                 + profile.compute[at->second].device_type
                                 + "\" name one device type, and both give this point (tp, cp, tokens); expected one entry per point");
    }
    std::map<std::tuple<int, int, int, double, std::string>, std::size_t> collectives;
    for (std::size_t i = 0; i < profile.collectives.size(); ++i) {
        const CollectiveEntry& e = profile.collectives[i];
        const auto [at, fresh] = collectives.emplace(
            std::tuple{static_cast<int>(e.primitive), static_cast<int>(e.link), e.group_size, e.bytes, canonical(e.device_type)}, i);
        if (!fresh)
            throw InputError(fileName, "profile.collectives[" + std::to_string(i) + "].device_type",
                             "collectives[" + std::to_string(at->second) + "] already gives this point for the same device type; "
                             "expected one entry per point");
    }
    std::map<std::string, std::size_t> memory;
    for (std::size_t i = 0; i < profile.memory.size(); ++i) {
        const auto [at, fresh] = memory.emplace(canonical(profile.memory[i].device_type), i);
        if (!fresh)
            throw InputError(fileName, "profile.memory[" + std::to_string(i) + "].device_type",
                             "memory[" + std::to_string(at->second) + "] already calibrates this device type; expected one entry per type");
    }
    std::map<std::string, std::string> efficiency;
    for (const auto& [type, value] : profile.device_efficiency) {
        const auto [at, fresh] = efficiency.emplace(canonical(type), type);
        if (!fresh)
            throw InputError(fileName, "profile.device_efficiency." + type,
                             "\"" + at->second + "\" names the same device type; expected one entry per type");
    }
    checkProfileLimits(profile, fileName);
}

Warnings profileWarnings(const Profile& p, const DeviceCatalog& catalog, const std::string& file)
{
    Warnings warnings;
    auto unknown = [&](const std::string& where, const std::string& type) {
        if (!catalog.find(type))
            warnings.push_back(file + ": profile." + where + ": unknown device type " + quotedValue(type) + "; the entry is not used");
    };
    for (std::size_t i = 0; i < p.compute.size(); ++i)
        unknown("compute[" + std::to_string(i) + "].device_type", p.compute[i].device_type);
    for (std::size_t i = 0; i < p.collectives.size(); ++i)
        if (!p.collectives[i].device_type.empty())
            unknown("collectives[" + std::to_string(i) + "].device_type", p.collectives[i].device_type);
    for (std::size_t i = 0; i < p.memory.size(); ++i)
        unknown("memory[" + std::to_string(i) + "].device_type", p.memory[i].device_type);
    for (const auto& [type, value] : p.device_efficiency)
        unknown("device_efficiency." + type, type);

    auto num = [](double v) { return numberForMessage(v); };
    // Each series in the order of its work; a time below the previous point's is named with
    // both points.
    auto falling = [&](const std::string& section, std::map<std::string, std::vector<std::size_t>>& series, auto work,
                       auto time, const std::string& workName, const std::string& field) {
        for (auto& [key, points] : series) {
            std::stable_sort(points.begin(), points.end(), [&](std::size_t a, std::size_t b) { return work(a) < work(b); });
            for (std::size_t k = 1; k < points.size(); ++k) {
                const std::size_t prev = points[k - 1], cur = points[k];
                if (time(cur) < time(prev))
                    warnings.push_back(file + ": profile." + section + "[" + std::to_string(cur) + "]." + field + ": "
                                       + num(time(cur)) + " s for " + num(work(cur)) + " " + workName
                                       + " is less than " + section + "[" + std::to_string(prev) + "]'s " + num(time(prev))
                                       + " s for " + num(work(prev)) + "; expected times that grow with the "
                                       + workName + " (a measurement to repeat)");
            }
        }
    };
    auto canonical = [&](const std::string& type) { return type.empty() ? type : catalog.canonicalName(type); };
    std::map<std::string, std::vector<std::size_t>> computeSeries, collectiveSeries;
    for (std::size_t i = 0; i < p.compute.size(); ++i) {
        const ComputeEntry& e = p.compute[i];
        computeSeries[canonical(e.device_type) + "/" + std::to_string(e.tp) + "/" + std::to_string(e.cp)].push_back(i);
    }
    for (const char* field : {"dense_layer_fwd_s", "dense_layer_bwd_s"}) {
        const bool fwd = std::string(field) == "dense_layer_fwd_s";
        falling("compute", computeSeries, [&](std::size_t i) { return static_cast<double>(p.compute[i].tokens); },
                [&](std::size_t i) { return fwd ? p.compute[i].dense_layer_fwd_s : p.compute[i].dense_layer_bwd_s; }, "tokens",
                field);
    }
    for (std::size_t i = 0; i < p.collectives.size(); ++i) {
        const CollectiveEntry& e = p.collectives[i];
        collectiveSeries[std::string(toString(e.primitive)) + "/" + std::to_string(static_cast<int>(e.link)) + "/"
                         + std::to_string(e.group_size) + "/" + canonical(e.device_type)]
            .push_back(i);
        if (e.bytes != std::floor(e.bytes))
            warnings.push_back(file + ": profile.collectives[" + std::to_string(i) + "].bytes: " + num(e.bytes)
                               + " is not a whole number of bytes");
    }
    falling("collectives", collectiveSeries, [&](std::size_t i) { return p.collectives[i].bytes; },
            [&](std::size_t i) { return p.collectives[i].time_s; }, "bytes", "time_s");
    if (p.compute.empty() && p.collectives.empty() && p.memory.empty() && p.device_efficiency.empty() && !p.router_imbalance)
        warnings.push_back(file + ": profile: no compute or collective table, memory calibration, device efficiency or "
                                  "router imbalance: every figure stays an analytic default");
    return warnings;
}

void validateProjectPlan(const Project& project, std::size_t index, const DeviceCatalog& catalog, const std::string& fileName)
{
    PlanDocument doc;
    doc.model = project.model;
    doc.cluster = project.cluster;
    doc.plan = project.plans.at(index).plan;
    try {
        validatePlanDocument(doc, catalog, fileName);
    } catch (const InputError& e) {
        // The project's own model and cluster are where the error is: their paths stand.
        const std::string& where = e.where();
        if (where.rfind("model", 0) == 0 || where.rfind("cluster", 0) == 0)
            throw;
        throw InputError(fileName, "plans[" + std::to_string(index) + "]." + where, e.detail());
    }
}

void checkReadsBack(const std::string& text, const std::string& file)
{
    if (text.size() > kMaxDocumentBytes)
        throw InputError(file, "", "the document would be " + std::to_string(text.size() >> 20) + " MiB, more than the "
                                       + std::to_string(kMaxDocumentBytes >> 20) + " MiB a hapmoe document may be read back at");
    JsonNode::parse(text, file);
}

std::string readTextFile(const std::string& path)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw InputError(path, "", "is a directory, expected a file");
    // Devices and pipes could be read forever; documents are regular files.
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
        throw InputError(path, "", "is not a regular file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path.empty() ? std::string("\"\"") : path, "",
                         path.empty() ? std::string("expected a file name, got an empty one")
                                      : std::string("cannot open file: ") + std::strerror(errno));
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxDocumentBytes)
        throw InputError(path, "", "file is too large (" + std::to_string(size >> 20) + " MiB; the limit is "
                                       + std::to_string(kMaxDocumentBytes >> 20) + " MiB)");
    std::ostringstream os;
    os << in.rdbuf();
    if (in.bad())
        throw InputError(path, "", "read error");
    return os.str();
}

namespace {

// The temporary files being written, for removeUnfinishedSaves(): a slot is taken with an
// atomic flag, so that a signal handler reads only whole paths.
struct UnfinishedSave {
    std::atomic<int> state{0};   // 0 free, 1 being filled, 2 a path to remove
    char path[4096] = {};
};
UnfinishedSave g_unfinished[8];

class TrackedTemporary {
public:
    explicit TrackedTemporary(const std::string& path)
    {
        if (path.size() >= sizeof(UnfinishedSave::path))
            return;
        for (UnfinishedSave& slot : g_unfinished) {
            int expected = 0;
            if (slot.state.compare_exchange_strong(expected, 1)) {
                std::memcpy(slot.path, path.c_str(), path.size() + 1);
                slot.state.store(2);
                m_slot = &slot;
                return;
            }
        }
    }
    ~TrackedTemporary() { done(); }
    TrackedTemporary(const TrackedTemporary&) = delete;
    TrackedTemporary& operator=(const TrackedTemporary&) = delete;
    // Renamed or removed: nothing left to clean up.
    void done()
    {
        if (m_slot)
            m_slot->state.store(0);
        m_slot = nullptr;
    }

private:
    UnfinishedSave* m_slot = nullptr;
};

} // namespace

void removeUnfinishedSaves() noexcept
{
    for (UnfinishedSave& slot : g_unfinished)
        if (slot.state.load() == 2)
            ::unlink(slot.path);
}

void saveFileAtomically(const std::string& path, std::string_view content)
{
    namespace fs = std::filesystem;
    if (path.empty())
        throw std::runtime_error("cannot save: expected a file name, got an empty path");
    // The rename would put a regular file in the place of a device, a pipe or a socket (as root,
    // even of /dev/null); a directory makes the rename fail below.
    std::error_code ec;
    if (const fs::file_status st = fs::status(path, ec);
        fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st))
        throw std::runtime_error("cannot save " + path + ": it is not a regular file");
    // A link to a file stays a link: the file it points to is the one replaced.
    fs::path target(path);
    if (fs::is_symlink(fs::symlink_status(target, ec)) && fs::is_regular_file(fs::status(target, ec))) {
        if (fs::path resolved = fs::canonical(target, ec); !ec)
            target = resolved;
    }
    fs::path dir = target.parent_path();
    if (dir.empty())
        dir = ".";
    std::string tmpl = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0)
        throw std::runtime_error("cannot save " + path + ": cannot create a temporary file in " + dir.string() + ": "
                                 + std::strerror(errno));
    TrackedTemporary tracked(tmpl);
    auto failWith = [&](const std::string& what) {
        const int err = errno;
        ::close(fd);
        ::unlink(tmpl.c_str());
        throw std::runtime_error("cannot save " + path + ": " + what + ": " + std::strerror(err));
    };
    const char* p = content.data();
    std::size_t left = content.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            failWith("write failed");
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    // Data on disk before the rename makes the new name visible, so a crash leaves either
    // the old file or the complete new one.
    if (::fsync(fd) != 0)
        failWith("fsync failed");
    // Keep the permissions of a file being replaced; new files get 0644 (mkstemp uses 0600).
    struct stat st {};
    const mode_t mode = ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
    ::fchmod(fd, mode);
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw std::runtime_error("cannot save " + path + ": close failed: " + std::strerror(err));
    }
    if (::rename(tmpl.c_str(), target.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmpl.c_str());
        throw std::runtime_error("cannot save " + path + ": rename failed: " + std::strerror(err));
    }
    tracked.done();
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

void saveFilesAllOrNothing(const std::vector<std::pair<std::string, std::string>>& files)
{
    struct Previous {
        std::string path;
        std::optional<std::string> content;   // nullopt: the file did not exist
    };
    std::vector<Previous> saved;
    try {
        for (const auto& [path, content] : files) {
            std::error_code ec;
            Previous prev{path, std::nullopt};
            if (std::filesystem::exists(path, ec))
                prev.content = readTextFile(path);
            saveFileAtomically(path, content);
            saved.push_back(std::move(prev));
        }
    } catch (...) {
        for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
            std::error_code ec;
            if (it->content) {
                try {
                    saveFileAtomically(it->path, *it->content);
                } catch (const std::exception&) {
                    // The new content stays; the error below is the one to report.
                }
            } else {
                std::filesystem::remove(it->path, ec);
            }
        }
        throw;
    }
}

} // namespace hapmoe
