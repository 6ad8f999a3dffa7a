#include "ExplorerStyle.h"

#include "Theme.h"

#include "megatron/PipelineLayout.h"

#include <QHash>
#include <qcustomplot.h>
#include <QStringList>
#include <QTableWidgetItem>

#include <algorithm>
#include <cmath>
#include <vector>

namespace hapmoe::ui::style {

namespace {
constexpr char kPlaceholderName[] = "chartPlaceholder";
}

namespace {

struct KnownDevice {
    QString key;
    QColor color;
};

// One hue per type, at least 20 degrees from every other type's (HSV hue in the
// comments), at a similar strength: a lighter or darker shade of one hue reads as the
// same type on a strip (A100 and H800 share mixed clusters). Hues within 25 degrees of
// red are left to problems: capacity lines, shortfalls and the bubble hatch. Vendors keep their
// customary family where it does not collide: NVIDIA greens to blues, AMD orange (the
// older MI250 lime), Ascend purples, Gaudi cyan; L40S, a graphics part, is the only grey.
const QList<KnownDevice>& knownDevices()
{
    static const QList<KnownDevice> known = {
        {QStringLiteral("MI300"), QColor(0xe0, 0x6b, 0x16)},   // 25 orange
        {QStringLiteral("H200"), QColor(0xb8, 0x97, 0x12)},    // 48 amber
        {QStringLiteral("H20"), QColor(0x8f, 0xa8, 0x2a)},     // 72 yellow-green
        {QStringLiteral("MI250"), QColor(0x5a, 0xa8, 0x2a)},   // 97 lime
        {QStringLiteral("H800"), QColor(0x3f, 0x9e, 0x3f)},    // 120 green
        {QStringLiteral("H100"), QColor(0x0e, 0x8c, 0x51)},    // 152 sea green
        {QStringLiteral("GAUDI"), QColor(0x00, 0x8f, 0x94)},   // 182 cyan
        {QStringLiteral("A100"), QColor(0x0a, 0x82, 0xd1)},    // 204 sky blue
        {QStringLiteral("A800"), QColor(0x5f, 0x49, 0xb8)},    // 252 blue violet
        {QStringLiteral("B200"), QColor(0x26, 0x45, 0xbf)},    // 228 blue
        {QStringLiteral("910C"), QColor(0x68, 0x1f, 0x99)},    // 276 purple
        {QStringLiteral("910"), QColor(0x9e, 0x37, 0x9e)},     // 300 magenta
        {QStringLiteral("MI325"), QColor(0xb8, 0x1c, 0x6a)},   // 330 raspberry
        {QStringLiteral("L40"), QColor(0x60, 0x70, 0x7d)},     // blue grey
    };
    return known;
}

// Types not in the list above are hashed into these.
const QList<QColor>& extraDeviceColors()
{
    static const QList<QColor> extra = {QColor(0x5d, 0x40, 0x37), QColor(0x37, 0x47, 0x4f), QColor(0x55, 0x6b, 0x2f),
                                        QColor(0x00, 0x69, 0x5c), QColor(0xf9, 0xa8, 0x25), QColor(0x45, 0x27, 0xa0)};
    return extra;
}

// WCAG 2.1 relative luminance (sRGB channels linearised).
double relativeLuminance(const QColor& c)
{
    const auto linear = [](double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF());
}

} // namespace

QColor deviceColor(const QString& deviceType)
{
    const QString t = deviceType.toUpper();
    for (const KnownDevice& known : knownDevices()) {
        if (t.contains(known.key))
            return known.color;
    }
    const QList<QColor>& extra = extraDeviceColors();
    return extra[static_cast<qsizetype>(qHash(t) % static_cast<size_t>(extra.size()))];
}

QList<QColor> deviceColors()
{
    QList<QColor> colors;
    for (const KnownDevice& known : knownDevices())
        colors << known.color;
    return colors + extraDeviceColors();
}

QString shortDeviceName(const QString& deviceType)
{
    const int dash = deviceType.indexOf(QLatin1Char('-'));
    return dash > 0 ? deviceType.left(dash) : deviceType;
}

double contrastRatio(const QColor& a, const QColor& b)
{
    // WCAG 2.1, definition of contrast ratio: (L1 + 0.05) / (L2 + 0.05), L1 the lighter.
    const double la = relativeLuminance(a), lb = relativeLuminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor textOn(const QColor& fill)
{
    // The better of the two: on mid-tone fills (H800 green, MI300X orange) white reaches
    // only about 3.4:1 and black over 6:1.
    const QColor black(Qt::black), white(Qt::white);
    return contrastRatio(fill, black) >= contrastRatio(fill, white) ? black : white;
}

QColor forwardColor(int chunk)
{
    // Interleaved chunks alternate shades of the same hue.
    return chunk % 2 == 0 ? QColor(0x3f, 0x7f, 0xd9) : QColor(0x7f, 0xb0, 0xf0);
}

QColor backwardColor(int chunk)
{
    return chunk % 2 == 0 ? QColor(0xf0, 0x9a, 0x1a) : QColor(0xf7, 0xc5, 0x6b);
}

QColor communicationColor(const QPalette& palette)
{
    return mix(palette.color(QPalette::Base), palette.color(QPalette::Text), 0.75);
}

// Material 200 tints; CIE76 colour difference from every device colour at least 28
// (ui_plan_explorer: breakdownColorsAreNotDeviceColors).
QColor computeColor() { return QColor(0x90, 0xca, 0xf9); }          // light blue, as the forward blocks' hue
QColor tensorParallelColor() { return QColor(0xb3, 0x9d, 0xdb); }   // lavender
QColor dispatchColor() { return QColor(0xf4, 0x8f, 0xb1); }         // pink
QColor dpSyncColor() { return QColor(0x9a, 0xd8, 0xce); }           // pale teal
QBrush embeddingSyncBrush() { return QBrush(dpSyncColor().darker(160), Qt::DiagCrossPattern); }
QColor optimizerColor() { return QColor(0xc5, 0xe1, 0xa5); }       // pale lime
QColor bubbleColor(const QPalette& palette)
{
    return isDark(palette) ? QColor(0xef, 0x73, 0x73) : QColor(0xd3, 0x2f, 0x2f);
}
QBrush waitBrush(const QPalette& palette)
{
    return QBrush(palette.color(QPalette::Text), Qt::Dense6Pattern);
}
QColor differsBackground(const QPalette& palette)
{
    if (!isDark(palette))
        return QColor(255, 236, 179);   // amber 100
    // Amber 500 at 30 %, in 8-bit channels like the light theme's.
    return QColor(mix(palette.color(QPalette::Base), QColor(255, 193, 7), 0.3).rgb());
}
QColor differsForeground(const QPalette& palette)
{
    return isDark(palette) ? palette.color(QPalette::Text) : QColor(Qt::black);
}
void markDiffers(QTableWidgetItem* item, bool differs, const QPalette& palette)
{
    if (differs) {
        item->setBackground(differsBackground(palette));
        item->setForeground(differsForeground(palette));
    } else {
        item->setData(Qt::BackgroundRole, QVariant());
        item->setData(Qt::ForegroundRole, QVariant());
    }
}
QColor problemColor() { return QColor(0xd3, 0x2f, 0x2f); }
QColor bottleneckMarkColor(const QPalette& palette) { return palette.color(QPalette::Text); }

QColor memoryColor(MemoryPart part)
{
    switch (part) {
    case MemoryPart::Weights: return QColor(0x3f, 0x51, 0xb5);
    case MemoryPart::Gradients: return QColor(0x64, 0x95, 0xed);
    case MemoryPart::Optimizer: return QColor(0x00, 0x96, 0x88);
    case MemoryPart::Activations: return QColor(0xff, 0x98, 0x00);
    case MemoryPart::MoeBuffers: return QColor(0x9c, 0x7a, 0x5b);   // brown: far from every device type's purple
    case MemoryPart::Overhead: return QColor(0x9e, 0x9e, 0x9e);
    }
    return Qt::gray;
}

QString memoryPartName(MemoryPart part)
{
    switch (part) {
    case MemoryPart::Weights: return QStringLiteral("Weights");
    case MemoryPart::Gradients: return QStringLiteral("Gradients");
    case MemoryPart::Optimizer: return QStringLiteral("Optimizer states");
    case MemoryPart::Activations: return QStringLiteral("Activations");
    case MemoryPart::MoeBuffers: return QStringLiteral("MoE buffers");
    case MemoryPart::Overhead: return QStringLiteral("Overhead");
    }
    return {};
}

QString formatSeconds(double seconds)
{
    const double a = std::abs(seconds);
    // Nothing reads as nothing in the unit of its neighbours, not as "0 µs" among seconds.
    if (a < 0.5e-6)
        return QStringLiteral("0 s");
    if (a >= 1e9)   // absurd inputs (a link of 1e-300 GB/s): not dozens of digits
        return QStringLiteral("%1 s").arg(seconds, 0, 'g', 4);
    if (a >= 1.0)
        return QStringLiteral("%1 s").arg(seconds, 0, 'f', 3);
    if (a >= 1e-3)
        return QStringLiteral("%1 ms").arg(seconds * 1e3, 0, 'f', a >= 0.1 ? 1 : 2);
    return QStringLiteral("%1 µs").arg(seconds * 1e6, 0, 'f', 0);
}

FullestDevice fullestDevice(const Prediction& prediction)
{
    FullestDevice f;
    for (std::size_t i = 0; i < prediction.stages.size(); ++i) {
        const MemoryBreakdown& m = prediction.stages[i].memory;
        const FullestDevice here{static_cast<int>(i), m.total(), m.capacity, prediction.memory_headroom};
        if (f.stage < 0 || here.share() > f.share())
            f = here;
    }
    return f;
}

QString fullestDeviceText(const FullestDevice& f)
{
    // A whole number of GiB as such ("64"), else one decimal: 90 % of 64 GiB is 57.6, not 58.
    const auto gib = [](double bytes) {
        const double g = bytes / kGiB;
        return std::abs(g - std::round(g)) < 0.05 ? QString::number(g, 'f', 0) : QString::number(g, 'f', 1);
    };
    const QString used = QStringLiteral("%1/%2").arg(f.used / kGiB, 0, 'f', 1).arg(gib(f.capacity));
    if (f.headroom <= 0)
        return used + QStringLiteral(" GiB");
    return QObject::tr("%1 of %2 GiB").arg(used, gib(f.deviceMemory()));
}

QString nearlyFullText(const Prediction& prediction)
{
    const int s = nearlyFullStage(prediction);
    if (s < 0)
        return {};
    const MemoryBreakdown& m = prediction.stages[static_cast<std::size_t>(s)].memory;
    return QObject::tr("S%1's devices use %2 of %3 (%4 %) with no memory kept free: the model counts %5 of runtime overhead "
                       "but not the allocator's fragmentation, which can run them out of memory. \"Keep free\" in the "
                       "search settings reserves a share.")
        .arg(s)
        .arg(formatGiB(m.total()), formatGiB(m.capacity))
        .arg(100.0 * m.total() / m.capacity, 0, 'f', 1)
        .arg(formatGiB(m.overhead));
}

QString usableMemoryText(double capacityBytes, double headroom)
{
    if (headroom <= 0 || headroom >= 1)
        return formatGiB(capacityBytes);
    return QObject::tr("%1 usable of %2 (%3 % kept free)")
        .arg(formatGiB(capacityBytes), formatGiB(capacityBytes / (1 - headroom)))
        .arg(headroom * 100, 0, 'g', 3);
}

QString formatGiB(double bytes)
{
    return QStringLiteral("%1 GiB").arg(bytes / kGiB, 0, 'f', 2);
}

QString recomputeLabel(const StagePlan& stage)
{
    switch (stage.recompute) {
    case Recompute::None: return QStringLiteral("none");
    case Recompute::Selective:
        // Megatron-Core's default module (core attention) goes unsaid.
        return stage.recompute_modules == recompute_module::defaults
            ? QStringLiteral("selective")
            : QStringLiteral("selective (%1)").arg(QString::fromStdString(recomputeModulesLabel(stage.recompute_modules)));
    case Recompute::Full: {
        const int k = stage.recompute_layers > 0 ? stage.recompute_layers : stage.num_layers;
        return QStringLiteral("full %1/%2").arg(k).arg(stage.num_layers);
    }
    }
    return {};
}

QString recomputeShortLabel(const StagePlan& stage)
{
    return QStringLiteral("rc: %1").arg(stage.recompute == Recompute::Selective ? QStringLiteral("sel") : recomputeLabel(stage));
}

QString knobsLabel(const StagePlan& s, bool experts)
{
    const QString dense = QStringLiteral("TP%1 CP%2 DP%3").arg(s.tp).arg(s.cp).arg(s.dp);
    return experts ? dense + QStringLiteral(" · EP%1 ETP%2 EDP%3").arg(s.ep).arg(s.etp).arg(s.edp) : dense;
}

QString knobsShortLabel(const StagePlan& s)
{
    QStringList parts;
    if (s.tp > 1)
        parts << QStringLiteral("TP%1").arg(s.tp);
    if (s.cp > 1)
        parts << QStringLiteral("CP%1").arg(s.cp);
    parts << QStringLiteral("DP%1").arg(s.dp);
    if (s.ep > 1)
        parts << QStringLiteral("EP%1").arg(s.ep);
    if (s.etp > 1)
        parts << QStringLiteral("ETP%1").arg(s.etp);
    if (s.micro_batch_size > 1)
        parts << QStringLiteral("MBS%1").arg(s.micro_batch_size);
    if (s.recompute != Recompute::None)
        parts << recomputeShortLabel(s).remove(QLatin1Char(':'));
    return parts.join(QLatin1Char(' '));
}

QString joinRuns(const QStringList& items, const QString& separator)
{
    QStringList parts;
    for (qsizetype i = 0; i < items.size();) {
        qsizetype j = i + 1;
        while (j < items.size() && items[j] == items[i])
            ++j;
        parts << (j - i > 1 ? QStringLiteral("%1 ×%2").arg(items[i]).arg(j - i) : items[i]);
        i = j;
    }
    return parts.join(separator);
}

QString stagesSummary(const Plan& plan)
{
    // A group per run of stages of one device type ("H800: ..."), its stages' runs merged.
    QStringList groups;
    QStringList stages;
    QString type;
    auto flush = [&]() {
        if (!stages.isEmpty())
            groups << type + QStringLiteral(": ") + joinRuns(stages, QStringLiteral(", "));
        stages.clear();
    };
    for (const StagePlan& s : plan.stages) {
        if (const QString t = QString::fromStdString(s.device_type); t != type) {
            flush();
            type = t;
        }
        stages << QStringLiteral("%1L %2").arg(s.num_layers).arg(knobsShortLabel(s));
    }
    flush();
    return groups.join(QStringLiteral(" | "));
}

QString stagesSummaryLines(const Plan& plan)
{
    QStringList lines;
    for (int i = 0; i < plan.pp(); ++i) {
        const StagePlan& s = plan.stages[static_cast<std::size_t>(i)];
        lines << QStringLiteral("S%1 %2, %3: %4")
                     .arg(i)
                     .arg(QString::fromStdString(s.device_type), layerRange(plan, i), knobsShortLabel(s));
    }
    return lines.join(QLatin1Char('\n'));
}

QString optimizerPlaceLabel(double f)
{
    return f <= 0 ? QObject::tr("on devices") : f >= 1 ? QObject::tr("all on host") : QObject::tr("%1 % on host").arg(100.0 * f, 0, 'f', 0);
}

QString targetLabel(Target target)
{
    switch (target) {
    case Target::Megatron: return QStringLiteral("Megatron-LM");
    case Target::FlagScale: return QStringLiteral("FlagScale");
    case Target::Any: break;
    }
    return QStringLiteral("any");
}

QString layerRange(const Plan& plan, int stage, int mtpLayers)
{
    if (stage < 0 || stage >= plan.pp())
        return {};
    const std::string ranges = PipelineLayout::rankLayerRanges(plan)[static_cast<std::size_t>(stage)];
    const QString text = QStringLiteral("L") + QString::fromStdString(ranges).remove(QLatin1Char(' '));
    if (stage + 1 < plan.pp() || mtpLayers <= 0)
        return text;
    return text + QLatin1Char(' ') + QString::fromStdString(PipelineLayout::mtpMark(mtpLayers));
}

QString devicesLabel(const StagePlan& stage)
{
    QStringList parts;
    for (const DeviceSlot& slot : stage.devices) {
        if (slot.count <= 1)
            parts << QStringLiteral("node %1: %2").arg(slot.node).arg(slot.first_local);
        else
            parts << QStringLiteral("node %1: %2-%3").arg(slot.node).arg(slot.first_local).arg(slot.first_local + slot.count - 1);
    }
    return parts.join(QStringLiteral(", "));
}

QColor mix(const QColor& base, const QColor& color, double a)
{
    return QColor::fromRgbF((1 - a) * base.redF() + a * color.redF(), (1 - a) * base.greenF() + a * color.greenF(),
                            (1 - a) * base.blueF() + a * color.blueF());
}

void applyChartPalette(QCustomPlot* plot)
{
    const QPalette pal = plot->palette();
    const QColor base = pal.color(QPalette::Base);
    const QColor text = pal.color(QPalette::Text);
    const QColor grid = mix(base, text, 0.18);
    plot->setBackground(base);
    for (QCPAxisRect* rect : plot->axisRects()) {
        for (QCPAxis* axis : rect->axes()) {
            axis->setBasePen(QPen(text, 0));
            axis->setTickPen(QPen(text, 0));
            axis->setSubTickPen(QPen(text, 0));
            axis->setTickLabelColor(text);
            axis->setLabelColor(text);
            axis->grid()->setPen(QPen(grid, 0, Qt::DotLine));
            axis->grid()->setZeroLinePen(QPen(grid, 0));
        }
    }
    if (plot->legend) {
        plot->legend->setBrush(base);
        plot->legend->setTextColor(text);
        plot->legend->setBorderPen(Qt::NoPen);
    }
    for (int i = 0; i < plot->itemCount(); ++i) {
        if (auto* label = qobject_cast<QCPItemText*>(plot->item(i))) {
            // Warnings keep their red and the placeholder its own grey; ordinary labels
            // follow the text colour.
            if (label->objectName() == QLatin1String(kPlaceholderName))
                label->setColor(pal.color(QPalette::PlaceholderText));
            else if (label->color() != problemColor())
                label->setColor(text);
        }
    }
    // Titles and notes in the layout (a chart's name in a comparison, the host-memory note).
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
        if (auto* title = qobject_cast<QCPTextElement*>(element); title && title->textColor() != problemColor())
            title->setTextColor(text);
    }
}

namespace {

QCPItemText* placeholderLabel(const QCustomPlot* plot)
{
    for (int i = 0; i < plot->itemCount(); ++i) {
        auto* t = qobject_cast<QCPItemText*>(plot->item(i));
        if (t && t->objectName() == QLatin1String(kPlaceholderName))
            return t;
    }
    return nullptr;
}

} // namespace

QString chartPlaceholder(const QCustomPlot* plot)
{
    const QCPItemText* label = plot ? placeholderLabel(plot) : nullptr;
    return label ? label->text() : QString();
}

void setChartPlaceholder(QCustomPlot* plot, const QString& text)
{
    QCPItemText* label = placeholderLabel(plot);
    const bool placeholder = !text.isEmpty();
    // Whole layers, so that each chart keeps its own choice of visible grids and axes.
    for (const char* layer : {"grid", "axes", "legend"}) {
        if (QCPLayer* l = plot->layer(QString::fromLatin1(layer)))
            l->setVisible(!placeholder);
    }
    if (!placeholder) {
        if (label)
            plot->removeItem(label);
        return;
    }
    if (!label) {
        label = new QCPItemText(plot);
        label->setObjectName(QString::fromLatin1(kPlaceholderName));
        label->position->setType(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(0.5, 0.5);
        label->setPositionAlignment(Qt::AlignCenter);
        label->setClipToAxisRect(false);
    }
    label->setText(text);
    label->setColor(plot->palette().color(QPalette::PlaceholderText));
}

int fitLegendColumns(QCPLegend* legend, int width)
{
    // The grid counts its empty cells too (a wrapped last row): only the entries count.
    std::vector<int> widths;
    for (int i = 0; i < legend->itemCount(); ++i) {
        if (const QCPAbstractLegendItem* item = legend->item(i))
            widths.push_back(item->minimumOuterSizeHint().width());
    }
    const int n = static_cast<int>(widths.size());
    if (n == 0)
        return 0;
    const int room = width - legend->margins().left() - legend->margins().right() - 4;
    int columns = 1;
    for (int k = n; k > 1; --k) {
        // Filled rows first: entry i sits in column i % k, and a column is as wide as its
        // widest entry.
        int total = legend->columnSpacing() * (k - 1);
        for (int c = 0; c < k; ++c) {
            int column = 0;
            for (int i = c; i < n; i += k)
                column = std::max(column, widths[static_cast<size_t>(i)]);
            total += column;
        }
        if (total <= room) {
            columns = k;
            break;
        }
    }
    if (legend->wrap() != columns || legend->columnCount() != columns) {
        legend->setWrap(columns);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    }
    return (n + columns - 1) / columns;
}

} // namespace hapmoe::ui::style
