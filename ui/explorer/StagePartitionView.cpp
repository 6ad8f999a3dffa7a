#include "StagePartitionView.h"

#include "ExplorerStyle.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <map>

namespace hapmoe::ui {

namespace {
constexpr int kMargin = 6;
constexpr int kLegendGap = 6;
}

StagePartitionView::StagePartitionView(QWidget* parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setObjectName(QStringLiteral("stagePartition"));
}

void StagePartitionView::setPlan(const Plan& plan, const Prediction& prediction, int bottleneckStage)
{
    m_plan = plan;
    m_prediction = prediction;
    m_bottleneck = bottleneckStage;
    m_hasPlan = true;
    m_hovered = -1;
    updateGeometry();
    update();
}

void StagePartitionView::clear()
{
    m_plan = {};
    m_prediction = {};
    m_hasPlan = false;
    m_hovered = -1;
    update();
}

void StagePartitionView::setCompact(bool compact)
{
    m_compact = compact;
    updateGeometry();
    update();
}

void StagePartitionView::setTotalLayers(int layers)
{
    m_totalLayers = layers;
    update();
}

int StagePartitionView::stageCount() const
{
    return m_hasPlan ? m_plan.pp() : 0;
}

const StagePlan* StagePartitionView::stage(int index) const
{
    if (index < 0 || index >= stageCount())
        return nullptr;
    return &m_plan.stages[static_cast<size_t>(index)];
}

int StagePartitionView::stripHeight() const
{
    const int lines = m_compact ? 2 : 6;
    return lines * fontMetrics().height() + 10;
}

QSize StagePartitionView::sizeHint() const
{
    return {800, minimumSizeHint().height()};
}

QSize StagePartitionView::minimumSizeHint() const
{
    return {200, kMargin * 2 + stripHeight() + kLegendGap + fontMetrics().height() + 4};
}

QRect StagePartitionView::stageRect(int index) const
{
    if (index < 0 || index >= stageCount())
        return {};
    int layers = 0;
    for (const StagePlan& s : m_plan.stages)
        layers += s.num_layers;
    const int scale = std::max({m_totalLayers, layers, 1});
    const double w = width() - 2.0 * kMargin;
    int before = 0;
    for (int i = 0; i < index; ++i)
        before += m_plan.stages[static_cast<size_t>(i)].num_layers;
    const int n = m_plan.stages[static_cast<size_t>(index)].num_layers;
    const int x0 = kMargin + static_cast<int>(w * before / scale);
    const int x1 = kMargin + static_cast<int>(w * (before + n) / scale);
    return QRect(x0, kMargin, std::max(1, x1 - x0), stripHeight());
}

int StagePartitionView::stageAt(const QPoint& pos) const
{
    for (int i = 0; i < stageCount(); ++i) {
        if (stageRect(i).contains(pos))
            return i;
    }
    return -1;
}

QString StagePartitionView::stageToolTip(int index) const
{
    const StagePlan* s = stage(index);
    if (!s)
        return {};
    QString tip = QStringLiteral("<b>Stage %1</b> on %2 × %3%4<br>")
                      .arg(index)
                      .arg(s->numDevices())
                      .arg(QString::fromStdString(s->device_type).toHtmlEscaped())
                      .arg(index == m_bottleneck ? QStringLiteral(" <span style='color:#d32f2f'>(bottleneck)</span>") : QString());
    tip += QStringLiteral("Layers %1-%2 (%3)<br>").arg(s->first_layer).arg(s->first_layer + s->num_layers - 1).arg(s->num_layers);
    tip += QStringLiteral("%1<br>Recompute: %2 · micro-batch %3<br>Devices: %4<br>")
               .arg(style::knobsLabel(*s), style::recomputeLabel(*s))
               .arg(s->micro_batch_size)
               .arg(style::devicesLabel(*s).toHtmlEscaped());
    if (index < static_cast<int>(m_prediction.stages.size())) {
        const StageEstimate& e = m_prediction.stages[static_cast<size_t>(index)];
        tip += QStringLiteral("Forward %1 · backward %2 per micro-batch<br>")
                   .arg(style::formatSeconds(e.t_fwd), style::formatSeconds(e.t_bwd));
        tip += QStringLiteral("Memory %1 of %2 per device")
                   .arg(style::formatGiB(e.memory.total()), style::formatGiB(e.memory.capacity));
        if (!e.memory.fits())
            tip += QStringLiteral(" <span style='color:#d32f2f'>(does not fit)</span>");
    }
    return tip;
}

void StagePartitionView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, true);
    const QFontMetrics fm = fontMetrics();
    if (!m_hasPlan || m_plan.stages.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("Select a plan to see its stages"));
        return;
    }
    QFont bold = font();
    bold.setBold(true);

    for (int i = 0; i < stageCount(); ++i) {
        const StagePlan& s = m_plan.stages[static_cast<size_t>(i)];
        const QRect r = stageRect(i).adjusted(1, 0, -1, 0);
        QColor fill = style::deviceColor(QString::fromStdString(s.device_type));
        // Neighbours on the same device type alternate in shade so each stage reads as its own box.
        int run = 0;
        for (int k = i - 1; k >= 0 && m_plan.stages[static_cast<size_t>(k)].device_type == s.device_type; --k)
            ++run;
        if (run % 2 == 1)
            fill = fill.darker(125);
        if (i == m_hovered)
            fill = fill.lighter(125);
        p.setPen(Qt::NoPen);
        p.setBrush(fill);
        p.drawRoundedRect(r, 4, 4);
        if (i == m_bottleneck) {
            p.setPen(QPen(style::bottleneckColor(), 3));
            p.setBrush(Qt::NoBrush);
            p.drawRoundedRect(r.adjusted(1, 1, -1, -1), 4, 4);
        }
        if (i == m_hovered) {
            p.setPen(QPen(palette().color(QPalette::Highlight), 2));
            p.setBrush(Qt::NoBrush);
            p.drawRoundedRect(r, 4, 4);
        }

        // Each line with shorter forms for narrow boxes; the first form that fits is drawn.
        const QString type = QString::fromStdString(s.device_type);
        const QString rc = style::recomputeLabel(s);
        std::vector<QStringList> lines;
        lines.push_back({QStringLiteral("S%1 · %2").arg(i).arg(type), QStringLiteral("S%1").arg(i)});
        if (m_compact) {
            lines.push_back({QStringLiteral("%1 L · TP%2 DP%3 EP%4").arg(s.num_layers).arg(s.tp).arg(s.dp).arg(s.ep),
                             QStringLiteral("%1 L").arg(s.num_layers)});
        } else {
            lines.push_back({QStringLiteral("%1 layers (L%2-%3)").arg(s.num_layers).arg(s.first_layer).arg(s.first_layer + s.num_layers - 1),
                             QStringLiteral("%1 layers").arg(s.num_layers), QStringLiteral("%1 L").arg(s.num_layers)});
            lines.push_back({QStringLiteral("TP%1 CP%2 DP%3").arg(s.tp).arg(s.cp).arg(s.dp), QStringLiteral("TP%1 DP%2").arg(s.tp).arg(s.dp),
                             QStringLiteral("T%1D%2").arg(s.tp).arg(s.dp)});
            lines.push_back({QStringLiteral("EP%1 ETP%2 EDP%3").arg(s.ep).arg(s.etp).arg(s.edp), QStringLiteral("EP%1").arg(s.ep),
                             QStringLiteral("E%1").arg(s.ep)});
            lines.push_back({QStringLiteral("recompute: %1").arg(rc), QStringLiteral("rc %1").arg(rc),
                             s.recompute == Recompute::None ? QStringLiteral("-") : QStringLiteral("rc")});
            lines.push_back({QStringLiteral("%1 dev · %2").arg(s.numDevices()).arg(style::devicesLabel(s)),
                             QStringLiteral("%1 dev").arg(s.numDevices()), QString::number(s.numDevices())});
        }
        p.setPen(style::textOn(fill));
        const QRect textRect = r.adjusted(5, 4, -4, -2);
        int y = textRect.top();
        for (size_t l = 0; l < lines.size(); ++l) {
            const QFont& f = l == 0 ? bold : font();
            p.setFont(f);
            const QFontMetrics lfm(f);
            QString text;
            for (const QString& form : lines[l]) {
                if (lfm.horizontalAdvance(form) <= textRect.width()) {
                    text = form;
                    break;
                }
            }
            if (text.isEmpty())
                text = lfm.elidedText(lines[l].back(), Qt::ElideRight, textRect.width());
            p.drawText(QRect(textRect.left(), y, textRect.width(), lfm.height()), Qt::AlignLeft | Qt::AlignVCenter, text);
            y += fm.height();
            if (y + fm.height() > textRect.bottom() + 2)
                break;
        }
    }

    // Legend: one swatch per device type, in order of first appearance.
    std::vector<QString> types;
    std::map<QString, int> devices;
    for (const StagePlan& s : m_plan.stages) {
        const QString t = QString::fromStdString(s.device_type);
        if (std::find(types.begin(), types.end(), t) == types.end())
            types.push_back(t);
        devices[t] += s.numDevices();
    }
    p.setFont(font());
    int x = kMargin;
    const int ly = kMargin + stripHeight() + kLegendGap;
    const int box = fm.height() - 4;
    for (const QString& t : types) {
        p.setPen(Qt::NoPen);
        p.setBrush(style::deviceColor(t));
        p.drawRoundedRect(QRect(x, ly + 2, box, box), 2, 2);
        x += box + 4;
        const QString label = QStringLiteral("%1 (%2 devices)").arg(t).arg(devices[t]);
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QPoint(x, ly + fm.ascent() + 1), label);
        x += fm.horizontalAdvance(label) + 16;
    }
    if (m_bottleneck >= 0 && m_bottleneck < stageCount()) {
        p.setPen(QPen(style::bottleneckColor(), 3));
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRect(x, ly + 2, box, box));
        x += box + 4;
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QPoint(x, ly + fm.ascent() + 1), tr("bottleneck stage (S%1)").arg(m_bottleneck));
    }
}

void StagePartitionView::setHovered(int stage)
{
    if (stage == m_hovered)
        return;
    m_hovered = stage;
    update();
    emit stageHovered(stage);
}

void StagePartitionView::mouseMoveEvent(QMouseEvent* event)
{
    setHovered(stageAt(event->position().toPoint()));
    QWidget::mouseMoveEvent(event);
}

void StagePartitionView::leaveEvent(QEvent* event)
{
    setHovered(-1);
    QWidget::leaveEvent(event);
}

bool StagePartitionView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int s = stageAt(help->pos());
        if (s >= 0)
            QToolTip::showText(help->globalPos(), stageToolTip(s), this, stageRect(s));
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

} // namespace hapmoe::ui
