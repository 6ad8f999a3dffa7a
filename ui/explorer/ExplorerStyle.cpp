#include "ExplorerStyle.h"

#include <QHash>
#include <qcustomplot.h>
#include <QStringList>

#include <cmath>

namespace hapmoe::ui::style {

QColor deviceColor(const QString& deviceType)
{
    const QString t = deviceType.toUpper();
    // Vendor hues (NVIDIA green, AMD red, Ascend purple, Gaudi teal), with a distinct
    // shade per generation so that two NVIDIA types in one cluster stay apart.
    static const QList<QPair<QString, QColor>> known = {
        {QStringLiteral("H800"), QColor(0x4c, 0x9a, 0x2a)},
        {QStringLiteral("H100"), QColor(0x2e, 0x7d, 0x32)},
        {QStringLiteral("H200"), QColor(0x1b, 0x5e, 0x20)},
        {QStringLiteral("H20"), QColor(0x8b, 0xc3, 0x4a)},
        {QStringLiteral("A100"), QColor(0x7c, 0xb3, 0x42)},
        {QStringLiteral("A800"), QColor(0x9e, 0xb8, 0x3b)},
        {QStringLiteral("MI300"), QColor(0xc6, 0x28, 0x28)},
        {QStringLiteral("MI250"), QColor(0xe5, 0x73, 0x73)},
        {QStringLiteral("910"), QColor(0x7b, 0x1f, 0xa2)},
        {QStringLiteral("GAUDI"), QColor(0x00, 0x83, 0x8f)},
    };
    for (const auto& [key, color] : known) {
        if (t.contains(key))
            return color;
    }
    static const QColor extra[] = {QColor(0x5d, 0x40, 0x37), QColor(0x37, 0x47, 0x4f), QColor(0xad, 0x14, 0x57),
                                   QColor(0x00, 0x69, 0x5c), QColor(0x6d, 0x4c, 0x41), QColor(0x45, 0x27, 0xa0)};
    return extra[qHash(t) % (sizeof(extra) / sizeof(extra[0]))];
}

QColor textOn(const QColor& fill)
{
    // Relative luminance (ITU-R BT.709 weights) decides between black and white text.
    const double l = 0.2126 * fill.redF() + 0.7152 * fill.greenF() + 0.0722 * fill.blueF();
    return l > 0.55 ? QColor(Qt::black) : QColor(Qt::white);
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

QColor communicationColor() { return QColor(0x45, 0x45, 0x45); }
QColor dpSyncColor() { return QColor(0x26, 0xa6, 0x9a); }
QColor optimizerColor() { return QColor(0x8d, 0x6e, 0x63); }
QColor bubbleColor() { return QColor(0xd3, 0x2f, 0x2f, 90); }
QColor bottleneckColor() { return QColor(0xd3, 0x2f, 0x2f); }

QColor memoryColor(MemoryPart part)
{
    switch (part) {
    case MemoryPart::Weights: return QColor(0x3f, 0x51, 0xb5);
    case MemoryPart::Gradients: return QColor(0x64, 0x95, 0xed);
    case MemoryPart::Optimizer: return QColor(0x00, 0x96, 0x88);
    case MemoryPart::Activations: return QColor(0xff, 0x98, 0x00);
    case MemoryPart::MoeBuffers: return QColor(0xab, 0x47, 0xbc);
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
    if (a >= 1.0)
        return QStringLiteral("%1 s").arg(seconds, 0, 'f', 3);
    if (a >= 1e-3)
        return QStringLiteral("%1 ms").arg(seconds * 1e3, 0, 'f', a >= 0.1 ? 1 : 2);
    return QStringLiteral("%1 µs").arg(seconds * 1e6, 0, 'f', 0);
}

QString formatGiB(double bytes)
{
    return QStringLiteral("%1 GiB").arg(bytes / kGiB, 0, 'f', 2);
}

QString recomputeLabel(const StagePlan& stage)
{
    switch (stage.recompute) {
    case Recompute::None: return QStringLiteral("none");
    case Recompute::Selective: return QStringLiteral("selective");
    case Recompute::Full: {
        const int k = stage.recompute_layers > 0 ? stage.recompute_layers : stage.num_layers;
        return QStringLiteral("full %1/%2").arg(k).arg(stage.num_layers);
    }
    }
    return {};
}

QString knobsLabel(const StagePlan& s)
{
    return QStringLiteral("TP%1 CP%2 DP%3 · EP%4 ETP%5 EDP%6")
        .arg(s.tp).arg(s.cp).arg(s.dp).arg(s.ep).arg(s.etp).arg(s.edp);
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
            // Warnings keep their red; ordinary labels follow the text colour.
            if (label->color() != bottleneckColor() && label->color() != bottleneckColor().darker(130))
                label->setColor(text);
        }
    }
}

} // namespace hapmoe::ui::style
