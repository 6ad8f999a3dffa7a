#include "io/Migrations.h"

#include "hardware/DeviceCatalog.h"
#include "util/Strings.h"

#include <functional>
#include <vector>

namespace hapmoe::io {

namespace {

// What a step works with: the document, where errors go, and the list of moved keys.
struct StepContext {
    const JsonContext& context;
    std::string root;   // the readers' path prefix for this format ("model", "cluster")
    MovedKeys& moved;

    [[noreturn]] void fail(const std::string& path, const std::string& message) const
    {
        throw InputError(context.file, root + "." + path, message);
    }
};

struct Step {
    std::string_view format;
    int from;   // upgrades version `from` to `from + 1`
    std::string_view what;
    std::function<void(nlohmann::json&, const StepContext&)> apply;
};

// A key whose value is null counts as missing (docs/formats.md): a null under the old name is
// dropped, and one under the new name gives way to the old name's value.
bool given(const nlohmann::json& obj, const char* key) { return obj.contains(key) && !obj[key].is_null(); }

// Drops obj[key] when it is null; returns whether a value is left.
bool keepGiven(nlohmann::json& obj, const char* key)
{
    if (obj.contains(key) && obj[key].is_null())
        obj.erase(key);
    return obj.contains(key);
}

// Renames obj[from] to obj[to]; at is the object's path ("nodes[3]"), "" for the document.
void moveKey(nlohmann::json& obj, const std::string& at, const char* from, const char* to, const StepContext& step)
{
    if (!obj.is_object() || !keepGiven(obj, from))
        return;
    const std::string prefix = at.empty() ? std::string() : at + ".";
    if (given(obj, to))
        step.fail(prefix + from, std::string("given together with \"") + to + "\", its version-2 name; keep one");
    obj[to] = std::move(obj[from]);
    obj.erase(from);
    step.moved.push_back({prefix + to, prefix + from, ""});
}

// hapmoe.model 1 -> 2: version 1 kept the training settings at the top level, with
// Megatron's --bf16/--fp16 switches as booleans; version 2 groups them in "training" with
// one "precision" string.
void modelV1toV2(nlohmann::json& doc, const StepContext& step)
{
    if (doc.contains("training") && !doc["training"].is_object())
        return;   // the reader reports "model.training: expected an object"
    nlohmann::json training = doc.contains("training") ? doc["training"] : nlohmann::json::object();
    for (const char* key : {"micro_batch_size", "global_batch_size", "use_distributed_optimizer",
                            "router_imbalance", "imbalance_weight"}) {
        if (!keepGiven(doc, key))
            continue;
        if (given(training, key))
            step.fail(key, std::string("given at the top level (version 1) and as \"training.") + key + "\"; keep one");
        training[key] = std::move(doc[key]);
        doc.erase(key);
        step.moved.push_back({std::string("training.") + key, key, ""});
    }
    const char* switchKey = nullptr;   // the switch the precision comes from (fp16 when both)
    for (const char* key : {"bf16", "fp16"}) {
        if (!given(doc, key))
            continue;
        if (!doc[key].is_boolean())
            step.fail(key, "expected true or false, got " + JsonNode::describe(doc[key]));
        switchKey = key;
    }
    if (switchKey) {
        if (given(training, "precision"))
            step.fail(switchKey, "given together with \"training.precision\", its version-2 form; keep one");
        const bool fp16 = doc.contains("fp16") && doc["fp16"].is_boolean() && doc["fp16"].get<bool>();
        training["precision"] = fp16 ? "fp16" : "bf16";
        step.moved.push_back({"training.precision", switchKey, "from the bf16/fp16 switches"});
    }
    doc.erase("bf16");
    doc.erase("fp16");
    if (!training.empty())
        doc["training"] = training;
}

// hapmoe.cluster 1 -> 2: version 1 called a node's device count "gpus" and its device type
// "type", and gave link bandwidth in Gb/s as "bandwidth_gbit"; version 2 uses "count",
// "device_type" and GB/s ("bandwidth_gbytes_per_s") so links and catalog share a unit.
void clusterV1toV2(nlohmann::json& doc, const StepContext& step)
{
    if (doc.contains("nodes") && doc["nodes"].is_array()) {
        for (std::size_t i = 0; i < doc["nodes"].size(); ++i) {
            const std::string at = "nodes[" + std::to_string(i) + "]";
            moveKey(doc["nodes"][i], at, "gpus", "count", step);
            moveKey(doc["nodes"][i], at, "type", "device_type", step);
        }
    }
    if (doc.contains("links") && doc["links"].is_array()) {
        for (std::size_t i = 0; i < doc["links"].size(); ++i) {
            auto& link = doc["links"][i];
            if (!link.is_object() || !keepGiven(link, "bandwidth_gbit"))
                continue;
            const std::string at = "links[" + std::to_string(i) + "]";
            if (given(link, "bandwidth_gbytes_per_s"))
                step.fail(at + ".bandwidth_gbit", "given together with \"bandwidth_gbytes_per_s\", its version-2 "
                                                 "form in GB/s; keep one");
            const auto& v = link["bandwidth_gbit"];
            // A rate outside what version 2 takes for a link (kMinRate to kMaxLinkRate GB/s) is
            // refused here, in the unit it was written in and quoted as written.
            if (v.is_number() && v.get<double>() > 0.0 && !(v.get<double>() / 8.0 >= kMinRate && v.get<double>() / 8.0 <= kMaxLinkRate))
                step.fail(at + ".bandwidth_gbit", "expected a link bandwidth from " + valueForMessage(8 * kMinRate) + " to "
                                                      + valueForMessage(8 * kMaxLinkRate) + " Gb/s, got " + valueForMessage(v.get<double>()));
            // Only a valid rate is converted; anything else is carried over as written, so the
            // reader's message quotes the user's value.
            const bool rate = v.is_number() && v.get<double>() > 0.0;
            link["bandwidth_gbytes_per_s"] = rate ? nlohmann::json(v.get<double>() / 8.0) : v;
            link.erase("bandwidth_gbit");
            step.moved.push_back({at + ".bandwidth_gbytes_per_s", at + ".bandwidth_gbit",
                                  rate ? "in Gb/s, read as GB/s = Gb/s / 8" : ""});
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

// "model.training.micro_batch_size" is `path` under root "model" and relative path
// "training.micro_batch_size", or a child of it ("...[2]", "....x").
bool startsWithPath(std::string_view where, std::string_view prefix)
{
    if (where.size() < prefix.size() || where.substr(0, prefix.size()) != prefix)
        return false;
    return where.size() == prefix.size() || where[prefix.size()] == '.' || where[prefix.size()] == '[';
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

void Migrations::upgrade(nlohmann::json& doc, std::string_view format, const JsonContext& context, MovedKeys* moved)
{
    const JsonNode root(doc, "", context);
    root.requireObject();
    if (!root.has("format"))
        root.fail("format", "missing required key (expected \"" + std::string(format) + "\")");
    const std::string actual = root.reqString("format");
    if (actual != format)
        root.fail("format", "expected \"" + std::string(format) + "\", got " + JsonNode::describe(nlohmann::json(actual)));
    const int current = currentVersion(format);
    const int version = root.reqInt("version", 1);
    if (version > current)
        root.fail("version", "this is " + std::string(format) + " version " + std::to_string(version)
                                 + ", written by a newer HAPMoE Studio; this version reads up to "
                                 + std::to_string(current));
    MovedKeys unused;
    const std::string_view name = format.substr(format.find('.') + 1);   // "hapmoe.model" -> "model"
    const StepContext stepContext{context, std::string(name), moved ? *moved : unused};
    for (int v = version; v < current; ++v) {
        for (const auto& step : chain()) {
            if (step.format == format && step.from == v) {
                step.apply(doc, stepContext);
                root.warn("migrated from " + std::string(format) + " version " + std::to_string(v) + " to "
                          + std::to_string(v + 1) + " (" + std::string(step.what) + ")");
            }
        }
    }
    doc["version"] = current;
}

InputError Migrations::restate(const InputError& error, const MovedKeys& moved, std::string_view root)
{
    const std::string prefix = root.empty() ? std::string() : std::string(root) + ".";
    for (const auto& key : moved) {
        const std::string now = prefix + key.now;
        if (!startsWithPath(error.where(), now))
            continue;
        const std::string where = prefix + key.was + error.where().substr(now.size());
        const std::string note = key.note.empty() ? std::string() : " (" + key.note + ")";
        return InputError(error.file(), where, error.detail() + note);
    }
    return error;
}

} // namespace hapmoe::io
