#pragma once
// Shared fixtures of the Megatron-LM / FlagScale tests: a Mixtral 8x7B model, clusters
// from the shorthand, stages placed on whole nodes, and running bash on generated text.

#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "io/Presets.h"
#include "model/ModelSpec.h"
#include "plan/Plan.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <string>
#include <vector>

namespace hapmoe::test {

// Mixtral 8x7B (Mistral AI model card and config.json: 32 layers, hidden 4096, FFN 14336,
// 32 heads, 8 KV heads, vocabulary 32000, 8 experts, top-2, RMSNorm, SwiGLU, no bias,
// untied embeddings).
inline ModelSpec mixtral8x7b()
{
    ModelSpec m;
    m.name = "Mixtral-8x7B";
    m.num_layers = 32;
    m.hidden_size = 4096;
    m.ffn_hidden_size = 14336;
    m.num_attention_heads = 32;
    m.num_query_groups = 8;
    m.vocab_size = 32000;
    m.seq_length = 4096;
    m.max_position_embeddings = 32768;
    m.swiglu = true;
    m.add_bias_linear = false;
    m.untie_embeddings_and_output_weights = true;
    m.normalization = "RMSNorm";
    m.num_experts = 8;
    m.moe_router_topk = 2;
    m.moe_token_dispatcher_type = TokenDispatcher::AllToAll;
    m.training.micro_batch_size = 1;
    m.training.global_batch_size = 64;
    return m;
}

inline Cluster cluster(const std::string& shorthand, const DeviceCatalog& catalog = DeviceCatalog::builtin())
{
    return clusterFromShorthand(shorthand, catalog);
}

// A stage on whole nodes (all devices of each listed node id).
inline StagePlan stageOn(const Cluster& c, const std::vector<int>& nodeIds, int firstLayer, int layers, int tp, int cp, int dp,
                         int ep, int etp)
{
    StagePlan s;
    for (int id : nodeIds) {
        const Node* n = c.node(id);
        s.devices.push_back({id, 0, n->count});
        if (s.device_type.empty())
            s.device_type = DeviceCatalog::builtin().find(n->device_type) ? DeviceCatalog::builtin().find(n->device_type)->name
                                                                           : n->device_type;
    }
    s.first_layer = firstLayer;
    s.num_layers = layers;
    s.tp = tp;
    s.cp = cp;
    s.dp = dp;
    s.ep = ep;
    s.etp = etp;
    s.edp = tp * cp * dp / (ep * etp);
    return s;
}

// Node ids of a shorthand cluster in order (nodes only, no switches).
inline std::vector<int> nodeIds(const Cluster& c)
{
    std::vector<int> ids;
    for (const Node& n : c.nodes)
        ids.push_back(n.id);
    return ids;
}

// H800 + 910B with the 910B nodes first in the pipeline: a 910B mesh (TP4 DP2 EP4 ETP2, MBS 2,
// 2 stages, full recompute: every layer on stage 0, 3 layers on stage 1) and an H800 mesh
// (TP2 DP4 EP4 ETP1, MBS 1, 2 stages, no recompute) on H800:2x8,910B:2x8.
inline PlanDocument h800And910bPlan()
{
    PlanDocument d;
    d.model = mixtral8x7b();
    d.cluster = cluster("H800:2x8,910B:2x8");
    const std::vector<int> ids = nodeIds(d.cluster);
    Plan& p = d.plan;
    p.name = "H800 + 910B";
    p.global_batch_size = 64;
    p.target = Target::FlagScale;
    const int split[4] = {6, 6, 10, 10};
    const int nodeOf[4] = {ids[2], ids[3], ids[0], ids[1]};
    int first = 0;
    for (int s = 0; s < 4; ++s) {
        const bool ascend = s < 2;
        StagePlan st = ascend ? stageOn(d.cluster, {nodeOf[s]}, first, split[s], 4, 1, 2, 4, 2)
                              : stageOn(d.cluster, {nodeOf[s]}, first, split[s], 2, 1, 4, 4, 1);
        st.micro_batch_size = ascend ? 2 : 1;
        if (ascend) {
            st.recompute = Recompute::Full;
            st.recompute_layers = s == 0 ? 0 : 3;
        }
        first += split[s];
        p.stages.push_back(st);
    }
    return d;
}

// Runs bash with arguments in a folder; returns the exit code (-1 when bash did not run).
inline int runBash(const QStringList& args, const QString& workDir, QByteArray* output = nullptr,
                   const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setWorkingDirectory(workDir);
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral("bash"), args);
    if (!p.waitForFinished(60000))
        return -1;
    if (output)
        *output = p.readAll();
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

inline bool writeText(const QString& path, const std::string& text)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    return f.write(text.data(), static_cast<qint64>(text.size())) == static_cast<qint64>(text.size());
}

inline std::string dataFile(const std::string& name)
{
    return std::string(HAPMOE_TEST_DATA_DIR) + "/megatron/" + name;
}

} // namespace hapmoe::test
