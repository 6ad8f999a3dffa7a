#pragma once
// Edits the selected node, switch or link, and with nothing selected the cluster itself (its
// cross-vendor bridge). Every change is one undo command through the document; the editor
// refreshes from the document's signals, never from its own state.

#include "SpinBoxRangeCheck.h"

#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QGroupBox;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace hapmoe::ui {

class ClusterScene;
class PageStack;
class ProjectDocument;

class PropertyEditor : public QWidget {
    Q_OBJECT
public:
    PropertyEditor(ProjectDocument* document, ClusterScene* scene, QWidget* parent = nullptr);

    QSpinBox* nodeCountEditor() const { return m_count; }
    QDoubleSpinBox* linkBandwidthEditor() const { return m_bandwidth; }
    QDoubleSpinBox* hostMemoryEditor() const { return m_hostMemory; }
    QDoubleSpinBox* hostLinkEditor() const { return m_hostLink; }
    // The cluster page, shown while nothing is selected.
    QDoubleSpinBox* bridgeBandwidthEditor() const { return m_bridgeBandwidth; }
    QDoubleSpinBox* bridgeLatencyEditor() const { return m_bridgeLatency; }
    // What the cluster page says of the bridge, and the link page of a link between two
    // collective libraries (hidden for other links), with its button to the bridge.
    QLabel* bridgeNote() const { return m_bridgeNote; }
    QLabel* linkBridgeNote() const { return m_linkBridgeNote; }
    QPushButton* showBridgeButton() const { return m_showBridge; }
    // Why the last value typed was not taken ("Bandwidth: at least 0.1 GB/s, ..."); empty
    // once a value is taken or another item is shown.
    QString inputMessage() const { return m_rangeCheck->shownMessage(); }

signals:
    void inputRejected(const QString& message);

private:
    void refresh();
    void fillTypes();   // the node type choices: the document's catalog
    void commitNode();
    void commitSwitch();
    void commitLink();
    void commitBridge(QDoubleSpinBox* changed);
    void showBridge();

    ProjectDocument* m_document;
    ClusterScene* m_scene;
    PageStack* m_stack;
    QLabel* m_summary;
    SpinBoxRangeCheck* m_rangeCheck;   // and the line under the fields that says why a value stayed
    // node page
    int m_nodeId = -1;
    QLineEdit* m_host;
    QComboBox* m_type;
    QSpinBox* m_count;
    QSpinBox* m_nics;
    QDoubleSpinBox* m_nicGbit;
    QDoubleSpinBox* m_hostMemory;
    QDoubleSpinBox* m_hostLink;
    QLabel* m_nodeInfo;
    // switch page
    int m_switchId = -1;
    QLineEdit* m_switchName;
    QLabel* m_switchInfo;
    // link page
    int m_linkA = -1, m_linkB = -1;
    QLabel* m_linkEnds;
    QDoubleSpinBox* m_bandwidth;
    QDoubleSpinBox* m_latency;
    QLabel* m_linkBridgeNote;
    QPushButton* m_showBridge;
    // cluster page
    bool m_clusterShown = false;
    QGroupBox* m_bridge;
    QDoubleSpinBox* m_bridgeBandwidth;
    QDoubleSpinBox* m_bridgeLatency;
    QLabel* m_bridgeNote;
    QLabel* m_clusterTips;
    bool m_updating = false;
};

} // namespace hapmoe::ui
