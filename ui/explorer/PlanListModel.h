#pragma once
// The ranked plans, the baselines and the current configuration as a table with their
// headline figures. Qt::UserRole gives the numeric value of a cell for sorting.

#include "ExplorerPlan.h"

#include <QAbstractTableModel>

#include <vector>

namespace hapmoe::ui {

class PlanListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Source, IterationTime, TokensPerS, TflopsPerDevice, Mfu, PeakMemory, Devices, Stages, TargetColumn, Optimizer, Layout, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;

    explicit PlanListModel(QObject* parent = nullptr);

    void setPlans(std::vector<ExplorerPlan> plans);
    const std::vector<ExplorerPlan>& plans() const { return m_plans; }
    const ExplorerPlan* plan(int row) const;
    // Whether any plan keeps optimizer states in host memory (the Optimizer column says where).
    bool anyOffload() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<ExplorerPlan> m_plans;
    // Per row, the row of an earlier ranked plan whose stages this one holds in another order
    // (reorderedFrom), or -1: said in the row's tooltip.
    std::vector<int> m_reorderedFrom;
};

} // namespace hapmoe::ui
