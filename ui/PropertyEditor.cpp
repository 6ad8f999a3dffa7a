#include "PropertyEditor.h"

#include "ClusterScene.h"
#include "CollectiveLibraries.h"
#include "ProjectDocument.h"
#include "Theme.h"

#include "hardware/DeviceCatalog.h"

#include <algorithm>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>

namespace hapmoe::ui {

// Pages of which one shows, as tall as that page and as wide as the widest. A QStackedWidget
// will not do: its layout's height for width, which its parent's layout asks, is the largest
// of every page's, hidden ones included (the node page's wrapped note made the link's two
// fields a 250 px block, the refused-value line far below them).
class PageStack : public QWidget {
public:
    explicit PageStack(QWidget* parent = nullptr) : QWidget(parent), m_box(new QVBoxLayout(this))
    {
        m_box->setContentsMargins(0, 0, 0, 0);
    }
    void addWidget(QWidget* page)
    {
        m_box->addWidget(page);
        m_pages.append(page);
        page->setVisible(m_pages.size() == 1);
        if (m_pages.size() == 1)
            m_current = 0;
    }
    void setCurrentIndex(int index)
    {
        if (index == m_current || index < 0 || index >= m_pages.size())
            return;
        m_pages[m_current]->hide();
        m_current = index;
        m_pages[m_current]->show();
    }
    int currentIndex() const { return m_current; }
    int count() const { return int(m_pages.size()); }
    QWidget* widget(int index) const { return m_pages.value(index); }
    QSize minimumSizeHint() const override { return widest(QWidget::minimumSizeHint(), &QWidget::minimumSizeHint); }
    QSize sizeHint() const override { return widest(QWidget::sizeHint(), &QWidget::sizeHint); }

private:
    QSize widest(QSize shown, QSize (QWidget::*hint)() const) const
    {
        for (const QWidget* page : m_pages)
            shown.setWidth(std::max(shown.width(), (page->*hint)().width()));
        return shown;
    }
    QVBoxLayout* m_box;
    QList<QWidget*> m_pages;
    int m_current = -1;
};

namespace {

QWidget* page(QFormLayout*& form)
{
    auto* w = new QWidget;
    form = new QFormLayout(w);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setRowWrapPolicy(QFormLayout::DontWrapRows);
    return w;
}

QString describe(const Cluster& c, int id)
{
    if (const Node* n = c.node(id))
        return QStringLiteral("%1 (%2 \u00d7 %3)").arg(QString::fromStdString(n->host)).arg(n->count)
            .arg(QString::fromStdString(n->device_type));
    if (const Switch* s = c.switchById(id))
        return QString::fromStdString(s->name);
    return QString::number(id);
}

// "NCCL", "NCCL and RCCL", "NCCL, RCCL and HCCL".
QString listed(const QStringList& items)
{
    if (items.size() < 2)
        return items.value(0);
    return QObject::tr("%1 and %2").arg(items.mid(0, items.size() - 1).join(QStringLiteral(", ")), items.last());
}

// A bridge figure as the file gives it, without trailing zeros: 2.5 GB/s, 100 us.
QString figure(double value) { return QString::number(value, 'g', 6); }

} // namespace

PropertyEditor::PropertyEditor(ProjectDocument* document, ClusterScene* scene, QWidget* parent)
    : QWidget(parent), m_document(document), m_scene(scene), m_stack(new PageStack(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(m_stack);

    m_summary = new QLabel;
    m_summary->setWordWrap(true);
    m_summary->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_stack->addWidget(m_summary);

    QFormLayout* form = nullptr;
    QWidget* nodePage = page(form);
    m_host = new QLineEdit;
    m_host->setObjectName(QStringLiteral("nodeHost"));
    m_type = new QComboBox;
    m_type->setObjectName(QStringLiteral("nodeType"));
    fillTypes();
    m_count = new QSpinBox;
    m_count->setObjectName(QStringLiteral("nodeCount"));
    m_count->setRange(1, 4096);
    m_count->setKeyboardTracking(false);
    m_nics = new QSpinBox;
    m_nics->setRange(0, 64);
    m_nics->setSpecialValueText(tr("one per device"));
    m_nics->setKeyboardTracking(false);
    m_nicGbit = new QDoubleSpinBox;
    m_nicGbit->setRange(0, 3200);
    m_nicGbit->setDecimals(0);
    m_nicGbit->setSuffix(tr(" Gb/s"));
    m_nicGbit->setSpecialValueText(tr("catalog default"));
    m_nicGbit->setKeyboardTracking(false);
    // Host side of the node, read by optimizer CPU offload (docs/cost-model.md section 7.3).
    m_hostMemory = new QDoubleSpinBox;
    m_hostMemory->setObjectName(QStringLiteral("nodeHostMemory"));
    m_hostMemory->setRange(0, 1048576);
    m_hostMemory->setDecimals(0);
    m_hostMemory->setSuffix(tr(" GiB"));
    m_hostMemory->setSpecialValueText(tr("not checked"));
    m_hostMemory->setToolTip(tr("Host memory the training may use on this node. With the optimizer offloaded, "
                                "plans whose ranks need more are rejected."));
    m_hostMemory->setKeyboardTracking(false);
    m_hostLink = new QDoubleSpinBox;
    m_hostLink->setObjectName(QStringLiteral("nodeHostLink"));
    m_hostLink->setRange(0, 1000);
    m_hostLink->setDecimals(1);
    m_hostLink->setSuffix(tr(" GB/s"));
    m_hostLink->setSpecialValueText(tr("default, 32 GB/s"));   // short: the form fits a narrow dock
    m_hostLink->setToolTip(tr("Device-host bandwidth per device and direction, used when the optimizer is offloaded. "
                              "Default: PCIe Gen4 x16, 32 GB/s."));
    m_hostLink->setKeyboardTracking(false);
    m_nodeInfo = new QLabel;
    m_nodeInfo->setWordWrap(true);
    form->addRow(tr("Host:"), m_host);
    form->addRow(tr("Device type:"), m_type);
    form->addRow(tr("Devices:"), m_count);
    form->addRow(tr("NICs:"), m_nics);
    form->addRow(tr("NIC speed:"), m_nicGbit);
    form->addRow(tr("Host memory:"), m_hostMemory);
    form->addRow(tr("Host link:"), m_hostLink);
    form->addRow(m_nodeInfo);
    m_stack->addWidget(nodePage);

    QWidget* switchPage = page(form);
    m_switchName = new QLineEdit;
    m_switchName->setObjectName(QStringLiteral("switchName"));
    form->addRow(tr("Name:"), m_switchName);
    m_switchInfo = new QLabel;
    m_switchInfo->setObjectName(QStringLiteral("switchInfo"));
    m_switchInfo->setWordWrap(true);
    form->addRow(m_switchInfo);
    m_stack->addWidget(switchPage);

    QWidget* linkPage = page(form);
    m_linkEnds = new QLabel;
    m_linkEnds->setWordWrap(true);
    m_bandwidth = new QDoubleSpinBox;
    m_bandwidth->setObjectName(QStringLiteral("linkBandwidth"));
    m_bandwidth->setRange(0.1, kMaxLinkRate);   // a spine link carries its whole cluster (docs/formats.md)
    m_bandwidth->setDecimals(1);
    m_bandwidth->setSuffix(tr(" GB/s"));
    m_bandwidth->setKeyboardTracking(false);
    m_latency = new QDoubleSpinBox;
    m_latency->setObjectName(QStringLiteral("linkLatency"));
    m_latency->setRange(0, 100000);
    m_latency->setDecimals(1);
    m_latency->setSuffix(tr(" \u00b5s"));
    m_latency->setKeyboardTracking(false);
    // Between two collective libraries the cost model sends over the bridge, not the link.
    m_linkBridgeNote = new QLabel;
    m_linkBridgeNote->setObjectName(QStringLiteral("linkBridgeNote"));
    m_linkBridgeNote->setWordWrap(true);
    m_showBridge = new QPushButton(tr("Bridge settings\u2026"));
    m_showBridge->setObjectName(QStringLiteral("showBridge"));
    m_showBridge->setToolTip(tr("Show the cluster's cross-vendor bridge (nothing selected)"));
    // First: a reader who came to change the bandwidth learns at once that it is not used.
    form->addRow(m_linkEnds);
    form->addRow(m_linkBridgeNote);
    form->addRow(m_showBridge);
    form->addRow(tr("Bandwidth:"), m_bandwidth);
    form->addRow(tr("Latency:"), m_latency);
    m_stack->addWidget(linkPage);

    // The cluster itself, with nothing selected: its cross-vendor bridge. The ranges are what
    // validateCluster takes (core/io/Documents.cpp): a bandwidth above 0, which at two
    // decimals starts at 0.01 GB/s, and a latency of 0 or more; the tops are the link page's.
    auto* clusterPage = new QWidget;
    auto* clusterBox = new QVBoxLayout(clusterPage);
    clusterBox->setContentsMargins(0, 0, 0, 0);
    auto* clusterHint = new QLabel(tr("Select a node, switch or link to edit it."));
    clusterHint->setWordWrap(true);
    clusterBox->addWidget(clusterHint);
    m_bridge = new QGroupBox(tr("Cross-vendor bridge"));
    m_bridge->setObjectName(QStringLiteral("bridgeGroup"));
    auto* bridgeForm = new QFormLayout(m_bridge);
    bridgeForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    bridgeForm->setRowWrapPolicy(QFormLayout::DontWrapRows);
    m_bridgeBandwidth = new QDoubleSpinBox;
    m_bridgeBandwidth->setObjectName(QStringLiteral("bridgeBandwidth"));
    m_bridgeBandwidth->setRange(0.01, 100000);
    m_bridgeBandwidth->setDecimals(2);
    m_bridgeBandwidth->setSuffix(tr(" GB/s"));
    m_bridgeBandwidth->setToolTip(tr("Per connection and direction: every rank pair across two collective libraries "
                                     "has a connection of its own, no faster than this or its NIC."));
    m_bridgeBandwidth->setKeyboardTracking(false);
    m_bridgeLatency = new QDoubleSpinBox;
    m_bridgeLatency->setObjectName(QStringLiteral("bridgeLatency"));
    m_bridgeLatency->setRange(0, 100000);
    m_bridgeLatency->setDecimals(1);
    m_bridgeLatency->setSuffix(tr(" \u00b5s"));
    m_bridgeLatency->setToolTip(tr("Per message (a send, or each step of a collective) across the bridge."));
    m_bridgeLatency->setKeyboardTracking(false);
    m_bridgeNote = new QLabel;
    m_bridgeNote->setObjectName(QStringLiteral("bridgeNote"));
    m_bridgeNote->setWordWrap(true);
    bridgeForm->addRow(tr("Bandwidth:"), m_bridgeBandwidth);
    bridgeForm->addRow(tr("Latency:"), m_bridgeLatency);
    bridgeForm->addRow(m_bridgeNote);
    clusterBox->addWidget(m_bridge);
    m_stack->addWidget(clusterPage);

    // Under the fields, so that a value the editor did not take says why it stayed.
    m_rangeCheck = new SpinBoxRangeCheck(this, QStringLiteral("propertyInputMessage"));
    layout->addWidget(m_rangeCheck->messageLabel());
    // Under the line, which stays next to the bridge's fields.
    m_clusterTips = new QLabel(tr("Drag a device type from the palette onto the canvas to add a node "
                                  "(Shift: choose the device count); drop it on a switch to link it. "
                                  "Shift+drag from one item to another, or the Connect tool, adds a link."));
    m_clusterTips->setWordWrap(true);
    m_clusterTips->hide();
    layout->addWidget(m_clusterTips);
    layout->addStretch(1);
    const std::pair<QAbstractSpinBox*, QString> fields[] = {
        {m_count, tr("Devices")},        {m_nics, tr("NICs")},           {m_nicGbit, tr("NIC speed")},
        {m_hostMemory, tr("Host memory")}, {m_hostLink, tr("Host link")}, {m_bandwidth, tr("Bandwidth")},
        {m_latency, tr("Latency")}, {m_bridgeBandwidth, tr("Bridge bandwidth")}, {m_bridgeLatency, tr("Bridge latency")}};
    for (const auto& [box, field] : fields)
        m_rangeCheck->watch(box, field);
    connect(m_rangeCheck, &SpinBoxRangeCheck::rejected, this,
            [this](QAbstractSpinBox*, const QString& message) { emit inputRejected(message); });

    connect(m_host, &QLineEdit::editingFinished, this, &PropertyEditor::commitNode);
    connect(m_type, &QComboBox::currentIndexChanged, this, &PropertyEditor::commitNode);
    connect(m_count, &QSpinBox::valueChanged, this, &PropertyEditor::commitNode);
    connect(m_nics, &QSpinBox::valueChanged, this, &PropertyEditor::commitNode);
    connect(m_nicGbit, &QDoubleSpinBox::valueChanged, this, &PropertyEditor::commitNode);
    connect(m_hostMemory, &QDoubleSpinBox::valueChanged, this, &PropertyEditor::commitNode);
    connect(m_hostLink, &QDoubleSpinBox::valueChanged, this, &PropertyEditor::commitNode);
    connect(m_switchName, &QLineEdit::editingFinished, this, &PropertyEditor::commitSwitch);
    connect(m_bandwidth, &QDoubleSpinBox::valueChanged, this, &PropertyEditor::commitLink);
    connect(m_latency, &QDoubleSpinBox::valueChanged, this, &PropertyEditor::commitLink);
    connect(m_showBridge, &QPushButton::clicked, this, &PropertyEditor::showBridge);
    connect(m_bridgeBandwidth, &QDoubleSpinBox::valueChanged, this, [this] { commitBridge(m_bridgeBandwidth); });
    connect(m_bridgeLatency, &QDoubleSpinBox::valueChanged, this, [this] { commitBridge(m_bridgeLatency); });

    connect(scene, &QGraphicsScene::selectionChanged, this, &PropertyEditor::refresh);
    // A change of the cluster (an undo, a value taken) may change the value the line says a
    // field kept.
    connect(document, &ProjectDocument::clusterChanged, this, [this] { m_rangeCheck->showMessage(QString()); });
    connect(document, &ProjectDocument::clusterChanged, this, &PropertyEditor::refresh);
    connect(document, &ProjectDocument::nodeChanged, this, &PropertyEditor::refresh);
    connect(document, &ProjectDocument::switchChanged, this, &PropertyEditor::refresh);
    connect(document, &ProjectDocument::devicesChanged, this, [this] {
        fillTypes();
        refresh();
    });
    refresh();
}

void PropertyEditor::fillTypes()
{
    // The project's types too (its device type editor); no node edit while the list changes.
    const QSignalBlocker block(m_type);
    m_type->clear();
    for (const DeviceType& t : m_document->catalog().types())
        m_type->addItem(deviceIcon(QString::fromStdString(t.name)), QString::fromStdString(t.name));
}

void PropertyEditor::refresh()
{
    if (m_updating)
        return;
    m_updating = true;
    const Cluster& c = m_document->cluster();
    const QSet<int> ids = m_scene->selectedIds();
    const auto links = m_scene->selectedLinks();
    const int shown[] = {m_nodeId, m_switchId, m_linkA, m_linkB, m_clusterShown};
    m_nodeId = m_switchId = m_linkA = m_linkB = -1;
    m_clusterShown = false;
    if (ids.size() == 1 && links.isEmpty() && c.node(*ids.begin())) {
        const Node& n = *c.node(*ids.begin());
        m_nodeId = n.id;
        m_host->setText(QString::fromStdString(n.host));
        const DeviceType* type = m_document->catalog().find(n.device_type);
        const QString typeName = QString::fromStdString(type ? type->name : n.device_type);
        if (m_type->findText(typeName) < 0)
            m_type->addItem(typeName);   // an unknown type stays visible (and flagged as a problem)
        m_type->setCurrentText(typeName);
        m_count->setValue(n.count);
        m_nics->setValue(n.nics);
        m_nicGbit->setValue(n.nic_gbit);
        m_hostMemory->setValue(n.host_memory_gib);
        m_hostLink->setValue(n.host_link_gbytes_per_s);
        if (type)
            m_nodeInfo->setText(tr("%1 TFLOP/s and %2 GiB per device; %3 PFLOP/s and %4 GiB in the node. "
                                   "Inter-node %5 GB/s per device by default.")
                                    .arg(type->bf16_tflops)
                                    .arg(type->memory_gib)
                                    .arg(n.count * type->bf16_tflops / 1000.0, 0, 'f', 2)
                                    .arg(n.count * type->memory_gib, 0, 'f', 0)
                                    .arg(type->inter_node_gbps));
        else
            m_nodeInfo->setText(tr("Unknown device type: choose one from the catalog."));
        m_stack->setCurrentIndex(1);
    } else if (ids.size() == 1 && links.isEmpty() && c.switchById(*ids.begin())) {
        const Switch& s = *c.switchById(*ids.begin());
        m_switchId = s.id;
        m_switchName->setText(QString::fromStdString(s.name));
        // Its links down to nodes and up to switches, and what an oversubscribed switch leaves
        // the nodes below it (SwitchUplinks, docs/cost-model.md section 6).
        const SwitchUplinks u = switchUplinks(c, &m_document->catalog());
        const double down = u.down.count(s.id) ? u.down.at(s.id) : 0.0, up = u.up.count(s.id) ? u.up.at(s.id) : 0.0;
        QString info = tr("Links to nodes: %1 GB/s. Links to switches: %2 GB/s.").arg(down, 0, 'f', 0).arg(up, 0, 'f', 0);
        // Links drawn faster than the NICs behind them count at the NICs' rate.
        const SwitchUplinks drawn = switchUplinks(c);
        if (const double drawnDown = drawn.down.count(s.id) ? drawn.down.at(s.id) : 0.0; drawnDown > down * (1 + 1e-9))
            info = tr("Links to nodes: %1 GB/s as drawn, %2 GB/s of it within what the nodes' NICs can send. Links to switches: %3 GB/s.")
                       .arg(drawnDown, 0, 'f', 0)
                       .arg(down, 0, 'f', 0)
                       .arg(up, 0, 'f', 0);
        if (const double over = u.oversubscription(s.id); over > 0)
            info += QLatin1Char(' ')
                + tr("Oversubscribed %1:1: traffic that leaves this switch gets %2 % of each node's link to it.")
                      .arg(over, 0, 'g', 3)
                      .arg(100.0 / over, 0, 'f', 0);
        m_switchInfo->setText(info);
        m_stack->setCurrentIndex(2);
    } else if (ids.isEmpty() && links.size() == 1 && m_document->findLink(links[0].first, links[0].second)) {
        const Link& l = *m_document->findLink(links[0].first, links[0].second);
        m_linkA = l.a;
        m_linkB = l.b;
        m_linkEnds->setText(tr("Link between %1 and %2").arg(describe(c, l.a), describe(c, l.b)));
        m_bandwidth->setValue(l.bandwidth_gbytes_per_s);
        m_latency->setValue(l.latency_us);
        // The cost model sends between two collective libraries over the bridge alone
        // (docs/cost-model.md section 4.1); the link still adds to the sum of each node's
        // links, which caps what the node's devices send off it (section 6).
        const bool cross = crossesBridge(c, m_document->catalog(), l.a, l.b);
        if (cross) {
            const auto library = [&](int id) {
                const DeviceType* t = m_document->catalog().find(c.node(id)->device_type);
                return QStringLiteral("%1 (%2)").arg(collectiveLibrary(*t), QString::fromStdString(t->name));
            };
            m_linkBridgeNote->setText(tr("Between %1 and %2 the plans send over the cross-vendor bridge, %3 GB/s "
                                         "per connection and %4 \u00b5s, not at this link's figures.")
                                          .arg(library(l.a), library(l.b), figure(c.cross_vendor.bandwidth_gbytes_per_s),
                                               figure(c.cross_vendor.latency_us)));
        }
        m_linkBridgeNote->setVisible(cross);
        m_showBridge->setVisible(cross);
        m_bandwidth->setToolTip(cross ? tr("Not the rate between these nodes (the bridge's is). It only adds to the "
                                           "total of each node's links, which caps what the node's devices send off it.")
                                      : QString());
        m_stack->setCurrentIndex(3);
    } else if (!ids.isEmpty() || !links.isEmpty()) {
        int nodes = 0, devices = 0;
        for (int id : ids)
            if (const Node* n = c.node(id)) {
                ++nodes;
                devices += n->count;
            }
        const auto count = [](qsizetype n, const QString& one, const QString& many) { return n == 1 ? one : many.arg(n); };
        m_summary->setText(tr("%1 selected: %2 with %3, %4, %5.\n\n"
                              "Delete removes them; Ctrl+C and Ctrl+V copy them.")
                               .arg(count(ids.size() + links.size(), tr("1 item"), tr("%1 items")),
                                    count(nodes, tr("1 node"), tr("%1 nodes")),
                                    count(devices, tr("1 device"), tr("%1 devices")),
                                    count(ids.size() - nodes, tr("1 switch"), tr("%1 switches")),
                                    count(links.size(), tr("1 link"), tr("%1 links"))));
        m_stack->setCurrentIndex(0);
    } else {
        m_clusterShown = true;
        const CrossVendorBridge& bridge = c.cross_vendor;
        m_bridge->setTitle(tr("Cross-vendor bridge (%1)").arg(QString::fromStdString(bridge.method)));
        m_bridgeBandwidth->setValue(bridge.bandwidth_gbytes_per_s);
        m_bridgeLatency->setValue(bridge.latency_us);
        // It carries the traffic between collective libraries only; in a cluster of one it
        // changes no prediction, and an edit would only outdate the plans.
        const QStringList libraries = collectiveLibraries(c, m_document->catalog());
        const bool used = libraries.size() > 1;
        m_bridgeBandwidth->setEnabled(used);
        m_bridgeLatency->setEnabled(used);
        if (used) {
            QString note = tr("All traffic between %1 devices crosses it: a connection per rank pair at this rate "
                              "(or its NIC's, if slower), plus the latency per message.")
                               .arg(listed(libraries));
            // docs/cost-model.md section 2: one TCP stream, 20 Gb/s, is not a measurement.
            const CrossVendorBridge defaults;
            if (bridge.bandwidth_gbytes_per_s == defaults.bandwidth_gbytes_per_s && bridge.latency_us == defaults.latency_us)
                note += QLatin1Char(' ') + tr("The defaults (gloo over TCP) are an assumption: measure yours.");
            m_bridgeNote->setText(note);
        }
        else if (libraries.isEmpty())
            m_bridgeNote->setText(tr("Used only between devices of different collective libraries (NCCL and RCCL, "
                                     "HCCL, ...); the cluster has no nodes of a known type."));
        else
            m_bridgeNote->setText(tr("Used only between devices of different collective libraries; this cluster's "
                                     "are all %1. Add a node of another vendor to set it.")
                                      .arg(libraries.front()));
        m_stack->setCurrentIndex(4);
    }
    m_clusterTips->setVisible(m_clusterShown);
    // A message about a field of another item would mislead.
    if (shown[0] != m_nodeId || shown[1] != m_switchId || shown[2] != m_linkA || shown[3] != m_linkB
        || bool(shown[4]) != m_clusterShown)
        m_rangeCheck->showMessage(QString());
    m_updating = false;
}

void PropertyEditor::commitNode()
{
    if (m_updating || m_nodeId < 0)
        return;
    m_rangeCheck->showMessage(QString());
    const Node* old = m_document->cluster().node(m_nodeId);
    if (!old)
        return;
    Node n = *old;
    const QString host = m_host->text().trimmed();
    // A host name reaches launch scripts: one the readers would refuse is not taken.
    if (!host.isEmpty()) {
        if (const std::string why = hostNameProblem(host.toStdString()); why.empty()) {
            n.host = host.toStdString();
        } else {
            m_host->setText(QString::fromStdString(old->host));
            QToolTip::showText(m_host->mapToGlobal(QPoint(0, m_host->height())),
                               tr("Host name \"%1\" %2; it stays \"%3\".")
                                   .arg(host.left(60), QString::fromStdString(why), QString::fromStdString(old->host)),
                               m_host);
        }
    }
    n.device_type = m_type->currentText().toStdString();
    n.count = m_count->value();
    n.nics = m_nics->value();
    n.nic_gbit = m_nicGbit->value();
    n.host_memory_gib = m_hostMemory->value();
    n.host_link_gbytes_per_s = m_hostLink->value();
    if (n.host == old->host && n.device_type == old->device_type && n.count == old->count && n.nics == old->nics &&
        n.nic_gbit == old->nic_gbit && n.host_memory_gib == old->host_memory_gib
        && n.host_link_gbytes_per_s == old->host_link_gbytes_per_s)
        return;
    m_document->setNode(n);
}

void PropertyEditor::commitSwitch()
{
    if (m_updating || m_switchId < 0)
        return;
    const Switch* old = m_document->cluster().switchById(m_switchId);
    const QString name = m_switchName->text().trimmed();
    if (!old || name.isEmpty() || name.toStdString() == old->name)
        return;
    Switch s = *old;
    s.name = name.toStdString();
    m_document->setSwitch(s);
}

void PropertyEditor::commitLink()
{
    if (m_updating || m_linkA < 0)
        return;
    m_rangeCheck->showMessage(QString());
    const Link* old = m_document->findLink(m_linkA, m_linkB);
    if (!old)
        return;
    Link l = *old;
    l.bandwidth_gbytes_per_s = m_bandwidth->value();
    l.latency_us = m_latency->value();
    if (l.bandwidth_gbytes_per_s == old->bandwidth_gbytes_per_s && l.latency_us == old->latency_us)
        return;
    m_document->setLink(l);
}

void PropertyEditor::commitBridge(QDoubleSpinBox* changed)
{
    if (m_updating || !m_clusterShown)
        return;
    m_rangeCheck->showMessage(QString());
    // Only the field that changed: the other keeps the file's value, even one finer than
    // its box shows.
    CrossVendorBridge bridge = m_document->cluster().cross_vendor;
    if (changed == m_bridgeBandwidth)
        bridge.bandwidth_gbytes_per_s = m_bridgeBandwidth->value();
    else
        bridge.latency_us = m_bridgeLatency->value();
    m_document->setBridge(bridge);
}

void PropertyEditor::showBridge()
{
    m_scene->clearSelection();   // the cluster page comes with nothing selected
    if (m_clusterShown && m_bridgeBandwidth->isEnabled()) {
        m_bridgeBandwidth->setFocus(Qt::OtherFocusReason);
        m_bridgeBandwidth->selectAll();
    }
}

} // namespace hapmoe::ui
