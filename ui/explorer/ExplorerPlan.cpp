#include "ExplorerPlan.h"

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

} // namespace hapmoe::ui
