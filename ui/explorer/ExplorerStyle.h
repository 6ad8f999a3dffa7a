#pragma once
// Colours and text formats shared by the explorer's views, so that a device type, a
// forward pass or a memory component has the same look everywhere.

#include "cost/Prediction.h"
#include "plan/Plan.h"

#include <QColor>
#include <QPalette>
#include <QString>

class QCustomPlot;
class QCPLegend;
class QTableWidgetItem;

namespace hapmoe::ui::style {

// A stable colour per device type: every known type has its own hue (not a lighter or
// darker shade of another type's), others are hashed into a palette of further hues.
QColor deviceColor(const QString& deviceType);
// Every colour deviceColor can give (the known types' and the hashed ones'), so that other
// colours can be kept apart from them.
QList<QColor> deviceColors();
// The device type without its memory or variant suffix: "A100-80GB" -> "A100",
// "910B-376T" -> "910B", "H100-SXM" -> "H100".
QString shortDeviceName(const QString& deviceType);
// Text colour readable on top of the given fill: black or white, whichever contrasts more
// (at least 4.58:1 on any fill, above WCAG 2.1 AA's 4.5:1 for small text).
QColor textOn(const QColor& fill);
// WCAG 2.1 contrast ratio of two opaque colours, from 1 (same luminance) to 21.
double contrastRatio(const QColor& a, const QColor& b);

QColor forwardColor(int chunk = 0);
QColor backwardColor(int chunk = 0);
// The stage-boundary send: a grey far from the background (dark in the light theme, light
// in the dark theme) so it shows on the blocks and as a legend swatch.
QColor communicationColor(const QPalette& palette);
// The Breakdown's compute, tensor-parallel and dispatch bars, and the DP sync and optimizer
// in the Breakdown and the timeline: pale tints, lighter than every device colour (which
// are of middle lightness and take nearly every hue), so that no bar reads as a device type.
QColor computeColor();
QColor tensorParallelColor();
QColor dispatchColor();
QColor dpSyncColor();
// The tied embeddings' all-reduce inside the DP sync: the sync colour, crossed.
QBrush embeddingSyncBrush();
QColor optimizerColor();
// Hatch of idle time (pipeline bubbles): red, brighter in the dark theme.
QColor bubbleColor(const QPalette& palette);
// A stage's wait after its last backward (for the closed form's end of the pipeline, the other
// end stage's sync, the gradient-norm barrier): a sparse stipple in the text colour, which
// reads on every lane tint and is neither a block nor the bubble's red hatch.
QBrush waitBrush(const QPalette& palette);
// Problems only: short of memory, a plan that does not fit, a capacity line.
QColor problemColor();
// The bottleneck stage's outline: the text colour, which no device type uses, so the
// mark shows on every device colour in both themes.
QColor bottleneckMarkColor(const QPalette& palette);
// Compare's rows where the plans differ: pale amber under black text in the light theme, a
// dark amber (30 % amber over the dark base) under the theme's text in the dark one.
QColor differsBackground(const QPalette& palette);
QColor differsForeground(const QPalette& palette);
// Paints a table cell in those colours when it differs, and gives it back the view's own
// colours when it does not (called again on a theme switch).
void markDiffers(QTableWidgetItem* item, bool differs, const QPalette& palette);

enum class MemoryPart { Weights, Gradients, Optimizer, Activations, MoeBuffers, Overhead };
QColor memoryColor(MemoryPart part);
QString memoryPartName(MemoryPart part);

QString formatSeconds(double seconds);     // "1.234 s", "56.7 ms", "830 µs", "0 s"
QString formatGiB(double bytes);           // "12.34 GiB"
QString recomputeLabel(const StagePlan& stage);  // "none", "selective", "full 4/12"
// The shortest form that still says what it is, for narrow boxes and bars: "rc: none",
// "rc: sel", "rc: full 4/12".
QString recomputeShortLabel(const StagePlan& stage);
QString knobsLabel(const StagePlan& stage, bool experts = true);   // "TP2 CP1 DP4 · EP4 ETP1 EDP2"
// A stage's knobs that say something: DP always, TP, CP, EP and ETP above 1 (EDP follows
// from them), the micro-batch size above 1 and recompute other than none: "TP2 DP4 EP8
// MBS2 rc sel". A dense model's stages have EP and ETP 1, so none shows.
QString knobsShortLabel(const StagePlan& stage);
// Items joined by `separator`, each run of equal neighbours written once with its count:
// "MI300X ×6 | H800 ×2".
QString joinRuns(const QStringList& items, const QString& separator);
// The plan's stages in one line, in pipeline order: a group per run of one device type, each
// stage its decoder layers and short knobs, runs of equal stages merged:
// "910B: 2L DP4 ETP4 ×2 | H800: 4L TP2 DP1 MBS4, 8L DP4".
// What tells apart plans of equal figures (the same stages in another order, another split).
QString stagesSummary(const Plan& plan);
// The same a line per stage, with its layers: "S0 910B, L0-1: DP4 ETP4".
QString stagesSummaryLines(const Plan& plan);
QString targetLabel(Target target);              // "Megatron-LM", "FlagScale"
// Where a plan keeps its optimizer states: "on devices", "25 % on host", "all on host".
QString optimizerPlaceLabel(double offloadFraction);
QString devicesLabel(const StagePlan& stage);    // "node 3: 0-7"
// The decoder layers stage `stage` of the plan holds: "L5-14", "L17" for one layer, and with
// virtual chunks one range per chunk, "L0-5,16-21" (PipelineLayout::rankLayerRanges); the
// last stage adds the model's MTP depths, "L16-23 +MTP" (PipelineLayout::mtpMark).
QString layerRange(const Plan& plan, int stage, int mtpLayers = 0);

// Background, axes, grid and legend of a chart from its widget's palette, so charts follow
// the light and dark themes. Call again on QEvent::PaletteChange.
void applyChartPalette(QCustomPlot* plot);
// `color` mixed into `base` with weight a (0 = base, 1 = color); an opaque lane tint.
QColor mix(const QColor& base, const QColor& color, double a);
// Instead of an empty chart: hides the axes and the legend and writes `text` in the middle
// of the chart area. An empty text brings the axes and the legend back.
void setChartPlaceholder(QCustomPlot* plot, const QString& text);
// The text setChartPlaceholder writes in the chart; empty when the chart shows its plan.
QString chartPlaceholder(const QCustomPlot* plot);
// Lays a legend's entries out in as many columns as fit `width` pixels (one at least),
// filling rows first, so that no entry is cut off in a narrow chart. Returns the rows.
int fitLegendColumns(QCPLegend* legend, int width);

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The fullest device of a plan: the stage whose device holds the largest share of its
// memory. On a cluster of several memory sizes it need not be the one holding the most bytes
// (a 192 GiB MI300X at 70 GiB is less full than an 80 GiB H800 at 60). stage -1: no stages.
// capacity is what a plan may fill: the device's memory less the headroom the search kept
// free (Prediction::memory_headroom, "Keep free").
struct FullestDevice {
    int stage = -1;
    double used = 0, capacity = 0;   // bytes
    double headroom = 0;             // the fraction of the device's memory kept free
    double share() const { return capacity > 0 ? used / capacity : 0; }
    double deviceMemory() const { return headroom > 0 && headroom < 1 ? capacity / (1 - headroom) : capacity; }
};
FullestDevice fullestDevice(const Prediction& prediction);
// "67.7/80 GiB"; with memory kept free, the usable part and the device's memory:
// "67.7/72 of 80 GiB" (an 80 GiB H800 keeping 10 % free).
QString fullestDeviceText(const FullestDevice& fullest);
// The device's memory less the headroom, for tooltips: "72.0 GiB usable of 80.0 GiB (10 %
// kept free)", or "80.0 GiB" with none kept free.
QString usableMemoryText(double capacityBytes, double headroom);
// For a plan whose fullest devices are more than 95 % full with no memory kept free
// (core nearlyFullStage): why that is a risk and what to do, in a sentence; else empty.
QString nearlyFullText(const Prediction& prediction);

} // namespace hapmoe::ui::style
