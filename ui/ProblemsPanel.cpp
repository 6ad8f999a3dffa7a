#include "ProblemsPanel.h"

#include "ProjectDocument.h"

#include "hardware/ClusterTopology.h"
#include "plan/Deployability.h"

#include <QHeaderView>
#include <QStyle>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace hapmoe::ui {

namespace {

QString kindName(TopologyProblem::Kind kind)
{
    switch (kind) {
    case TopologyProblem::Kind::NoDevices: return QObject::tr("No devices");
    case TopologyProblem::Kind::UnknownDevice: return QObject::tr("Unknown device");
    case TopologyProblem::Kind::Island: return QObject::tr("Island");
    case TopologyProblem::Kind::Unlinked: return QObject::tr("No link");
    case TopologyProblem::Kind::BadLink: return QObject::tr("Bad link");
    case TopologyProblem::Kind::NoRoute: return QObject::tr("No route");
    }
    return {};
}

constexpr int kIdsRole = Qt::UserRole + 1;

} // namespace

ProblemsPanel::ProblemsPanel(ProjectDocument* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_tree(new QTreeWidget(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tree);
    m_tree->setColumnCount(2);
    m_tree->setHeaderLabels({tr("Problem"), tr("Details")});
    m_tree->setRootIsDecorated(false);
    m_tree->setAlternatingRowColors(true);
    m_tree->setWordWrap(true);
    m_tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_tree->header()->setStretchLastSection(true);
    connect(m_tree, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        QList<int> ids;
        for (const QVariant& v : item->data(0, kIdsRole).toList())
            ids.append(v.toInt());
        emit problemActivated(ids);
    });
    connect(m_tree, &QTreeWidget::itemClicked, m_tree, &QTreeWidget::itemActivated);
    connect(document, &ProjectDocument::clusterChanged, this, &ProblemsPanel::refresh);
    connect(document, &ProjectDocument::modelChanged, this, &ProblemsPanel::refresh);
    refresh();
}

int ProblemsPanel::problemCount() const { return m_tree->topLevelItemCount(); }

QStringList ProblemsPanel::messages() const
{
    QStringList list;
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i)
        list << m_tree->topLevelItem(i)->text(1);
    return list;
}

void ProblemsPanel::refresh()
{
    m_tree->clear();
    const QIcon warning = style()->standardIcon(QStyle::SP_MessageBoxWarning);
    auto add = [&](const QString& kind, const QString& message, const std::vector<int>& ids) {
        auto* item = new QTreeWidgetItem(m_tree, {kind, message});
        item->setIcon(0, warning);
        item->setToolTip(1, message);
        QVariantList list;
        for (int id : ids)
            list.append(id);
        item->setData(0, kIdsRole, list);
    };
    try {
        ClusterTopology topology(m_document->cluster(), m_document->catalog());
        for (const auto& p : topology.problems())
            add(kindName(p.kind), QString::fromStdString(p.message), p.ids);
    } catch (const std::exception& e) {
        add(tr("Cluster"), QString::fromUtf8(e.what()), {});
    }
    try {
        validateModel(m_document->model(), "model");
    } catch (const InputError& e) {
        add(tr("Model"), QString::fromStdString(e.where() + ": " + e.detail()), {});
    } catch (const std::exception& e) {
        add(tr("Model"), QString::fromUtf8(e.what()), {});
    }
    // The flex dispatcher runs on DeepEP, which some device types lack: the search leaves
    // their nodes out (docs/search.md section 1).
    if (m_document->model().usesFlexDispatcher())
        for (const Node& n : m_document->cluster().nodes) {
            const std::string why = deepEpUnavailable(m_document->catalog(), n.device_type);
            if (!why.empty())
                add(tr("Dispatcher"),
                    tr("%1 (%2): %3; the flex dispatcher needs DeepEP, so the search leaves this node out "
                       "(the alltoall dispatcher runs on it)")
                        .arg(QString::fromStdString(n.host), QString::fromStdString(n.device_type),
                             QString::fromStdString(why)),
                    {n.id});
        }
    emit problemCountChanged(problemCount());
}

} // namespace hapmoe::ui
