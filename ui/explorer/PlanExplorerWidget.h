#pragma once
// The plan explorer: ranked plans and baselines, and for the selected plan its stage
// partition, 1F1B timeline, memory bars, time breakdown, comparison, what-if controls and
// export. Fed by core result structs only.

#include "cost/CostModel.h"
#include "hardware/Cluster.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "megatron/ScriptImport.h"
#include "model/ModelSpec.h"
#include "profile/Profile.h"
#include "search/Search.h"

#include <QVector>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

namespace hapmoe::ui {

// What the explorer needs besides the plans: to re-estimate (what-if) and to export.
struct ExplorerContext {
    ModelSpec model;
    Cluster cluster;
    // The device types the plans were costed on (the project's, Project::devices, over the
    // built-in ones); none: no re-estimates.
    std::optional<DeviceCatalog> catalog;
    std::optional<Profile> profile;
    std::optional<ImportedScript> script;     // the user's Megatron script: its other flags go into exports
};

struct ExplorerPlan;

// A plan of the explorer as a self-contained plan document (as `hapmoe estimate --json`
// writes it): the context's model and cluster, the plan and its prediction, and the project's
// own device types it runs on, so that the CLI costs it as the studio did.
PlanDocument planDocument(const ExplorerContext& context, const ExplorerPlan& entry);

class PlanExplorerWidget : public QWidget {
    Q_OBJECT
public:
    explicit PlanExplorerWidget(QWidget* parent = nullptr);
    ~PlanExplorerWidget() override;

    void setContext(const ExplorerContext& context);
    // The project's model and cluster, renamed (model, hosts, switches) or moved since the
    // search, while the plans still fit them: the context takes their names, so that an export
    // names the hosts as they are now.
    void followNames(const ModelSpec& model, const Cluster& cluster);
    // The folder the export dialog offers to save in (the project's); empty: the working folder.
    void setExportFolder(const QString& folder);
    // Ranked plans first, then the baselines and the current configuration when present.
    void setResult(const SearchResult& result);
    void clear();
    // The plans were computed for a model or cluster that has changed since: the title says
    // so until the next search.
    void setOutdated(bool outdated);
    bool isOutdated() const;

    int planCount() const;
    int selectedPlan() const;
    void selectPlan(int row);
    // The selected plan as a plan document named as the list names it ("HS-DP #1"), and the
    // context it was costed in; none when no plan is selected.
    std::optional<PlanDocument> selectedPlanDocument() const;
    const ExplorerContext& context() const;

    // Named sub-views for screenshots and tests: "plans", "partition", "timeline",
    // "memory", "breakdown", "compare", "whatif", "export".
    QWidget* view(const QString& name) const;
    // Brings a named sub-view to the front (its tab), e.g. before a screenshot.
    void showView(const QString& name);
    static QStringList viewNames();

signals:
    // Node ids (Cluster ids) of the stage under the mouse; empty when the mouse leaves.
    void stageHovered(const QVector<int>& nodeIds);
    // A what-if change moved the plan far enough that a new search would likely help.
    void newSearchSuggested(const QString& reason);
    // That suggestion no longer holds: the what-if inputs were reset or changed back, the plan
    // or context changed, or the What-if view was left.
    void newSearchSuggestionWithdrawn();
    // The selected plan's row; -1 when the plans went away (clear, a search that found none).
    void selectionChanged(int row);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void updateViews();
    void arrangeHeader(bool titleAbove);
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace hapmoe::ui
