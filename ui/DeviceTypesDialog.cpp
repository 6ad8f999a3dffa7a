#include "DeviceTypesDialog.h"

#include "ProjectDocument.h"
#include "Theme.h"

#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "io/JsonNode.h"
#include "util/InputError.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <functional>

namespace hapmoe::ui {

namespace {

constexpr int kNameRole = Qt::UserRole + 1;

// The same type but for the sources of its figures (an edited figure loses its source, and
// set back it is the catalog's again).
bool sameFigures(DeviceType a, DeviceType b)
{
    a.sources.clear();
    b.sources.clear();
    return DeviceCatalog({a}).toJson() == DeviceCatalog({b}).toJson();
}

// The built-in type a project type replaces (merge replaces the type its name names), or null.
const DeviceType* builtinOf(const std::string& name) { return DeviceCatalog::builtin().find(name); }

// Whether two names are one as the catalog looks them up (case, '-', '_' and spaces aside).
bool sameName(const std::string& a, const std::string& b) { return io::JsonNode::normalizedName(a) == io::JsonNode::normalizedName(b); }
bool sameName(const QString& a, const QString& b) { return sameName(a.toStdString(), b.toStdString()); }
bool sameName(const std::string& a, const QString& b) { return sameName(a, b.toStdString()); }

// A type that replaces a built-in one as DeviceCatalog::merge takes it: with the catalog's name
// ("h800" is H800) and, where it gives none, the catalog's HBM efficiency (files written before
// the field have none).
void asTheCatalogHasIt(DeviceType& t)
{
    if (const DeviceType* b = builtinOf(t.name); b && sameName(b->name, t.name)) {
        t.name = b->name;
        if (t.hbm_efficiency <= 0)
            t.hbm_efficiency = b->hbm_efficiency;
    }
}

// Whether a node's device type names t (its name or an alias, as the catalog looks them up).
bool names(const DeviceType& t, const std::string& deviceType)
{
    auto same = [&](const std::string& n) { return sameName(n, deviceType); };
    return same(t.name) || std::any_of(t.aliases.begin(), t.aliases.end(), same);
}

QStringList splitAliases(const QString& text)
{
    QStringList out;
    for (const QString& a : text.split(QLatin1Char(';')))
        if (!a.trimmed().isEmpty())
            out << a.trimmed();
    return out;
}

QDoubleSpinBox* figureBox(const char* objectName, double min, double max, int decimals, const QString& suffix)
{
    auto* box = new QDoubleSpinBox;
    box->setObjectName(QString::fromLatin1(objectName));
    box->setRange(min, max);
    box->setDecimals(decimals);
    box->setSuffix(suffix);
    box->setKeyboardTracking(false);
    box->setAccelerated(true);
    return box;
}

} // namespace

DeviceTypesDialog::DeviceTypesDialog(ProjectDocument* document, QWidget* parent)
    : QDialog(parent),
      m_document(document),
      m_types(document->project().devices),
      m_cluster(document->cluster()),
      m_list(new QTreeWidget(this)),
      m_origin(new QLabel(this)),
      m_name(new QLineEdit(this)),
      m_aliases(new QLineEdit(this)),
      m_vendor(new QLineEdit(this)),
      m_library(new QComboBox(this)),
      m_bf16(figureBox("typeBf16", 0.1, 1e6, 1, tr(" TFLOP/s"))),
      m_fp8(figureBox("typeFp8", 0, 1e6, 1, tr(" TFLOP/s"))),
      m_efficiency(figureBox("typeEfficiency", 0.001, 1, 4, QString())),
      m_memory(figureBox("typeMemory", 0.1, 1e6, 1, tr(" GiB"))),
      m_hbm(figureBox("typeHbm", 0.1, 1e7, 1, tr(" GB/s"))),
      m_hbmEfficiency(figureBox("typeHbmEfficiency", 0, 1, 3, QString())),
      m_capability(figureBox("typeCapability", 0, 99, 1, QString())),
      m_linkKind(new QLineEdit(this)),
      m_intra(figureBox("typeIntra", 0.01, 1e7, 2, tr(" GB/s"))),
      m_inter(figureBox("typeInter", 0.01, 1e7, 2, tr(" GB/s"))),
      m_perNode(new QSpinBox(this)),
      m_notes(new QLineEdit(this)),
      m_remove(new QPushButton(tr("&Remove"), this)),
      m_error(new QLabel(this))
{
    setObjectName(QStringLiteral("deviceTypesDialog"));
    setWindowTitle(tr("Device Types"));
    for (DeviceType& t : m_types)
        asTheCatalogHasIt(t);
    m_initial = m_types;

    auto* explanation = new QLabel(tr("The catalog's device types and the project's own. Change a built-in type's figures "
                                      "for this project, or start a type of its own with New Type. The project file keeps "
                                      "its types; plans and exported plan files are costed on them."),
                                   this);
    explanation->setWordWrap(true);

    m_list->setObjectName(QStringLiteral("deviceTypeList"));
    m_list->setColumnCount(2);
    m_list->setHeaderLabels({tr("Type"), tr("Figures")});
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_list->setMinimumWidth(260);

    m_origin->setObjectName(QStringLiteral("deviceTypeOrigin"));
    m_origin->setWordWrap(true);
    m_name->setObjectName(QStringLiteral("typeName"));
    m_aliases->setObjectName(QStringLiteral("typeAliases"));
    m_aliases->setToolTip(tr("Other names the type answers to in clusters and scripts, separated by ';'"));
    m_vendor->setObjectName(QStringLiteral("typeVendor"));
    m_library->setObjectName(QStringLiteral("typeLibrary"));
    m_library->setEditable(true);
    m_library->addItems({QStringLiteral("NCCL"), QStringLiteral("RCCL"), QStringLiteral("HCCL"), QStringLiteral("HCCL-Gaudi")});
    m_library->setToolTip(tr("Ranks of two libraries share no communicator: a plan joins them through the cluster's bridge"));
    m_fp8->setSpecialValueText(tr("none"));
    m_hbmEfficiency->setSpecialValueText(tr("not measured (0.8)"));
    m_hbmEfficiency->setSingleStep(0.01);
    m_hbmEfficiency->setToolTip(tr("The fraction of the HBM bandwidth a streaming kernel reaches (a measured STREAM copy); "
                                   "not measured: the cost model takes 0.8"));
    m_capability->setSpecialValueText(tr("none (not CUDA)"));
    m_capability->setToolTip(tr("CUDA compute capability: which FP8 recipes and DeepEP the type runs (MXFP8 needs 10.x)"));
    m_fp8->setToolTip(tr("Dense FP8 peak; none: the type has no FP8 tensor cores and FP8 training leaves it out"));
    m_efficiency->setSingleStep(0.01);
    m_efficiency->setToolTip(tr("The fraction of the BF16 peak a large GEMM reaches (docs/cost-model.md, section 2)"));
    m_linkKind->setObjectName(QStringLiteral("typeLinkKind"));
    m_perNode->setObjectName(QStringLiteral("typePerNode"));
    m_perNode->setRange(1, kMaxDevicesPerNode);
    m_perNode->setKeyboardTracking(false);
    m_perNode->setToolTip(tr("Devices per node of a cluster shorthand TYPE:N"));
    m_notes->setObjectName(QStringLiteral("typeNotes"));

    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("&Name:"), m_name);
    form->addRow(tr("&Aliases:"), m_aliases);
    form->addRow(tr("&Vendor:"), m_vendor);
    form->addRow(tr("Collective &library:"), m_library);
    form->addRow(tr("&BF16 dense peak:"), m_bf16);
    form->addRow(tr("&FP8 dense peak:"), m_fp8);
    form->addRow(tr("GEMM &efficiency:"), m_efficiency);
    form->addRow(tr("&Memory:"), m_memory);
    form->addRow(tr("&HBM bandwidth:"), m_hbm);
    form->addRow(tr("HBM e&fficiency:"), m_hbmEfficiency);
    form->addRow(tr("C&ompute capability:"), m_capability);
    form->addRow(tr("Intra-node &link:"), m_linkKind);
    form->addRow(tr("&Intra-node per device:"), m_intra);
    form->addRow(tr("In&ter-node per device:"), m_inter);
    form->addRow(tr("&Devices per node:"), m_perNode);
    form->addRow(tr("N&otes:"), m_notes);

    auto* add = new QPushButton(tr("&New Type"), this);
    add->setObjectName(QStringLiteral("newDeviceType"));
    add->setToolTip(tr("A type of the project's own, starting from the selected type's figures"));
    m_remove->setObjectName(QStringLiteral("removeDeviceType"));
    auto* import = new QPushButton(tr("&Import\u2026"), this);
    import->setToolTip(tr("Types of a hapmoe.devices file (hapmoe --devices), or those a plan or project file carries"));
    auto* exportButton = new QPushButton(tr("E&xport\u2026"), this);
    exportButton->setToolTip(tr("The project's types as a hapmoe.devices file, for hapmoe plan --devices"));
    auto* listButtons = new QHBoxLayout;
    for (QPushButton* b : {add, m_remove, import, exportButton})
        listButtons->addWidget(b);
    listButtons->addStretch(1);

    auto* left = new QVBoxLayout;
    left->addWidget(m_list, 1);
    left->addLayout(listButtons);
    auto* columns = new QHBoxLayout;
    columns->addLayout(left, 1);
    // The origin sentence above the form, not a row of it: a form row of a word-wrapped label
    // does not get the height of its second line when the dialog is short.
    auto* right = new QVBoxLayout;
    right->addWidget(m_origin);
    right->addLayout(form, 1);
    columns->addLayout(right, 1);

    m_error->setObjectName(QStringLiteral("deviceTypesError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->hide();

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &DeviceTypesDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(explanation);
    layout->addLayout(columns, 1);
    layout->addWidget(m_error);
    layout->addWidget(buttons);

    connect(m_list, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
        if (m_updating || !item)
            return;
        m_selected = item->data(0, kNameRole).toString();
        showSelected();
    });
    connect(add, &QPushButton::clicked, this, &DeviceTypesDialog::addType);
    connect(m_remove, &QPushButton::clicked, this, [this] { report(removeSelected()); });
    connect(import, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Import Device Types"), QString(),
                                                          tr("Device types, plans and projects (*.json *.hapmoe);;All files (*)"));
        if (!path.isEmpty())
            report(importFile(path));
    });
    connect(exportButton, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export Device Types"), QStringLiteral("devices.json"),
                                                          tr("Device types (*.json)"));
        if (!path.isEmpty())
            report(exportFile(path));
    });

    // Each field writes its own figure only: a value the box rounds for display (an efficiency
    // of 0.750805 shown as 0.7508) is never written back by an edit of another field.
    auto onText = [this](QLineEdit* edit, std::function<void(DeviceType&, const QString&)> set) {
        connect(edit, &QLineEdit::editingFinished, this, [this, edit, set] {
            if (m_updating)
                return;
            if (DeviceType* t = editableSelected())
                set(*t, edit->text().trimmed());
            commitField();
        });
    };
    auto onNumber = [this](QDoubleSpinBox* box, const char* key, double DeviceType::*field) {
        connect(box, &QDoubleSpinBox::valueChanged, this, [this, box, key, field](double v) {
            if (m_updating)
                return;
            if (DeviceType* t = editableSelected()) {
                // The catalog's figure as the box shows it (0.866 for 0.86567) is the catalog's
                // figure: set back, the type is the catalog's again.
                const DeviceType* b = builtinOf(t->name);
                if (b && sameName(b->name, t->name)
                    && QString::number(b->*field, 'f', box->decimals()) == QString::number(v, 'f', box->decimals()))
                    v = b->*field;
                t->*field = v;
                if (!b || v != b->*field)
                    t->sources.erase(key);   // the figure is no longer the source's
            }
            commitField();
        });
    };
    connect(m_name, &QLineEdit::editingFinished, this, [this] {
        if (m_updating)
            return;
        const QString text = m_name->text().trimmed();
        if (const QString why = rename(text); !why.isEmpty()) {
            showSelected();   // the field shows the name the type keeps
            report(why);
        }
    });
    onText(m_aliases, [](DeviceType& t, const QString& text) {
        t.aliases.clear();
        for (const QString& a : splitAliases(text))
            t.aliases.push_back(a.toStdString());
    });
    onText(m_vendor, [](DeviceType& t, const QString& text) { t.vendor = text.toStdString(); });
    onText(m_linkKind, [](DeviceType& t, const QString& text) { t.intra_link_kind = text.toStdString(); });
    onText(m_notes, [](DeviceType& t, const QString& text) { t.notes = text.toStdString(); });
    auto setLibrary = [this] {
        if (m_updating)
            return;
        if (DeviceType* t = editableSelected())
            t->collective_library = m_library->currentText().trimmed().toStdString();
        commitField();
    };
    connect(m_library, &QComboBox::activated, this, setLibrary);
    connect(m_library->lineEdit(), &QLineEdit::editingFinished, this, setLibrary);
    onNumber(m_bf16, "bf16_tflops", &DeviceType::bf16_tflops);
    onNumber(m_fp8, "fp8_tflops", &DeviceType::fp8_tflops);
    onNumber(m_efficiency, "default_efficiency", &DeviceType::default_efficiency);
    onNumber(m_memory, "memory_gib", &DeviceType::memory_gib);
    onNumber(m_hbm, "hbm_gbps", &DeviceType::hbm_gbps);
    onNumber(m_hbmEfficiency, "hbm_efficiency", &DeviceType::hbm_efficiency);
    onNumber(m_capability, "compute_capability", &DeviceType::compute_capability);
    onNumber(m_intra, "intra_node_gbps", &DeviceType::intra_node_gbps);
    onNumber(m_inter, "inter_node_gbps", &DeviceType::inter_node_gbps);
    connect(m_perNode, &QSpinBox::valueChanged, this, [this](int v) {
        if (m_updating)
            return;
        if (DeviceType* t = editableSelected())
            t->default_devices_per_node = v;
        commitField();
    });

    fillList();
    if (m_list->topLevelItemCount() > 0)
        m_list->setCurrentItem(m_list->topLevelItem(0));
    showCheck();
    resize(820, 560);
}

void DeviceTypesDialog::fillList()
{
    m_updating = true;
    m_list->clear();
    std::vector<std::pair<DeviceType, QString>> rows;
    for (DeviceType& t : shownTypes()) {
        const bool own = std::any_of(m_types.begin(), m_types.end(), [&](const DeviceType& o) { return o.name == t.name; });
        const QString origin = !own ? QString() : builtinOf(t.name) ? tr("project figures") : tr("project type");
        rows.emplace_back(std::move(t), origin);
    }
    QTreeWidgetItem* current = nullptr;
    for (const auto& [t, origin] : rows) {
        const QString name = QString::fromStdString(t.name);
        auto* item = new QTreeWidgetItem(m_list);
        item->setIcon(0, deviceIcon(name));
        item->setText(0, name);
        const QString figures = tr("%1 TFLOP/s \u00b7 %2 GiB").arg(t.bf16_tflops, 0, 'f', 0).arg(t.memory_gib, 0, 'f', 0);
        item->setText(1, origin.isEmpty() ? figures : figures + QStringLiteral(" \u00b7 ") + origin);
        if (!origin.isEmpty()) {
            // The project's own stand out from the catalog's.
            QFont bold = item->font(0);
            bold.setBold(true);
            item->setFont(0, bold);
            item->setFont(1, bold);
        }
        item->setData(0, kNameRole, name);
        item->setToolTip(0, QString::fromStdString(t.vendor + " " + t.name));
        if (sameName(name, m_selected))
            current = item;
    }
    if (current)
        m_list->setCurrentItem(current);
    m_updating = false;
}

namespace {

// The selected row's type as the list shows it: the project's entry, or the built-in one.
const DeviceType* shownType(const std::vector<DeviceType>& types, const QString& name)
{
    for (const DeviceType& t : types)
        if (sameName(t.name, name))
            return &t;
    for (const DeviceType& t : DeviceCatalog::builtin().types())
        if (sameName(t.name, name))
            return &t;
    return nullptr;
}

} // namespace

QString DeviceTypesDialog::selectedType() const { return m_selected; }

std::vector<DeviceType> DeviceTypesDialog::shownTypes() const
{
    std::vector<DeviceType> out;
    for (const DeviceType& b : DeviceCatalog::builtin().types()) {
        auto own = std::find_if(m_types.begin(), m_types.end(), [&](const DeviceType& t) { return builtinOf(t.name) == &b; });
        out.push_back(own == m_types.end() ? b : *own);
    }
    for (const DeviceType& t : m_types)
        if (!builtinOf(t.name))
            out.push_back(t);
    return out;
}

QString DeviceTypesDialog::rename(const QString& text)
{
    auto it = std::find_if(m_types.begin(), m_types.end(), [&](const DeviceType& t) {
        return sameName(t.name, m_selected);
    });
    if (it == m_types.end() || builtinOf(it->name))
        return {};   // a built-in type keeps its name (the field is read-only)
    const std::string name = text.toStdString();
    if (name == it->name)
        return {};
    if (text.isEmpty())
        return tr("A type needs a name: %1 keeps its own.").arg(QString::fromStdString(it->name));
    // Another type's name or alias would make the two one type: a built-in one would be
    // replaced, another of the project's merged with it. Only the name's spelling may change.
    std::vector<DeviceType> others;
    for (const DeviceType& t : shownTypes())
        if (t.name != it->name)
            others.push_back(t);
    if (const DeviceType* taken = DeviceCatalog(others).find(name))
        return tr("%1 cannot be renamed %2: %3 %4. A type of the project's own needs a name no other type has%5.")
            .arg(QString::fromStdString(it->name), text,
                 sameName(taken->name, text)
                     ? tr("that is the name of")
                     : tr("that names"),
                 QString::fromStdString(taken->name),
                 builtinOf(taken->name) ? tr(" (to change %1's figures, select %1)").arg(QString::fromStdString(taken->name)) : QString());
    // Nodes of the type follow it to its new name.
    for (Node& n : m_cluster.nodes)
        if (names(*it, n.device_type))
            n.device_type = name;
    it->name = name;
    m_selected = text;
    commitField();
    return {};
}

bool DeviceTypesDialog::selectType(const QString& name)
{
    DeviceCatalog shown = DeviceCatalog::builtin();
    try {
        shown = catalogWith(m_types);
    } catch (const InputError&) {
    }
    const DeviceType* t = shown.find(name.toStdString());
    const QString canonical = t ? QString::fromStdString(t->name) : name;
    for (int i = 0; i < m_list->topLevelItemCount(); ++i)
        if (sameName(m_list->topLevelItem(i)->data(0, kNameRole).toString(), canonical)) {
            m_list->setCurrentItem(m_list->topLevelItem(i));
            return true;
        }
    return false;
}

void DeviceTypesDialog::showSelected()
{
    const DeviceType* t = shownType(m_types, m_selected);
    if (!t)
        return;
    m_updating = true;
    const DeviceType* builtin = builtinOf(t->name);
    const bool own = std::any_of(m_types.begin(), m_types.end(), [&](const DeviceType& o) { return &o == t; });
    if (!builtin)
        m_origin->setText(tr("<b>%1</b> is this project's type.").arg(QString::fromStdString(t->name).toHtmlEscaped()));
    else if (own)
        m_origin->setText(tr("<b>%1</b> is built in; this project changes its figures (Restore Built-in takes the catalog's).")
                              .arg(QString::fromStdString(t->name).toHtmlEscaped()));
    else
        m_origin->setText(tr("<b>%1</b> is built in: a change of a figure is kept with this project.")
                              .arg(QString::fromStdString(t->name).toHtmlEscaped()));
    // A built-in type is changed by its name; a type of the project's own can be renamed.
    m_name->setText(QString::fromStdString(t->name));
    m_name->setReadOnly(builtin != nullptr);
    m_name->setCursorPosition(0);
    QStringList aliases;
    for (const auto& a : t->aliases)
        aliases << QString::fromStdString(a);
    m_aliases->setText(aliases.join(QStringLiteral("; ")));
    m_aliases->setCursorPosition(0);   // the first names, not the end of the last
    m_vendor->setText(QString::fromStdString(t->vendor));
    m_library->setCurrentText(QString::fromStdString(t->collective_library));
    m_bf16->setValue(t->bf16_tflops);
    m_fp8->setValue(t->fp8_tflops);
    m_efficiency->setValue(t->default_efficiency);
    m_memory->setValue(t->memory_gib);
    m_hbm->setValue(t->hbm_gbps);
    m_hbmEfficiency->setValue(t->hbm_efficiency);
    m_capability->setValue(t->compute_capability);
    m_linkKind->setText(QString::fromStdString(t->intra_link_kind));
    m_intra->setValue(t->intra_node_gbps);
    m_inter->setValue(t->inter_node_gbps);
    m_perNode->setValue(t->default_devices_per_node);
    m_notes->setText(QString::fromStdString(t->notes));
    m_notes->setCursorPosition(0);
    m_notes->setToolTip(QString::fromStdString(t->notes));
    m_remove->setText(builtin ? tr("&Restore Built-in") : tr("&Remove"));
    m_remove->setEnabled(own);
    m_updating = false;
}

DeviceType* DeviceTypesDialog::editableSelected()
{
    for (DeviceType& t : m_types)
        if (sameName(t.name, m_selected))
            return &t;
    const DeviceType* builtin = shownType({}, m_selected);
    if (!builtin)
        return nullptr;
    m_types.push_back(*builtin);
    return &m_types.back();
}

void DeviceTypesDialog::commitField()
{
    // A built-in type whose figures are back to the catalog's is no longer the project's.
    m_types.erase(std::remove_if(m_types.begin(), m_types.end(),
                                 [](const DeviceType& t) {
                                     const DeviceType* b = builtinOf(t.name);
                                     return b && b->name == t.name && sameFigures(*b, t);
                                 }),
                  m_types.end());
    fillList();
    showSelected();
    showCheck();
}

void DeviceTypesDialog::addType()
{
    const DeviceType* from = shownType(m_types, m_selected);
    DeviceType t = from ? *from : DeviceCatalog::builtin().types().front();
    const std::string base = t.name;
    for (int i = 2;; ++i) {
        t.name = base + " (" + std::to_string(i) + ")";
        if (!shownType(m_types, QString::fromStdString(t.name)) && !DeviceCatalog::builtin().find(t.name))
            break;
    }
    t.aliases.clear();   // the original's names stay its own
    t.sources.clear();
    t.notes = "Based on " + base + ".";
    m_types.push_back(t);
    m_selected = QString::fromStdString(t.name);
    fillList();
    showSelected();
    showCheck();
    m_name->setFocus();
    m_name->selectAll();
}

QString DeviceTypesDialog::removeSelected()
{
    auto it = std::find_if(m_types.begin(), m_types.end(), [&](const DeviceType& t) {
        return sameName(t.name, m_selected);
    });
    if (it == m_types.end())
        return tr("%1 is built in: it has no figures of this project's to remove.").arg(m_selected);
    if (!builtinOf(it->name)) {
        QStringList users;
        for (const Node& n : m_cluster.nodes)
            if (names(*it, n.device_type))
                users << QString::fromStdString(n.host.empty() ? "node " + std::to_string(n.id) : n.host);
        if (users.size() == 1)
            return tr("%1 is the type of %2; give it another type first.").arg(m_selected, users.front());
        if (!users.isEmpty())
            return tr("%1 is the type of %2; give them another type first.").arg(m_selected, users.join(QStringLiteral(", ")));
    }
    m_types.erase(it);
    if (!shownType(m_types, m_selected))
        m_selected = m_list->topLevelItemCount() > 0 ? m_list->topLevelItem(0)->data(0, kNameRole).toString() : QString();
    fillList();
    showSelected();
    showCheck();
    return {};
}

QString DeviceTypesDialog::importFile(const QString& path)
{
    try {
        const std::string file = path.toStdString();
        const std::string text = readTextFile(file);
        const std::string format = detectFormat(text, file);
        const std::vector<DeviceType> types = format == kDevicesFormat ? DeviceCatalog::fromJson(text, file).types()
                                                                       : readDocumentDevices(text, file);
        if (types.empty())
            return tr("%1 carries no device types.").arg(path);
        std::vector<DeviceType> merged = m_types;
        QString first;
        for (DeviceType t : types) {
            // "h800" is the catalog's H800; "NVIDIA H800", an alias, is refused below.
            asTheCatalogHasIt(t);
            if (first.isEmpty())
                first = QString::fromStdString(t.name);
            auto same = std::find_if(merged.begin(), merged.end(), [&](const DeviceType& o) {
                return sameName(o.name, t.name);
            });
            if (same != merged.end())
                *same = t;
            else
                merged.push_back(t);
        }
        catalogWith(merged, file);   // an alias that names another type is refused, naming the file
        m_types = std::move(merged);
        m_selected = first;   // as the list names it
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    commitField();
    return {};
}

QString DeviceTypesDialog::exportFile(const QString& path) const
{
    if (m_types.empty())
        return tr("The project has no device types of its own to export.");
    if (const QString why = check(); !why.isEmpty())
        return tr("Not exported: %1").arg(why);   // hapmoe --devices would refuse the file
    try {
        saveFileAtomically(path.toStdString(), DeviceCatalog(m_types).toJson());
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

QString DeviceTypesDialog::check() const
{
    // Each type as `hapmoe validate` reads one of a devices file, then the names across them
    // and against the built-in ones.
    for (const DeviceType& t : m_types) {
        if (t.name.empty())
            return tr("A type needs a name.");
        try {
            DeviceCatalog::fromJson(DeviceCatalog({t}).toJson(), "");
        } catch (const InputError& e) {
            QString where = QString::fromStdString(e.where());
            where.remove(QStringLiteral("devices[0]."));
            return tr("%1: %2: %3").arg(QString::fromStdString(t.name), where, QString::fromStdString(e.detail()));
        }
    }
    DeviceCatalog after;
    try {
        DeviceCatalog::fromJson(DeviceCatalog(m_types).toJson(), "");
        after = catalogWith(m_types);
    } catch (const InputError& e) {
        // "devices[2]" names the project's types in their order: the dialog names them.
        const auto nameOf = [this](const QString& index) {
            const std::size_t i = index.toULong();
            return i < m_types.size() ? QString::fromStdString(m_types[i].name) : index;
        };
        const QRegularExpression entry(QStringLiteral("devices\\[(\\d+)\\]"));
        QString detail = QString::fromStdString(e.detail());
        for (QRegularExpressionMatch m = entry.match(detail); m.hasMatch(); m = entry.match(detail))
            detail.replace(m.capturedStart(), m.capturedLength(), nameOf(m.captured(1)));
        const QRegularExpressionMatch where = entry.match(QString::fromStdString(e.where()));
        return where.hasMatch() ? tr("%1: %2").arg(nameOf(where.captured(1)), detail) : detail;
    }
    // A node's type stays a type: an alias taken away (or a type restored to the catalog's
    // aliases) would leave the nodes that name it by that alias with no type.
    for (const Node& n : m_cluster.nodes)
        if (m_document->catalog().find(n.device_type) && !after.find(n.device_type))
            return tr("%1 would have no type: no type is named %2 any more. Keep the name among the aliases, or give the "
                      "node another type first.")
                .arg(QString::fromStdString(n.host.empty() ? "node " + std::to_string(n.id) : n.host),
                     QString::fromStdString(n.device_type));
    return {};
}

void DeviceTypesDialog::showCheck()
{
    m_errorText = check();
    m_error->setText(m_errorText);
    m_error->setVisible(!m_errorText.isEmpty());
}

void DeviceTypesDialog::report(const QString& error)
{
    if (error.isEmpty())
        return;
    m_errorText = error;
    m_error->setText(error);
    m_error->show();
}

void DeviceTypesDialog::accept()
{
    // A field still being edited counts.
    if (QLineEdit* edit = qobject_cast<QLineEdit*>(focusWidget()))
        emit edit->editingFinished();
    showCheck();
    if (!m_errorText.isEmpty())
        return;
    // Against the types as the dialog opened them ("h800" read as H800): nothing edited, no step.
    const bool sameTypes = DeviceCatalog(m_types).toJson() == DeviceCatalog(m_initial).toJson();
    if (!sameTypes || writeCluster(m_cluster) != writeCluster(m_document->cluster())) {
        try {
            m_document->setDevices(m_types, m_cluster, tr("Edit Device Types"));
        } catch (const std::exception& e) {
            report(QString::fromUtf8(e.what()));
            return;
        }
    }
    QDialog::accept();
}

} // namespace hapmoe::ui
