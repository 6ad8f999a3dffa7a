#include "BreakdownView.h"

#include "ExplorerPlan.h"
#include "ExplorerStyle.h"
#include "Theme.h"

#include <QCoreApplication>
#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QStyle>
#include <QTableWidget>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <iterator>

namespace hapmoe::ui {

namespace {

// What the breakdown's DP sync and optimizer bars are made of (CostModel::estimate): the
// sync that ends last before the gradient-norm barrier (its part after stage 0's last
// backward), the tied embeddings' all-reduce when the end
// stages reach the barrier last with it, the longest optimizer step and parameter all-gather
// after it. "+ the tail of S0 (DP sync
// + optimizer)" when one stage has both, naming only the parts there are: a stage of DP 1
// has no DP sync, a 0 s part would only mislead.
// Stage i's estimate, or none (-1 from syncStage and stepStage without stages).
const StageEstimate* stageOf(const Prediction& prediction, int i)
{
    return i >= 0 && i < static_cast<int>(prediction.stages.size()) ? &prediction.stages[static_cast<std::size_t>(i)] : nullptr;
}

QStringList tailTexts(const Prediction& prediction, int syncer, int stepper)
{
    const int n = static_cast<int>(prediction.stages.size());
    const StageEstimate* sy = stageOf(prediction, syncer);
    const StageEstimate* st = stageOf(prediction, stepper);
    const bool sync = sy && sy->beforeBarrier() > 0;
    // The step's all-gather is DP traffic: in the DP sync bar, and in "DP sync" when one
    // stage has both.
    QStringList step;
    if (st && st->optimizer > 0)
        step << BreakdownView::tr("optimizer");
    if (st && st->param_gather > 0 && (syncer != stepper || !sync))
        step << BreakdownView::tr("all-gather");
    // The tied embeddings' all-reduce counts when the end stages reach the barrier last with
    // it (barrierWait); behind a middle stage's later sync it costs nothing.
    const QString tied = barrierWait(prediction).tied ? BreakdownView::tr("+ tied-embedding all-reduce (S0, S%1)").arg(n - 1) : QString();
    QStringList out;
    if (sync && st && st->afterBarrier() > 0 && syncer == stepper) {
        out << (step.isEmpty() ? BreakdownView::tr("+ the tail of S%1 (DP sync)").arg(syncer)
                               : BreakdownView::tr("+ the tail of S%1 (DP sync + %2)").arg(syncer).arg(step.join(QStringLiteral(" + "))));
        if (!tied.isEmpty())
            out << tied;
        return out;
    }
    if (sync)
        out << BreakdownView::tr("+ the last DP sync to end (S%1)").arg(syncer);
    if (!tied.isEmpty())
        out << tied;
    if (!step.isEmpty())
        out << BreakdownView::tr("+ the longest step (S%1: %2)").arg(stepper).arg(step.join(QStringLiteral(" + ")));
    if (out.isEmpty())
        out << BreakdownView::tr("+ no tail (no DP sync or optimizer step)");
    return out;
}

constexpr int kSendBar = 3;
constexpr int kBubbleBar = 4;
constexpr int kSyncBar = 5;
constexpr int kOptimizerBar = 6;

// What the DP sync and optimizer bars hold, by stage, so that each can be traced to the
// table: "S0 sync 1.34 ms + S2 all-gather 79.4 ms", "S2 step". Empty for the other bars
// and where a bar holds nothing.
// The sync part of the DP sync bar's label, "S0 sync 1.34 ms": also quoted by the table's cell.
QString syncPartText(const BarrierWait& wait)
{
    return (wait.tied ? BreakdownView::tr("S%1 sync + tied all-reduce %2") : BreakdownView::tr("S%1 sync %2"))
        .arg(wait.stage)
        .arg(style::formatSeconds(wait.time));
}

QString barParts(const Prediction& prediction, int component)
{
    const BarrierWait wait = barrierWait(prediction);
    const int stepper = stepStage(prediction);
    const StageEstimate* st = stageOf(prediction, stepper);
    QStringList parts;
    if (component == kSyncBar) {
        if (wait.time > 0 && wait.stage >= 0)
            parts << syncPartText(wait);
        if (st && st->param_gather > 0)
            parts << BreakdownView::tr("S%1 all-gather %2").arg(stepper).arg(style::formatSeconds(st->param_gather));
    } else if (component == kOptimizerBar && st && st->optimizer > 0) {
        parts << BreakdownView::tr("S%1 step").arg(stepper);
    }
    return parts.join(QStringLiteral(" + "));
}

// The table gives every time in one unit, so that a row can be added up by eye.
QString milliseconds(double seconds)
{
    // Grouped as the plan table's counts are ("43,038.61"), so that a long step reads at a glance.
    return QStringLiteral("%L1").arg(seconds * 1e3, 0, 'f', 2);
}

constexpr int kSecondsRole = Qt::UserRole;

} // namespace

QBrush BreakdownView::componentBrush(int component, const QPalette& palette)
{
    // The timeline's colours where it has them: the send in its grey strip's colour, the
    // bubble hatched as the timeline's idle time, DP sync and optimizer as its tail; the rest
    // pale tints (ExplorerStyle.h), so that no bar reads as a device type or a problem.
    switch (component) {
    case 0: return style::computeColor();
    case 1: return style::tensorParallelColor();
    case 2: return style::dispatchColor();
    case kSendBar: return style::communicationColor(palette);
    case kBubbleBar: return QBrush(style::bubbleColor(palette), Qt::BDiagPattern);
    case kSyncBar: return style::dpSyncColor();
    case kOptimizerBar: return style::optimizerColor();
    }
    return {};
}

QVector<double> BreakdownView::componentValues(const Prediction& prediction)
{
    const TimeBreakdown& b = prediction.breakdown;
    return {b.compute, b.tensor_parallel, b.expert_dispatch, b.pipeline_send, b.pipeline_bubble, b.dp_sync, b.optimizer};
}

QStringList BreakdownView::componentNames()
{
    return {tr("Compute"), tr("TP/CP comm"), tr("Expert dispatch"), tr("Pipeline send"), tr("Pipeline bubble"), tr("DP sync"), tr("Optimizer")};
}

BreakdownView::BreakdownView(QWidget* parent)
    : QWidget(parent)
    , m_scroll(new QScrollArea(this))
    , m_plot(nullptr)
    , m_title(nullptr)
    , m_caption(nullptr)
    , m_table(nullptr)
    , m_notes(nullptr)
{
    setObjectName(QStringLiteral("breakdown"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_scroll);
    m_scroll->setObjectName(QStringLiteral("breakdownScroll"));
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setWidgetResizable(true);
    // Chart over table: in a short window the page scrolls down; the table alone scrolls
    // sideways when its columns are wider than the page.
    auto* page = new QWidget(m_scroll);
    auto* pageLayout = new QVBoxLayout(page);
    pageLayout->setContentsMargins(0, 0, 0, 0);
    m_plot = new QCustomPlot(page);
    m_caption = new QLabel(page);
    m_table = new QTableWidget(page);
    // The cost model's notes on the prediction, as the CLI prints them: where its figures
    // come from (a profile's tables or the analytic defaults), FP8, a nearly full device.
    m_notes = new QLabel(page);
    m_notes->setObjectName(QStringLiteral("breakdownNotes"));
    m_notes->setWordWrap(true);
    m_notes->setTextInteractionFlags(Qt::TextSelectableByMouse);
    pageLayout->addWidget(m_plot, 1);
    pageLayout->addWidget(m_caption);
    pageLayout->addWidget(m_table);
    pageLayout->addWidget(m_notes);
    m_scroll->setWidget(page);

    m_plot->setMinimumWidth(320);   // not the legend's width: the window may be narrow
    // The bars are not a sum over stages (the table below is per stage): the title says
    // which stage each part comes from.
    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, QString(), m_plot->font());
    m_title->setObjectName(QStringLiteral("breakdownTitle"));
    m_title->setMargins(QMargins(6, 4, 6, 0));
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->yAxis->setRangeReversed(true);
    m_plot->yAxis->setTickLength(0, 0);
    m_plot->yAxis->setSubTicks(false);
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->xAxis->setLabel(tr("seconds per iteration"));
    style::applyChartPalette(m_plot);
    connect(m_plot, &QCustomPlot::beforeReplot, this, &BreakdownView::fitTitle);
    connect(m_plot, &QCustomPlot::afterLayout, this, &BreakdownView::fitValueRange);

    m_caption->setObjectName(QStringLiteral("breakdownTableCaption"));
    m_caption->setWordWrap(true);

    m_table->setColumnCount(ColumnCount);
    // Short headers, two lines where needed, so that the columns are as narrow as their
    // figures; the tooltips say what each column holds.
    const QList<QPair<QString, QString>> headers = {
        {tr("Stage"), QString()},
        {tr("Device"), QString()},
        {tr("Fwd"), tr("Forward of one micro-batch, ms, with its send to the next stage")},
        {tr("Bwd"), tr("Backward of one micro-batch, ms, with recompute and the gradient's send")},
        {tr("Compute"), tr("GEMMs, attention, router, experts and recompute, forward and backward, ms per micro-batch")},
        {tr("TP/CP\ncomm"), tr("Tensor- and sequence-parallel collectives and exposed context-parallel exchange, "
                            "forward and backward, ms per micro-batch")},
        {tr("Dispatch"), tr("Expert dispatch and combine, forward and backward, ms per micro-batch")},
        {tr("P2P next\nfwd + bwd"), tr("Point-to-point with the next stage, ms per micro-batch: the activation sent to it "
                                       "in forward and its gradient received from it in backward (the part not hidden "
                                       "behind compute). Each transfer counts once, on the stage before it, so the last "
                                       "stage has none")},
        {tr("DP sync"), tr("Exposed gradient reduce-scatter (and the tied embeddings' all-reduce) before the "
                           "gradient-norm barrier: ms per iteration, not per micro-batch. The DP sync bar takes the part "
                           "of the sync that ends last which runs past S0's last backward (the cell's tooltip)")},
        {tr("All-\ngather"), tr("Exposed parameter all-gather of the distributed optimizer, after the step: "
                                "ms per iteration")},
        {tr("Opt\nstep"), tr("Optimizer step: ms per iteration")},
    };
    for (int c = 0; c < ColumnCount; ++c) {
        auto* item = new QTableWidgetItem(headers[c].first);
        item->setToolTip(headers[c].second);
        m_table->setHorizontalHeaderItem(c, item);
    }
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);   // as tall as its rows
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->setAlternatingRowColors(true);
    m_table->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_table->installEventFilter(this);
    m_plot->installEventFilter(this);
    setExpertDispatch(true);
    clear();
}

void BreakdownView::setExpertDispatch(bool shown)
{
    m_dispatchShown = shown;
    m_shown.clear();
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const QStringList names = componentNames();
    for (int i = 0; i < names.size(); ++i) {
        if (i == DispatchComponent && !shown)
            continue;
        ticker->addTick(m_shown.size(), names[i]);
        m_shown.push_back(i);
    }
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setRange(-0.6, m_shown.size() - 0.4);
    m_table->setColumnHidden(DispatchColumn, !shown);
    m_caption->setText(shown ? tr("Per stage and micro-batch, in ms: Fwd + Bwd = Compute + TP/CP comm + Dispatch + P2P "
                                  "(both passes). DP sync, All-gather and Opt step are per iteration. Bold: the cells the bars come from.")
                             : tr("Per stage and micro-batch, in ms: Fwd + Bwd = Compute + TP/CP comm + P2P "
                                  "(both passes). DP sync, All-gather and Opt step are per iteration. Bold: the cells the bars come from."));
    updateMinimumSizes();
    setPlan(m_plan, m_prediction);
}

void BreakdownView::colorBars()
{
    // The plottables are the bars in display order, one per shown component.
    for (int i = 0; i < m_plot->plottableCount() && i < m_shown.size(); ++i) {
        auto* bars = qobject_cast<QCPBars*>(m_plot->plottable(i));
        if (!bars)
            continue;
        const QBrush brush = componentBrush(m_shown[i], m_plot->palette());
        bars->setBrush(brush);
        bars->setPen(QPen(m_shown[i] == kBubbleBar ? brush.color() : brush.color().darker(130)));
    }
}

int BreakdownView::chartMinimumHeight() const
{
    // Three lines of title, six or seven bars a line and a half apart (their labels a line
    // tall), the value axis's numbers and its label, and the axis rect's margins.
    const int line = m_plot->fontMetrics().lineSpacing();
    return 3 * line + static_cast<int>(m_shown.size()) * qRound(1.5 * line) + 2 * line + 30;
}

void BreakdownView::updateMinimumSizes()
{
    m_plot->setMinimumHeight(chartMinimumHeight());
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    fitTableHeight();
}

void BreakdownView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        updateMinimumSizes();
}

bool BreakdownView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_table && event->type() == QEvent::Resize)
        fitTableHeight();
    // The chart's own palette change: this view's comes first, while the chart still has the
    // old palette, so the chart would take the colours of the theme before.
    if (watched == m_plot && event->type() == QEvent::PaletteChange) {
        style::applyChartPalette(m_plot);
        colorBars();
        m_title->setTextColor(m_plot->palette().color(QPalette::Text));
        m_plot->replot();
    }
    // The chart does not zoom: over it, the wheel scrolls the page (QCustomPlot would take
    // the event).
    if (watched == m_plot && event->type() == QEvent::Wheel) {
        QCoreApplication::sendEvent(m_scroll->viewport(), event);
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

void BreakdownView::fitTableHeight()
{
    QHeaderView* header = m_table->horizontalHeader();
    header->resizeSections(QHeaderView::ResizeToContents);
    int height = 2 * m_table->frameWidth() + header->sizeHint().height() + m_table->verticalHeader()->length();
    if (header->length() > m_table->width() - 2 * m_table->frameWidth())
        height += m_table->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, m_table);
    if (m_table->height() != height || m_table->minimumHeight() != height)
        m_table->setFixedHeight(height);
}

void BreakdownView::fitTitle()
{
    if (m_titleParts.size() < 3)
        return;
    // The equation on one line when it fits the chart's width, else its sides apart; then the
    // tail's parts on one more line, or one each.
    const QFontMetrics fm(m_title->font());
    auto fits = [&](const QString& line) { return fm.horizontalAdvance(line) + 16 <= m_plot->width(); };
    QStringList lines;
    const QString first = m_titleParts[0] + QLatin1Char(' ') + m_titleParts[1];
    if (fits(first))
        lines << first;
    else
        lines << m_titleParts[0] << m_titleParts[1];
    const QStringList tail = m_titleParts.mid(2);
    if (fits(tail.join(QLatin1Char(' '))))
        lines << tail.join(QLatin1Char(' '));
    else
        lines << tail;
    const QString text = lines.join(QLatin1Char('\n'));
    if (m_title->text() != text)
        m_title->setText(text);
}

void BreakdownView::fitValueRange()
{
    const int axis = m_plot->axisRect()->width();
    if (m_barLabels.size() != m_shown.size() || m_values.isEmpty() || axis <= 0)
        return;
    // A label's long form where it leaves its bar at least 30 % of the axis, else the short.
    for (int i = 0; i < m_shown.size(); ++i) {
        QCPItemText* label = m_barLabels[i];
        const int w = QFontMetrics(label->font()).horizontalAdvance(m_barTexts[i]) + label->padding().left() + 8;
        const QString& text = w <= 0.7 * axis ? m_barTexts[i] : m_barShortTexts[i];
        if (label->text() != text)
            label->setText(text);
    }
    // A bar of value v with a label w pixels wide ends inside an axis of `axis` pixels when
    // v / upper <= 1 - w / axis; the longest label gets at least 30 % of the width for its bar.
    double upper = 1e-6;
    for (int i = 0; i < m_shown.size(); ++i) {
        const QCPItemText* label = m_barLabels[i];
        const double v = m_values[m_shown[i]];
        const int w = QFontMetrics(label->font()).horizontalAdvance(label->text()) + label->padding().left() + 8;
        upper = std::max({upper, v * 1.05, v / std::max(0.3, 1.0 - double(w) / axis)});
    }
    const QCPRange range = m_plot->xAxis->range();
    if (range.lower == 0 && std::abs(range.upper - upper) <= 1e-9 * upper)
        return;
    m_plot->xAxis->setRange(0, upper);
    // The ticks were placed for the previous range in this layout pass: place them again
    // (their labels keep their height, so the margins stand).
    m_plot->axisRect()->update(QCPLayoutElement::upPreparation);
}

double BreakdownView::cellSeconds(int row, Column column) const
{
    const QTableWidgetItem* item = m_table->item(row, column);
    return item ? item->data(kSecondsRole).toDouble() : 0.0;
}

QString BreakdownView::barsTitle() const
{
    return m_title->text();
}

void BreakdownView::clear()
{
    setPlan(Plan{}, Prediction{});
}

void BreakdownView::setEmptyText(const QString& text)
{
    m_emptyText = text;
    if (m_title->text().isEmpty()) {
        style::setChartPlaceholder(m_plot, text);
        m_plot->replot();
    }
}

void BreakdownView::setPlan(const Plan& plan, const Prediction& prediction)
{
    if (&plan != &m_plan)
        m_plan = plan;
    if (&prediction != &m_prediction)
        m_prediction = prediction;
    m_values = componentValues(prediction);
    double sum = 0;
    for (double v : m_values)
        sum += v;

    m_plot->clearPlottables();
    m_plot->clearItems();
    m_barLabels.clear();
    m_barTexts.clear();
    m_barShortTexts.clear();
    const bool hasPlan = !prediction.stages.empty();
    for (int i = 0; hasPlan && i < m_shown.size(); ++i) {
        // One QCPBars per component so each keeps its own colour.
        const double v = m_values[m_shown[i]];
        auto* bars = new QCPBars(m_plot->yAxis, m_plot->xAxis);
        bars->setWidth(0.65);
        bars->addData(i, v);
        auto* label = new QCPItemText(m_plot);
        label->position->setCoords(v, i);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        label->setPadding(QMargins(6, 0, 0, 0));
        label->setColor(m_plot->palette().color(QPalette::Text));
        const QString text = QStringLiteral("%1  (%2 %)").arg(style::formatSeconds(v)).arg(sum > 0 ? 100.0 * v / sum : 0.0, 0, 'f', 1);
        const QString parts = barParts(prediction, m_shown[i]);
        m_barShortTexts << text;
        m_barTexts << (parts.isEmpty() ? text : text + QStringLiteral(":  ") + parts);
        label->setText(m_barTexts.back());
        m_barLabels.push_back(label);
    }
    colorBars();
    const int bn = bottleneckStage(prediction);
    const int syncer = syncStage(prediction), stepper = stepStage(prediction);
    m_titleParts.clear();
    if (bn < 0) {
        m_title->setText(QString());
    } else {
        // TimeBreakdown (CostModel::estimate): compute, TP and dispatch are the bottleneck
        // stage's per micro-batch times M, the bubble is what the pipeline adds to that,
        // and DP sync and optimizer are the sync that ends last, the tied all-reduce and the longest
        // step (tailTexts). On several lines (fitTitle), so that a narrow chart does not cut
        // it off.
        m_titleParts = QStringList{tr("Iteration %1").arg(style::formatSeconds(prediction.iteration_time_s)),
                                   (prediction.num_microbatches == 1 ? tr("= bottleneck S%1 × 1 micro-batch + bubble").arg(bn)
                                                                      : tr("= bottleneck S%1 × %2 micro-batches + bubble")
                                                                            .arg(bn)
                                                                            .arg(prediction.num_microbatches))}
            + tailTexts(prediction, syncer, stepper);
        fitTitle();
    }
    m_title->setTextColor(m_plot->palette().color(QPalette::Text));
    m_title->setVisible(bn >= 0);
    style::setChartPlaceholder(m_plot, bn < 0 ? m_emptyText : QString());
    m_plot->xAxis->setRange(0, std::max(*std::max_element(m_values.cbegin(), m_values.cend()), 1e-6) * 1.05);
    m_plot->replot();

    const int n = std::min(plan.pp(), static_cast<int>(prediction.stages.size()));
    const BarrierWait wait = barrierWait(prediction);
    m_table->setRowCount(n);
    for (int s = 0; s < n; ++s) {
        const StageEstimate& e = prediction.stages[static_cast<size_t>(s)];
        const double sends = e.sends();
        const QStringList text = {QStringLiteral("S%1").arg(s), QString::fromStdString(plan.stages[static_cast<size_t>(s)].device_type)};
        const double sync = std::max(0.0, e.dp_sync - e.param_gather);   // before the barrier, tied all-reduce included
        const double seconds[] = {0,       0,      e.t_fwd, e.t_bwd, e.compute, e.tensor_parallel, e.expert_dispatch,
                                  sends,   sync,   e.param_gather, e.optimizer};
        static_assert(std::size(seconds) == ColumnCount);
        for (int c = 0; c < ColumnCount; ++c) {
            auto* item = new QTableWidgetItem(c < FwdColumn ? text[c] : milliseconds(seconds[c]));
            item->setTextAlignment(c >= FwdColumn ? (Qt::AlignRight | Qt::AlignVCenter) : (Qt::AlignLeft | Qt::AlignVCenter));
            if (c >= FwdColumn)
                item->setData(kSecondsRole, seconds[c]);
            // Bold: the cells the bars above are made of (the send bar is the forward part
            // of its cell, as the tooltip splits it; the DP sync bar the part of the sync cell
            // past S0's last backward, as its tooltip says).
            const bool tailCell = (c == SyncColumn && s == wait.stage && wait.time > 0)
                                  || (c == GatherColumn && s == stepper && e.param_gather > 0)
                                  || (c == StepColumn && s == stepper && e.optimizer > 0);
            if ((s == bn && c >= ComputeColumn && c <= SendColumn) || tailCell) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
            m_table->setItem(s, c, item);
        }
        m_table->item(s, SendColumn)->setToolTip(
            tr("Forward %1 ms + backward %2 ms").arg(milliseconds(e.p2p_send), milliseconds(std::max(0.0, sends - e.p2p_send))));
        if (s == wait.stage && wait.time > 0)
            m_table->item(s, SyncColumn)
                ->setToolTip(tr("%1 ms of it run past S0's last backward: the DP sync bar's \"%2\"")
                                 .arg(milliseconds(wait.time), syncPartText(wait)));
    }
    m_caption->setVisible(n > 0);
    m_table->setVisible(n > 0);
    QStringList notes;
    for (const std::string& note : prediction.notes)
        notes << QString::fromStdString(note);
    m_notes->setText(notes.isEmpty() ? QString() : tr("<b>Notes</b> (where the figures come from)") + noteListHtml(notes));
    m_notes->setVisible(n > 0 && !notes.isEmpty());
    fitTableHeight();
}

} // namespace hapmoe::ui
