#pragma once
// What-if: change the global batch, the sequence length, the router imbalance rho or the
// number of nodes of a device type and see the selected plan re-estimated at once with the
// cost model (no search), with a hint when a new search would likely find a better plan.

#include "ExplorerPlan.h"
#include "PlanExplorerWidget.h"
#include "SpinBoxRangeCheck.h"

#include <QWidget>

#include <map>

#include <optional>

class QSpinBox;
class QDoubleSpinBox;
class QComboBox;
class QTableWidget;
class QLabel;
class QPushButton;

class QBoxLayout;

namespace hapmoe::ui {

// What-if's recompute choices for every stage (WhatIfPanel::recomputeBox): selective of the
// attention core; of the experts' activation and the pre-MLP norm; of the MoE layer whole with
// that norm (as the search's whole-block setting and the MoE recipes); of the dense MLPs; of
// both kinds of block, in a model that has both; full of every layer.
enum class WhatIfRecompute { None, CoreAttention, MoeActLayernorm, MoeLayer, Mlp, WholeBlocks, Full };

class WhatIfPanel : public QWidget {
    Q_OBJECT
public:
    explicit WhatIfPanel(QWidget* parent = nullptr);

    void setContext(const ExplorerContext& context);
    void setPlan(const ExplorerPlan* entry);
    // What the panel says while it has no plan (before a search, when a search found none).
    void setEmptyText(const QString& text);
    QString emptyText() const { return m_emptyText; }

    QSpinBox* globalBatchBox() const { return m_gbs; }
    QSpinBox* microBatchBox() const { return m_mbs; }   // the first stage's micro-batch size
    QSpinBox* sequenceLengthBox() const { return m_seq; }
    QDoubleSpinBox* rhoBox() const { return m_rho; }
    QComboBox* fp8Box() const { return m_fp8; }   // FP8 GEMMs: none, hybrid, e4m3 (Fp8Format as item data)
    QSpinBox* offloadBox() const { return m_offload; }   // percent of the optimizer in host memory
    // Every stage's recompute: "as planned" (item data -1), or a WhatIfRecompute as item data.
    QComboBox* recomputeBox() const { return m_recompute; }
    QComboBox* nodeTypeBox() const { return m_nodeType; }
    QSpinBox* nodeCountBox() const { return m_nodeCount; }
    // Plan, What-if and Change per figure: the headline figures, then the Breakdown's bars.
    QTableWidget* figuresTable() const { return m_figures; }

    // The re-estimated prediction, when the changed inputs still allow the plan.
    const std::optional<Prediction>& whatIfPrediction() const { return m_result; }
    QString hint() const;
    QString problem() const { return m_problem; }
    // Why the last value typed into a field was not taken ("Router imbalance ρ: at least
    // 1.00, ..."); empty once a value is taken or the inputs are reset.
    QString inputMessage() const { return m_rangeCheck->shownMessage(); }

    // Lays the inputs beside the figures when `available` pixels of width hold both, else
    // above them, so that a narrow page scrolls down rather than sideways.
    void fitWidth(int available);
    bool isStacked() const;

signals:
    void reestimated();
    // A change of the inputs moved the plan far enough that a new search would likely help.
    // The plan as it is (on selection, after Reset) never suggests one: its hints are in the
    // panel only.
    void newSearchSuggested(const QString& reason);
    // The last suggestion no longer holds: the inputs changed back, were reset, or the plan
    // or context changed.
    void newSearchSuggestionWithdrawn();

protected:
    void changeEvent(QEvent* event) override;

private:
    // The Change cells of moved figures in the palette's highlight (style::differsBackground).
    void paintChanges();
    void resetInputs();
    void reestimate();
    void nodeTypeChanged();
    int nodesOfType(const QString& type) const;
    void showFigures();
    void withdrawSuggestion();

    ExplorerContext m_context;
    std::optional<ExplorerPlan> m_entry;
    std::optional<Prediction> m_result;
    QString m_problem;
    QStringList m_hints;
    QString m_emptyText = tr("Select a plan to try changes on it.");
    bool m_resetting = false;
    bool m_reestimatingReset = false;   // the re-estimate of the plan as it is
    bool m_suggesting = false;          // newSearchSuggested holds

    QSpinBox* m_gbs;
    QSpinBox* m_mbs;
    QSpinBox* m_seq;
    QDoubleSpinBox* m_rho;
    QComboBox* m_fp8;
    QSpinBox* m_offload;
    QComboBox* m_recompute;
    QComboBox* m_nodeType;
    QSpinBox* m_nodeCount;
    // The node count asked for each device type changed so far: switching the type box
    // keeps the others' counts, and all of them apply together.
    std::map<QString, int> m_wantNodes;
    QPushButton* m_reset;
    QTableWidget* m_figures;
    QTableWidget* m_stages;
    QLabel* m_hintLabel;
    SpinBoxRangeCheck* m_rangeCheck;   // and the line under the inputs that says why a value stayed
    QBoxLayout* m_columns = nullptr;   // the inputs, then the figures
    QBoxLayout* m_inputs = nullptr;
};

} // namespace hapmoe::ui
