#include "io/Migrations.h"

#include <functional>
#include <vector>

namespace hapmoe::io {

namespace {

struct Step {
    std::string_view format;
    int from;   // upgrades version `from` to `from + 1`
    std::string_view what;
    std::function<void(nlohmann::json&)> apply;
};

void moveKey(nlohmann::json& obj, const char* from, const char* to)
{
    if (!obj.is_object() || !obj.contains(from))
        return;
    if (!obj.contains(to))
        obj[to] = obj[from];
    obj.erase(from);
}

// hapmoe.model 1 -> 2: version 1 kept the training settings at the top level, with
// Megatron's --bf16/--fp16 switches as booleans; version 2 groups them in "training" with
// one "precision" string.
void modelV1toV2(nlohmann::json& doc)
{
    nlohmann::json training = doc.contains("training") && doc["training"].is_object() ? doc["training"]
                                                                                       : nlohmann::json::object();
    for (const char* key : {"micro_batch_size", "global_batch_size", "use_distributed_optimizer",
                            "router_imbalance", "imbalance_weight"}) {
        if (doc.contains(key)) {
            training[key] = doc[key];
            doc.erase(key);
        }
    }
    const bool fp16 = doc.contains("fp16") && doc["fp16"].is_boolean() && doc["fp16"].get<bool>();
    if (doc.contains("bf16") || doc.contains("fp16"))
        training["precision"] = fp16 ? "fp16" : "bf16";
    doc.erase("bf16");
    doc.erase("fp16");
    if (!training.empty())
        doc["training"] = training;
}

// hapmoe.cluster 1 -> 2: version 1 called a node's device count "gpus" and its device type
// "type", and gave link bandwidth in Gb/s as "bandwidth_gbit"; version 2 uses "count",
// "device_type" and GB/s ("bandwidth_gbytes_per_s") so links and catalog share a unit.
void clusterV1toV2(nlohmann::json& doc)
{
    if (doc.contains("nodes") && doc["nodes"].is_array()) {
        for (auto& node : doc["nodes"]) {
            moveKey(node, "gpus", "count");
            moveKey(node, "type", "device_type");
        }
    }
    if (doc.contains("links") && doc["links"].is_array()) {
        for (auto& link : doc["links"]) {
            if (link.is_object() && link.contains("bandwidth_gbit") && !link.contains("bandwidth_gbytes_per_s")) {
                const auto& v = link["bandwidth_gbit"];
                // A malformed value is carried over unchanged so the reader reports it.
                link["bandwidth_gbytes_per_s"] = v.is_number() ? nlohmann::json(v.get<double>() / 8.0) : v;
                link.erase("bandwidth_gbit");
            }
        }
    }
}

const std::vector<Step>& chain()
{
    static const std::vector<Step> steps = {
        {"hapmoe.model", 1, "training settings moved into \"training\"", modelV1toV2},
        {"hapmoe.cluster", 1, "nodes[].gpus/type renamed count/device_type, link bandwidth converted from Gb/s to GB/s",
         clusterV1toV2},
    };
    return steps;
}

} // namespace

int Migrations::currentVersion(std::string_view format)
{
    if (format == "hapmoe.model" || format == "hapmoe.cluster")
        return 2;
    if (format == "hapmoe.profile" || format == "hapmoe.plan" || format == "hapmoe.project" || format == "hapmoe.devices")
        return 1;
    return 0;
}

void Migrations::upgrade(nlohmann::json& doc, std::string_view format, const JsonContext& context)
{
    const JsonNode root(doc, "", context);
    root.requireObject();
    if (!root.has("format"))
        root.fail("format", "missing required key (expected \"" + std::string(format) + "\")");
    const std::string actual = root.reqString("format");
    if (actual != format)
        root.fail("format", "expected \"" + std::string(format) + "\", got \"" + actual + "\"");
    const int current = currentVersion(format);
    const int version = root.reqInt("version", 1);
    if (version > current)
        root.fail("version", "this is " + std::string(format) + " version " + std::to_string(version)
                                 + ", written by a newer HAPMoE Studio; this version reads up to "
                                 + std::to_string(current));
    for (int v = version; v < current; ++v) {
        for (const auto& step : chain()) {
            if (step.format == format && step.from == v) {
                step.apply(doc);
                root.warn("migrated from " + std::string(format) + " version " + std::to_string(v) + " to "
                          + std::to_string(v + 1) + " (" + std::string(step.what) + ")");
            }
        }
    }
    doc["version"] = current;
}

} // namespace hapmoe::io
