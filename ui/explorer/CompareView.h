#pragma once
// Two or more plans side by side: a table of their configuration and figures with the
// differing rows highlighted and the best figure in bold, their stage partitions on one
// layer scale, their timelines on one shared time axis, and their memory bars on one
// memory scale. The user's current configuration is one of the plans when imported.
// The table and the charts share the height through a splitter; the charts keep readable
// sizes and scroll, the memory charts side by side when the width allows.

#include "ExplorerPlan.h"

#include <QList>
#include <QWidget>

#include <vector>

class QGridLayout;
class QListWidget;
class QTableWidget;
class QToolButton;
class QVBoxLayout;
class QLabel;
class QScrollArea;
class QSplitter;

namespace hapmoe::ui {

class TimelinePlot;
class StagePartitionView;
class MemoryBarsPlot;

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);

    void setPlans(const std::vector<ExplorerPlan>& plans);
    // A dense model's plans have no EP/ETP/EDP: their row and the partitions' figures are left out.
    // As StagePartitionView::setModelTraits, for the partitions and timelines compared.
    void setModelTraits(bool expertKnobs, int mtpLayers);
    // Rows of the plan list to compare (at least two are needed to show anything).
    void setCompared(const QList<int>& rows);
    QList<int> compared() const { return m_compared; }
    // Picks the selected plan and the best alternative: the current configuration when
    // present, else the next ranked plan, else a baseline.
    void compareWithDefault(int selectedRow);

    QTableWidget* table() const { return m_table; }
    QList<TimelinePlot*> timelines() const { return m_timelines; }
    QList<StagePartitionView*> partitions() const { return m_partitions; }
    QList<MemoryBarsPlot*> memoryPlots() const { return m_memory; }
    // Rows of the table whose values differ between the compared plans.
    QStringList differingRows() const;
    // The scrolling area of the charts, the splitter between the table and it, and the
    // columns of the memory charts' grid at the current width.
    QScrollArea* chartArea() const { return m_scroll; }
    QSplitter* splitter() const { return m_split; }
    int memoryColumns() const { return m_memoryColumns; }

    // Whether the plans to compare are ticked in a button's menu, the view being too narrow
    // for their list beside the table.
    bool choosesInAMenu() const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    // Shortens the plan names in the table's header to their columns, with an ellipsis.
    void elideHeaders();
    // Colours the rows where the plans differ for the current theme.
    void paintDifferences();
    void syncRange(TimelinePlot* source);
    // Gives all timelines the widest lane-label margin, so one time is one x position.
    void alignTimelines();
    // Leaves the same room above and below every memory chart, so one GiB is one height in all.
    void alignMemoryCharts();
    // The table's share of the height, unless the user moved the splitter.
    void fitSplit();
    // Chart heights and the memory grid's columns for the width of the chart area.
    void arrangeCharts();
    // The list beside the table, or the button's menu when the table needs the width.
    void fitChooser();
    QString tickHint() const;

    std::vector<ExplorerPlan> m_plans;
    QList<int> m_compared;
    QListWidget* m_chooser;
    QWidget* m_chooserBox;
    QToolButton* m_chooserButton;
    bool m_narrow = false;
    bool m_expertKnobs = true;
    int m_mtpLayers = 0;
    QTableWidget* m_table;
    QLabel* m_hint;
    QWidget* m_top;
    QSplitter* m_split;
    QScrollArea* m_scroll;
    QWidget* m_detail;
    QVBoxLayout* m_detailLayout;
    QWidget* m_memoryRow = nullptr;
    QGridLayout* m_memoryGrid = nullptr;
    int m_memoryColumns = 0;
    bool m_splitByUser = false;
    QList<TimelinePlot*> m_timelines;
    QList<StagePartitionView*> m_partitions;
    QList<MemoryBarsPlot*> m_memory;
    bool m_syncing = false;
    bool m_updatingChooser = false;
    bool m_elidePending = false;   // elideHeaders is queued
};

} // namespace hapmoe::ui
