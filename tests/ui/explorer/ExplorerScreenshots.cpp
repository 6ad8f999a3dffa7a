// Renders every view of the plan explorer for a heterogeneous MoE plan on one of the
// paper's clusters (Mixtral-S on 32-3 by default) into OUTPUT_DIR/explorer-*.png.
// The plans come from the real search (HS-DP with baselines); the user's current
// configuration is a uniform Megatron-style split.
//
//   explorer_screenshots OUTPUT_DIR [--model NAME] [--cluster NAME]

#include "ExplorerFixtures.h"

#include "ExportDialog.h"
#include "PlanExplorerWidget.h"
#include "TimelinePlot.h"
#include "WhatIfPanel.h"
#include "io/Presets.h"

#include <QApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QScreen>

#include <cstdio>
#include <exception>

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
        std::fprintf(stderr, "usage: explorer_screenshots OUTPUT_DIR [--model NAME] [--cluster NAME]\n");
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
    options.top_k = 3;
    options.time_limit_s = 60;
    // The uniform "current configuration" is written for 32-3's node order (910B, 910B,
    // MI300X, MI300X); other clusters go without one.
    const Plan current = test::uniformPlan32_3();
    bool matches = cluster.nodes.size() == 4;
    for (size_t s = 0; matches && s < 4; ++s)
        matches = cluster.nodes[s].id == current.stages[s].devices[0].node
            && catalog.find(cluster.nodes[s].device_type) == catalog.find(current.stages[s].device_type);
    if (matches)
        options.current = current;
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

    ui::PlanExplorerWidget explorer;
    ui::ExplorerContext ctx;
    ctx.model = model;
    ctx.cluster = cluster;
    ctx.catalog = &catalog;
    explorer.setContext(ctx);
    explorer.setResult(result);
    explorer.resize(1500, 1000);
    explorer.show();
    explorer.selectPlan(0);

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
        timeline->resetZoom();
        timeline->replot();
    }
    for (const QString& name : {QStringLiteral("memory"), QStringLiteral("breakdown"), QStringLiteral("compare")}) {
        explorer.showView(name);
        save(explorer.view(name), out, name);
    }
    explorer.showView(QStringLiteral("whatif"));
    auto* whatIf = qobject_cast<ui::WhatIfPanel*>(explorer.view(QStringLiteral("whatif")));
    whatIf->rhoBox()->setValue(1.8);
    save(whatIf, out, QStringLiteral("whatif"));
    whatIf->rhoBox()->setValue(model.training.router_imbalance);

    auto* dialog = qobject_cast<ui::ExportDialog*>(explorer.view(QStringLiteral("export")));
    dialog->show();
    save(dialog, out, QStringLiteral("export"));
    return 0;
}
