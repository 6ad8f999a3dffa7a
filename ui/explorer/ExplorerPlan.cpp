#include "ExplorerPlan.h"

#include <QCoreApplication>

namespace hapmoe::ui {

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

QString nameAndKindHtml(const ExplorerPlan& entry, const QString& separator)
{
    const QString name = displayName(entry);
    const QString kind = kindLabel(entry.kind);
    const QString bold = QStringLiteral("<b>%1</b>").arg(name.toHtmlEscaped());
    if (name == kind)
        return bold;
    return separator.isEmpty() ? QStringLiteral("%1 (%2)").arg(bold, kind) : bold + separator + kind;
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

} // namespace hapmoe::ui
