#include "ProblemsPanel.h"

#include "ProjectDocument.h"

#include "hardware/ClusterTopology.h"
#include "io/Documents.h"
#include "plan/Deployability.h"
#include "util/Strings.h"

#include <QHeaderView>
#include <QRegularExpression>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hapmoe::ui {

namespace {

QString kindName(TopologyProblem::Kind kind)
{
    switch (kind) {
    case TopologyProblem::Kind::NoDevices: return QObject::tr("No devices");
    case TopologyProblem::Kind::UnknownDevice: return QObject::tr("Unknown device");
    case TopologyProblem::Kind::DuplicateHost: return QObject::tr("Host name");
    case TopologyProblem::Kind::Island: return QObject::tr("Island");
    case TopologyProblem::Kind::Unlinked: return QObject::tr("No link");
    case TopologyProblem::Kind::BadLink: return QObject::tr("Bad link");
    case TopologyProblem::Kind::NoRoute: return QObject::tr("No route");
    }
    return {};
}

constexpr int kIdsRole = Qt::UserRole + 1;
constexpr int kMessageRole = Qt::UserRole + 2;   // the message as written (the text has wrap points)

// A row as tall as its message wrapped to the width of its column: the tree view alone
// sizes rows to one line and elides the rest.
class WrappingDelegate : public QStyledItemDelegate {
public:
    WrappingDelegate(QHeaderView* header, QObject* parent) : QStyledItemDelegate(parent), m_header(header) {}

    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override
    {
        const QSize one = QStyledItemDelegate::sizeHint(option, index);
        QStyleOptionViewItem o(option);
        initStyleOption(&o, index);
        const int margins = 4 * (o.widget ? o.widget->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, &o, o.widget) + 1 : 3);
        const int icon = o.features & QStyleOptionViewItem::HasDecoration ? o.decorationSize.width() + margins : 0;
        const int width = m_header->sectionSize(index.column()) - icon - margins;
        if (width <= 0 || o.text.isEmpty())
            return one;
        const QRect text = o.fontMetrics.boundingRect(QRect(0, 0, width, 1 << 20), Qt::TextWordWrap, o.text);
        return {one.width(), std::max(one.height(), text.height() + margins)};
    }

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        option->decorationAlignment = Qt::AlignHCenter | Qt::AlignTop;   // the icon beside the first line
    }

private:
    QHeaderView* m_header;
};

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
    // Messages wrap to the dock's width: rows take their new height when a column resizes.
    m_tree->setItemDelegate(new WrappingDelegate(m_tree->header(), m_tree));
    m_tree->setTextElideMode(Qt::ElideNone);
    connect(m_tree->header(), &QHeaderView::sectionResized, m_tree, [this] { m_tree->doItemsLayout(); });
    connect(m_tree, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        QList<int> ids;
        for (const QVariant& v : item->data(0, kIdsRole).toList())
            ids.append(v.toInt());
        emit problemActivated(ids);
    });
    connect(m_tree, &QTreeWidget::itemClicked, m_tree, &QTreeWidget::itemActivated);
    connect(document, &ProjectDocument::clusterChanged, this, &ProblemsPanel::refresh);
    connect(document, &ProjectDocument::modelChanged, this, &ProblemsPanel::refresh);
    connect(document, &ProjectDocument::projectReset, this, [this] { setFileNotes({}); });
    refresh();
}

void ProblemsPanel::setFileNotes(const QStringList& notes)
{
    if (notes == m_fileNotes)
        return;
    m_fileNotes = notes;
    refresh();
}

int ProblemsPanel::problemCount() const { return m_tree->topLevelItemCount(); }

QStringList ProblemsPanel::messages() const
{
    QStringList list;
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i)
        list << m_tree->topLevelItem(i)->data(1, kMessageRole).toString();
    return list;
}

std::optional<InputError> ProblemsPanel::clusterError() const
{
    Cluster c = m_document->cluster();
    const DeviceCatalog& catalog = m_document->catalog();
    std::set<int> ids;
    std::set<std::string> taken;   // every host name, ignoring case as host names do
    for (const Node& n : c.nodes) {
        ids.insert(n.id);
        taken.insert(hapmoe::lower(n.host));
    }
    for (const Switch& s : c.switches)
        ids.insert(s.id);
    std::set<std::string> seen;
    for (Node& n : c.nodes) {
        if (!catalog.find(n.device_type) && !catalog.types().empty())
            n.device_type = catalog.types().front().name;   // "Unknown device" says it
        // A host name an earlier node has ("Host name" says it) becomes a free one.
        if (!n.host.empty() && !seen.insert(hapmoe::lower(n.host)).second) {
            for (int k = 0; taken.count(n.host = "node-" + std::to_string(n.id) + "-" + std::to_string(k)); ++k) {
            }
            taken.insert(n.host);
        }
    }
    // "Bad link" says these (ClusterTopology).
    std::erase_if(c.links, [&](const Link& l) {
        return !ids.count(l.a) || !ids.count(l.b) || l.a == l.b || !(l.bandwidth_gbytes_per_s > 0) || !(l.latency_us >= 0);
    });
    try {
        validateCluster(c, catalog, "cluster");
    } catch (const InputError& e) {
        if (e.where() == "cluster.nodes" && e.detail().starts_with("the cluster has no devices"))
            return std::nullopt;   // "No devices" says it
        return e;
    }
    return std::nullopt;
}

void ProblemsPanel::refresh()
{
    m_tree->clear();
    // Red, as the canvas badges, for what stops a search (Run refuses the cluster or model);
    // yellow for what the search works around (nodes it leaves out).
    const QIcon blocking = style()->standardIcon(QStyle::SP_MessageBoxCritical);
    const QIcon warning = style()->standardIcon(QStyle::SP_MessageBoxWarning);
    auto add = [&](const QString& kind, const QString& message, const std::vector<int>& ids, bool blocks = true) {
        // A field path (model.num_attention_heads) is one long word: a zero-width space after
        // each '.' and '_' inside a word lets it wrap in a narrow dock instead of being cut.
        static const QRegularExpression joint(QStringLiteral("(?<=[A-Za-z])([._])(?=[A-Za-z])"));
        QString shown = message;
        shown.replace(joint, QStringLiteral("\\1\u200b"));
        auto* item = new QTreeWidgetItem(m_tree, {kind, shown});
        item->setIcon(0, blocks ? blocking : warning);
        item->setToolTip(1, message);
        item->setData(1, kMessageRole, message);
        for (int column : {0, 1})   // the kind beside the first line of a wrapped message
            item->setTextAlignment(column, Qt::AlignLeft | Qt::AlignTop);
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
    // What the files and Run refuse beyond the topology's problems (a node of 10^9 devices, an
    // empty host name, an id used twice): validateCluster's first error, as Run reports it
    // (SearchPanel::run). The rows above already name unknown device types, shared host names
    // and bad links, so the cluster is validated with those set right.
    if (const std::optional<InputError> error = clusterError()) {
        std::vector<int> ids;
        static const QRegularExpression item(QStringLiteral("^cluster\\.(nodes|switches)\\[(\\d+)\\]"));
        if (const QRegularExpressionMatch m = item.match(QString::fromStdString(error->where())); m.hasMatch()) {
            const std::size_t i = m.captured(2).toULongLong();
            const Cluster& c = m_document->cluster();
            if (m.captured(1) == QLatin1String("nodes") && i < c.nodes.size())
                ids.push_back(c.nodes[i].id);
            else if (m.captured(1) == QLatin1String("switches") && i < c.switches.size())
                ids.push_back(c.switches[i].id);
        }
        add(tr("Cluster"), QString::fromStdString(error->where() + ": " + error->detail()), ids);
    }
    try {
        validateModel(m_document->model(), "model");
    } catch (const InputError& e) {
        add(tr("Model"), QString::fromStdString(e.where() + ": " + e.detail()), {});
    } catch (const std::exception& e) {
        add(tr("Model"), QString::fromUtf8(e.what()), {});
    }
    // The flex dispatcher runs on DeepEP, and FP8 training on FP8 tensor cores, which some
    // device types lack: the search leaves their nodes out (docs/search.md section 1).
    // One row per device type, listing its nodes, so 34 such nodes are one problem, not 34.
    std::vector<std::pair<std::string, std::vector<const Node*>>> byType;
    for (const Node& n : m_document->cluster().nodes) {
        auto it = std::find_if(byType.begin(), byType.end(), [&](const auto& t) { return t.first == n.device_type; });
        if (it == byType.end())
            it = byType.insert(byType.end(), {n.device_type, {}});
        it->second.push_back(&n);
    }
    const auto leftOut = [&](const QString& category, const QString& need, const QString& otherwise,
                             const DeviceRule& unavailable) {
        for (const auto& [type, nodes] : byType) {
            const std::string why = unavailable(m_document->catalog(), type);
            if (why.empty())
                continue;
            std::vector<int> ids;
            QStringList hosts;
            for (const Node* n : nodes) {
                ids.push_back(n->id);
                hosts << QString::fromStdString(n->host);
            }
            // Clicking the row selects the nodes on the canvas; the tooltip lists them.
            const bool one = nodes.size() == 1;
            const QString which = one ? tr("%1 (%2)").arg(hosts.front(), QString::fromStdString(type))
                                      : tr("%1 %2 nodes").arg(nodes.size()).arg(QString::fromStdString(type));
            add(category,
                tr("%1: %2; %3, so the search leaves %4 out (%5)")
                    .arg(which, QString::fromStdString(why), need, one ? tr("this node") : tr("them"),
                         otherwise.arg(one ? tr("it") : tr("them"))),
                ids, false);
            if (!one) {
                QTreeWidgetItem* item = m_tree->topLevelItem(m_tree->topLevelItemCount() - 1);
                item->setToolTip(1, item->data(1, kMessageRole).toString() + QStringLiteral("\n\n") + hosts.join(QStringLiteral(", ")));
            }
        }
    };
    if (m_document->model().usesFlexDispatcher())
        leftOut(tr("Dispatcher"), tr("the flex dispatcher needs DeepEP"), tr("the alltoall dispatcher runs on %1"),
                deepEpUnavailable);
    if (m_document->model().training.fp8()) {
        const Fp8Recipe recipe = m_document->model().training.fp8_recipe;
        leftOut(tr("Precision"),
                recipe == Fp8Recipe::Delayed ? tr("FP8 training needs FP8 tensor cores")
                                             : tr("FP8 training with the %1 recipe needs its FP8 GEMMs").arg(QString::fromUtf8(toString(recipe))),
                recipe == Fp8Recipe::Delayed ? tr("training without FP8 GEMMs runs on %1")
                                             : tr("another recipe or training without FP8 GEMMs runs on %1"),
                [recipe](const DeviceCatalog& c, const std::string& type) { return fp8Unavailable(c, type, recipe); });
    }
    // Last, as the search works around them: what the reader left out of or noted in the file.
    for (const QString& note : m_fileNotes)
        add(tr("File"), note, {}, false);
    emit problemCountChanged(problemCount());
}

} // namespace hapmoe::ui
