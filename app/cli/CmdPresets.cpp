// hapmoe presets [devices|models|clusters]: the built-in catalog and presets as tables.

#include "CliArgs.h"
#include "Commands.h"

#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "io/Presets.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace hapmoe::cli {

namespace {

constexpr const char* kHelp = R"HELP(Usage: hapmoe presets [devices|models|clusters] [--devices FILE] [--sources] [--json]

Lists the built-in device types, model presets and cluster presets (all three when no
kind is given). Preset names are accepted wherever a command takes --model or --cluster,
matched ignoring case, hyphens, underscores and spaces.

Options:
  --devices FILE   also load a hapmoe.devices catalog that adds or overrides device types
  --sources        print the source of every preset (and every device figure)
  --json           one JSON object instead of tables: "devices", a hapmoe.devices document
                   (every field, sources included); "models", the hapmoe.model documents;
                   "clusters", the hapmoe.cluster documents; only the kind asked for, or all
                   three. Each document is what --devices, --model or --cluster reads.
)HELP";

using Row = std::vector<std::string>;

void printTable(const std::vector<std::string>& header, const std::vector<Row>& rows, const std::vector<bool>& rightAlign)
{
    std::vector<std::size_t> width(header.size(), 0);
    for (std::size_t c = 0; c < header.size(); ++c)
        width[c] = header[c].size();
    for (const auto& r : rows)
        for (std::size_t c = 0; c < r.size() && c < width.size(); ++c)
            width[c] = std::max(width[c], r[c].size());
    auto line = [&](const Row& r) {
        std::string s;
        for (std::size_t c = 0; c < header.size(); ++c) {
            const std::string cell = c < r.size() ? r[c] : "";
            const std::string pad(width[c] - cell.size(), ' ');
            s += rightAlign[c] ? pad + cell : cell + (c + 1 < header.size() ? pad : "");
            if (c + 1 < header.size())
                s += "  ";
        }
        std::cout << s << "\n";
    };
    line(header);
    Row rule;
    for (auto w : width)
        rule.push_back(std::string(w, '-'));
    line(rule);
    for (const auto& r : rows)
        line(r);
}

std::string num(double v, int decimals = 1)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

void listDevices(const DeviceCatalog& catalog, bool sources)
{
    std::cout << "Device types (" << catalog.types().size() << "): dense BF16 and FP8 peaks, memory, per-device bandwidths\n\n";
    std::vector<Row> rows;
    for (const auto& t : catalog.types()) {
        std::string aliases;
        for (std::size_t i = 0; i < t.aliases.size() && i < 3; ++i)
            aliases += (i ? ", " : "") + t.aliases[i];
        rows.push_back({t.name, t.vendor, num(t.bf16_tflops), t.hasFp8() ? num(t.fp8_tflops) : std::string("-"), num(t.memory_gib, 0),
                        num(t.hbm_gbps, 0),
                        num(t.intra_node_gbps, 1) + " " + t.intra_link_kind, num(t.inter_node_gbps, 1), t.collective_library,
                        num(t.default_efficiency * 100, 1) + "%", aliases});
    }
    printTable({"name", "vendor", "BF16 TFLOP/s", "FP8", "GiB", "HBM GB/s", "intra-node GB/s", "NIC GB/s", "library", "eff.", "aliases"},
               rows, {false, false, true, true, true, true, false, true, false, true, false});
    if (sources) {
        for (const auto& t : catalog.types()) {
            std::cout << "\n" << t.name << ":\n";
            for (const auto& [field, src] : t.sources)
                std::cout << "  " << field << ": " << src << "\n";
            if (!t.notes.empty())
                std::cout << "  notes: " << t.notes << "\n";
        }
    }
}

void listModels(bool sources)
{
    std::cout << "Model presets:\n\n";
    std::vector<Row> rows;
    for (const auto& p : modelPresets()) {
        const ModelSpec* m = findModelPreset(p.name);
        std::string attention = std::to_string(m->num_attention_heads);
        if (m->multi_latent_attention)
            attention += " MLA";   // every head its own key and value, from a latent
        else if (m->num_query_groups > 0 && m->num_query_groups != m->num_attention_heads)
            attention += "/" + std::to_string(m->num_query_groups);
        const std::string experts = m->isMoe() ? std::to_string(m->num_experts) + " top-" + std::to_string(m->moe_router_topk) : "dense";
        rows.push_back({m->name, std::to_string(m->num_layers), std::to_string(m->hidden_size), std::to_string(m->ffn_hidden_size),
                        attention, experts, m->isMoe() ? std::to_string(m->expertFfn()) : "-", std::to_string(m->vocab_size),
                        std::to_string(m->seq_length), std::to_string(m->training.global_batch_size),
                        m->isMoe() ? toString(m->moe_token_dispatcher_type) : "-"});
    }
    printTable({"name", "layers", "hidden", "ffn", "heads/groups", "experts", "expert ffn", "vocab", "seq", "GBS", "dispatcher"},
               rows, {false, true, true, true, true, false, true, true, true, true, false});
    if (sources) {
        std::cout << "\n";
        for (const auto& p : modelPresets())
            std::cout << p.name << ": " << p.source << "\n";
    }
}

void listClusters(bool sources)
{
    std::cout << "Cluster presets (the paper's Table 1 first):\n\n";
    std::vector<Row> rows;
    for (const auto& p : clusterPresets()) {
        const Cluster* c = findClusterPreset(p.name);
        const std::string summary = p.summary.substr(p.summary.find(": ") + 2);
        rows.push_back({c->name, std::to_string(c->totalDevices()), std::to_string(c->nodes.size()), summary});
    }
    printTable({"name", "devices", "nodes", "composition (type nodes x devices per node)"}, rows, {false, true, true, false});
    if (sources) {
        std::cout << "\n";
        for (const auto& p : clusterPresets())
            std::cout << p.name << ": " << p.source << "\n";
    }
}

// The presets as documents the other commands read back, in one object.
void printJson(const DeviceCatalog& catalog, const std::string& kind)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    if (kind == "all" || kind == "devices")
        out["devices"] = nlohmann::ordered_json::parse(catalog.toJson());
    if (kind == "all" || kind == "models") {
        nlohmann::ordered_json models = nlohmann::ordered_json::array();
        for (const auto& p : modelPresets())
            models.push_back(nlohmann::ordered_json::parse(writeModel(*findModelPreset(p.name))));
        out["models"] = std::move(models);
    }
    if (kind == "all" || kind == "clusters") {
        nlohmann::ordered_json clusters = nlohmann::ordered_json::array();
        for (const auto& p : clusterPresets())
            clusters.push_back(nlohmann::ordered_json::parse(writeCluster(*findClusterPreset(p.name))));
        out["clusters"] = std::move(clusters);
    }
    std::cout << out.dump(2) << "\n";
}

} // namespace

int cmdPresets(const Args& args)
{
    const CliArgs a(args, {"devices"}, {"help", "sources", "json"});
    if (a.has("help")) {
        std::cout << kHelp;
        return Success;
    }
    if (a.positionals().size() > 1)
        throw UsageError("expected at most one of devices, models, clusters", kHelp);
    const std::string kind = a.positionals().empty() ? "all" : a.positionals().front();
    if (kind != "all" && kind != "devices" && kind != "models" && kind != "clusters")
        throw UsageError("unknown kind \"" + kind + "\"; expected devices, models or clusters");
    const DeviceCatalog catalog = catalogFromArgs(a);
    if (a.has("json")) {
        printJson(catalog, kind);
        return Success;
    }
    const bool sources = a.has("sources");
    bool first = true;
    auto gap = [&] {
        if (!first)
            std::cout << "\n";
        first = false;
    };
    if (kind == "all" || kind == "devices") {
        gap();
        listDevices(catalog, sources);
    }
    if (kind == "all" || kind == "models") {
        gap();
        listModels(sources);
    }
    if (kind == "all" || kind == "clusters") {
        gap();
        listClusters(sources);
    }
    return Success;
}

} // namespace hapmoe::cli
