// Renders every view of the plan explorer for a heterogeneous MoE plan on one of the
// paper's clusters (Mixtral-S on 32-3 by default) into OUTPUT_DIR/explorer-*.png.
// The plans come from the real search (HS-DP with baselines); the user's current
// configuration is a uniform Megatron-style split.
//
//   explorer_screenshots OUTPUT_DIR [--model NAME] [--cluster NAME] [--theme light|dark]

#include "ExplorerFixtures.h"

#include "ExportDialog.h"
#include "PlanExplorerWidget.h"
#include "Theme.h"
#include "TimelinePlot.h"
#include "WhatIfPanel.h"
#include "io/Presets.h"

#include <QApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QScreen>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <set>
#include <string>

using namespace hapmoe;

namespace {

bool save(QWidget* w, const QString& dir, const QString& name)
{
    QApplication::processEvents();
    const QString path = QDir(dir).filePath(QStringLiteral("explorer-%1.png").arg(name));
    const bool ok = w->grab().save(path);
    std::printf("%s %s (%dx%d)\n", ok ? "wrote" : "FAILED", qPrintable(path), w->width(), w->height());
    return ok;
}

} // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    const QStringList args = QApplication::arguments();
    if (args.size() < 2) {
        std::fprintf(stderr, "usage: explorer_screenshots OUTPUT_DIR [--model NAME] [--cluster NAME] [--theme light|dark]\n");
        return 2;
    }
    const QString out = args[1];
    QDir().mkpath(out);
    QString modelName = QStringLiteral("Mixtral-S"), clusterName = QStringLiteral("32-3");
    for (int i = 2; i + 1 < args.size(); ++i) {
        if (args[i] == QLatin1String("--model"))
            modelName = args[++i];
        else if (args[i] == QLatin1String("--cluster"))
            clusterName = args[++i];
        else if (args[i] == QLatin1String("--theme"))
            ui::applyTheme(args[++i] == QLatin1String("dark") ? ui::ThemeKind::Dark : ui::ThemeKind::Light);
    }

    const DeviceCatalog& catalog = DeviceCatalog::builtin();
    ModelSpec model;
    Cluster cluster;
    try {
        model = resolveModel(modelName.toStdString());
        cluster = resolveCluster(clusterName.toStdString(), catalog);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
    const CostModel cost(model, cluster, catalog);

    SearchOptions options;
    options.top_k = 8;
    options.time_limit_s = 60;
    // The user's current configuration: what a Megatron-LM user would run without a
    // planner, one stage per node, an even layer split, the same knobs everywhere and full
    // recompute (only when every node has 8 devices and the layers split evenly).
    bool uniformFits = !cluster.nodes.empty() && model.num_layers % static_cast<int>(cluster.nodes.size()) == 0;
    for (const Node& n : cluster.nodes)
        uniformFits = uniformFits && n.count == 8;
    if (uniformFits) {
        Plan current;
        current.name = "current (uniform)";
        current.global_batch_size = model.training.global_batch_size;
        current.target = Target::FlagScale;
        const int per = model.num_layers / static_cast<int>(cluster.nodes.size());
        for (size_t i = 0; i < cluster.nodes.size(); ++i)
            current.stages.push_back(test::stage(cluster.nodes[i].device_type, cluster.nodes[i].id, 0, 8, per * static_cast<int>(i), per,
                                                 2, 4, 4, 1, 2, 1, Recompute::Full));
        options.current = current;
    }
    SearchResult result;
    try {
        result = runSearch(cost, options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "search failed: %s\n", e.what());
        return 1;
    }
    if (result.plans.empty()) {
        std::fprintf(stderr, "the search found no plan: %s\n", result.no_plan_reason.c_str());
        return 1;
    }
    std::printf("search: %zu plans in %.2f s, best %.3f s per iteration\n", result.plans.size(), result.time_s,
                result.plans.front().prediction.iteration_time_s);
    // Show the best plan that mixes device types (the explorer's reason to exist); the
    // list still holds every plan.
    int shown = 0;
    for (size_t i = 0; i < result.plans.size(); ++i) {
        std::set<std::string> types;
        for (const StagePlan& st : result.plans[i].plan.stages)
            types.insert(st.device_type);
        if (types.size() > 1) {
            shown = static_cast<int>(i);
            break;
        }
    }
    std::printf("showing plan %d (%s)\n", shown + 1, result.plans[static_cast<size_t>(shown)].plan.name.c_str());

    ui::PlanExplorerWidget explorer;
    ui::ExplorerContext ctx;
    ctx.model = model;
    ctx.cluster = cluster;
    ctx.catalog = catalog;
    explorer.setContext(ctx);
    explorer.setResult(result);
    explorer.resize(1500, 1000);
    explorer.show();
    explorer.selectPlan(shown);

    explorer.showView(QStringLiteral("timeline"));
    save(&explorer, out, QStringLiteral("overview"));
    save(explorer.view(QStringLiteral("plans")), out, QStringLiteral("plans"));
    save(explorer.view(QStringLiteral("partition")), out, QStringLiteral("partition"));
    save(explorer.view(QStringLiteral("timeline")), out, QStringLiteral("timeline"));
    {
        // Zoomed on the first micro-batches so the numbers and the warm-up bubbles show.
        auto* timeline = qobject_cast<ui::TimelinePlot*>(explorer.view(QStringLiteral("timeline")));
        const double end = timeline->timeline().pipelineEnd;
        timeline->xAxis->setRange(0, end * 0.12);
        timeline->replot();
        save(timeline, out, QStringLiteral("timeline-zoom"));
        // Zoomed on the end: the last backwards, the data-parallel syncs (each from its own
        // stage's last backward), the wait for the gradient-norm all-reduce and the optimizer
        // steps.
        const ui::PlanTimeline& tl = timeline->timeline();
        double first = tl.syncStart;
        for (int s = 0; s < tl.stages; ++s)
            first = std::min(first, tl.tailOf(s).sync_start);
        const double iteration = tl.iterationEnd;
        const double span = std::max(iteration - first, 1e-6);
        timeline->xAxis->setRange(first - 0.5 * span, iteration + 0.05 * span);
        timeline->replot();
        save(timeline, out, QStringLiteral("timeline-tail"));
        timeline->resetZoom();
        timeline->replot();
    }
    for (const QString& name : {QStringLiteral("memory"), QStringLiteral("breakdown")}) {
        explorer.showView(name);
        save(explorer.view(name), out, name);
    }
    {
        // The comparison holds a table, partitions, timelines and memory bars: render it
        // taller than a window so that all of it is in the picture.
        explorer.showView(QStringLiteral("compare"));
        QWidget* compare = explorer.view(QStringLiteral("compare"));
        explorer.resize(1500, 1900);
        save(compare, out, QStringLiteral("compare"));
        explorer.resize(1500, 1000);
    }
    explorer.showView(QStringLiteral("whatif"));
    auto* whatIf = qobject_cast<ui::WhatIfPanel*>(explorer.view(QStringLiteral("whatif")));
    whatIf->rhoBox()->setValue(1.8);
    save(whatIf, out, QStringLiteral("whatif"));
    whatIf->rhoBox()->setValue(model.training.router_imbalance);

    auto* dialog = qobject_cast<ui::ExportDialog*>(explorer.view(QStringLiteral("export")));
    dialog->show();
    save(dialog, out, QStringLiteral("export"));
    // The same plan on upstream Megatron-LM, which needs one set of knobs for all stages.
    dialog->setFormat(LauncherFormat::Megatron);
    if (!dialog->result().ok)
        save(dialog, out, QStringLiteral("export-refused"));
    return 0;
}
