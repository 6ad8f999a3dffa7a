#include "PlanTableView.h"

#include "PlanListModel.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>

#include <algorithm>

namespace hapmoe::ui {

namespace {

// A cell that loses its end when narrow, where the view elides in the middle.
class ElideRightDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = Qt::ElideRight;
    }
};

} // namespace

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
                                           PlanListModel::Mfu, PlanListModel::PeakMemory, PlanListModel::Optimizer, PlanListModel::Stages,
                                           PlanListModel::Devices, PlanListModel::TflopsPerDevice,
                                           PlanListModel::TargetColumn, PlanListModel::Source, PlanListModel::Layout};
    for (int visual = 0; visual < PlanListModel::ColumnCount; ++visual)
        horizontalHeader()->moveSection(horizontalHeader()->visualIndex(order[visual]), visual);
    // The name column fits its names up to a bound: a current configuration named after a
    // long script would otherwise push the figures out of a narrow window. A longer name
    // loses its middle (the row's tooltip holds it whole; the other columns fit their
    // contents, so only names are cut). The column can still be dragged: it is fitted again
    // only when new plans come, not when they are sorted or their figures change.
    horizontalHeader()->setSectionResizeMode(PlanListModel::Name, QHeaderView::Interactive);
    setTextElideMode(Qt::ElideMiddle);
    // The layout reads from the first stage on, so it loses its end (the tooltip has it all,
    // a line per stage).
    setItemDelegateForColumn(PlanListModel::Layout, new ElideRightDelegate(this));
    connect(m_proxy, &QAbstractItemModel::modelReset, this, &PlanTableView::fitNameColumn);
    // Where the optimizer states are kept matters only when some plan offloads them.
    auto showOptimizer = [this]() { setColumnHidden(PlanListModel::Optimizer, !m_model->anyOffload()); };
    connect(m_proxy, &QAbstractItemModel::modelReset, this, showOptimizer);
    showOptimizer();
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, &PlanTableView::fitNameColumn);
    setObjectName(QStringLiteral("planTable"));

    connect(selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid())
                    emit planSelected(m_proxy->mapToSource(current).row());
            });
}

int PlanTableView::nameColumnBound() const
{
    // About the longest name the search itself gives ("Metis-style baseline"), and a little.
    return fontMetrics().horizontalAdvance(QStringLiteral("Metis-style baseline (current)")) + 16;
}

void PlanTableView::fitNameColumn()
{
    const int contents = std::max(sizeHintForColumn(PlanListModel::Name),
                                  horizontalHeader()->sectionSizeHint(PlanListModel::Name));
    horizontalHeader()->resizeSection(PlanListModel::Name, std::min(contents, nameColumnBound()));
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
    // Room for the header and the plans (five of a search, two baselines and the current
    // configuration fill eight rows), as many as the window's height spares for the table
    // when the splitter first lays it out: in a short window the charts below need the
    // height more (the table scrolls, and the splitter moves).
    const int rowH = verticalHeader()->defaultSectionSize();
    const int windowHeight = window() ? window()->height() : 1000;
    const int rows = windowHeight >= 1000 ? 8 : windowHeight >= 850 ? 6 : windowHeight >= 720 ? 4 : 3;
    return {QTableView::sizeHint().width(), horizontalHeader()->height() + rowH * rows + 4};
}

} // namespace hapmoe::ui
