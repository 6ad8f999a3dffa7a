#include "PlanTableView.h"

#include "PlanListModel.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QSortFilterProxyModel>

namespace hapmoe::ui {

PlanTableView::PlanTableView(PlanListModel* model, QWidget* parent)
    : QTableView(parent)
    , m_model(model)
    , m_proxy(new QSortFilterProxyModel(this))
{
    m_proxy->setSourceModel(model);
    m_proxy->setSortRole(PlanListModel::SortRole);
    setModel(m_proxy);
    setSortingEnabled(true);
    sortByColumn(PlanListModel::Name, Qt::AscendingOrder);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setAlternatingRowColors(true);
    setWordWrap(false);
    verticalHeader()->hide();
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    horizontalHeader()->setStretchLastSection(true);
    // The figures a plan is chosen by come first, so a narrow window scrolls sideways only
    // for the details (the model's column numbers stay as they are).
    const PlanListModel::Column order[] = {PlanListModel::Name, PlanListModel::IterationTime, PlanListModel::TokensPerS,
                                           PlanListModel::Mfu, PlanListModel::PeakMemory, PlanListModel::Stages,
                                           PlanListModel::Devices, PlanListModel::TflopsPerDevice,
                                           PlanListModel::TargetColumn, PlanListModel::Source};
    for (int visual = 0; visual < PlanListModel::ColumnCount; ++visual)
        horizontalHeader()->moveSection(horizontalHeader()->visualIndex(order[visual]), visual);
    setObjectName(QStringLiteral("planTable"));

    connect(selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid())
                    emit planSelected(m_proxy->mapToSource(current).row());
            });
}

int PlanTableView::selectedSourceRow() const
{
    const QModelIndex current = selectionModel()->currentIndex();
    return current.isValid() ? m_proxy->mapToSource(current).row() : -1;
}

void PlanTableView::selectSourceRow(int row)
{
    const QModelIndex proxyIndex = m_proxy->mapFromSource(m_model->index(row, 0));
    if (!proxyIndex.isValid())
        return;
    selectionModel()->setCurrentIndex(proxyIndex, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    scrollTo(proxyIndex);
}

QSize PlanTableView::sizeHint() const
{
    // Room for the header and about six plans.
    const int rowH = verticalHeader()->defaultSectionSize();
    return {QTableView::sizeHint().width(), horizontalHeader()->height() + rowH * 6 + 4};
}

} // namespace hapmoe::ui
