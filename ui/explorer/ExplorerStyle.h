#pragma once
// Colours and text formats shared by the explorer's views, so that a device type, a
// forward pass or a memory component has the same look everywhere.

#include "plan/Plan.h"

#include <QColor>
#include <QString>

class QCustomPlot;

namespace hapmoe::ui::style {

// A stable colour per device type (known vendors get their customary hue; others are
// hashed into a palette that stays distinguishable from the known ones).
QColor deviceColor(const QString& deviceType);
// Text colour readable on top of the given fill.
QColor textOn(const QColor& fill);

QColor forwardColor(int chunk = 0);
QColor backwardColor(int chunk = 0);
QColor communicationColor();
QColor dpSyncColor();
QColor optimizerColor();
QColor bubbleColor();
QColor bottleneckColor();

enum class MemoryPart { Weights, Gradients, Optimizer, Activations, MoeBuffers, Overhead };
QColor memoryColor(MemoryPart part);
QString memoryPartName(MemoryPart part);

QString formatSeconds(double seconds);     // "1.234 s", "56.7 ms", "830 µs"
QString formatGiB(double bytes);           // "12.34 GiB"
QString recomputeLabel(const StagePlan& stage);  // "none", "selective", "full 4/12"
QString knobsLabel(const StagePlan& stage);      // "TP2 CP1 DP4 · EP4 ETP1 EDP2"
QString devicesLabel(const StagePlan& stage);    // "node 3: 0-7"

// Background, axes, grid and legend of a chart from its widget's palette, so charts follow
// the light and dark themes. Call again on QEvent::PaletteChange.
void applyChartPalette(QCustomPlot* plot);
// `color` mixed into `base` with weight a (0 = base, 1 = color); an opaque lane tint.
QColor mix(const QColor& base, const QColor& color, double a);

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

} // namespace hapmoe::ui::style
