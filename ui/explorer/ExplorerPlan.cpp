#include "ExplorerPlan.h"

#include <QCoreApplication>

namespace hapmoe::ui {

namespace {

// The first stage with the largest key (CostModel::estimate breaks ties the same way).
template <typename Key>
int firstLargest(const Prediction& prediction, Key key)
{
    int best = -1;
    double mx = 0;
    for (int i = 0; i < static_cast<int>(prediction.stages.size()); ++i) {
        const double v = key(prediction.stages[static_cast<size_t>(i)]);
        if (best < 0 || v > mx) {
            mx = v;
            best = i;
        }
    }
    return best;
}

} // namespace

QString kindLabel(ExplorerPlan::Kind kind)
{
    switch (kind) {
    case ExplorerPlan::Kind::Ranked: return QStringLiteral("search");
    case ExplorerPlan::Kind::UniformBaseline: return QStringLiteral("uniform baseline");
    case ExplorerPlan::Kind::MetisBaseline: return QStringLiteral("Metis-style baseline");
    case ExplorerPlan::Kind::Current: return QStringLiteral("current configuration");
    }
    return {};
}

QString displayName(const ExplorerPlan& entry)
{
    if (!entry.plan().name.empty())
        return QString::fromStdString(entry.plan().name);
    if (entry.kind == ExplorerPlan::Kind::Ranked)
        return QStringLiteral("#%1").arg(entry.rank);
    return kindLabel(entry.kind);
}

QString noPlanReason(const SearchResult& result)
{
    QString reason = QString::fromStdString(result.no_plan_reason);
    if (reason.isEmpty())
        reason = QCoreApplication::translate("ExplorerPlan", "the search found none");
    // Cut short, the search cannot say by how much the closest plan misses; what it pruned
    // so far still tells whether memory is the obstacle.
    const PruneCounters& p = result.pruned;
    const long long pruned = p.load_balance + p.memory + p.communication;
    if ((result.timed_out || result.cancelled) && pruned > 0 && 2 * p.memory > pruned)
        reason += QCoreApplication::translate("ExplorerPlan",
                                              "; %1 % of the options pruned so far were short of memory (a search that "
                                              "runs to its end says by how much)")
                      .arg(100.0 * double(p.memory) / double(pruned), 0, 'f', 1);
    return reason;
}

int bottleneckStage(const Prediction& prediction)
{
    return firstLargest(prediction, [](const StageEstimate& e) { return e.t_fwd + e.t_bwd; });
}

int tailStage(const Prediction& prediction)
{
    // The stage's own sync: the tied all-reduce in the end stages' dp_sync is counted once on
    // top of the longest tail (CostModel::estimate).
    return firstLargest(prediction, [](const StageEstimate& e) { return e.dp_sync - e.embedding_sync + e.optimizer; });
}

} // namespace hapmoe::ui
