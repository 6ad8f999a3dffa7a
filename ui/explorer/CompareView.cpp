#include "CompareView.h"

#include "ExplorerStyle.h"
#include "MemoryBarsPlot.h"
#include "PlanTimeline.h"
#include "StagePartitionView.h"
#include "TimelinePlot.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QScrollArea>
#include <QTableWidget>
#include <QVBoxLayout>

#include <functional>

namespace hapmoe::ui {

namespace {

// One table row: a label, the text per plan, and optionally a number to rank by.
struct Row {
    QString label;
    std::function<QString(const ExplorerPlan&)> text;
    std::function<double(const ExplorerPlan&)> value;   // empty: not ranked
    bool higherIsBetter = false;
};

QString joinStages(const Plan& plan, const std::function<QString(const StagePlan&)>& f)
{
    QStringList parts;
    for (const StagePlan& s : plan.stages)
        parts << f(s);
    return parts.join(QStringLiteral(" | "));
}

std::vector<Row> tableRows()
{
    using E = const ExplorerPlan&;
    return {
        {QObject::tr("Source"), [](E e) { return kindLabel(e.kind); }, {}, false},
        {QObject::tr("Iteration time"), [](E e) { return style::formatSeconds(e.prediction().iteration_time_s); },
         [](E e) { return e.prediction().iteration_time_s; }, false},
        {QObject::tr("Tokens/s"), [](E e) { return QStringLiteral("%L1").arg(e.prediction().tokens_per_s, 0, 'f', 0); },
         [](E e) { return e.prediction().tokens_per_s; }, true},
        {QObject::tr("TFLOP/s per device"), [](E e) { return QString::number(e.prediction().tflops_per_device, 'f', 1); },
         [](E e) { return e.prediction().tflops_per_device; }, true},
        {QObject::tr("MFU"), [](E e) { return QStringLiteral("%1 %").arg(e.prediction().mfu * 100, 0, 'f', 1); },
         [](E e) { return e.prediction().mfu; }, true},
        {QObject::tr("Peak memory"), [](E e) { return QStringLiteral("%1 GiB").arg(e.prediction().peak_memory_gib, 0, 'f', 1); },
         [](E e) { return e.prediction().peak_memory_gib; }, false},
        {QObject::tr("Pipeline bubble"), [](E e) { return style::formatSeconds(e.prediction().breakdown.pipeline_bubble); },
         [](E e) { return e.prediction().breakdown.pipeline_bubble; }, false},
        {QObject::tr("Devices used"), [](E e) { return QString::number(e.plan().numDevices()); }, {}, false},
        {QObject::tr("Stages (PP) × VPP"), [](E e) { return QStringLiteral("%1 × %2").arg(e.plan().pp()).arg(e.plan().vpp); }, {}, false},
        {QObject::tr("Micro-batches"), [](E e) { return QString::number(e.prediction().num_microbatches); }, {}, false},
        {QObject::tr("Target"), [](E e) { return style::targetLabel(e.target); }, {}, false},
        {QObject::tr("Device types"), [](E e) { return joinStages(e.plan(), [](const StagePlan& s) { return QString::fromStdString(s.device_type); }); }, {}, false},
        {QObject::tr("Layers per stage"), [](E e) { return joinStages(e.plan(), [](const StagePlan& s) { return QString::number(s.num_layers); }); }, {}, false},
        {QObject::tr("TP/CP/DP per stage"), [](E e) { return joinStages(e.plan(), [](const StagePlan& s) { return QStringLiteral("%1/%2/%3").arg(s.tp).arg(s.cp).arg(s.dp); }); }, {}, false},
        {QObject::tr("EP/ETP/EDP per stage"), [](E e) { return joinStages(e.plan(), [](const StagePlan& s) { return QStringLiteral("%1/%2/%3").arg(s.ep).arg(s.etp).arg(s.edp); }); }, {}, false},
        {QObject::tr("Recompute per stage"), [](E e) { return joinStages(e.plan(), [](const StagePlan& s) { return style::recomputeLabel(s); }); }, {}, false},
        {QObject::tr("Micro-batch size per stage"), [](E e) { return joinStages(e.plan(), [](const StagePlan& s) { return QString::number(s.micro_batch_size); }); }, {}, false},
        {QObject::tr("Fits in memory"), [](E e) { return e.prediction().feasible ? QObject::tr("yes") : QString::fromStdString(e.prediction().infeasible_reason); }, {}, false},
    };
}

const QColor kDifferent(255, 236, 179);   // amber 100: rows where the plans differ

} // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent)
    , m_chooser(new QListWidget(this))
    , m_table(new QTableWidget(this))
    , m_hint(new QLabel(this))
    , m_detail(new QWidget)
    , m_detailLayout(new QVBoxLayout(m_detail))
{
    setObjectName(QStringLiteral("compare"));
    m_chooser->setObjectName(QStringLiteral("compareChooser"));
    m_chooser->setToolTip(tr("Tick two or more plans to compare"));
    m_chooser->setMaximumWidth(240);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideMiddle);
    m_hint->setWordWrap(true);

    auto* chooserBox = new QWidget(this);
    auto* chooserLayout = new QVBoxLayout(chooserBox);
    chooserLayout->setContentsMargins(0, 0, 0, 0);
    chooserLayout->addWidget(new QLabel(tr("Plans to compare:"), chooserBox));
    chooserLayout->addWidget(m_chooser, 1);

    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);   // shared time axis: never scroll sideways
    scroll->setWidget(m_detail);
    m_detailLayout->setContentsMargins(0, 0, 0, 0);

    // The table is as tall as its rows; the charts below get the rest and scroll.
    m_table->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    auto* rightBox = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(rightBox);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(m_hint);
    rightLayout->addWidget(m_table);
    rightLayout->addWidget(scroll, 1);

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(chooserBox);
    layout->addWidget(rightBox, 1);

    connect(m_chooser, &QListWidget::itemChanged, this, [this] {
        if (m_updatingChooser)
            return;
        QList<int> rows;
        for (int i = 0; i < m_chooser->count(); ++i) {
            if (m_chooser->item(i)->checkState() == Qt::Checked)
                rows << i;
        }
        m_compared = rows;
        rebuild();
    });
}

void CompareView::setPlans(const std::vector<ExplorerPlan>& plans)
{
    m_plans = plans;
    m_compared.clear();
    m_updatingChooser = true;
    m_chooser->clear();
    for (const ExplorerPlan& e : m_plans) {
        auto* item = new QListWidgetItem(QStringLiteral("%1 (%2)").arg(displayName(e), style::formatSeconds(e.prediction().iteration_time_s)), m_chooser);
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Unchecked);
    }
    m_updatingChooser = false;
    rebuild();
}

void CompareView::compareWithDefault(int selectedRow)
{
    const int n = static_cast<int>(m_plans.size());
    if (selectedRow < 0 || selectedRow >= n) {
        setCompared({});
        return;
    }
    int other = -1;
    for (int i = 0; i < n && other < 0; ++i) {
        if (i != selectedRow && m_plans[static_cast<size_t>(i)].kind == ExplorerPlan::Kind::Current)
            other = i;
    }
    for (int i = 0; i < n && other < 0; ++i) {
        if (i != selectedRow && m_plans[static_cast<size_t>(i)].kind == ExplorerPlan::Kind::Ranked)
            other = i;
    }
    for (int i = 0; i < n && other < 0; ++i) {
        if (i != selectedRow)
            other = i;
    }
    QList<int> rows{selectedRow};
    if (other >= 0)
        rows << other;
    setCompared(rows);
}

void CompareView::setCompared(const QList<int>& rows)
{
    m_compared.clear();
    for (int r : rows) {
        if (r >= 0 && r < static_cast<int>(m_plans.size()) && !m_compared.contains(r))
            m_compared << r;
    }
    m_updatingChooser = true;
    for (int i = 0; i < m_chooser->count(); ++i)
        m_chooser->item(i)->setCheckState(m_compared.contains(i) ? Qt::Checked : Qt::Unchecked);
    m_updatingChooser = false;
    rebuild();
}

QStringList CompareView::differingRows() const
{
    QStringList rows;
    for (int r = 0; r < m_table->rowCount(); ++r) {
        if (m_table->columnCount() > 0 && m_table->item(r, 0) && m_table->item(r, 0)->background().color() == kDifferent)
            rows << m_table->verticalHeaderItem(r)->text();
    }
    return rows;
}

void CompareView::syncRange(TimelinePlot* source)
{
    if (m_syncing)
        return;
    m_syncing = true;
    const QCPRange range = source->xAxis->range();
    for (TimelinePlot* t : m_timelines) {
        if (t != source) {
            t->xAxis->setRange(range);
            t->replot(QCustomPlot::rpQueuedReplot);
        }
    }
    m_syncing = false;
}

void CompareView::rebuild()
{
    // Detail widgets are rebuilt for the chosen plans (a handful of small charts).
    for (TimelinePlot* t : m_timelines)
        t->disconnect(this);
    QLayoutItem* child;
    while ((child = m_detailLayout->takeAt(0)) != nullptr) {
        if (child->widget())
            child->widget()->deleteLater();
        delete child;
    }
    m_timelines.clear();
    m_partitions.clear();
    m_memory.clear();

    std::vector<const ExplorerPlan*> plans;
    for (int r : m_compared)
        plans.push_back(&m_plans[static_cast<size_t>(r)]);

    const std::vector<Row> rows = tableRows();
    m_table->clear();
    m_table->setColumnCount(static_cast<int>(plans.size()));
    m_table->setRowCount(plans.size() >= 2 ? static_cast<int>(rows.size()) : 0);
    QStringList headers;
    for (const ExplorerPlan* e : plans)
        headers << displayName(*e);
    m_table->setHorizontalHeaderLabels(headers);

    m_table->setFixedHeight(m_table->horizontalHeader()->sizeHint().height() + 2 * m_table->frameWidth()
                            + m_table->rowCount() * m_table->verticalHeader()->defaultSectionSize());
    if (plans.size() < 2) {
        m_hint->setText(tr("Tick at least two plans on the left to compare them."));
        return;
    }
    m_hint->setText(tr("Rows where the plans differ are highlighted; the best figure is in bold. "
                       "Timelines share one time axis: zoom one and the others follow."));

    for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
        const Row& row = rows[static_cast<size_t>(r)];
        m_table->setVerticalHeaderItem(r, new QTableWidgetItem(row.label));
        QStringList texts;
        for (const ExplorerPlan* e : plans)
            texts << row.text(*e);
        const bool differs = texts.count(texts.front()) != texts.size();
        int best = -1;
        if (row.value && differs) {
            for (int c = 0; c < static_cast<int>(plans.size()); ++c) {
                const double v = row.value(*plans[static_cast<size_t>(c)]);
                if (best < 0 || (row.higherIsBetter ? v > row.value(*plans[static_cast<size_t>(best)]) : v < row.value(*plans[static_cast<size_t>(best)])))
                    best = c;
            }
        }
        for (int c = 0; c < static_cast<int>(plans.size()); ++c) {
            auto* item = new QTableWidgetItem(texts[c]);
            if (differs) {
                item->setBackground(kDifferent);
                item->setForeground(Qt::black);
            }
            if (c == best) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
            m_table->setItem(r, c, item);
        }
    }

    // Shared scales: the longest iteration for time, the most layers for width, the
    // largest memory for the bars.
    double maxTime = 0;
    int maxLayers = 0;
    for (const ExplorerPlan* e : plans) {
        maxTime = std::max(maxTime, buildPlanTimeline(e->plan(), e->prediction()).iterationEnd);
        int layers = 0;
        for (const StagePlan& s : e->plan().stages)
            layers += s.num_layers;
        maxLayers = std::max(maxLayers, layers);
    }

    auto* memoryRow = new QWidget(m_detail);
    auto* memoryLayout = new QHBoxLayout(memoryRow);
    memoryLayout->setContentsMargins(0, 0, 0, 0);
    double maxGiB = 0;
    for (const ExplorerPlan* e : plans) {
        auto* title = new QLabel(QStringLiteral("<b>%1</b> · %2 · %3").arg(displayName(*e).toHtmlEscaped(), kindLabel(e->kind),
                                                                            style::formatSeconds(e->prediction().iteration_time_s)),
                                 m_detail);
        m_detailLayout->addWidget(title);
        auto* partition = new StagePartitionView(m_detail);
        const PlanTimeline tl = buildPlanTimeline(e->plan(), e->prediction());
        partition->setCompact(true);
        partition->setTotalLayers(maxLayers);
        partition->setPlan(e->plan(), e->prediction(), tl.bottleneck);
        m_detailLayout->addWidget(partition);
        m_partitions << partition;

        auto* timeline = new TimelinePlot(m_detail);
        timeline->setTimeline(tl);
        timeline->setTimeLimit(maxTime);
        timeline->resetZoom();
        if (!m_timelines.isEmpty()) {
            // One legend is enough: the others stay in their layouts (QCustomPlot owns
            // them there) but shrink to nothing.
            timeline->legend->setVisible(false);
            timeline->legend->setMargins(QMargins());
            timeline->legend->setMaximumSize(QWIDGETSIZE_MAX, 0);
        }
        timeline->legend->setWrap(4);                          // two rows: the charts are narrower here
        timeline->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
        timeline->setMinimumHeight(std::min(360, 60 + tl.stages * 24 + (m_timelines.isEmpty() ? 24 : 0)));
        timeline->replot();
        m_detailLayout->addWidget(timeline);
        m_timelines << timeline;
        connect(timeline->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this, timeline] { syncRange(timeline); });

        auto* memory = new MemoryBarsPlot(memoryRow);
        memory->setPlan(e->plan(), e->prediction());
        memory->plotLayout()->insertRow(0);
        memory->plotLayout()->addElement(0, 0, new QCPTextElement(memory, displayName(*e), QFont(font().family(), font().pointSize(), QFont::Bold)));
        memory->legend->setVisible(m_memory.isEmpty());
        memory->legend->setWrap(3);
        memory->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
        memory->setMinimumHeight(300);
        maxGiB = std::max(maxGiB, memory->dataMaxGiB());
        memoryLayout->addWidget(memory);
        m_memory << memory;
    }
    for (MemoryBarsPlot* m : m_memory)
        m->setMaxGiB(maxGiB);
    m_detailLayout->addWidget(new QLabel(tr("<b>Memory per device</b> (same scale)"), m_detail));
    m_detailLayout->addWidget(memoryRow);
    m_detailLayout->addStretch(1);
}

} // namespace hapmoe::ui
