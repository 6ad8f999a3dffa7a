#include "CompareView.h"

#include "ExplorerStyle.h"
#include "MemoryBarsPlot.h"
#include "PlanTimeline.h"
#include "StagePartitionView.h"
#include "TimelinePlot.h"

#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QCoreApplication>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QStyle>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <functional>

namespace hapmoe::ui {

namespace {

// One table row: a label, the text per plan, and optionally a number to rank by.
struct Row {
    QString label;
    std::function<QString(const ExplorerPlan&)> text;
    std::function<double(const ExplorerPlan&)> value;   // empty: not ranked
    bool higherIsBetter = false;
    // The value in full (differences below the shown digits): value x scale, then the unit.
    const char* unit = "";
    double scale = 1;
    QString tip = {};     // the row header's tooltip
    bool moeOnly = false; // left out for a dense model
    // The time of one iteration's work: where the plans' global batches differ (a current
    // configuration that keeps its own), ranked per sequence, as tokens/s compares them.
    bool perSequence = false;
};

QString joinStages(const Plan& plan, const std::function<QString(const StagePlan&)>& f)
{
    // Runs of equal neighbouring stages are written once with their count, "MI300X ×6 | H800 ×2",
    // so that an 8-stage plan reads in a column instead of being elided.
    QStringList items;
    for (const StagePlan& s : plan.stages)
        items << f(s);
    return style::joinRuns(items, QStringLiteral(" | "));
}

std::vector<Row> tableRows(bool moe)
{
    using E = const ExplorerPlan&;
    std::vector<Row> rows = {
        {QObject::tr("Source"), [](E e) { return kindLabel(e.kind); }, {}, false},
        {QObject::tr("Iteration time"), [](E e) { return style::formatSeconds(e.prediction().iteration_time_s); },
         [](E e) { return e.prediction().iteration_time_s; }, false, "s", 1,
         QObject::tr("The time of one iteration, of the plan's global batch: plans of different global batches "
                     "are ranked by the time per sequence"),
         false, true},
        {QObject::tr("Tokens/s"), [](E e) { return QStringLiteral("%L1").arg(e.prediction().tokens_per_s, 0, 'f', 0); },
         [](E e) { return e.prediction().tokens_per_s; }, true, "tokens/s"},
        {QObject::tr("TFLOP/s per device"), [](E e) { return QString::number(e.prediction().tflops_per_device, 'f', 1); },
         [](E e) { return e.prediction().tflops_per_device; }, true, "TFLOP/s"},
        {QObject::tr("MFU"), [](E e) { return QStringLiteral("%1 %").arg(e.prediction().mfu * 100, 0, 'f', 1); },
         [](E e) { return e.prediction().mfu; }, true, "%", 100},
        // Ranked by share, not bytes: 70 GiB of a 192 GiB device is more room than 60 of 80.
        {QObject::tr("Fullest device"),
         [](E e) {
             const style::FullestDevice f = style::fullestDevice(e.prediction());
             return f.stage < 0 ? QString()
                                : QStringLiteral("%1 (S%2)").arg(style::fullestDeviceText(f)).arg(f.stage);
         },
         [](E e) { return style::fullestDevice(e.prediction()).share(); }, false, "%", 100,
         QObject::tr("The device with the largest share of its memory in use, as in the plan list: used/capacity and its stage")},
        // Not ranked: the most bytes on any device, whatever its capacity (the JSON's peak_memory_gib).
        {QObject::tr("Peak memory"), [](E e) { return QStringLiteral("%1 GiB").arg(e.prediction().peak_memory_gib, 0, 'f', 1); },
         {}, false, "GiB", 1, QObject::tr("The most bytes on any device, whatever its capacity (peak_memory_gib)")},
        // Not ranked: it is the slowest stage's sends (as in Breakdown), none when that stage
        // is the last, which says nothing about the plan's other sends.
        {QObject::tr("Pipeline send"), [](E e) { return style::formatSeconds(e.prediction().breakdown.pipeline_send); },
         {}, false, "s", 1,
         QObject::tr("The slowest stage's pipeline sends over the iteration, as in Breakdown: none when the slowest "
                     "stage is the last, which sends nothing on")},
        {QObject::tr("Pipeline bubble"), [](E e) { return style::formatSeconds(e.prediction().breakdown.pipeline_bubble); },
         [](E e) { return e.prediction().breakdown.pipeline_bubble; }, false, "s"},
        {QObject::tr("Data-parallel sync"), [](E e) { return style::formatSeconds(e.prediction().breakdown.dp_sync); },
         [](E e) { return e.prediction().breakdown.dp_sync; }, false, "s", 1,
         QObject::tr("The exposed gradient reduction and parameter gather, as in Breakdown")},
        {QObject::tr("Optimizer step"), [](E e) { return style::formatSeconds(e.prediction().breakdown.optimizer); },
         [](E e) { return e.prediction().breakdown.optimizer; }, false, "s", 1,
         QObject::tr("The optimizer step, as in Breakdown; on the host for the share of the states kept there")},
        {QObject::tr("Optimizer states"),
         [](E e) { return style::optimizerPlaceLabel(e.plan().optimizer_offload_fraction); },
         {}, false, "", 1,
         QObject::tr("Where the optimizer states are kept: on the devices, or a share of every rank's in host memory "
                     "(--optimizer-cpu-offload, --optimizer-offload-fraction)")},
        {QObject::tr("Devices used"), [](E e) { return QString::number(e.plan().numDevices()); }, {}, false},
        {QObject::tr("Stages (PP) × VPP"), [](E e) { return QStringLiteral("%1 × %2").arg(e.plan().pp()).arg(e.plan().vpp); }, {}, false},
        {QObject::tr("Micro-batches"), [](E e) { return QString::number(e.prediction().num_microbatches); }, {}, false},
        // A current configuration that cannot run the search's batch keeps its own (the
        // search's note says so): its iteration time is then of other work; tokens/s compares.
        {QObject::tr("Global batch"), [](E e) { return QString::number(e.plan().global_batch_size); }, {}, false, "", 1,
         QObject::tr("Sequences per iteration: iteration times of different global batches are of different work "
                     "(tokens/s compares them)")},
        {QObject::tr("Target"), [](E e) { return e.launch_problem.empty() ? style::targetLabel(e.target) : QObject::tr("none"); },
         {}, false},
        {QObject::tr("Device types"), [](E e) { return joinStages(e.plan(), [](const StagePlan& s) { return QString::fromStdString(s.device_type); }); }, {}, false},
        {QObject::tr("Layers per stage"), [](E e) { return joinStages(e.plan(), [](const StagePlan& s) { return QString::number(s.num_layers); }); }, {}, false},
        {QObject::tr("TP/CP/DP per stage"), [](E e) { return joinStages(e.plan(), [](const StagePlan& s) { return QStringLiteral("%1/%2/%3").arg(s.tp).arg(s.cp).arg(s.dp); }); }, {}, false},
        {QObject::tr("EP/ETP/EDP per stage"), [](E e) { return joinStages(e.plan(), [](const StagePlan& s) { return QStringLiteral("%1/%2/%3").arg(s.ep).arg(s.etp).arg(s.edp); }); }, {}, false,
         "", 1, QString(), true},
        {QObject::tr("Recompute per stage"), [](E e) { return joinStages(e.plan(), [](const StagePlan& s) { return style::recomputeLabel(s); }); }, {}, false},
        {QObject::tr("Micro-batch size per stage"), [](E e) { return joinStages(e.plan(), [](const StagePlan& s) { return QString::number(s.micro_batch_size); }); }, {}, false},
        {QObject::tr("Fits in memory"), [](E e) { return e.prediction().feasible ? QObject::tr("yes") : QString::fromStdString(e.prediction().infeasible_reason); }, {}, false},
    };
    if (!moe)
        rows.erase(std::remove_if(rows.begin(), rows.end(), [](const Row& r) { return r.moeOnly; }), rows.end());
    return rows;
}

// Marks a table item of a row where the plans differ (coloured by paintDifferences).
constexpr int kDiffersRole = Qt::UserRole + 1;

// The least width of a chart. Without it a chart's minimum is its legend's width for the
// columns of its last layout (all entries in one row at first), which would widen the charts
// beyond the area, and the area never scrolls sideways: the charts would be cut off.
constexpr int kChartMinWidth = 320;

} // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent)
    , m_chooser(new QListWidget(this))
    , m_table(new QTableWidget(this))
    , m_hint(new QLabel(this))
    , m_top(new QWidget(this))
    , m_split(new QSplitter(Qt::Vertical, this))
    , m_scroll(new QScrollArea(this))
    , m_detail(new QWidget)
    , m_detailLayout(new QVBoxLayout(m_detail))
{
    setObjectName(QStringLiteral("compare"));
    m_chooser->setObjectName(QStringLiteral("compareChooser"));
    m_chooser->setToolTip(tr("Tick two or more plans to compare"));
    m_chooser->setMaximumWidth(220);
    // A long name ("current (train_mixtral_8x7b_distributed.sh)") keeps both ends and its
    // time, "current (train_mi…ted.sh) (24.842 s)", whole in the tooltip; no sideways scroll.
    m_chooser->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_chooser->setTextElideMode(Qt::ElideMiddle);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideMiddle);
    // A plan's name too long for its column loses its end, not both ends, with an ellipsis
    // (elideHeaders; the header's tooltip holds it whole).
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    // Queued: a stretched header resizes its sections one after the other, and signals
    // only some of them; once they are all done, every name is shortened to its own.
    connect(m_table->horizontalHeader(), &QHeaderView::sectionResized, this, [this] {
        if (!m_elidePending) {
            m_elidePending = true;
            QMetaObject::invokeMethod(this, &CompareView::elideHeaders, Qt::QueuedConnection);
        }
    });
    m_hint->setWordWrap(true);

    // Above: the plans to compare beside the table. Below: the charts, over the whole
    // width, at sizes where they read and scrolling when they do not all fit.
    auto* chooserBox = new QWidget(m_top);
    m_chooserBox = chooserBox;
    auto* chooserLayout = new QVBoxLayout(chooserBox);
    chooserLayout->setContentsMargins(0, 0, 0, 0);
    chooserLayout->addWidget(new QLabel(tr("Plans to compare:"), chooserBox));
    chooserLayout->addWidget(m_chooser, 1);
    auto* topLayout = new QHBoxLayout(m_top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(chooserBox);
    topLayout->addWidget(m_table, 1);

    m_scroll->setObjectName(QStringLiteral("compareCharts"));
    m_scroll->setWidgetResizable(true);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);   // shared time axis: never scroll sideways
    // Always there, so that its appearing cannot change the width the charts are laid out for.
    m_scroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    m_scroll->setWidget(m_detail);
    m_scroll->setMinimumHeight(120);
    m_scroll->viewport()->installEventFilter(this);
    m_detailLayout->setContentsMargins(4, 4, 4, 4);

    m_split->setObjectName(QStringLiteral("compareSplitter"));
    m_split->addWidget(m_top);
    m_split->addWidget(m_scroll);
    m_split->setChildrenCollapsible(false);
    m_split->setStretchFactor(0, 0);
    m_split->setStretchFactor(1, 1);
    m_split->installEventFilter(this);
    connect(m_split, &QSplitter::splitterMoved, this, [this] { m_splitByUser = true; });

    // In a narrow view the list gives its room to the table: the plans are ticked in the
    // menu of a button beside the hint instead.
    m_chooserButton = new QToolButton(this);
    m_chooserButton->setObjectName(QStringLiteral("compareChooserButton"));
    m_chooserButton->setText(tr("Plans to compare"));
    m_chooserButton->setToolTip(m_chooser->toolTip());
    m_chooserButton->setPopupMode(QToolButton::InstantPopup);
    auto* menu = new QMenu(m_chooserButton);
    m_chooserButton->setMenu(menu);
    connect(menu, &QMenu::aboutToShow, this, [this, menu] {
        menu->clear();
        for (int i = 0; i < m_chooser->count(); ++i) {
            QListWidgetItem* item = m_chooser->item(i);
            QAction* action = menu->addAction(item->text());
            action->setCheckable(true);
            action->setChecked(item->checkState() == Qt::Checked);
            connect(action, &QAction::toggled, this,
                    [item](bool on) { item->setCheckState(on ? Qt::Checked : Qt::Unchecked); });
        }
    });
    m_chooserButton->hide();
    auto* hintRow = new QHBoxLayout;
    hintRow->addWidget(m_hint, 1);
    hintRow->addWidget(m_chooserButton, 0, Qt::AlignTop);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(hintRow);
    layout->addWidget(m_split, 1);

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

void CompareView::setModelTraits(bool expertKnobs, int mtpLayers)
{
    if (m_expertKnobs == expertKnobs && m_mtpLayers == mtpLayers)
        return;
    m_expertKnobs = expertKnobs;
    m_mtpLayers = mtpLayers;
    rebuild();
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
        item->setToolTip(item->text());
    }
    m_updatingChooser = false;
    // As wide as its entries need, so that the table beside it keeps the width.
    const int needed = m_chooser->sizeHintForColumn(0) + 2 * m_chooser->frameWidth()
        + m_chooser->verticalScrollBar()->sizeHint().width();
    m_chooser->setMaximumWidth(std::clamp(needed, 120, 220));
    rebuild();
    fitChooser();
}

void CompareView::elideHeaders()
{
    m_elidePending = false;
    QHeaderView* header = m_table->horizontalHeader();
    const QFontMetrics fm(header->font());
    const int margins = 2 * header->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, header) + 4;
    for (int c = 0; c < m_table->columnCount(); ++c) {
        QTableWidgetItem* item = m_table->horizontalHeaderItem(c);
        if (!item)
            continue;
        const QString text = fm.elidedText(item->toolTip(), Qt::ElideRight, std::max(0, header->sectionSize(c) - margins));
        if (item->text() != text)
            item->setText(text);
    }
}

void CompareView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitChooser();
}

void CompareView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        paintDifferences();
}

void CompareView::paintDifferences()
{
    const QPalette& pal = palette();
    for (int r = 0; r < m_table->rowCount(); ++r)
        for (int c = 0; c < m_table->columnCount(); ++c)
            if (QTableWidgetItem* item = m_table->item(r, c))
                style::markDiffers(item, item->data(kDiffersRole).toBool(), pal);
}

void CompareView::fitChooser()
{
    // The table needs its row names and two columns of figures ("1,484,558") beside the list.
    const QFontMetrics fm(font());
    int names = 0;
    for (const Row& row : tableRows(m_expertKnobs))
        names = std::max(names, fm.horizontalAdvance(row.label));
    const int table = names + 2 * (fm.horizontalAdvance(QStringLiteral("1,484,558")) + 24) + 4 * m_table->frameWidth() + 16;
    const bool narrow = width() < m_chooser->maximumWidth() + table;
    if (narrow == m_narrow)
        return;
    m_narrow = narrow;
    m_chooserBox->setVisible(!narrow);
    m_chooserButton->setVisible(narrow);
    if (m_compared.size() < 2)
        m_hint->setText(tickHint());
}

bool CompareView::choosesInAMenu() const
{
    return m_narrow;
}

QString CompareView::tickHint() const
{
    if (m_plans.empty())
        return tr("No plans to compare.");
    return m_narrow ? tr("Tick at least two plans under \u201cPlans to compare\u201d to compare them.")
                    : tr("Tick at least two plans on the left to compare them.");
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
        if (m_table->columnCount() > 0 && m_table->item(r, 0) && m_table->item(r, 0)->data(kDiffersRole).toBool())
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
    m_memoryRow = nullptr;
    m_memoryGrid = nullptr;
    m_memoryColumns = 0;

    std::vector<const ExplorerPlan*> plans;
    for (int r : m_compared)
        plans.push_back(&m_plans[static_cast<size_t>(r)]);

    const std::vector<Row> rows = tableRows(m_expertKnobs);
    m_table->clear();
    m_table->setColumnCount(static_cast<int>(plans.size()));
    m_table->setRowCount(plans.size() >= 2 ? static_cast<int>(rows.size()) : 0);
    QStringList headers;
    for (const ExplorerPlan* e : plans)
        headers << displayName(*e);
    m_table->setHorizontalHeaderLabels(headers);
    for (int c = 0; c < headers.size(); ++c)
        m_table->horizontalHeaderItem(c)->setToolTip(headers[c]);
    elideHeaders();
    // The table scrolls when the splitter gives it less than all of its rows.
    m_table->setMinimumHeight(m_table->horizontalHeader()->sizeHint().height() + 2 * m_table->frameWidth()
                              + 3 * m_table->verticalHeader()->defaultSectionSize());
    if (plans.size() < 2) {
        m_hint->setText(tickHint());
        fitSplit();
        return;
    }
    const bool batchesDiffer = std::any_of(plans.begin(), plans.end(), [&](const ExplorerPlan* e) {
        return e->plan().global_batch_size != plans.front()->plan().global_batch_size;
    });
    // Peak memory and Pipeline send are not ranked (their header tooltips say why), nor the
    // plans' settings: the hint says so, so that a row without bold does not read as a tie.
    const QString ranked = tr("Rows where the plans differ are highlighted; in the rows of figures the best is in bold "
                              "(not Peak memory, whatever the capacity, nor Pipeline send, of the slowest stage alone).");
    m_hint->setText(batchesDiffer ? ranked + tr(" The global batches differ: the iteration times are ranked per sequence.")
                                  : ranked);

    for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
        const Row& row = rows[static_cast<size_t>(r)];
        auto* header = new QTableWidgetItem(row.label);
        header->setToolTip(row.tip);
        m_table->setVerticalHeaderItem(r, header);
        QStringList texts;
        for (const ExplorerPlan* e : plans)
            texts << row.text(*e);
        bool differs = texts.count(texts.front()) != texts.size();
        // Figures equal at the shown digits but not in value (two iteration times 1e-4 s
        // apart) are a difference too: highlighted, the best in bold, the values in full in
        // the tooltip.
        bool belowDigits = false;
        if (row.value && !differs)
            for (const ExplorerPlan* e : plans) {
                const double a = row.value(*e), b = row.value(*plans.front());
                if (std::abs(a - b) > 1e-6 * std::max(std::abs(a), std::abs(b)))   // not rounding noise
                    belowDigits = true;
            }
        differs = differs || belowDigits;
        // Iteration times of different global batches are of different work: ranked per
        // sequence (secondsPerSequence), which each cell's tooltip gives.
        const bool perSequence = row.perSequence && batchesDiffer;
        const auto rankValue = [&](int c) {
            const ExplorerPlan& e = *plans[static_cast<size_t>(c)];
            return perSequence ? row.value(e) / std::max(1, e.plan().global_batch_size) : row.value(e);
        };
        int best = -1;
        if (row.value && differs) {
            for (int c = 0; c < static_cast<int>(plans.size()); ++c) {
                const double v = rankValue(c);
                if (best < 0 || (row.higherIsBetter ? v > rankValue(best) : v < rankValue(best)))
                    best = c;
            }
        }
        for (int c = 0; c < static_cast<int>(plans.size()); ++c) {
            auto* item = new QTableWidgetItem(texts[c]);
            item->setToolTip(texts[c]);   // long per-stage lists are elided in the cell
            if (belowDigits)
                item->setToolTip(tr("%1\nThe plans differ below the shown digits: %2 %3")
                                     .arg(texts[c], QString::number(row.value(*plans[static_cast<size_t>(c)]) * row.scale, 'g', 9),
                                          QString::fromLatin1(row.unit)));
            if (perSequence)
                item->setToolTip(tr("%1 for a global batch of %2: %3 per sequence")
                                     .arg(item->toolTip(), QString::number(plans[static_cast<size_t>(c)]->plan().global_batch_size),
                                          style::formatSeconds(rankValue(c))));
            item->setData(kDiffersRole, differs);
            if (c == best) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
            m_table->setItem(r, c, item);
        }
    }
    paintDifferences();

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

    auto heading = [this](const QString& html) {
        auto* label = new QLabel(html, m_detail);
        label->setWordWrap(true);
        m_detailLayout->addSpacing(4);
        m_detailLayout->addWidget(label);
    };
    const QFont titleFont(font().family(), font().pointSize(), QFont::Bold);

    // Like with like: the timelines one above the other on one time axis (only the lowest
    // writes the times), the memory charts on one scale, the partitions on one layer scale.
    heading(tr("<b>Timelines</b> on one time axis: zoom or pan one and the others follow"));
    for (size_t i = 0; i < plans.size(); ++i) {
        const ExplorerPlan* e = plans[i];
        auto* timeline = new TimelinePlot(m_detail);
        timeline->setMinimumWidth(kChartMinWidth);
        timeline->setTimeline(buildPlanTimeline(e->plan(), e->prediction(), m_mtpLayers));
        timeline->setTimeLimit(maxTime);
        timeline->resetZoom();
        timeline->plotLayout()->insertRow(0);
        timeline->plotLayout()->addElement(0, 0, new QCPTextElement(timeline, displayName(*e), titleFont));
        timeline->plotLayout()->setRowStretchFactor(0, 0.001);
        style::applyChartPalette(timeline);   // the title in the theme's text colour
        if (i > 0) {
            // One legend is enough: the others go back into the plot area's inset layout
            // (which owns them and takes no room), hidden, and leave no empty row.
            timeline->plotLayout()->take(timeline->legend);
            timeline->plotLayout()->simplify();
            timeline->axisRect()->insetLayout()->addElement(timeline->legend, Qt::AlignTop | Qt::AlignRight);
            timeline->legend->setVisible(false);
        }
        if (i + 1 < plans.size()) {
            // The same axis as the chart below: its grid lines, not its numbers again.
            timeline->xAxis->setTickLabels(false);
            timeline->xAxis->setLabel(QString());
        }
        timeline->replot();
        m_detailLayout->addWidget(timeline);
        m_timelines << timeline;
        connect(timeline->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this, timeline] { syncRange(timeline); });
        connect(timeline, &QCustomPlot::afterLayout, this, &CompareView::alignTimelines, Qt::QueuedConnection);
    }

    heading(tr("<b>Memory per device</b> in GiB, on one scale"));
    m_memoryRow = new QWidget(m_detail);
    m_memoryGrid = new QGridLayout(m_memoryRow);
    m_memoryGrid->setContentsMargins(0, 0, 0, 0);
    double maxGiB = 0;
    for (const ExplorerPlan* e : plans) {
        auto* memory = new MemoryBarsPlot(m_memoryRow);
        memory->setMinimumWidth(kChartMinWidth);
        memory->setPlan(e->plan(), e->prediction());
        memory->plotLayout()->insertRow(0);
        memory->plotLayout()->addElement(0, 0, new QCPTextElement(memory, displayName(*e), titleFont));
        memory->plotLayout()->setRowStretchFactor(0, 0.001);
        style::applyChartPalette(memory);
        memory->yAxis->setLabel(QString());   // the heading gives the unit
        // One legend; the hidden ones keep their room so that side by side the bars of
        // every chart stand on the same baseline at the same scale.
        memory->legend->setVisible(m_memory.isEmpty());
        memory->setMinimumHeight(320);
        memory->installEventFilter(this);   // the wheel scrolls the charts (eventFilter)
        // One scale: as much room above and below every chart as the labels of any need.
        connect(memory, &MemoryBarsPlot::labelRoomChanged, this, &CompareView::alignMemoryCharts, Qt::QueuedConnection);
        connect(memory, &QCustomPlot::afterLayout, this, &CompareView::alignMemoryCharts, Qt::QueuedConnection);
        maxGiB = std::max(maxGiB, memory->dataMaxGiB());
        m_memory << memory;
    }
    for (MemoryBarsPlot* m : m_memory)
        m->setMaxGiB(maxGiB);
    m_detailLayout->addWidget(m_memoryRow);

    heading(tr("<b>Stage partitions</b> on one layer scale"));
    for (const ExplorerPlan* e : plans) {
        m_detailLayout->addWidget(new QLabel(QStringLiteral("%1 · %2")
                                                 .arg(nameAndKindHtml(*e, QStringLiteral(" · ")),
                                                      style::formatSeconds(e->prediction().iteration_time_s)),
                                             m_detail));
        auto* partition = new StagePartitionView(m_detail);
        partition->setCompact(true);
        partition->setModelTraits(m_expertKnobs, m_mtpLayers);
        partition->setTotalLayers(maxLayers);
        partition->setPlan(e->plan(), e->prediction(), buildPlanTimeline(e->plan(), e->prediction()).bottleneck);
        m_detailLayout->addWidget(partition);
        m_partitions << partition;
    }
    m_detailLayout->addStretch(1);
    arrangeCharts();
    fitSplit();
}

bool CompareView::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::Resize) {
        if (watched == m_scroll->viewport())
            arrangeCharts();
        else if (watched == m_split)
            fitSplit();
    }
    // The memory charts do not zoom: over them the wheel scrolls the charts, as anywhere else
    // in the area (QCustomPlot would take the event). The timelines zoom their shared axis.
    if (event->type() == QEvent::Wheel && m_memory.contains(qobject_cast<MemoryBarsPlot*>(watched))) {
        QCoreApplication::sendEvent(m_scroll->viewport(), event);
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

void CompareView::arrangeCharts()
{
    const int width = m_scroll->viewport()->width() - m_detailLayout->contentsMargins().left()
        - m_detailLayout->contentsMargins().right();
    if (width <= 0)
        return;
    // A lane tall enough for its label, the strip for the iteration label above the lanes,
    // the plan's name; the first chart also holds the legend, the last the time axis.
    const QFontMetrics fm(font());
    const int line = fm.height();
    for (int i = 0; i < m_timelines.size(); ++i) {
        TimelinePlot* t = m_timelines[i];
        const int lanes = std::max(1, t->timeline().stages);
        // The plot area keeps its own least height (QCPAxisRect's), more than one lane's: a
        // one-lane chart counts that, or the legend above it is squeezed.
        int h = std::max(lanes * (line + 6), t->axisRect()->minimumSize().height()) + (line + 6) + (line + 10);
        if (i == 0)
            h += style::fitLegendColumns(t->legend, width) * (line + 6) + 6;
        h += i + 1 == m_timelines.size() ? 2 * line + 18 : 10;
        t->setMinimumHeight(h);
        t->setMaximumHeight(h);
    }
    // Side by side while each chart keeps room for its bars and their labels.
    constexpr int kMemoryMinWidth = 420;
    const int n = static_cast<int>(m_memory.size());
    const int columns = std::clamp(width / kMemoryMinWidth, 1, std::max(1, n));
    if (m_memoryGrid && columns != m_memoryColumns) {
        for (MemoryBarsPlot* m : m_memory)
            m_memoryGrid->removeWidget(m);
        for (int i = 0; i < n; ++i)
            m_memoryGrid->addWidget(m_memory[i], i / columns, i % columns);
        for (int c = 0; c < n; ++c)
            m_memoryGrid->setColumnStretch(c, c < columns ? 1 : 0);
        m_memoryColumns = columns;
    }
}

void CompareView::alignTimelines()
{
    int left = 0;
    for (TimelinePlot* t : m_timelines)
        left = std::max(left, t->axisRect()->margins().left());
    for (TimelinePlot* t : m_timelines) {
        QMargins minimum = t->axisRect()->minimumMargins();
        if (minimum.left() != left) {
            minimum.setLeft(left);
            t->axisRect()->setMinimumMargins(minimum);
            t->replot(QCustomPlot::rpQueuedReplot);
        }
    }
}

void CompareView::alignMemoryCharts()
{
    // Above: the labels over the bars; below: the stage labels, upright under narrow bars.
    int room = 0;
    int below = 0;
    for (MemoryBarsPlot* m : m_memory) {
        room = std::max(room, m->labelRoom());
        below = std::max(below, m->axisRect()->margins().bottom());
    }
    for (MemoryBarsPlot* m : m_memory) {
        m->setLabelRoomFloor(room);
        QMargins minimum = m->axisRect()->minimumMargins();
        if (minimum.bottom() != below) {
            minimum.setBottom(below);
            m->axisRect()->setMinimumMargins(minimum);
            m->replot(QCustomPlot::rpQueuedReplot);
        }
    }
}

void CompareView::fitSplit()
{
    // The table and the plans to compare need at most all their rows; they get up to 35 %
    // of the height and scroll beyond, the charts the rest.
    const int rowHeight = m_table->verticalHeader()->defaultSectionSize();
    const int tableHeight = m_table->horizontalHeader()->sizeHint().height() + 2 * m_table->frameWidth()
        + m_table->rowCount() * rowHeight;
    const int chooserHeight = fontMetrics().height() + 8 + 2 * m_chooser->frameWidth()
        + m_chooser->count() * std::max(m_chooser->sizeHintForRow(0), rowHeight);
    const int want = std::max({tableHeight, chooserHeight, m_table->minimumHeight()});
    m_top->setMaximumHeight(want);
    if (m_splitByUser)
        return;
    const int available = m_split->height() - m_split->handleWidth();
    if (available <= 0)
        return;
    const int top = std::min({want, std::max(m_table->minimumHeight(), static_cast<int>(available * 0.35)), available});
    m_split->setSizes({top, available - top});
}

} // namespace hapmoe::ui
