#pragma once
// The sortable plan list. Works in source rows of PlanListModel so that callers never
// see the sort order.

#include <QTableView>

class QSortFilterProxyModel;

namespace hapmoe::ui {

class PlanListModel;

class PlanTableView : public QTableView {
    Q_OBJECT
public:
    explicit PlanTableView(PlanListModel* model, QWidget* parent = nullptr);

    int selectedSourceRow() const;
    void selectSourceRow(int row);
    QSize sizeHint() const override;
    // The widest the name column is made to fit its names (fitNameColumn).
    int nameColumnBound() const;

signals:
    void planSelected(int sourceRow);

private:
    void fitNameColumn();

    PlanListModel* m_model;
    QSortFilterProxyModel* m_proxy;
};

} // namespace hapmoe::ui
