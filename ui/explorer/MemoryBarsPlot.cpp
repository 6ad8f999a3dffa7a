#include "MemoryBarsPlot.h"

#include "ExplorerStyle.h"

#include <QToolTip>

#include <map>

#include <algorithm>
#include <cmath>
#include <limits>

namespace hapmoe::ui {

namespace {
using style::MemoryPart;
constexpr std::array<MemoryPart, 6> kParts = {MemoryPart::Weights, MemoryPart::Gradients, MemoryPart::Optimizer,
                                             MemoryPart::Activations, MemoryPart::MoeBuffers, MemoryPart::Overhead};
double partBytes(const MemoryBreakdown& m, MemoryPart part)
{
    switch (part) {
    case MemoryPart::Weights: return m.weights;
    case MemoryPart::Gradients: return m.gradients;
    case MemoryPart::Optimizer: return m.optimizer;
    case MemoryPart::Activations: return m.activations;
    case MemoryPart::MoeBuffers: return m.moe_buffers;
    case MemoryPart::Overhead: return m.overhead;
    }
    return 0;
}
constexpr double kBarWidth = 0.6;
} // namespace

MemoryBarsPlot::MemoryBarsPlot(QWidget* parent)
    : QCustomPlot(parent)
    , m_capacity(nullptr)
    , m_ticker(new QCPAxisTickerText)
{
    setObjectName(QStringLiteral("memoryBars"));
    QCPBars* below = nullptr;
    for (size_t i = 0; i < kParts.size(); ++i) {
        auto* bars = new QCPBars(xAxis, yAxis);
        bars->setName(style::memoryPartName(kParts[i]));
        const QColor c = style::memoryColor(kParts[i]);
        bars->setBrush(c);
        bars->setPen(QPen(c.darker(130)));
        bars->setWidth(kBarWidth);
        bars->setStackingGap(1);
        bars->setSelectable(QCP::stNone);
        if (below)
            bars->moveAbove(below);
        below = bars;
        m_bars[i] = bars;
    }
    m_capacity = addGraph();
    m_capacity->setName(tr("Device capacity"));
    m_capacity->setPen(QPen(style::problemColor(), 2.5, Qt::DashLine));
    m_capacity->setLineStyle(QCPGraph::lsLine);
    m_capacity->setSelectable(QCP::stNone);

    xAxis->setTicker(m_ticker);
    xAxis->setTickLength(0, 0);
    xAxis->setSubTicks(false);
    xAxis->grid()->setVisible(false);
    yAxis->setLabel(tr("memory per device (GiB)"));

    // Legend in its own row above the chart, so it never hides a bar.
    legend->setVisible(true);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setBorderPen(Qt::NoPen);
    legend->setIconSize(12, 12);
    axisRect()->insetLayout()->take(legend);
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, legend);
    plotLayout()->setRowStretchFactor(0, 0.001);
    // Under the legend: where offloaded optimizer states went (the bars are device memory).
    // In the layout only while it has a text (showHostNote).
    m_hostNote = new QCPTextElement(this, QString(), font());
    m_hostNote->setObjectName(QStringLiteral("hostMemoryNote"));
    m_hostNote->setMargins(QMargins(6, 2, 6, 4));
    m_hostNote->setVisible(false);
    setMouseTracking(true);
    style::applyChartPalette(this);
    m_baseTopMargin = axisRect()->minimumMargins().top();
    connect(this, &QCustomPlot::afterLayout, this, &MemoryBarsPlot::fitLabels);
    clear();
}

void MemoryBarsPlot::changeEvent(QEvent* event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        style::applyChartPalette(this);
        setPlan(m_plan, m_prediction);   // labels take the new text colour
    }
}

void MemoryBarsPlot::clear()
{
    setPlan(Plan{}, Prediction{});
}

void MemoryBarsPlot::setEmptyText(const QString& text)
{
    m_emptyText = text;
    if (m_stages == 0) {
        style::setChartPlaceholder(this, text);
        replot();
    }
}

void MemoryBarsPlot::setPlan(const Plan& plan, const Prediction& prediction)
{
    m_plan = plan;
    m_prediction = prediction;
    m_stages = std::min(plan.pp(), static_cast<int>(prediction.stages.size()));
    clearItems();
    m_labels.clear();
    m_figures.clear();
    m_ticker->clear();
    m_tickForm = -1;
    xAxis->setTickLabelRotation(0);

    QVector<double> keys;
    std::array<QVector<double>, 6> values;
    QVector<double> capKeys, capValues;
    double top = 0;
    for (int s = 0; s < m_stages; ++s) {
        const StagePlan& sp = plan.stages[static_cast<size_t>(s)];
        const MemoryBreakdown& m = prediction.stages[static_cast<size_t>(s)].memory;
        keys << s;
        for (size_t i = 0; i < kParts.size(); ++i)
            values[i] << partBytes(m, kParts[i]) / style::kGiB;
        const double cap = m.capacity / style::kGiB;
        // A NaN between stages breaks the line, so each bar gets its own capacity mark.
        capKeys << s - 0.45 << s + 0.45 << s + 0.5;
        capValues << cap << cap << std::numeric_limits<double>::quiet_NaN();
        top = std::max({top, cap, m.total() / style::kGiB});
        m_ticker->addTick(s, QStringLiteral("S%1\n%2").arg(s).arg(QString::fromStdString(sp.device_type)));

        // Above the bar or the capacity line, whichever is higher, so the dashed line never
        // strikes the label through. The text is chosen in fitLabels().
        auto* label = new QCPItemText(this);
        label->position->setCoords(s, std::max(m.total(), m.capacity) / style::kGiB);
        label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        label->setColor(m.fits() ? palette().color(QPalette::Text) : style::problemColor());
        label->setPadding(QMargins(1, 1, 1, 4));
        label->setClipToAxisRect(false);
        m_labels.push_back(label);

        // The total at the top inside the bar, on a tag of the background colour so that it
        // reads on any part's colour; fitFigures() shows it where the bar has room.
        auto* figure = new QCPItemText(this);
        figure->position->setCoords(s, m.total() / style::kGiB);
        figure->setPositionAlignment(Qt::AlignHCenter | Qt::AlignTop);
        figure->setText(QString::number(m.total() / style::kGiB, 'f', 1));
        QColor tag = palette().color(QPalette::Base);
        tag.setAlpha(215);
        figure->setBrush(QBrush(tag));
        figure->setPen(Qt::NoPen);
        figure->setColor(palette().color(QPalette::Text));
        figure->setPadding(QMargins(3, 1, 3, 1));
        figure->setVisible(false);
        m_figures.push_back(figure);
    }
    // The bars are device memory; offloaded optimizer states live on the host: say where they went.
    QString host;
    if (m_stages > 0 && plan.optimizer_offload_fraction > 0) {
        host = tr("Optimizer states: %1 % in host memory (not in these bars)\n%2 GiB on the busiest node")
                   .arg(qRound(100 * plan.optimizer_offload_fraction))
                   .arg(prediction.host_memory_per_node_gib, 0, 'f', 0);
        host += prediction.host_memory_capacity_gib > 0
            ? tr(" of %1 GiB").arg(prediction.host_memory_capacity_gib, 0, 'f', 0)
            : tr(", not checked (no host memory in the cluster)");
    }
    m_hostNote->setText(host);

    // The recompute choice shared by every stage, or by most (at least half, two at least),
    // is said once under the bars instead of over each.
    std::map<QString, int> counts;
    QString common;   // the most frequent, the first stage's of equals
    int commonCount = 0;
    for (int s = 0; s < m_stages; ++s)
        ++counts[style::recomputeLabel(plan.stages[static_cast<size_t>(s)])];
    for (int s = 0; s < m_stages; ++s) {
        const QString rc = style::recomputeLabel(plan.stages[static_cast<size_t>(s)]);
        if (counts[rc] > commonCount) {
            common = rc;
            commonCount = counts[rc];
        }
    }
    m_commonRecompute = commonCount == m_stages || (commonCount >= 2 && 2 * commonCount >= m_stages) ? common : QString();
    m_recomputeNotes.clear();
    if (commonCount == m_stages) {
        const QString all = m_stages == 1 ? tr("recompute: %1").arg(common) : tr("recompute: %1 in every stage").arg(common);
        m_recomputeNotes = {all, all};
    } else if (!m_commonRecompute.isEmpty()) {
        // The exceptions named in the note ("recompute: none; S0: full 2/2") when it fits
        // the chart's width, else over their bars.
        std::map<QString, std::vector<int>> others;
        for (int s = 0; s < m_stages; ++s) {
            const QString rc = style::recomputeLabel(plan.stages[static_cast<size_t>(s)]);
            if (rc != common)
                others[rc].push_back(s);
        }
        // Runs of stages as ranges: "S8–S15" rather than eight names.
        auto stageList = [](const std::vector<int>& stages) {
            QStringList parts;
            for (std::size_t i = 0; i < stages.size();) {
                std::size_t j = i;
                while (j + 1 < stages.size() && stages[j + 1] == stages[j] + 1)
                    ++j;
                parts << (j >= i + 2 ? QStringLiteral("S%1–S%2").arg(stages[i]).arg(stages[j])
                                     : j == i + 1 ? QStringLiteral("S%1, S%2").arg(stages[i]).arg(stages[j])
                                                  : QStringLiteral("S%1").arg(stages[i]));
                i = j + 1;
            }
            return parts.join(QStringLiteral(", "));
        };
        QString listed = tr("recompute: %1").arg(common);
        for (const auto& [rc, stages] : others)
            listed += QStringLiteral("; %1: %2").arg(stageList(stages), rc);
        m_recomputeNotes = {listed, tr("recompute: %1 unless written above the bar").arg(common)};
    }
    xAxis->setLabel(m_recomputeNotes.value(0));
    m_hostNote->setTextColor(palette().color(QPalette::Text));
    showHostNote(!host.isEmpty());
    style::setChartPlaceholder(this, m_stages == 0 ? m_emptyText : QString());
    for (size_t i = 0; i < kParts.size(); ++i)
        m_bars[i]->setData(keys, values[i], true);
    m_capacity->setData(capKeys, capValues, true);
    // With memory kept free the line is what a plan may fill, not the device's memory.
    const double headroom = prediction.memory_headroom;
    m_capacity->setName(headroom > 0 ? tr("Usable memory (%1 % kept free)").arg(headroom * 100, 0, 'g', 3) : tr("Device capacity"));
    // The legend names what the bars can hold: no "MoE buffers" for a dense model.
    legend->clearItems();
    for (size_t i = 0; i < kParts.size(); ++i)
        if (kParts[i] != MemoryPart::MoeBuffers || std::any_of(values[i].begin(), values[i].end(), [](double v) { return v > 0; }))
            m_bars[i]->addToLegend();
    m_capacity->addToLegend();
    xAxis->setRange(-0.6, std::max(m_stages, 1) - 0.4);
    yAxis->setRange(0, std::max(1.0, top * 1.15));
    replot();
}

void MemoryBarsPlot::showHostNote(bool shown)
{
    // A layout row keeps its height and the spacing around it even with its element hidden
    // (an empty text still takes a line): without a note the row goes.
    const bool inLayout = plotLayout()->elements(false).contains(m_hostNote);
    if (shown && !inLayout) {
        // Right above the plot area (under the legend, and a comparison's title over that).
        int row = 0;
        while (row < plotLayout()->rowCount() && plotLayout()->element(row, 0) != axisRect())
            ++row;
        plotLayout()->insertRow(row);
        plotLayout()->addElement(row, 0, m_hostNote);
        plotLayout()->setRowStretchFactor(row, 0.001);
    } else if (!shown && inLayout) {
        plotLayout()->take(m_hostNote);
        plotLayout()->simplify();
    }
    m_hostNote->setVisible(shown);
}

void MemoryBarsPlot::fitFigures()
{
    // The tag hangs from the bar's top: it needs the bar's width less 2 px each side, and
    // its height with 2 px to spare above the bar's foot.
    const QFontMetrics fm(font());
    const double barPixels = kBarWidth * barSpacing();
    for (QCPItemText* figure : m_figures) {
        const QMargins pad = figure->padding();
        const double height = yAxis->coordToPixel(0) - yAxis->coordToPixel(figure->position->value());
        figure->setVisible(fm.horizontalAdvance(figure->text()) + pad.left() + pad.right() + 4 <= barPixels
                           && fm.height() + pad.top() + pad.bottom() + 2 <= height);
    }
}

void MemoryBarsPlot::fitLabels()
{
    fitFigures();
    if (m_labels.empty())
        return;
    // Room per label: the distance between two bars less a small gap.
    const double slot = barSpacing() - 6;
    const QFontMetrics fm(font());
    auto widest = [&fm](const QString& text) {
        int w = 0;
        for (const QString& line : text.split(QLatin1Char('\n')))
            w = std::max(w, fm.horizontalAdvance(line));
        return w;
    };
    // The recompute choice of every stage in the note under the bars when it fits there.
    const bool exceptionsInNote = !m_recomputeNotes.isEmpty()
        && QFontMetrics(xAxis->labelFont()).horizontalAdvance(m_recomputeNotes[0]) <= axisRect()->width();
    const QString note = m_recomputeNotes.value(exceptionsInNote ? 0 : 1);
    const bool noteChanged = note != xAxis->label();
    xAxis->setLabel(note);
    // One form for every bar, the longest that fits them all, so that the labels read alike.
    // The recompute choice most stages share is said once under the chart (recomputeNote):
    // only the bars that differ from it, and those short of memory, have a label.
    std::vector<QStringList> forms;
    for (int s = 0; s < m_stages; ++s) {
        const StagePlan& sp = m_plan.stages[static_cast<size_t>(s)];
        const MemoryBreakdown& m = m_prediction.stages[static_cast<size_t>(s)].memory;
        // The forms of the stage strip's recompute line, so that both read alike; a bare
        // "none" or "full 7/9" would not say what it is about (the tooltip says it in full).
        const QString rc = style::recomputeLabel(sp);
        QStringList f = {tr("recompute: %1").arg(rc), tr("rc: %1").arg(rc), style::recomputeShortLabel(sp)};
        if (rc == m_commonRecompute || exceptionsInNote)
            f = {QString(), QString(), QString()};
        if (!m.fits()) {
            const double shortGiB = m.shortfall() / style::kGiB;
            const QString nl = f[0].isEmpty() ? QString() : QStringLiteral("\n");
            f[0] += nl + tr("short %1 GiB").arg(shortGiB, 0, 'f', 1);
            f[1] += nl + tr("short %1 GiB").arg(shortGiB, 0, 'f', 1);
            f[2] += nl + QStringLiteral("−%1").arg(shortGiB, 0, 'f', 1);
        }
        forms.push_back(f);
    }
    int chosen = 0;
    for (; chosen < 2; ++chosen) {
        bool fitsAll = true;
        for (const QStringList& f : forms)
            fitsAll = fitsAll && widest(f[chosen]) <= slot;
        if (fitsAll)
            break;
    }
    // When even the brief form is wider than a bar's slot (many stages in a narrow chart),
    // the labels stand upright above their bars.
    bool upright = false;
    for (const QStringList& f : forms)
        upright = upright || widest(f[chosen]) > slot;
    // The labels rise above the plot area into its top margin, which takes what they need:
    // a label of L pixels on a base at the fraction r of the axis' range stays under the
    // top of the area (h pixels down to the x axis) when r (h - margin) <= h - L.
    const double h = axisRect()->bottom() - axisRect()->outerRect().top();
    const double upper = yAxis->range().upper;
    int margin = 0;
    for (size_t s = 0; s < m_labels.size() && s < forms.size(); ++s) {
        QCPItemText* label = m_labels[s];
        label->setText(forms[s][chosen]);
        label->setRotation(upright ? -90 : 0);
        label->setPositionAlignment(upright ? Qt::AlignLeft | Qt::AlignVCenter : Qt::AlignHCenter | Qt::AlignBottom);
        label->setPadding(upright ? QMargins(4, 1, 1, 1) : QMargins(1, 1, 1, 4));
        const QFontMetrics lfm(label->font());
        if (forms[s][chosen].isEmpty())
            continue;
        const int length = upright ? widest(forms[s][chosen]) + 6
                                   : static_cast<int>(forms[s][chosen].count(QLatin1Char('\n')) + 1) * lfm.height() + 6;
        const double r = upper > 0 ? label->position->value() / upper : 0;
        if (r > 0 && h > 0)
            margin = std::max(margin, static_cast<int>(std::ceil(h - (h - length) / r)));
    }
    margin = std::min(margin, static_cast<int>(h / 2));   // the bars keep half the height at least
    if (margin != m_labelRoom) {
        m_labelRoom = margin;
        emit labelRoomChanged();
    }
    margin = std::max({margin, m_labelRoomFloor, m_baseTopMargin});
    QMargins minimum = axisRect()->minimumMargins();
    // The axis title runs along the plot area's height: in a short chart it would be cut at
    // both ends, so it says only the unit there.
    const QString title = tr("memory per device (GiB)");
    const QString label = QFontMetrics(yAxis->labelFont()).horizontalAdvance(title) <= h - margin ? title : tr("GiB");
    bool changed = noteChanged || label != yAxis->label();
    yAxis->setLabel(label);
    if (std::abs(minimum.top() - margin) > 1) {
        minimum.setTop(margin);
        axisRect()->setMinimumMargins(minimum);
        changed = true;
    }
    if (changed)
        replot(QCustomPlot::rpQueuedReplot);
}

void MemoryBarsPlot::setLabelRoomFloor(int pixels)
{
    if (pixels == m_labelRoomFloor)
        return;
    m_labelRoomFloor = pixels;
    replot(QCustomPlot::rpQueuedReplot);
}

double MemoryBarsPlot::barLabelRotation() const
{
    return m_labels.empty() ? 0 : m_labels.front()->rotation();
}

void MemoryBarsPlot::updateLayout()
{
    style::fitLegendColumns(legend, width());
    QCustomPlot::updateLayout();
    // The stage labels' form depends on the bar spacing of this layout; a new form changes
    // the height under the axis, not the spacing, so one more pass settles it.
    if (fitTickLabels())
        QCustomPlot::updateLayout();
}

bool MemoryBarsPlot::fitTickLabels()
{
    if (m_stages == 0)
        return false;
    const double room = barSpacing() - 8;   // a gap between neighbours
    const QFontMetrics fm(xAxis->tickLabelFont());
    // Forms from the most to the least informative: type in full, type shortened (both on
    // a second line), the stage alone with its type once under each run of stages on one
    // type, then upright on one line, then the stage alone upright. The run's form keeps
    // two short lines where upright labels would take the chart's height.
    enum Form { Full, Short, Grouped, UprightShort, UprightStage, FormCount };
    auto text = [this](int s, int form) {
        const QString type = QString::fromStdString(m_plan.stages[static_cast<size_t>(s)].device_type);
        switch (form) {
        case Full: return QStringLiteral("S%1\n%2").arg(s).arg(type);
        case Short: return QStringLiteral("S%1\n%2").arg(s).arg(style::shortDeviceName(type));
        case UprightShort: return QStringLiteral("S%1 %2").arg(s).arg(style::shortDeviceName(type));
        default: return QStringLiteral("S%1").arg(s);
        }
    };
    // Runs of neighbouring stages on one type, and the type's name that fits under each
    // (in full, else shortened; empty when neither does).
    struct Run {
        int first;
        int last;
        QString name;
    };
    std::vector<Run> runs;
    for (int s = 0; s < m_stages; ++s) {
        const QString type = QString::fromStdString(m_plan.stages[static_cast<size_t>(s)].device_type);
        if (runs.empty() || QString::fromStdString(m_plan.stages[static_cast<size_t>(runs.back().first)].device_type) != type)
            runs.push_back({s, s, type});
        runs.back().last = s;
    }
    bool grouped = true;
    for (Run& run : runs) {
        const double width = (run.last - run.first + 1) * barSpacing() - 8;
        if (fm.horizontalAdvance(run.name) > width)
            run.name = style::shortDeviceName(run.name);
        grouped = grouped && fm.horizontalAdvance(run.name) <= width;
    }
    int chosen = UprightStage;
    for (int form = Full; form < UprightStage; ++form) {
        bool fits = form != Grouped || grouped;
        for (int s = 0; s < m_stages && fits; ++s) {
            if (form == UprightShort) {
                fits = fm.height() <= room;
            } else {
                for (const QString& line : text(s, form).split(QLatin1Char('\n')))
                    fits = fits && fm.horizontalAdvance(line) <= room;
            }
        }
        if (fits) {
            chosen = form;
            break;
        }
    }
    if (chosen == m_tickForm)
        return false;
    m_tickForm = chosen;
    m_ticker->clear();
    for (int s = 0; s < m_stages; ++s)
        m_ticker->addTick(s, text(s, chosen));
    if (chosen == Grouped) {
        // Under the middle of the run: on its middle stage's tick, or on a tick of its own
        // between two stages (an empty first line keeps the name on the second).
        for (const Run& run : runs) {
            const double middle = (run.first + run.last) / 2.0;
            const bool onStage = (run.first + run.last) % 2 == 0;
            m_ticker->addTick(middle, onStage ? text(static_cast<int>(middle), Grouped) + QLatin1Char('\n') + run.name
                                              : QLatin1Char('\n') + run.name);
        }
    }
    xAxis->setTickLabelRotation(chosen >= UprightShort ? -90 : 0);
    return true;
}

QString MemoryBarsPlot::recomputeNote() const
{
    return xAxis->label();
}

QString MemoryBarsPlot::tickLabel(int stage) const
{
    return m_ticker->ticks().value(stage);
}

double MemoryBarsPlot::tickLabelRotation() const
{
    return xAxis->tickLabelRotation();
}

double MemoryBarsPlot::barSpacing() const
{
    return std::abs(xAxis->coordToPixel(1) - xAxis->coordToPixel(0));
}

QString MemoryBarsPlot::barLabel(int stage) const
{
    if (stage < 0 || stage >= static_cast<int>(m_labels.size()))
        return {};
    return m_labels[static_cast<size_t>(stage)]->text();
}

QString MemoryBarsPlot::barFigure(int stage) const
{
    if (stage < 0 || stage >= static_cast<int>(m_figures.size()) || !m_figures[static_cast<size_t>(stage)]->visible())
        return {};
    return m_figures[static_cast<size_t>(stage)]->text();
}

double MemoryBarsPlot::barLabelBaseGiB(int stage) const
{
    if (stage < 0 || stage >= static_cast<int>(m_labels.size()))
        return 0;
    return m_labels[static_cast<size_t>(stage)]->position->value();
}

double MemoryBarsPlot::dataMaxGiB() const
{
    return yAxis->range().upper;
}

void MemoryBarsPlot::setMaxGiB(double gib)
{
    yAxis->setRange(0, gib);
    replot();
}

double MemoryBarsPlot::stackedTotalGiB(int stage) const
{
    double sum = 0;
    for (QCPBars* bars : m_bars) {
        auto it = bars->data()->findBegin(stage, false);
        if (it != bars->data()->constEnd() && std::abs(it->key - stage) < 1e-9)
            sum += it->value;
    }
    return sum;
}

double MemoryBarsPlot::capacityGiB(int stage) const
{
    if (stage < 0 || stage >= m_stages)
        return 0;
    return m_prediction.stages[static_cast<size_t>(stage)].memory.capacity / style::kGiB;
}

QString MemoryBarsPlot::toolTipForStage(int s) const
{
    if (s < 0 || s >= m_stages)
        return {};
    const StagePlan& sp = m_plan.stages[static_cast<size_t>(s)];
    const MemoryBreakdown& m = m_prediction.stages[static_cast<size_t>(s)].memory;
    QString tip = tr("<b>Stage %1</b> (%2), one device<br><table>").arg(s).arg(QString::fromStdString(sp.device_type).toHtmlEscaped());
    for (MemoryPart part : kParts)
        tip += QStringLiteral("<tr><td>%1</td><td align='right'>%2</td></tr>").arg(style::memoryPartName(part), style::formatGiB(partBytes(m, part)));
    tip += QStringLiteral("<tr><td><b>%1</b></td><td align='right'><b>%2</b></td></tr>").arg(tr("Total"), style::formatGiB(m.total()));
    if (m_prediction.memory_headroom > 0)
        tip += QStringLiteral("<tr><td>%1</td><td align='right'>%2</td></tr><tr><td>%3</td><td align='right'>%4</td></tr></table>")
                   .arg(tr("Usable (%1 % kept free)").arg(m_prediction.memory_headroom * 100, 0, 'g', 3), style::formatGiB(m.capacity),
                        tr("Device memory"), style::formatGiB(m.capacity / (1 - m_prediction.memory_headroom)));
    else
        tip += QStringLiteral("<tr><td>%1</td><td align='right'>%2</td></tr></table>").arg(tr("Capacity"), style::formatGiB(m.capacity));
    tip += tr("Recompute: %1").arg(style::recomputeLabel(sp));
    if (!m.fits())
        tip += QStringLiteral("<br><span style='color:%1'>%2</span>")
                   .arg(style::problemColor().name(), tr("Short of memory by %1").arg(style::formatGiB(m.shortfall())));
    return tip;
}

void MemoryBarsPlot::mouseMoveEvent(QMouseEvent* event)
{
    QCustomPlot::mouseMoveEvent(event);
    const QPointF pos = event->position();
    const int s = static_cast<int>(std::lround(xAxis->pixelToCoord(pos.x())));
    const bool onBar = axisRect()->rect().contains(pos.toPoint()) && s >= 0 && s < m_stages
        && std::abs(xAxis->pixelToCoord(pos.x()) - s) <= kBarWidth / 2;
    if (onBar)
        QToolTip::showText(event->globalPosition().toPoint(), toolTipForStage(s), this);
    else
        QToolTip::hideText();
}

QSize MemoryBarsPlot::sizeHint() const
{
    return {900, 420};
}

} // namespace hapmoe::ui
