#include "BreakdownView.h"

#include "ExplorerStyle.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <qcustomplot.h>

namespace hapmoe::ui {

namespace {
QColor componentColor(int i)
{
    static const QColor colors[] = {style::forwardColor(), QColor(0x5c, 0x6b, 0xc0), QColor(0xab, 0x47, 0xbc),
                                    QColor(0xd3, 0x2f, 0x2f, 90), style::dpSyncColor(), style::optimizerColor()};
    QColor c = colors[i % 6];
    c.setAlpha(255);
    return c;
}

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

QStringList BreakdownView::componentNames()
{
    return {tr("Compute"), tr("Tensor parallel"), tr("Expert dispatch"), tr("Pipeline bubble"), tr("DP sync"), tr("Optimizer")};
}

BreakdownView::BreakdownView(QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
    , m_title(nullptr)
    , m_table(new QTableWidget(this))
    , m_summary(new QLabel(this))
{
    setObjectName(QStringLiteral("breakdown"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    layout->addWidget(m_summary);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_plot);
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    m_plot->setMinimumHeight(160);
    m_plot->setMinimumWidth(320);   // not the legend's width: the window may be narrow
    // The bars are not a sum over stages (the table below is per stage): the title says
    // which stage each part comes from.
    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, QString(), m_plot->font());
    m_title->setObjectName(QStringLiteral("breakdownTitle"));
    m_title->setMargins(QMargins(6, 4, 6, 0));
    m_plot->plotLayout()->addElement(0, 0, m_title);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const QStringList names = componentNames();
    for (int i = 0; i < names.size(); ++i)
        ticker->addTick(i, names[i]);
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setRangeReversed(true);
    m_plot->yAxis->setTickLength(0, 0);
    m_plot->yAxis->setSubTicks(false);
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->yAxis->setRange(-0.6, names.size() - 0.4);
    m_plot->xAxis->setLabel(tr("seconds per iteration"));
    style::applyChartPalette(m_plot);

    m_table->setColumnCount(9);
    m_table->setHorizontalHeaderLabels({tr("Stage"), tr("Device"), tr("Fwd / mb"), tr("Bwd / mb"), tr("Compute"),
                                        tr("TP comm"), tr("Dispatch"), tr("Send"), tr("DP sync + opt")});
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->setAlternatingRowColors(true);
}

void BreakdownView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        style::applyChartPalette(m_plot);
        m_title->setTextColor(m_plot->palette().color(QPalette::Text));
        m_plot->replot();
    }
}

int BreakdownView::bottleneckStage(const Prediction& prediction)
{
    return firstLargest(prediction, [](const StageEstimate& e) { return e.t_fwd + e.t_bwd; });
}

int BreakdownView::tailStage(const Prediction& prediction)
{
    return firstLargest(prediction, [](const StageEstimate& e) { return e.dp_sync + e.optimizer; });
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
    const TimeBreakdown& b = prediction.breakdown;
    m_values = {b.compute, b.tensor_parallel, b.expert_dispatch, b.pipeline_bubble, b.dp_sync, b.optimizer};
    double sum = 0;
    for (double v : m_values)
        sum += v;

    m_plot->clearPlottables();
    m_plot->clearItems();
    double maxV = 0;
    const bool hasPlan = !prediction.stages.empty();
    for (int i = 0; hasPlan && i < m_values.size(); ++i) {
        // One QCPBars per component so each keeps its own colour.
        auto* bars = new QCPBars(m_plot->yAxis, m_plot->xAxis);
        bars->setBrush(componentColor(i));
        bars->setPen(QPen(componentColor(i).darker(130)));
        bars->setWidth(0.65);
        bars->addData(i, m_values[i]);
        maxV = std::max(maxV, m_values[i]);
        auto* label = new QCPItemText(m_plot);
        label->position->setCoords(m_values[i], i);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        label->setPadding(QMargins(6, 0, 0, 0));
        label->setColor(m_plot->palette().color(QPalette::Text));
        label->setText(QStringLiteral("%1  (%2 %)").arg(style::formatSeconds(m_values[i])).arg(sum > 0 ? 100.0 * m_values[i] / sum : 0.0, 0, 'f', 1));
    }
    const int bn = bottleneckStage(prediction);
    const int tail = tailStage(prediction);
    if (bn < 0) {
        m_title->setText(QString());
    } else {
        // TimeBreakdown (CostModel::estimate): compute, TP and dispatch are the bottleneck
        // stage's per micro-batch times M, the bubble is what the pipeline adds to that,
        // and DP sync and optimizer are those of the stage with the longest tail.
        // Two lines, so that a narrow chart does not cut the sentence off.
        m_title->setText(tr("Iteration %1 = bottleneck S%2 × %3 micro-batches + bubble\n+ the longest tail (S%4: DP sync + optimizer)")
                             .arg(style::formatSeconds(prediction.iteration_time_s))
                             .arg(bn)
                             .arg(prediction.num_microbatches)
                             .arg(tail));
    }
    m_title->setTextColor(m_plot->palette().color(QPalette::Text));
    m_title->setVisible(bn >= 0);
    style::setChartPlaceholder(m_plot, bn < 0 ? m_emptyText : QString());

    // Room on the right for the labels.
    m_plot->xAxis->setRange(0, std::max(maxV, 1e-6) * 1.35);
    m_plot->replot();

    if (plan.stages.empty()) {
        m_summary->setText(tr("Where the selected plan's iteration time goes."));
    } else {
        m_summary->setText(tr("<b>%1</b>: iteration %2; the components below sum to %3. Compute takes %4 %, the pipeline bubble %5 %.")
                               .arg(QString::fromStdString(plan.name).toHtmlEscaped(), style::formatSeconds(prediction.iteration_time_s),
                                    style::formatSeconds(sum))
                               .arg(sum > 0 ? 100.0 * b.compute / sum : 0.0, 0, 'f', 1)
                               .arg(sum > 0 ? 100.0 * b.pipeline_bubble / sum : 0.0, 0, 'f', 1));
    }

    const int n = std::min(plan.pp(), static_cast<int>(prediction.stages.size()));
    m_table->setRowCount(n);
    for (int s = 0; s < n; ++s) {
        const StageEstimate& e = prediction.stages[static_cast<size_t>(s)];
        const QStringList cells = {QStringLiteral("S%1").arg(s), QString::fromStdString(plan.stages[static_cast<size_t>(s)].device_type),
                                   style::formatSeconds(e.t_fwd), style::formatSeconds(e.t_bwd), style::formatSeconds(e.compute),
                                   style::formatSeconds(e.tensor_parallel), style::formatSeconds(e.expert_dispatch),
                                   style::formatSeconds(e.p2p_send), style::formatSeconds(e.dp_sync + e.optimizer)};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setTextAlignment(c >= 2 ? (Qt::AlignRight | Qt::AlignVCenter) : (Qt::AlignLeft | Qt::AlignVCenter));
            // Bold: the cells the bars above are made of.
            if ((s == bn && c >= 4 && c <= 6) || (s == tail && c == 8)) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
            m_table->setItem(s, c, item);
        }
    }
}

} // namespace hapmoe::ui
