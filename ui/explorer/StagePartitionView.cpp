#include "StagePartitionView.h"

#include "ExplorerStyle.h"
#include "Theme.h"

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
// Box width less the room around its text (gap between boxes and text margins).
constexpr int kTextInset = 13;
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

void StagePartitionView::setEmptyText(const QString& text)
{
    m_emptyText = text;
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
                      .arg(index == m_bottleneck ? QStringLiteral(" <b>(bottleneck)</b>") : QString());
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
            tip += QStringLiteral(" ") + statusHtml(Status::Problem, toolTipPalette(), tr("(does not fit)"));
    }
    return tip;
}

std::vector<QStringList> StagePartitionView::boxLines() const
{
    // Each line has shorter forms for narrow boxes. One form per line is chosen for the
    // whole strip (the longest that fits every box), so that all boxes read alike.
    QFont bold = font();
    bold.setBold(true);
    bool anyCp = false;
    for (const StagePlan& s : m_plan.stages)
        anyCp = anyCp || s.cp > 1;
    std::vector<std::vector<QStringList>> lines(static_cast<size_t>(stageCount()));
    for (int i = 0; i < stageCount(); ++i) {
        const StagePlan& s = m_plan.stages[static_cast<size_t>(i)];
        const QString type = QString::fromStdString(s.device_type);
        const QString shortType = style::shortDeviceName(type);
        auto& l = lines[static_cast<size_t>(i)];
        l.push_back({QStringLiteral("S%1 · %2").arg(i).arg(type), QStringLiteral("S%1 · %2").arg(i).arg(shortType),
                     QStringLiteral("S%1 %2").arg(i).arg(shortType)});
        if (m_compact) {
            l.push_back({QStringLiteral("%1 L · TP%2 DP%3 EP%4").arg(s.num_layers).arg(s.tp).arg(s.dp).arg(s.ep),
                         QStringLiteral("%1 L · EP%2").arg(s.num_layers).arg(s.ep), QStringLiteral("%1 L").arg(s.num_layers)});
            continue;
        }
        const QString rc = style::recomputeLabel(s);
        l.push_back({QStringLiteral("%1 layers (L%2-%3)").arg(s.num_layers).arg(s.first_layer).arg(s.first_layer + s.num_layers - 1),
                     QStringLiteral("%1 layers").arg(s.num_layers), QStringLiteral("%1 L").arg(s.num_layers)});
        l.push_back(anyCp ? QStringList{QStringLiteral("TP%1 CP%2 DP%3").arg(s.tp).arg(s.cp).arg(s.dp),
                                        QStringLiteral("T%1 C%2 D%3").arg(s.tp).arg(s.cp).arg(s.dp)}
                          : QStringList{QStringLiteral("TP%1 DP%2").arg(s.tp).arg(s.dp), QStringLiteral("T%1 D%2").arg(s.tp).arg(s.dp)});
        l.push_back({QStringLiteral("EP%1 ETP%2 EDP%3").arg(s.ep).arg(s.etp).arg(s.edp),
                     QStringLiteral("E%1 ET%2 ED%3").arg(s.ep).arg(s.etp).arg(s.edp), QStringLiteral("EP%1").arg(s.ep)});
        l.push_back({QStringLiteral("recompute: %1").arg(rc), QStringLiteral("rc: %1").arg(rc), style::recomputeShortLabel(s)});
        l.push_back({QStringLiteral("%1 dev · %2").arg(s.numDevices()).arg(style::devicesLabel(s)),
                     QStringLiteral("%1 dev").arg(s.numDevices()), QString::number(s.numDevices())});
    }
    std::vector<QStringList> chosen(lines.size());
    if (lines.empty())
        return chosen;
    auto fitsAll = [&](size_t l, int f, const QFont& font) {
        const QFontMetrics fm(font);
        for (int i = 0; i < stageCount(); ++i) {
            if (fm.horizontalAdvance(lines[static_cast<size_t>(i)][l][f]) > stageRect(i).width() - kTextInset)
                return false;
        }
        return true;
    };
    for (size_t l = 0; l < lines.front().size(); ++l) {
        const QFont& f = l == 0 ? bold : font();
        const int forms = static_cast<int>(lines.front()[l].size());
        int form = 0;
        while (form < forms - 1 && !fitsAll(l, form, f))
            ++form;
        // The device type is never dropped: when even "S2 910B" is too wide, the type
        // goes on a line of its own.
        const bool splitType = l == 0 && !fitsAll(l, form, f);
        for (size_t i = 0; i < lines.size(); ++i) {
            if (splitType) {
                const QString type = QString::fromStdString(m_plan.stages[i].device_type);
                chosen[i] << QStringLiteral("S%1").arg(i) << style::shortDeviceName(type);
            } else {
                chosen[i] << lines[i][l][form];
            }
        }
    }
    return chosen;
}

QStringList StagePartitionView::stageLines(int index) const
{
    if (index < 0 || index >= stageCount())
        return {};
    return boxLines()[static_cast<size_t>(index)];
}

void StagePartitionView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, true);
    const QFontMetrics fm = fontMetrics();
    if (!m_hasPlan || m_plan.stages.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, m_emptyText);
        return;
    }
    QFont bold = font();
    bold.setBold(true);
    const QPen mark(style::bottleneckMarkColor(palette()), 3);

    const std::vector<QStringList> text = boxLines();
    for (int i = 0; i < stageCount(); ++i) {
        // A gap between boxes (rather than alternating shades, which would make one device
        // type look like another) separates neighbouring stages of one type.
        const QRect r = stageRect(i).adjusted(2, 0, -2, 0);
        QColor fill = style::deviceColor(QString::fromStdString(m_plan.stages[static_cast<size_t>(i)].device_type));
        if (i == m_hovered)
            fill = fill.lighter(125);
        p.setPen(Qt::NoPen);
        p.setBrush(fill);
        p.drawRoundedRect(r, 4, 4);
        if (i == m_bottleneck) {
            // A thick outline in the text colour with a thin line of the background inside,
            // which shows on every device colour in both themes.
            p.setBrush(Qt::NoBrush);
            p.setPen(mark);
            p.drawRoundedRect(QRectF(r).adjusted(1.5, 1.5, -1.5, -1.5), 4, 4);
            p.setPen(QPen(palette().color(QPalette::Base), 1));
            p.drawRoundedRect(QRectF(r).adjusted(3.5, 3.5, -3.5, -3.5), 3, 3);
        }
        if (i == m_hovered) {
            p.setPen(QPen(palette().color(QPalette::Highlight), 2));
            p.setBrush(Qt::NoBrush);
            p.drawRoundedRect(r, 4, 4);
        }

        p.setPen(style::textOn(fill));
        const QRect textRect = r.adjusted(5, 5, -4, -2);
        int y = textRect.top();
        const QStringList& lines = text[static_cast<size_t>(i)];
        for (int l = 0; l < lines.size(); ++l) {
            const QFont& f = l == 0 ? bold : font();
            p.setFont(f);
            const QFontMetrics lfm(f);
            const QString line = lfm.elidedText(lines[l], Qt::ElideRight, textRect.width());
            p.drawText(QRect(textRect.left(), y, textRect.width(), lfm.height()), Qt::AlignLeft | Qt::AlignVCenter, line);
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
    const int ly = kMargin + stripHeight() + kLegendGap;
    const int box = fm.height() - 4;
    const bool marked = m_bottleneck >= 0 && m_bottleneck < stageCount();
    // Full labels when they fit on the line, else short ones ("MI300X (16)"), else elided.
    const auto labels = [&](bool full) {
        QStringList out;
        for (const QString& t : types)
            out << (full ? tr("%1 (%2 devices)") : tr("%1 (%2)")).arg(t).arg(devices[t]);
        if (marked)
            out << (full ? tr("bottleneck stage (S%1)") : tr("bottleneck S%1")).arg(m_bottleneck);
        return out;
    };
    const auto lineWidth = [&](const QStringList& texts) {
        int w = 0;
        for (const QString& text : texts)
            w += box + 4 + fm.horizontalAdvance(text) + 16;
        return w - 16;
    };
    QStringList texts = labels(true);
    if (kMargin + lineWidth(texts) > width() - kMargin)
        texts = labels(false);
    int x = kMargin;
    for (qsizetype i = 0; i < texts.size(); ++i) {
        const bool bottleneckEntry = marked && i == texts.size() - 1;
        if (bottleneckEntry) {
            p.setPen(mark);
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(x + 1.5, ly + 3.5, box - 3, box - 3));
        } else {
            p.setPen(Qt::NoPen);
            p.setBrush(style::deviceColor(types[static_cast<size_t>(i)]));
            p.drawRoundedRect(QRect(x, ly + 2, box, box), 2, 2);
        }
        x += box + 4;
        const QString text = fm.elidedText(texts[i], Qt::ElideRight, std::max(0, width() - kMargin - x));
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QPoint(x, ly + fm.ascent() + 1), text);
        x += fm.horizontalAdvance(text) + 16;
        if (x + box >= width() - kMargin)
            break;
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
