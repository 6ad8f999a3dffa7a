#include "io/Presets.h"

#include "io/Documents.h"
#include "io/JsonNode.h"
#include "util/EmbeddedResources.h"
#include "util/Strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace hapmoe {

namespace {

// Latency of one hop of the default fabric. Two hops per side make a node-to-node path
// through the spine 20 us, the InfiniBand network latency Calculon uses for its validated
// A100 system (calculon-ai/calculon systems/a100_80g.json, see
// ../shared/reference/published-runs.md section 1.5).
constexpr double kNodeLeafLatencyUs = 5.0;
constexpr double kLeafSpineLatencyUs = 5.0;

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool endsWith(std::string_view s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Presets are listed in this order (the paper's models and Table 1 first); others follow
// by name.
int presetRank(const std::string& name)
{
    static const std::vector<std::string> order = {
        "Mixtral-S", "Mixtral-L", "LLaMA-2-7B", "LLaMA-2-13B", "Mixtral-8x7B", "Mixtral-8x22B", "Qwen3-30B-A3B",
        "Qwen3-235B-A22B", "DeepSeek-V2-Lite", "Moonlight-16B-A3B", "DeepSeek-V3", "GPT-22B", "GPT-175B", "GPT-530B", "GPT-1T", "Megatron-GPT-1.7B", "Megatron-GPT-7.1B",
        "Megatron-GPT-16B", "Megatron-GPT-32B", "Megatron-GPT-70B", "Megatron-GPT-119B", "Megatron-GPT-177B",
        "Megatron-GPT-314B", "Megatron-GPT-462B",
        "16-1-h", "16-2-h", "16-3-h", "16-1", "16-2", "16-3", "24-1", "24-2", "24-3", "32-1", "32-2", "32-3"};
    const auto it = std::find(order.begin(), order.end(), name);
    return it == order.end() ? static_cast<int>(order.size()) : static_cast<int>(it - order.begin());
}

template <typename T>
void sortPresets(std::vector<T>& items)
{
    std::stable_sort(items.begin(), items.end(), [](const T& a, const T& b) {
        const int ra = presetRank(a.name), rb = presetRank(b.name);
        if (ra != rb)
            return ra < rb;
        if constexpr (std::is_same_v<T, Cluster>) {
            if (a.totalDevices() != b.totalDevices())
                return a.totalDevices() < b.totalDevices();
        }
        return a.name < b.name;
    });
}

const std::vector<ModelSpec>& models()
{
    static const std::vector<ModelSpec> all = [] {
        std::vector<ModelSpec> out;
        for (const auto& [path, content] : resources::embeddedResources()) {
            if (startsWith(path, "models/") && endsWith(path, ".json")) {
                const std::string file = "resources/" + std::string(path);
                out.push_back(readValidModel(content, file));
            }
        }
        sortPresets(out);
        return out;
    }();
    return all;
}

const std::vector<Cluster>& clusters()
{
    static const std::vector<Cluster> all = [] {
        std::vector<Cluster> out;
        for (const auto& [path, content] : resources::embeddedResources()) {
            if (startsWith(path, "clusters/") && endsWith(path, ".json")) {
                const std::string file = "resources/" + std::string(path);
                out.push_back(readValidCluster(content, file, DeviceCatalog::builtin()));
            }
        }
        sortPresets(out);
        return out;
    }();
    return all;
}

// Exact case-insensitive match first; then ignoring '-', '_' and spaces if that is unique.
template <typename T>
const T* findByName(const std::vector<T>& items, std::string_view name)
{
    const std::string l = lower(name);
    for (const auto& it : items)
        if (lower(it.name) == l)
            return &it;
    const std::string norm = io::JsonNode::normalizedName(name);
    const T* found = nullptr;
    for (const auto& it : items) {
        if (io::JsonNode::normalizedName(it.name) == norm) {
            if (found)
                return nullptr;
            found = &it;
        }
    }
    return found;
}

std::string composition(const Cluster& c)
{
    // "32 devices: H800 2x8 + 910B-376T 2x8", nodes of equal type and size grouped in order.
    std::vector<std::pair<std::string, std::pair<int, int>>> groups;   // type -> (nodes, per node)
    for (const auto& n : c.nodes) {
        if (!groups.empty() && groups.back().first == n.device_type && groups.back().second.second == n.count)
            ++groups.back().second.first;
        else
            groups.push_back({n.device_type, {1, n.count}});
    }
    std::string s = std::to_string(c.totalDevices()) + " devices: ";
    for (std::size_t i = 0; i < groups.size(); ++i)
        s += (i ? " + " : "") + groups[i].first + " " + std::to_string(groups[i].second.first) + "x"
            + std::to_string(groups[i].second.second);
    return s;
}

std::string modelSummary(const ModelSpec& m)
{
    std::ostringstream os;
    os << m.num_layers << " layers, hidden " << m.hidden_size << ", heads " << m.num_attention_heads;
    if (m.num_query_groups > 0 && m.num_query_groups != m.num_attention_heads)
        os << " (GQA " << m.num_query_groups << ")";
    if (m.isMoe())
        os << ", " << m.num_experts << " experts top-" << m.moe_router_topk << " (expert FFN " << m.expertFfn() << ")";
    else
        os << ", dense FFN " << m.ffn_hidden_size;
    os << ", seq " << m.seq_length;
    return os.str();
}

bool parsePositive(std::string_view s, int& out)
{
    if (s.empty())
        return false;
    const auto* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, out);
    return ec == std::errc() && p == end && out > 0;
}

std::string trim(std::string_view s)
{
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos)
        return {};
    const auto e = s.find_last_not_of(" \t");
    return std::string(s.substr(b, e - b + 1));
}

std::string presetNames(const std::vector<PresetInfo>& list)
{
    std::string s;
    for (const auto& p : list)
        s += (s.empty() ? "" : ", ") + p.name;
    return s;
}

} // namespace

std::vector<PresetInfo> modelPresets()
{
    std::vector<PresetInfo> out;
    for (const auto& m : models())
        out.push_back({m.name, modelSummary(m), m.source});
    return out;
}

std::vector<PresetInfo> clusterPresets()
{
    std::vector<PresetInfo> out;
    for (const auto& c : clusters())
        out.push_back({c.name, composition(c), c.source});
    return out;
}

const ModelSpec* findModelPreset(std::string_view name) { return findByName(models(), name); }

const Cluster* findClusterPreset(std::string_view name) { return findByName(clusters(), name); }

Cluster clusterFromShorthand(std::string_view shorthand, const DeviceCatalog& catalog)
{
    const std::string where = "cluster shorthand \"" + std::string(shorthand) + "\"";
    struct Part {
        const DeviceType* type;
        int nodes;
        int perNode;
    };
    std::vector<Part> parts;
    std::size_t pos = 0;
    int item = 0;
    long long totalNodes = 0, totalDevices = 0;
    while (pos <= shorthand.size()) {
        const auto comma = shorthand.find(',', pos);
        const std::string part = trim(shorthand.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
        pos = comma == std::string_view::npos ? shorthand.size() + 1 : comma + 1;
        ++item;
        const std::string itemWhere = where + ", item " + std::to_string(item);
        const auto colon = part.rfind(':');
        if (part.empty() || colon == std::string::npos || colon == 0)
            throw InputError("", itemWhere, "expected TYPE:NODESxDEVICES_PER_NODE such as \"H800:2x8\", got " + quotedValue(part));
        const std::string typeName = trim(std::string_view(part).substr(0, colon));
        const std::string shape = lower(trim(std::string_view(part).substr(colon + 1)));
        const DeviceType& type = catalog.get(typeName, itemWhere);
        int nodes = 0;
        int per = type.default_devices_per_node;
        const auto x = shape.find('x');
        const bool ok = x == std::string::npos ? parsePositive(shape, nodes)
                                               : parsePositive(std::string_view(shape).substr(0, x), nodes)
                && parsePositive(std::string_view(shape).substr(x + 1), per);
        if (!ok)
            throw InputError("", itemWhere, "expected NODESxDEVICES_PER_NODE with positive integers (\"2x8\", or \"2\" for "
                                                + std::to_string(type.default_devices_per_node) + " per node), got " + quotedValue(shape));
        if (per > kMaxDevicesPerNode)
            throw InputError("", itemWhere, "at most " + std::to_string(kMaxDevicesPerNode) + " devices per node, got " + std::to_string(per));
        totalNodes += nodes;
        if (totalNodes > kMaxNodes)
            throw InputError("", itemWhere, "at most " + std::to_string(kMaxNodes) + " nodes in a cluster");
        totalDevices += static_cast<long long>(nodes) * per;
        if (totalDevices > kMaxDevices)
            throw InputError("", itemWhere, "at most 1,048,576 devices in a cluster, got " + std::to_string(totalDevices) + " so far");
        parts.push_back({&type, nodes, per});
    }
    // The links built below from the catalog (a node's to its leaf, per x its NIC figure, once
    // the cluster has more than one node; a leaf's to the spine, its nodes' together, once it
    // has more than one type) must be ones a cluster file may hold, or a plan written for the
    // cluster would not read back.
    for (std::size_t ti = 0; ti < parts.size(); ++ti) {
        const Part& p = parts[ti];
        const double nodeLink = static_cast<double>(p.perNode) * p.type->inter_node_gbps;
        const double leafLink = nodeLink * p.nodes;
        const bool nodeTooFast = totalNodes > 1 && nodeLink > kMaxLinkRate;
        if (nodeTooFast || (parts.size() > 1 && leafLink > kMaxLinkRate))
            throw InputError("", where + ", item " + std::to_string(ti + 1),
                             "device type " + quotedValue(p.type->name) + "'s inter_node_gbps " + valueForMessage(p.type->inter_node_gbps)
                                 + " GB/s x " + std::to_string(nodeTooFast ? p.perNode : p.perNode * p.nodes) + " devices gives "
                                 + (nodeTooFast ? "a node's link to its switch " : "its switch's link to the spine ")
                                 + valueForMessage(nodeTooFast ? nodeLink : leafLink) + " GB/s; a cluster's link may have at most 1e+09 GB/s");
    }

    Cluster c;
    c.name = std::string(shorthand);
    c.description = "Built from the shorthand \"" + std::string(shorthand) + "\"";
    c.source = "shorthand; interconnect from the device catalog";
    const int firstLeaf = static_cast<int>(totalNodes);
    const int spine = firstLeaf + static_cast<int>(parts.size());
    // Switches only where they join something: a leaf per type once the cluster has more
    // than one node, a spine over several leaves. One node alone has no network to draw.
    const bool withLeaves = totalNodes > 1, withSpine = parts.size() > 1;
    // Each type's nodes form a block of rows under its leaf switch, blocks side by side, with
    // the column count that draws the cluster about 4:3 (layoutColumns).
    constexpr double kColumn = 140.0, kRow = 120.0, kBlockGap = 100.0, kNodesTop = 260.0;
    std::vector<int> blockSizes;
    for (const Part& p : parts)
        blockSizes.push_back(p.nodes);
    const int columns = layoutColumns(blockSizes, kColumn, kRow, kNodesTop, kBlockGap);
    double blockX = 0;
    int id = 0;
    for (std::size_t ti = 0; ti < parts.size(); ++ti) {
        const Part& p = parts[ti];
        const int leaf = firstLeaf + static_cast<int>(ti);
        const double uplink = p.perNode * p.type->inter_node_gbps;
        const int cols = std::min(p.nodes, columns);
        for (int k = 0; k < p.nodes; ++k) {
            Node n;
            n.id = id;
            n.host = "node" + std::to_string(id);
            n.device_type = p.type->name;
            n.count = p.perNode;
            n.x = blockX + (k % cols) * kColumn;
            n.y = kNodesTop + (k / cols) * kRow;
            c.nodes.push_back(n);
            if (withLeaves)
                c.links.push_back({id, leaf, uplink, kNodeLeafLatencyUs});
            ++id;
        }
        if (withLeaves)
            c.switches.push_back({leaf, "leaf-" + std::to_string(ti) + " (" + p.type->name + ")", blockX + (cols - 1) * kColumn / 2, 120.0});
        if (withSpine)
            c.links.push_back({leaf, spine, uplink * p.nodes, kLeafSpineLatencyUs});
        blockX += cols * kColumn + kBlockGap;
    }
    if (withSpine)
        c.switches.push_back({spine, "spine", (blockX - 240.0) / 2.0, 0.0});
    return c;
}

ModelSpec resolveModel(const std::string& nameOrPath, Warnings* warnings)
{
    if (const ModelSpec* m = findModelPreset(nameOrPath))
        return *m;
    std::error_code ec;
    if (std::filesystem::exists(nameOrPath, ec)) {
        const std::string text = readTextFile(nameOrPath);
        const std::string format = detectFormat(text, nameOrPath);
        if (format == kModelFormat)
            return readValidModel(text, nameOrPath, warnings);
        ModelSpec m;
        if (format == kProjectFormat)
            m = readProject(text, nameOrPath, warnings).model;
        else if (format == kPlanFormat)
            m = readPlanContext(text, nameOrPath, warnings).model;   // also one without a plan
        else
            throw InputError(nameOrPath, "format", "expected a hapmoe.model (or a project or plan holding a model), got " + quotedValue(format));
        validateModel(m, nameOrPath);
        return m;
    }
    throw InputError("", "model", "\"" + nameOrPath + "\" is neither a model preset nor a file; presets: " + presetNames(modelPresets()));
}

Cluster resolveCluster(const std::string& spec, const DeviceCatalog& catalog, Warnings* warnings)
{
    if (const Cluster* c = findClusterPreset(spec))
        return *c;
    std::error_code ec;
    if (std::filesystem::exists(spec, ec)) {
        const std::string text = readTextFile(spec);
        const std::string format = detectFormat(text, spec);
        if (format == kClusterFormat)
            return readValidCluster(text, spec, catalog, warnings);
        Cluster c;
        if (format == kProjectFormat)
            c = readProject(text, spec, warnings).cluster;
        else if (format == kPlanFormat)
            c = readPlanContext(text, spec, warnings).cluster;   // also one without a plan
        else
            throw InputError(spec, "format", "expected a hapmoe.cluster (or a project or plan holding a cluster), got " + quotedValue(format));
        validateCluster(c, catalog, spec);
        return c;
    }
    if (spec.find(':') != std::string::npos)
        return clusterFromShorthand(spec, catalog);
    throw InputError("", "cluster", "\"" + spec + "\" is neither a cluster preset, a file, nor a shorthand such as \"H800:2x8,910B:2x8\"; presets: "
                                        + presetNames(clusterPresets()));
}

} // namespace hapmoe
