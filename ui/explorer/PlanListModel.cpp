#include "PlanListModel.h"

#include "ExplorerStyle.h"
#include "Theme.h"
#include "plan/PlanRelation.h"

#include <QBrush>
#include <QFont>

#include <algorithm>

namespace hapmoe::ui {

PlanListModel::PlanListModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void PlanListModel::setPlans(std::vector<ExplorerPlan> plans)
{
    beginResetModel();
    m_plans = std::move(plans);
    // Among the search's ranked plans (the baselines and the current configuration are no
    // alternatives of them).
    std::vector<const Plan*> ranked;
    std::vector<int> rows;
    for (std::size_t i = 0; i < m_plans.size(); ++i)
        if (m_plans[i].kind == ExplorerPlan::Kind::Ranked) {
            ranked.push_back(&m_plans[i].plan());
            rows.push_back(static_cast<int>(i));
        }
    const std::vector<int> from = reorderedFrom(ranked);
    m_reorderedFrom.assign(m_plans.size(), -1);
    for (std::size_t k = 0; k < from.size(); ++k)
        if (from[k] >= 0)
            m_reorderedFrom[static_cast<std::size_t>(rows[k])] = rows[static_cast<std::size_t>(from[k])];
    endResetModel();
}

const ExplorerPlan* PlanListModel::plan(int row) const
{
    if (row < 0 || row >= static_cast<int>(m_plans.size()))
        return nullptr;
    return &m_plans[static_cast<size_t>(row)];
}

bool PlanListModel::anyOffload() const
{
    return std::any_of(m_plans.begin(), m_plans.end(), [](const ExplorerPlan& e) { return e.plan().optimizer_offload_fraction > 0; });
}

int PlanListModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_plans.size());
}

int PlanListModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PlanListModel::data(const QModelIndex& index, int role) const
{
    const ExplorerPlan* e = plan(index.row());
    if (!e)
        return {};
    const Prediction& p = e->prediction();
    const Plan& plan = e->plan();

    if (role == SortRole) {
        switch (index.column()) {
        case Name: return e->kind == ExplorerPlan::Kind::Ranked ? e->rank : 1000 + static_cast<int>(e->kind);
        case Source: return static_cast<int>(e->kind);
        case IterationTime: return p.iteration_time_s;
        case TokensPerS: return p.tokens_per_s;
        case TflopsPerDevice: return p.tflops_per_device;
        case Mfu: return p.mfu;
        case PeakMemory: return style::fullestDevice(p).share();
        case Devices: return plan.numDevices();
        case Stages: return plan.pp();
        case TargetColumn: return QString::fromLatin1(toString(e->target));
        case Optimizer: return plan.optimizer_offload_fraction;
        case Layout: return style::stagesSummary(plan);
        default: return {};
        }
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Name: return displayName(*e);
        case Source: // the plan's name says which baseline; this column groups the rows
            return e->kind == ExplorerPlan::Kind::Ranked ? tr("search")
                   : e->kind == ExplorerPlan::Kind::Current ? tr("current") : tr("baseline");
        case IterationTime: return style::formatSeconds(p.iteration_time_s);
        case TokensPerS: return QStringLiteral("%L1").arg(p.tokens_per_s, 0, 'f', 0);
        case TflopsPerDevice: return QStringLiteral("%1").arg(p.tflops_per_device, 0, 'f', 1);
        case Mfu: return QStringLiteral("%1 %").arg(p.mfu * 100.0, 0, 'f', 1);
        case PeakMemory: {
            const style::FullestDevice f = style::fullestDevice(p);
            if (f.stage < 0)
                return QStringLiteral("%1 GiB").arg(p.peak_memory_gib, 0, 'f', 1);
            return style::fullestDeviceText(f);
        }
        case Devices: {
            // Devices the plan leaves idle because it is faster without them apart from those
            // it could not use (left out of the search, not started by a script); the tooltip
            // gives each node's reason.
            int idle = 0;
            int out = 0;
            for (const UnusedDevices& u : plan.unused)
                (u.leftIdle() ? idle : out) += u.count;
            // And those the plan does not account for (written by hand): counted apart.
            QStringList parts;
            if (idle > 0)
                parts << tr("+%1 idle").arg(idle);
            if (out > 0)
                parts << tr("+%1 out").arg(out);
            if (e->unaccounted > 0)
                parts << tr("+%1 unused").arg(e->unaccounted);
            const QString total = QString::number(plan.numDevices());
            return parts.isEmpty() ? total : tr("%1 (%2)").arg(total, parts.join(QStringLiteral(", ")));
        }
        case Stages: return plan.vpp > 1 ? QStringLiteral("%1 (VPP %2)").arg(plan.pp()).arg(plan.vpp) : QString::number(plan.pp());
        case TargetColumn: return e->launch_problem.empty() ? style::targetLabel(e->target) : tr("none");
        case Optimizer: return style::optimizerPlaceLabel(plan.optimizer_offload_fraction);
        case Layout: return style::stagesSummary(plan);
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        QString tip = nameAndKindHtml(*e) + QStringLiteral("<br>");
        if (!p.feasible)
            tip += statusHtml(Status::Problem, toolTipPalette(),
                              tr("Does not fit: %1").arg(QString::fromStdString(p.infeasible_reason).toHtmlEscaped()))
                   + QStringLiteral("<br>");
        if (!e->launch_problem.empty())
            tip += statusHtml(Status::Problem, toolTipPalette(),
                              tr("On this cluster %1")
                                  .arg(QString::fromStdString(e->launch_problem).toHtmlEscaped()))
                   + QStringLiteral("<br>");
        if (const style::FullestDevice f = style::fullestDevice(p); f.stage >= 0 && index.column() == PeakMemory)
            tip += tr("Fullest device: stage %1 (%2), %3 of %4 GiB (%5 %); the most bytes on a device: %6 GiB<br>")
                       .arg(f.stage)
                       .arg(QString::fromStdString(plan.stages.size() > std::size_t(f.stage) ? plan.stages[std::size_t(f.stage)].device_type : std::string()).toHtmlEscaped())
                       .arg(f.used / style::kGiB, 0, 'f', 1)
                       .arg(f.capacity / style::kGiB, 0, 'f', 0)
                       .arg(100.0 * f.share(), 0, 'f', 0)
                       .arg(p.peak_memory_gib, 0, 'f', 1)
                   + (f.headroom > 0 ? tr("Usable memory: %1<br>").arg(style::usableMemoryText(f.capacity, f.headroom)) : QString());
        // More model FLOPs per second than the devices' peak: the profile's times cannot be
        // of this model on these devices (the prediction's note says the same).
        if (p.mfu > 1.0 && (index.column() == Mfu || index.column() == TflopsPerDevice))
            tip += statusHtml(Status::Problem, toolTipPalette(),
                              tr("MFU above 100 %: more model FLOPs per second than the devices' peak; the profile's times "
                                 "cannot be of this model on these devices"))
                   + QStringLiteral("<br>");
        if (index.column() == PeakMemory)
            if (const QString full = style::nearlyFullText(p); !full.isEmpty())
                tip += full.toHtmlEscaped() + QStringLiteral("<br>");
        if (const int of = m_reorderedFrom[static_cast<std::size_t>(index.row())]; of >= 0)
            tip += tr("The stages of %1 in another order: its figures give or take the links between the stages<br>")
                       .arg(displayName(m_plans[static_cast<std::size_t>(of)]).toHtmlEscaped());
        if (index.column() == Layout)
            tip += style::stagesSummaryLines(plan).toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")) + QStringLiteral("<br>");
        for (const UnusedDevices& u : plan.unused)
            tip += QStringLiteral("Node %1: %2 devices unused (%3)<br>").arg(u.node).arg(u.count)
                       .arg(QString::fromStdString(u.reason).toHtmlEscaped());
        if (e->unaccounted > 0)
            tip += tr("%n device(s) of the cluster unused: the plan does not say why<br>", nullptr, e->unaccounted);
        tip += p.used_profile ? QStringLiteral("Figures use the measured profile.") : QStringLiteral("Figures use analytic defaults (no profile).");
        return tip;
    }
    if (role == Qt::TextAlignmentRole) {
        if (index.column() >= IterationTime && index.column() <= Stages)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    }
    if (role == Qt::ForegroundRole && (!p.feasible || (p.mfu > 1.0 && (index.column() == Mfu || index.column() == TflopsPerDevice))))
        return QBrush(style::problemColor());
    if (role == Qt::FontRole && e->kind != ExplorerPlan::Kind::Ranked) {
        QFont f;
        f.setItalic(true);
        return f;
    }
    return {};
}

QVariant PlanListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == Optimizer)
        return tr("Where the optimizer states are kept: on the devices, or a share of every rank's states in host "
                  "memory, stepped by the host (Megatron-LM --optimizer-cpu-offload, --optimizer-offload-fraction). "
                  "Shown when a plan offloads.");
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == Mfu)
        return tr("Model FLOPs per second over the peak of the devices the plan uses (Megatron-LM's counting, "
                  "docs/cost-model.md section 1). Devices that run the GEMMs in FP8 count their FP8 peak, as NVIDIA's "
                  "recipes do, so an FP8 plan shows a lower MFU than a BF16 plan of the same speed.");
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == Layout)
        return tr("The stages in pipeline order: device type, decoder layers (L), data-parallel size and the tensor-, "
                  "context-, expert- and expert-tensor-parallel sizes above 1, the micro-batch size above 1 and "
                  "recompute; equal stages in a row are written once with their count (×2). Plans of equal figures differ here.");
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == PeakMemory)
        return tr("The device with the largest share of its memory in use: used/capacity (with memory kept free, "
                  "used/usable of the device's memory: 67.7/72 of 80 GiB). The peak memory of "
                  "Compare, What-if and the command line is the most bytes on any device (in this column's tooltip).");
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Name: return QStringLiteral("Plan");
    case Source: return QStringLiteral("Source");
    case IterationTime: return QStringLiteral("Iteration");
    case TokensPerS: return QStringLiteral("Tokens/s");
    case TflopsPerDevice: return QStringLiteral("TFLOP/s/dev");
    case Mfu: return QStringLiteral("MFU");
    case PeakMemory: return tr("Fullest device");
    case Devices: return QStringLiteral("Devices");
    case Stages: return QStringLiteral("PP");
    case TargetColumn: return QStringLiteral("Target");
    case Optimizer: return tr("Optimizer");
    case Layout: return tr("Layout");
    default: return {};
    }
}

} // namespace hapmoe::ui
