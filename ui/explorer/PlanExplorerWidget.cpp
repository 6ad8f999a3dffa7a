#include "PlanExplorerWidget.h"

#include "BreakdownView.h"
#include "ChartExport.h"
#include "CompareView.h"
#include "ExplorerPlan.h"
#include "ExplorerStyle.h"
#include "Theme.h"
#include "ExportDialog.h"
#include "MemoryBarsPlot.h"
#include "PlanListModel.h"
#include "PlanTableView.h"
#include "PlanTimeline.h"
#include "StagePartitionView.h"
#include "TimelinePlot.h"
#include "WhatIfPanel.h"
#include "io/Documents.h"
#include "plan/Deployability.h"

#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QResizeEvent>
#include <QSet>
#include <QScrollArea>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <exception>

namespace hapmoe::ui {

namespace {

// Shows a modeless dialog no larger than the window it belongs to (small screens).
void showOver(QDialog* dialog, const QWidget* window)
{
    const QSize room = (window->size() - QSize(40, 60)).expandedTo(QSize(480, 360));
    dialog->resize(dialog->size().boundedTo(room));
    dialog->show();
    dialog->raise();
}

// The what-if page scrolls in a short window; in a narrow one the panel stacks its inputs
// above its figures, so that it scrolls down and never sideways.
// The memory chart's least height: its legend and notes (about 110 px with the offload
// note, two legend rows at 1024 px) and some 190 px of bars.
constexpr int kMemoryChartMinHeight = 300;

class WhatIfScrollArea : public QScrollArea {
public:
    using QScrollArea::QScrollArea;

protected:
    void resizeEvent(QResizeEvent* event) override
    {
        if (auto* panel = qobject_cast<WhatIfPanel*>(widget()))
            panel->fitWidth(event->size().width() - 2 * frameWidth() -
                            style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, this));
        QScrollArea::resizeEvent(event);
    }
};

} // namespace

PlanDocument planDocument(const ExplorerContext& context, const ExplorerPlan& entry)
{
    PlanDocument doc;
    doc.model = context.model;
    doc.cluster = context.cluster;
    doc.plan = entry.plan();
    doc.prediction = entry.prediction();
    if (context.catalog)
        doc.devices = typesBeyondBuiltin(context.cluster, *context.catalog);
    return doc;
}

struct PlanExplorerWidget::Private {
    ExplorerContext context;
    bool hasContext = false;
    PlanListModel* model = nullptr;
    PlanTableView* table = nullptr;
    QLabel* planTitle = nullptr;
    StagePartitionView* partition = nullptr;
    QTabWidget* tabs = nullptr;
    TimelinePlot* timeline = nullptr;
    MemoryBarsPlot* memory = nullptr;
    BreakdownView* breakdown = nullptr;
    CompareView* compare = nullptr;
    WhatIfPanel* whatIf = nullptr;
    ExportDialog* exportDialog = nullptr;
    QString exportFolder;   // setExportFolder
    QPushButton* exportChart = nullptr;
    QPushButton* exportTrace = nullptr;
    QPushButton* exportLauncher = nullptr;
    QPushButton* resetZoom = nullptr;
    QGridLayout* header = nullptr;      // the plan title and, beside or under it, the buttons
    QHBoxLayout* buttons = nullptr;
    int titleAbove = -1;
    int selected = -1;
    bool outdated = false;
    bool searchFoundNothing = false;   // the result shown is a search that found no plan
    bool whatIfShown = false;

    // The view on each tab page, in tab order; every page but Compare's holds the stage
    // strip above its view while it is in front.
    QList<QWidget*> views;

    const ExplorerPlan* current() const { return model->plan(selected); }
    QWidget* currentView() const { return views.value(tabs->currentIndex()); }
};

PlanExplorerWidget::PlanExplorerWidget(QWidget* parent)
    : QWidget(parent)
    , d(std::make_unique<Private>())
{
    setObjectName(QStringLiteral("planExplorer"));
    d->model = new PlanListModel(this);
    d->table = new PlanTableView(d->model, this);
    d->planTitle = new QLabel(this);
    d->planTitle->setObjectName(QStringLiteral("planTitle"));
    d->planTitle->setTextFormat(Qt::RichText);
    // Titles and no-plan reasons can be long: they wrap rather than widen the window.
    d->planTitle->setWordWrap(true);
    // No minimum width of its own: beside the buttons it always has 320 px (resizeEvent), and
    // above them the whole width.
    d->planTitle->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    d->partition = new StagePartitionView(this);
    d->tabs = new QTabWidget(this);
    d->timeline = new TimelinePlot(d->tabs);
    d->memory = new MemoryBarsPlot(d->tabs);
    d->breakdown = new BreakdownView(d->tabs);
    d->compare = new CompareView(d->tabs);
    d->whatIf = new WhatIfPanel(d->tabs);
    // A chart's legend would otherwise set the window's minimum width: charts shrink instead.
    for (QWidget* chart : {static_cast<QWidget*>(d->timeline), static_cast<QWidget*>(d->memory)})
        chart->setMinimumWidth(320);
    // The what-if form scrolls in a short or narrow window instead of widening it.
    auto* whatIfScroll = new WhatIfScrollArea(d->tabs);
    whatIfScroll->setObjectName(QStringLiteral("whatIfScroll"));
    whatIfScroll->setWidget(d->whatIf);
    whatIfScroll->setWidgetResizable(true);
    whatIfScroll->setFrameShape(QFrame::NoFrame);
    // The stage strip sits under the tab bar, on the page in front, so that the tab bar stays
    // put when Compare, which draws the partition of every plan it compares, leaves it out.
    // A view may stand in a holder (a scroll area) on its page.
    const auto addPage = [this](QWidget* view, const QString& label, bool withStrip, QWidget* holder = nullptr) {
        QWidget* content = holder ? holder : view;
        QWidget* page = content;
        if (withStrip) {
            page = new QWidget(d->tabs);
            auto* layout = new QVBoxLayout(page);
            layout->setContentsMargins(0, 0, 0, 0);
            layout->addWidget(content, 1);
        }
        d->views << view;
        d->tabs->addTab(page, label);
    };
    // A chart that scrolls down, never sideways, when its page is shorter than the chart
    // needs (the timeline's time axis zooms instead).
    const auto verticalScroll = [this](QWidget* chart, const char* name) {
        auto* scroll = new QScrollArea(d->tabs);
        scroll->setObjectName(QString::fromLatin1(name));
        scroll->setWidget(chart);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        return scroll;
    };
    // A long pipeline's lanes keep a line of text each: the timeline grows and scrolls
    // down, as Compare's charts do.
    d->timeline->setLanesReadable(true);
    addPage(d->timeline, tr("Timeline"), true, verticalScroll(d->timeline, "timelineScroll"));
    // The memory chart too: under its legend and notes (the offloaded optimizer takes two
    // lines) the bars keep a readable height in a short window, and the page's minimum does
    // not push the plan table and the tab bar up when Memory is chosen.
    d->memory->setMinimumHeight(kMemoryChartMinHeight);
    addPage(d->memory, tr("Memory"), true, verticalScroll(d->memory, "memoryScroll"));
    addPage(d->breakdown, tr("Breakdown"), true);
    addPage(d->compare, tr("Compare"), false);
    addPage(whatIfScroll, tr("What-if"), true);

    d->exportChart = new QPushButton(tr("Save chart…"), this);
    d->exportChart->setToolTip(tr("Save the timeline or memory chart as PNG, SVG or PDF"));
    d->exportTrace = new QPushButton(tr("Save trace…"), this);
    d->exportTrace->setToolTip(tr("Save the timeline as Chrome/Perfetto trace JSON (open in ui.perfetto.dev)"));
    d->resetZoom = new QPushButton(tr("Reset zoom"), this);
    d->exportLauncher = new QPushButton(tr("Export launcher…"), this);
    d->exportLauncher->setObjectName(QStringLiteral("exportLauncherButton"));
    d->exportLauncher->setToolTip(tr("Preview and save the Megatron-LM or FlagScale launcher and the plan JSON"));

    d->buttons = new QHBoxLayout;
    d->buttons->addStretch(1);
    d->buttons->addWidget(d->resetZoom);
    d->buttons->addWidget(d->exportChart);
    d->buttons->addWidget(d->exportTrace);
    d->buttons->addWidget(d->exportLauncher);
    d->header = new QGridLayout;
    d->header->setContentsMargins(0, 0, 0, 0);
    d->header->setColumnStretch(0, 1);
    arrangeHeader(false);

    auto* lower = new QWidget(this);
    auto* lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    lowerLayout->addLayout(d->header);
    lowerLayout->addWidget(d->tabs, 1);
    static_cast<QVBoxLayout*>(d->tabs->widget(0)->layout())->insertWidget(0, d->partition);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(d->table);
    split->addWidget(lower);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    split->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(split);

    connect(d->table, &PlanTableView::planSelected, this, [this](int row) {
        if (row == d->selected)
            return;
        d->selected = row;
        updateViews();
        emit selectionChanged(row);
    });
    connect(d->partition, &StagePartitionView::stageHovered, this, [this](int stage) {
        QVector<int> nodes;
        if (const StagePlan* s = d->partition->stage(stage)) {
            for (const DeviceSlot& slot : s->devices) {
                if (!nodes.contains(slot.node))
                    nodes.push_back(slot.node);
            }
        }
        emit stageHovered(nodes);
    });
    connect(d->whatIf, &WhatIfPanel::newSearchSuggested, this, &PlanExplorerWidget::newSearchSuggested);
    connect(d->whatIf, &WhatIfPanel::newSearchSuggestionWithdrawn, this, &PlanExplorerWidget::newSearchSuggestionWithdrawn);
    connect(d->tabs, &QTabWidget::currentChanged, this, [this] {
        QWidget* w = d->currentView();
        // A suggestion names what-if inputs that are out of sight once the view is left.
        if (d->whatIfShown && w != d->views.back())
            emit newSearchSuggestionWithdrawn();
        d->whatIfShown = w == d->views.back();
        // The strip moves to the page in front; Compare has none (its charts get the height).
        QWidget* page = d->tabs->currentWidget();
        if (w != d->compare && d->partition->parentWidget() != page) {
            d->partition->parentWidget()->layout()->removeWidget(d->partition);
            static_cast<QVBoxLayout*>(page->layout())->insertWidget(0, d->partition);
            // As updateViews leaves it: aside while there is no plan at all.
            d->partition->setVisible(d->current() || d->model->rowCount() > 0);
        }
        d->exportChart->setEnabled(d->current() && (w == d->timeline || w == d->memory || w == d->breakdown));
        d->resetZoom->setEnabled(d->current() && w == d->timeline);
        d->exportTrace->setEnabled(w == d->timeline && d->current());
    });
    connect(d->resetZoom, &QPushButton::clicked, this, [this] {
        d->timeline->resetZoom();
        d->timeline->replot();
    });
    connect(d->exportChart, &QPushButton::clicked, this, [this] {
        QCustomPlot* plot = d->currentView() == d->memory ? static_cast<QCustomPlot*>(d->memory)
            : d->currentView() == d->breakdown                ? d->breakdown->chart()
                                                              : static_cast<QCustomPlot*>(d->timeline);
        const QString path = QFileDialog::getSaveFileName(this, tr("Save chart"), QStringLiteral("chart.png"), chartFileFilter());
        if (path.isEmpty())
            return;
        const QString error = saveChart(plot, path);
        if (!error.isEmpty())
            QMessageBox::warning(this, tr("Save chart"), error);
    });
    connect(d->exportTrace, &QPushButton::clicked, this, [this] {
        if (d->timeline->timeline().tooManyBlocks > 0) {
            QMessageBox::warning(this, tr("Save trace"), TimelinePlot::tooLargeText(d->timeline->timeline()));
            return;
        }
        const QString path = QFileDialog::getSaveFileName(this, tr("Save trace"), QStringLiteral("pipeline-trace.json"),
                                                          tr("Trace JSON (*.json)"));
        if (path.isEmpty())
            return;
        try {
            saveFileAtomically(path.toStdString(), d->timeline->chromeTrace().toStdString());
        } catch (const std::exception& e) {
            QMessageBox::warning(this, tr("Save trace"), QString::fromStdString(e.what()));
        }
    });
    connect(d->exportLauncher, &QPushButton::clicked, this, [this] {
        if (auto* dlg = qobject_cast<ExportDialog*>(view(QStringLiteral("export"))))
            showOver(dlg, window());
    });
    updateViews();
}

PlanExplorerWidget::~PlanExplorerWidget() = default;

void PlanExplorerWidget::setContext(const ExplorerContext& context)
{
    d->context = context;
    d->hasContext = true;
    d->partition->setModelTraits(context.model.isMoe(), context.model.mtp_num_layers);
    d->breakdown->setExpertDispatch(context.model.isMoe());
    d->compare->setModelTraits(context.model.isMoe(), context.model.mtp_num_layers);
    d->whatIf->setContext(context);
    updateViews();
}

void PlanExplorerWidget::followNames(const ModelSpec& model, const Cluster& cluster)
{
    if (!d->hasContext)
        return;
    const auto sameHosts = [&] {
        if (cluster.nodes.size() != d->context.cluster.nodes.size())
            return false;
        for (std::size_t i = 0; i < cluster.nodes.size(); ++i)
            if (cluster.nodes[i].id != d->context.cluster.nodes[i].id || cluster.nodes[i].host != d->context.cluster.nodes[i].host)
                return false;
        return true;
    };
    const ModelSpec& m = d->context.model;
    if (model.name == m.name && model.description == m.description && model.source == m.source && sameHosts())
        return;   // positions alone: nothing the views or an export show
    // Only an export shows names; the what-if keeps its inputs (its estimates need no names).
    d->context.model = model;
    d->context.cluster = cluster;
    if (d->exportDialog)
        if (const ExplorerPlan* e = d->current())
            d->exportDialog->setPlan(d->context, *e);
}

void PlanExplorerWidget::setExportFolder(const QString& folder)
{
    d->exportFolder = folder;
    if (d->exportDialog)
        d->exportDialog->setFolder(folder);
}

void PlanExplorerWidget::setResult(const SearchResult& result)
{
    std::vector<ExplorerPlan> plans;
    auto add = [&](const RankedPlan& rp, ExplorerPlan::Kind kind, int rank) {
        ExplorerPlan e;
        e.ranked = rp;
        e.kind = kind;
        e.rank = rank;
        e.target = rp.plan.target != Target::Any ? rp.plan.target : result.target;
        if (e.target == Target::Any && d->hasContext && d->context.catalog) {
            try {
                e.target = bestTarget(rp.plan, d->context.model, d->context.cluster, *d->context.catalog);
            } catch (const std::exception&) {
                // Unknown device types and the like: the export dialog names the problem.
            }
        }
        // A script's configuration is shown whether or not it can run here (SearchResult::current_note).
        if (kind == ExplorerPlan::Kind::Current && d->hasContext && d->context.catalog && e.target != Target::Any) {
            try {
                Plan asked = rp.plan;
                asked.target = e.target;
                e.launch_problem = chooseLauncher(asked, d->context.model, d->context.cluster, *d->context.catalog).unlaunchable();
            } catch (const std::exception&) {
            }
        }
        if (d->hasContext) {
            long long named = rp.plan.numDevices();
            for (const UnusedDevices& u : rp.plan.unused)
                named += u.count;
            e.unaccounted = static_cast<int>(std::max(0LL, static_cast<long long>(d->context.cluster.totalDevices()) - named));
        }
        plans.push_back(std::move(e));
    };
    for (size_t i = 0; i < result.plans.size(); ++i)
        add(result.plans[i], ExplorerPlan::Kind::Ranked, static_cast<int>(i) + 1);
    if (result.uniform_baseline)
        add(*result.uniform_baseline, ExplorerPlan::Kind::UniformBaseline, 0);
    if (result.metis_baseline)
        add(*result.metis_baseline, ExplorerPlan::Kind::MetisBaseline, 0);
    if (result.current)
        add(*result.current, ExplorerPlan::Kind::Current, 0);

    const bool hadSelection = d->selected >= 0;
    d->selected = -1;
    d->searchFoundNothing = plans.empty();
    d->model->setPlans(std::move(plans));
    d->compare->setPlans(d->model->plans());
    if (d->model->rowCount() > 0) {
        selectPlan(0);
    } else {
        updateViews();
        d->planTitle->setText(result.no_plan_reason.empty()
                                  ? tr("No plan")
                                  : statusHtml(Status::Problem, palette(), tr("No plan: %1").arg(noPlanReason(result).toHtmlEscaped())));
        if (hadSelection)
            emit selectionChanged(-1);
    }
}

void PlanExplorerWidget::clear()
{
    const bool hadSelection = d->selected >= 0;
    d->selected = -1;
    d->outdated = false;
    d->searchFoundNothing = false;
    d->model->setPlans({});
    d->compare->setPlans({});
    updateViews();
    if (hadSelection)
        emit selectionChanged(-1);
}

void PlanExplorerWidget::setOutdated(bool outdated)
{
    if (d->outdated == outdated)
        return;
    d->outdated = outdated;
    if (d->current())
        updateViews();
}

bool PlanExplorerWidget::isOutdated() const
{
    return d->outdated;
}

int PlanExplorerWidget::planCount() const
{
    return d->model->rowCount();
}

int PlanExplorerWidget::selectedPlan() const
{
    return d->selected;
}

std::optional<PlanDocument> PlanExplorerWidget::selectedPlanDocument() const
{
    const ExplorerPlan* e = d->current();
    if (!e || !d->hasContext)
        return std::nullopt;
    PlanDocument doc = planDocument(d->context, *e);
    if (doc.plan.name.empty())
        doc.plan.name = displayName(*e).toStdString();
    return doc;
}

const ExplorerContext& PlanExplorerWidget::context() const
{
    return d->context;
}

void PlanExplorerWidget::selectPlan(int row)
{
    if (row < 0 || row >= planCount())
        return;
    d->table->selectSourceRow(row);
    if (d->selected != row) {   // the table did not report it (same proxy index)
        d->selected = row;
        updateViews();
        emit selectionChanged(row);
    }
}

QStringList PlanExplorerWidget::viewNames()
{
    return {QStringLiteral("plans"), QStringLiteral("partition"), QStringLiteral("timeline"), QStringLiteral("memory"),
            QStringLiteral("breakdown"), QStringLiteral("compare"), QStringLiteral("whatif"), QStringLiteral("export")};
}

QWidget* PlanExplorerWidget::view(const QString& name) const
{
    if (name == QLatin1String("plans"))
        return d->table;
    if (name == QLatin1String("partition"))
        return d->partition;
    if (name == QLatin1String("timeline"))
        return d->timeline;
    if (name == QLatin1String("memory"))
        return d->memory;
    if (name == QLatin1String("breakdown"))
        return d->breakdown;
    if (name == QLatin1String("compare"))
        return d->compare;
    if (name == QLatin1String("whatif"))
        return d->whatIf;
    if (name == QLatin1String("export")) {
        if (!d->exportDialog) {
            auto* self = const_cast<PlanExplorerWidget*>(this);
            d->exportDialog = new ExportDialog(self);
            d->exportDialog->setFolder(d->exportFolder);
            d->exportDialog->setOutdated(d->outdated);
            if (const ExplorerPlan* e = d->current())
                d->exportDialog->setPlan(d->context, *e);
        }
        return d->exportDialog;
    }
    return nullptr;
}

void PlanExplorerWidget::arrangeHeader(bool titleAbove)
{
    if (int(titleAbove) == d->titleAbove)
        return;
    d->titleAbove = int(titleAbove);
    // The title keeps its cell; narrow, the buttons go under it and it gets the whole width.
    d->header->removeItem(d->buttons);
    if (d->header->indexOf(d->planTitle) < 0)
        d->header->addWidget(d->planTitle, 0, 0);
    d->header->addLayout(d->buttons, titleAbove ? 1 : 0, titleAbove ? 0 : 1);
}

void PlanExplorerWidget::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    // Beside the buttons the title keeps at least 320 px, or it goes above them.
    const int buttons = d->buttons->minimumSize().width();
    arrangeHeader(event->size().width() < buttons + 320 + d->header->horizontalSpacing() + 8);
}

void PlanExplorerWidget::showView(const QString& name)
{
    QWidget* w = view(name);
    if (!w)
        return;
    for (QWidget* page = w; page; page = page->parentWidget()) {   // a view may sit in a scroll area
        if (const int tab = d->tabs->indexOf(page); tab >= 0) {
            d->tabs->setCurrentIndex(tab);
            break;
        }
    }
    if (w == d->exportDialog && d->current())   // a dialog: bring it up over the window, modeless
        showOver(d->exportDialog, window());
}

void PlanExplorerWidget::updateViews()
{
    const ExplorerPlan* e = d->current();
    QWidget* view = d->currentView();
    d->exportLauncher->setEnabled(e && d->hasContext);
    d->exportTrace->setEnabled(e && view == d->timeline);
    d->exportChart->setEnabled(e && (view == d->timeline || view == d->memory || view == d->breakdown));
    d->resetZoom->setEnabled(e && view == d->timeline);
    if (!e) {
        // The views say why they are empty: no search yet, nothing selected, or a search that
        // found no plan (its reason is in the title).
        const QString empty = d->searchFoundNothing ? tr("The search found no feasible plan (the reason is above)")
            : d->model->rowCount() > 0             ? tr("Select a plan in the list above")
                                                   : tr("No plan to show: run a search and select a plan");
        // Without any plan the strip would repeat the view's sentence under it: it stands aside.
        d->partition->setEmptyText(tr("Select a plan to see its stages"));
        d->partition->setVisible(d->model->rowCount() > 0);
        d->timeline->setEmptyText(empty);
        d->memory->setEmptyText(empty);
        d->breakdown->setEmptyText(empty);
        d->whatIf->setEmptyText(d->model->rowCount() > 0 ? tr("Select a plan to try changes on it.") : empty);
        d->planTitle->setToolTip(QString());
        d->planTitle->setText(d->model->rowCount() > 0 ? tr("Select a plan in the list to explore it.")
                                                        : tr("Run a search or open a plan to explore it."));
        d->partition->clear();
        d->timeline->clear();
        d->memory->clear();
        d->breakdown->clear();
        d->whatIf->setPlan(nullptr);
        // The export dialog would otherwise keep showing, and saving, the plan that went away.
        if (d->exportDialog)
            d->exportDialog->clearPlan();
        return;
    }
    const Plan& plan = e->plan();
    const Prediction& pred = e->prediction();
    const PlanTimeline tl = buildPlanTimeline(plan, pred, d->context.model.mtp_num_layers);
    d->partition->setVisible(true);
    // A narrow title wraps between its parts, not inside one ("iteration" over "7.295 s").
    const QString stages = plan.pp() == 1 ? tr("1&nbsp;stage") : tr("%1&nbsp;stages").arg(plan.pp());
    // Nor at the hyphen of "micro-batches".
    const QString microbatches = QStringLiteral("<span style=\"white-space:nowrap\">%1</span>")
                                     .arg(tl.microbatches == 1 ? tr("1 micro-batch") : tr("%1 micro-batches").arg(tl.microbatches));
    QString title = tr("%1 · %2 · %3 · iteration&nbsp;%4")
                        .arg(nameAndKindHtml(*e), stages, microbatches,
                             style::formatSeconds(pred.iteration_time_s).replace(QLatin1Char(' '), QStringLiteral("&nbsp;")));
    if (plan.optimizer_offload_fraction > 0)
        title += (plan.optimizer_offload_fraction < 1
                      ? tr(" · optimizer %1&nbsp;% in host memory").arg(qRound(100 * plan.optimizer_offload_fraction))
                      : tr(" · optimizer in host memory"))
            + (pred.host_memory_capacity_gib > 0
                   ? tr(" (%1 of %2 GiB on the busiest node)")
                         .arg(pred.host_memory_per_node_gib, 0, 'f', 0)
                         .arg(pred.host_memory_capacity_gib, 0, 'f', 0)
                   : tr(" (%1 GiB on the busiest node)").arg(pred.host_memory_per_node_gib, 0, 'f', 0));
    // Where the figures come from, when not the analytic defaults alone.
    if (pred.used_profile && d->context.profile)
        title += d->context.profile->name.empty()
                     ? tr(" · measured profile")
                     : tr(" · profile %1").arg(QString::fromStdString(d->context.profile->name).toHtmlEscaped());
    if (!pred.feasible)
        title += QStringLiteral(" · ") + statusHtml(Status::Problem, palette(), QString::fromStdString(pred.infeasible_reason).toHtmlEscaped());
    // Nearly full with nothing kept free: said briefly, and why in the tooltip.
    const QString nearlyFull = style::nearlyFullText(pred);
    if (const int full = nearlyFullStage(pred); full >= 0) {
        const MemoryBreakdown& m = pred.stages[static_cast<std::size_t>(full)].memory;
        title += tr(" · S%1&nbsp;at&nbsp;%2&nbsp;%&nbsp;of&nbsp;memory").arg(full).arg(100.0 * m.total() / m.capacity, 0, 'f', 1);
    }
    d->planTitle->setToolTip(nearlyFull);
    if (d->outdated)
        title += QStringLiteral(" · ")
            + statusHtml(Status::Problem, palette(),
                         tr("computed before the last change to the cluster, model or profile: run the search again"));
    if (pred.mfu > 1.0)   // only a profile measured elsewhere can claim more than the peak (CostModel.cpp)
        title += QStringLiteral(" · ")
            + statusHtml(Status::Problem, palette(),
                         tr("MFU %1 %: the profile does not describe this model or these devices").arg(qRound(100 * pred.mfu)));
    d->planTitle->setText(title);
    d->partition->setPlan(plan, pred, tl.bottleneck);
    d->timeline->setTimeline(tl);
    d->memory->setPlan(plan, pred);
    d->breakdown->setPlan(plan, pred);
    d->compare->compareWithDefault(d->selected);
    d->whatIf->setPlan(e);
    if (d->exportDialog) {
        d->exportDialog->setOutdated(d->outdated);
        d->exportDialog->setPlan(d->context, *e);
    }
}

} // namespace hapmoe::ui
