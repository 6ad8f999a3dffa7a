// Timeline redraw benchmark: 16 pipeline stages, 64 micro-batches (2048 forward and
// backward blocks), zooming in step by step as a mouse wheel would, timing each replot.
// Prints the figures; never asserts on time. For contrast it times the same zoom with one
// QCPItemRect per block, the straightforward way to draw a Gantt chart in QCustomPlot.

#include "ExplorerFixtures.h"

#include "PlanTimeline.h"
#include "TimelineBlocks.h"
#include "TimelinePlot.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTextStream>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <numeric>

using namespace hapmoe;

namespace {

struct Figures {
    double mean = 0, max = 0, first = 0;
    double cpuMean = 0, cpuMax = 0;   // CPU time of this thread: what the redraw costs when the machine is shared
    int steps = 0;
};

double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Zooms the time axis in by 20 % per step around the pipeline's middle (a mouse wheel
// notch in QCustomPlot scales by 0.85 by default), then out again, timing every replot.
Figures zoomAndTime(QCustomPlot* plot, double end, int steps)
{
    std::vector<double> ms, cpu;
    QElapsedTimer timer;
    plot->xAxis->setRange(0, end);
    timer.start();
    plot->replot(QCustomPlot::rpImmediateRefresh);
    const double first = timer.nsecsElapsed() / 1e6;
    const double centre = end * 0.5;
    for (int i = 0; i < steps; ++i) {
        plot->xAxis->scaleRange(i < steps / 2 ? 0.8 : 1.25, centre);
        const double c0 = threadCpuMs();
        timer.restart();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        ms.push_back(timer.nsecsElapsed() / 1e6);
        cpu.push_back(threadCpuMs() - c0);
    }
    Figures f;
    f.first = first;
    f.steps = steps;
    f.mean = std::accumulate(ms.begin(), ms.end(), 0.0) / ms.size();
    f.max = *std::max_element(ms.begin(), ms.end());
    f.cpuMean = std::accumulate(cpu.begin(), cpu.end(), 0.0) / cpu.size();
    f.cpuMax = *std::max_element(cpu.begin(), cpu.end());
    return f;
}

QString cpuName()
{
    QFile f(QStringLiteral("/proc/cpuinfo"));
    if (f.open(QIODevice::ReadOnly)) {
        for (const QByteArray& line : f.readAll().split('\n')) {
            if (line.startsWith("model name"))
                return QString::fromUtf8(line.mid(line.indexOf(':') + 1)).trimmed();
        }
    }
    return QStringLiteral("unknown CPU");
}

} // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);

    // Mixtral-S on the paper's 32-3 cluster cut into 16 stages of 2 devices: the eight
    // 910B stages take one layer, the eight MI300X stages two (8 + 16 = 24 layers);
    // global batch 64 with DP 1 and micro-batch 1 gives M = 64.
    const ModelSpec model = test::mixtralS();
    const Cluster cluster = test::cluster32_3();
    Plan plan;
    plan.name = "16 stages";
    plan.global_batch_size = 64;
    plan.target = Target::FlagScale;
    int layer = 0;
    for (int s = 0; s < 16; ++s) {
        const bool ascend = s < 8;
        const int node = s / 4;
        const int layers = ascend ? 1 : 2;
        plan.stages.push_back(test::stage(ascend ? "910B-376T" : "MI300X", node, (s % 4) * 2, 2, layer, layers, 2, 1, 2, 1, 1, 1,
                                          ascend ? Recompute::Full : Recompute::None));
        layer += layers;
    }
    const CostModel cost(model, cluster, DeviceCatalog::builtin());
    const Prediction pred = cost.estimate(plan);
    const ui::PlanTimeline tl = ui::buildPlanTimeline(plan, pred);

    ui::TimelinePlot timeline;
    timeline.resize(1600, 900);
    timeline.show();
    timeline.setTimeline(tl);
    QApplication::processEvents();

    const int steps = 40;
    const Figures fast = zoomAndTime(&timeline, tl.iterationEnd, steps);

    // The same blocks as one QCPItemRect each.
    QCustomPlot items;
    items.resize(1600, 900);
    items.show();
    items.yAxis->setRange(-0.5, tl.stages - 0.5);
    items.yAxis->setRangeReversed(true);
    for (const ScheduleBlock& b : tl.schedule.blocks) {
        auto* r = new QCPItemRect(&items);
        r->topLeft->setCoords(b.start, b.stage - 0.38);
        r->bottomRight->setCoords(b.end, b.stage + 0.38);
        r->setBrush(b.forward ? QColor(0x3f, 0x7f, 0xd9) : QColor(0xf0, 0x9a, 0x1a));
        r->setPen(QPen(Qt::white));
    }
    QApplication::processEvents();
    const Figures naive = zoomAndTime(&items, tl.iterationEnd, steps);

    // The floor: the same zoom on an empty chart of the same size (axes, grid, buffer copy).
    QCustomPlot empty;
    empty.resize(1600, 900);
    empty.show();
    QApplication::processEvents();
    const Figures floor = zoomAndTime(&empty, tl.iterationEnd, steps);

    std::printf("Timeline redraw benchmark (%s, Qt platform %s, plot %dx%d)\n", qPrintable(cpuName()),
                qPrintable(QGuiApplication::platformName()), timeline.width(), timeline.height());
    std::printf("  %d stages x %d micro-batches = %zu blocks, iteration %.3f s\n", tl.stages, tl.microbatches,
                tl.schedule.blocks.size(), tl.iterationEnd);
    std::printf("  wall time per replot (QElapsedTimer); in brackets the thread's CPU time, which excludes waiting for a shared CPU\n");
    std::printf("  TimelineBlocks (visible blocks only, batched by colour): first %.2f ms, zoom steps %d: mean %.2f ms, max %.2f ms  [cpu mean %.2f, max %.2f]\n",
                fast.first, fast.steps, fast.mean, fast.max, fast.cpuMean, fast.cpuMax);
    std::printf("  one QCPItemRect per block (for contrast):               first %.2f ms, zoom steps %d: mean %.2f ms, max %.2f ms  [cpu mean %.2f, max %.2f]\n",
                naive.first, naive.steps, naive.mean, naive.max, naive.cpuMean, naive.cpuMax);
    std::printf("  empty chart of the same size (floor):                   first %.2f ms, zoom steps %d: mean %.2f ms, max %.2f ms  [cpu mean %.2f, max %.2f]\n",
                floor.first, floor.steps, floor.mean, floor.max, floor.cpuMean, floor.cpuMax);
    std::printf("  target: under 50 ms per redraw during a zoom -> %s\n", fast.max < 50.0 ? "met" : "NOT met");
    return 0;
}
