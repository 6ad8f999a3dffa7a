#include "hardware/DeviceCatalog.h"

#include "io/JsonNode.h"
#include "util/EmbeddedResources.h"
#include "util/Strings.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace hapmoe {

namespace {

constexpr int kDevicesVersion = 1;

bool matches(const DeviceType& t, const std::string& norm)
{
    if (io::JsonNode::normalizedName(t.name) == norm)
        return true;
    return std::any_of(t.aliases.begin(), t.aliases.end(),
                       [&](const std::string& a) { return io::JsonNode::normalizedName(a) == norm; });
}

// A name, alias, vendor or library is one line of text; a type's name and aliases are also
// written in cluster shorthands ("H800:2x8,910B:1x8"), where ':' and ',' separate them.
std::string textField(const io::JsonNode& n, const std::string& key, const std::string& value, bool inShorthand)
{
    for (std::size_t i = 0; i < value.size(); ++i)
        if (controlLength(value, i) > 0)
            n.fail(key, "expected one line of printable text, got the control character " + controlName(value, i) + " at character "
                            + std::to_string(characterAt(value, i)));
    if (inShorthand && value.find_first_of(":,") != std::string::npos)
        n.fail(key, "expected a name without ':' or ',' (they separate the parts of a cluster shorthand such as "
                    "\"H800:2x8,910B:1x8\"), got " + quotedValue(value));
    return value;
}

DeviceType readDevice(const io::JsonNode& n)
{
    n.requireObject();
    n.warnUnknownKeys({"name", "aliases", "vendor", "bf16_tflops", "fp8_tflops", "memory_gib", "hbm_gbps", "hbm_efficiency", "intra_link_kind",
                       "intra_node_gbps", "inter_node_gbps", "collective_library", "compute_capability",
                       "default_efficiency", "default_devices_per_node", "sources", "notes"});
    DeviceType t;
    t.name = textField(n, "name", n.reqString("name"), true);
    int aliasIndex = 0;
    for (const auto& a : n.array("aliases")) {
        if (!a.value().is_string() || a.value().get<std::string>().empty())
            a.failHere("expected a non-empty string, got " + io::JsonNode::describe(a.value()));
        t.aliases.push_back(textField(n, "aliases[" + std::to_string(aliasIndex++) + "]", a.value().get<std::string>(), true));
    }
    t.vendor = textField(n, "vendor", n.reqString("vendor"), false);
    // Upper bounds a million times above today's devices (B200: 2,250 TFLOP/s, 192 GB, 8,000
    // GB/s): a larger figure is a typing error, and would make every time and capacity infinite.
    // And lower bounds a million times below the slowest (kMinRate).
    constexpr double kMax = 1e6, kMin = kMinRate;
    t.bf16_tflops = n.reqDouble("bf16_tflops", kMin, false, kMax * 1000);
    // Optional: 0, the default, is a type without FP8 tensor cores (FP8 training leaves it out).
    t.fp8_tflops = n.optDouble("fp8_tflops", 0, 0, false, kMax * 1000);
    if (t.fp8_tflops > 0 && t.fp8_tflops < kMin)
        n.fail("fp8_tflops", "expected 0 (no FP8) or at least " + numberForMessage(kMin) + ", got " + valueForMessage(t.fp8_tflops));
    t.memory_gib = n.reqDouble("memory_gib", 0, true, kMax);
    t.hbm_gbps = n.reqDouble("hbm_gbps", kMin, false, kMax * 10);
    // Optional: 0, the default, is "not measured" (the cost model's default fraction).
    t.hbm_efficiency = n.optDouble("hbm_efficiency", 0, 0, false, 1.0);
    if (t.hbm_efficiency > 0 && t.hbm_efficiency < kMin)
        n.fail("hbm_efficiency", "expected 0 (not measured) or a fraction of at least " + numberForMessage(kMin) + ", got "
                                     + numberForMessage(t.hbm_efficiency));
    t.intra_link_kind = n.optString("intra_link_kind");
    t.intra_node_gbps = n.reqDouble("intra_node_gbps", kMin, false, kMax * 10);
    t.inter_node_gbps = n.reqDouble("inter_node_gbps", kMin, false, kMax * 10);
    t.collective_library = textField(n, "collective_library", n.reqString("collective_library"), false);
    t.compute_capability = n.optDouble("compute_capability", 0, 0);
    t.default_efficiency = n.optDouble("default_efficiency", 0.5, kMin, false, 1.0);
    // At most the devices a node may have (the shorthand "TYPE:N" takes this many per node).
    t.default_devices_per_node = n.optInt("default_devices_per_node", 8, 1, 4096);
    if (auto s = n.optObject("sources")) {
        for (auto it = s->value().begin(); it != s->value().end(); ++it) {
            if (!it->is_string())
                s->fail(it.key(), "expected a string, got " + io::JsonNode::describe(*it));
            t.sources[it.key()] = it->get<std::string>();
        }
    }
    t.notes = n.optString("notes");
    return t;
}

} // namespace

const DeviceCatalog& DeviceCatalog::builtin()
{
    static const DeviceCatalog catalog = [] {
        for (const auto& [path, content] : resources::embeddedResources()) {
            if (path == "devices.json")
                return fromJson(content, "resources/devices.json");
        }
        throw std::logic_error("built-in device catalog resources/devices.json is not embedded");
    }();
    return catalog;
}

DeviceCatalog DeviceCatalog::fromJson(std::string_view text, const std::string& fileName, Warnings* warnings)
{
    const nlohmann::json doc = io::JsonNode::parse(text, fileName);
    const io::JsonContext ctx{fileName, warnings};
    const io::JsonNode root(doc, "", ctx);
    root.requireObject();
    const std::string format = root.reqString("format");
    if (format != "hapmoe.devices")
        root.fail("format", "expected \"hapmoe.devices\", got " + quotedValue(format));
    const int version = root.reqInt("version", 1);
    if (version > kDevicesVersion)
        root.fail("version", "this file is hapmoe.devices version " + std::to_string(version)
                                 + "; this program reads up to version " + std::to_string(kDevicesVersion)
                                 + " (a newer HAPMoE Studio wrote it)");
    root.warnUnknownKeys({"format", "version", "description", "source", "devices"});

    DeviceCatalog catalog;
    std::map<std::string, std::string> seen;   // normalized name or alias -> path
    for (const auto& d : root.array("devices", true)) {
        DeviceType t = readDevice(d);
        std::vector<std::string> names{t.name};
        names.insert(names.end(), t.aliases.begin(), t.aliases.end());
        for (const auto& nm : names) {
            const std::string norm = io::JsonNode::normalizedName(nm);
            auto [it, inserted] = seen.emplace(norm, d.path());
            if (!inserted && it->second != d.path())
                d.failHere("name or alias \"" + nm + "\" is already used by " + it->second);
        }
        catalog.m_types.push_back(std::move(t));
    }
    return catalog;
}

std::string DeviceCatalog::toJson() const
{
    nlohmann::json devices = nlohmann::json::array();
    for (const DeviceType& t : m_types) {
        nlohmann::json d;
        d["name"] = t.name;
        d["aliases"] = t.aliases;
        d["vendor"] = t.vendor;
        d["bf16_tflops"] = t.bf16_tflops;
        d["fp8_tflops"] = t.fp8_tflops;
        d["memory_gib"] = t.memory_gib;
        d["hbm_gbps"] = t.hbm_gbps;
        if (t.hbm_efficiency > 0)
            d["hbm_efficiency"] = t.hbm_efficiency;
        if (!t.intra_link_kind.empty())
            d["intra_link_kind"] = t.intra_link_kind;
        d["intra_node_gbps"] = t.intra_node_gbps;
        d["inter_node_gbps"] = t.inter_node_gbps;
        d["collective_library"] = t.collective_library;
        if (t.compute_capability > 0)
            d["compute_capability"] = t.compute_capability;
        d["default_efficiency"] = t.default_efficiency;
        d["default_devices_per_node"] = t.default_devices_per_node;
        if (!t.sources.empty())
            d["sources"] = t.sources;
        if (!t.notes.empty())
            d["notes"] = t.notes;
        devices.push_back(std::move(d));
    }
    const nlohmann::json doc = {{"format", "hapmoe.devices"}, {"version", kDevicesVersion}, {"devices", std::move(devices)}};
    return doc.dump(2) + "\n";
}

void DeviceCatalog::merge(const DeviceCatalog& overrides, const std::string& fileName)
{
    // Into a copy, so that a refused override leaves this catalog as it was.
    std::vector<DeviceType> types = m_types;
    for (std::size_t i = 0; i < overrides.m_types.size(); ++i) {
        const DeviceType& t = overrides.m_types[i];
        // Replace the type the override names by its name (in any case and spelling that
        // normalizedName takes as the same); otherwise append. A name that is another type's
        // alias would replace that type under another name: refused.
        const std::string name = io::JsonNode::normalizedName(t.name);
        auto target = std::find_if(types.begin(), types.end(),
                                   [&](const DeviceType& d) { return io::JsonNode::normalizedName(d.name) == name; });
        if (target == types.end())
            if (auto aliased = std::find_if(types.begin(), types.end(), [&](const DeviceType& d) { return matches(d, name); });
                aliased != types.end())
                throw InputError(fileName, "devices[" + std::to_string(i) + "].name",
                                 "\"" + t.name + "\" is an alias of " + aliased->name + "; a type replaces another only by its name (\""
                                     + aliased->name + "\"), and a new type needs a name no type has");
        for (const auto& alias : t.aliases) {
            const std::string norm = io::JsonNode::normalizedName(alias);
            const auto other = std::find_if(types.begin(), types.end(), [&](const DeviceType& d) { return matches(d, norm); });
            if (other != types.end() && other != target)
                throw InputError(fileName, "devices[" + std::to_string(i) + "].aliases",
                                 "\"" + alias + "\" already names " + other->name + "; a type replaces another only by its name"
                                     + (target == types.end() ? std::string() : " (this one replaces " + target->name + ")"));
        }
        if (target != types.end()) {
            // The catalog's spelling stays ("h800" replaces H800 and is still called H800), and
            // so does its measured HBM fraction where the entry gives none (files written
            // before hbm_efficiency existed): the same memory, replaced figures aside.
            const std::string kept = target->name;
            const double hbmEfficiency = target->hbm_efficiency;
            *target = t;
            target->name = kept;
            if (target->hbm_efficiency <= 0)
                target->hbm_efficiency = hbmEfficiency;
        } else
            types.push_back(t);
    }
    m_types = std::move(types);
}

const DeviceType* DeviceCatalog::find(std::string_view nameOrAlias) const
{
    const std::string norm = io::JsonNode::normalizedName(nameOrAlias);
    if (norm.empty())
        return nullptr;
    // Canonical names win over aliases (an override may reuse another type's alias).
    for (const auto& t : m_types)
        if (io::JsonNode::normalizedName(t.name) == norm)
            return &t;
    for (const auto& t : m_types)
        if (matches(t, norm))
            return &t;
    return nullptr;
}

std::string DeviceCatalog::canonicalName(const std::string& nameOrAlias) const
{
    if (const DeviceType* t = find(nameOrAlias))
        return t->name;
    return nameOrAlias;
}

bool DeviceCatalog::sameType(const std::string& a, const std::string& b) const
{
    std::string x = canonicalName(a), y = canonicalName(b);
    for (std::string* s : {&x, &y})
        std::transform(s->begin(), s->end(), s->begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return x == y;
}

const DeviceType& DeviceCatalog::get(std::string_view nameOrAlias, const std::string& where) const
{
    if (const auto* t = find(nameOrAlias))
        return *t;
    std::string known;
    for (const auto& t : m_types)
        known += (known.empty() ? "" : ", ") + t.name;
    throw InputError("", where, "unknown device type \"" + std::string(nameOrAlias) + "\"; known: " + known);
}

} // namespace hapmoe
