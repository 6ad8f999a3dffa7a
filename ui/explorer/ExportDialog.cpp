#include "ExportDialog.h"

#include "Theme.h"

#include "io/Documents.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDialogButtonBox>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <exception>

namespace hapmoe::ui {

namespace {

// The launcher's hostfile: beside it, its name with the extension .hostfile.
QString hostfileBeside(const QString& launcher)
{
    const QFileInfo info(launcher);
    return info.dir().filePath(info.completeBaseName() + QStringLiteral(".hostfile"));
}

// The plan and its prediction as a plan file writes them: two rows of two searches may have
// one name and rank and differ.
std::string planText(const ExplorerPlan& entry)
{
    return writePlan(PlanDocument{ModelSpec{}, Cluster{}, entry.plan(), entry.prediction(), std::nullopt, {}});
}

} // namespace

ExportDialog::ExportDialog(QWidget* parent)
    : QDialog(parent)
    , m_format(new QComboBox(this))
    , m_tabs(new QTabWidget(this))
    , m_split(new QSplitter(Qt::Horizontal, this))
    , m_script(new QPlainTextEdit(this))
    , m_hostfile(new QPlainTextEdit(this))
    , m_checks(new QListWidget(this))
    , m_refusal(new QLabel(this))
    , m_status(new QLabel(this))
    , m_copy(new QPushButton(tr("Copy"), this))
    , m_saveLauncher(new QPushButton(tr("Save launcher…"), this))
    , m_savePlan(new QPushButton(tr("Save plan JSON…"), this))
{
    setObjectName(QStringLiteral("exportDialog"));
    setWindowTitle(tr("Export plan"));
    resize(980, 680);
    m_format->addItem(tr("Megatron-LM"), static_cast<int>(LauncherFormat::Megatron));
    m_format->addItem(tr("FlagScale (heterogeneous)"), static_cast<int>(LauncherFormat::FlagScale));
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    for (QPlainTextEdit* edit : {m_script, m_hostfile}) {
        edit->setReadOnly(true);
        edit->setFont(mono);
        edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    }
    m_tabs->addTab(m_script, tr("Launcher"));
    m_tabs->addTab(m_hostfile, tr("Hostfile / node order"));
    // Check labels wrap to the column's width (a list that wraps lays its items out again
    // when it is resized); the full text is also the item's tooltip.
    m_checks->setWordWrap(true);
    m_checks->setTextElideMode(Qt::ElideNone);
    // Icons of the text's height: one row per check, so that the whole list fits in an 800 px high window.
    const int smallIcon = style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, m_checks);
    m_checks->setIconSize(QSize(smallIcon, smallIcon));
    m_checks->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_checks->setObjectName(QStringLiteral("exportChecks"));
    m_refusal->setWordWrap(true);
    m_refusal->setTextFormat(Qt::RichText);
    m_refusal->setObjectName(QStringLiteral("exportRefusal"));
    m_status->setTextFormat(Qt::RichText);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Target:"), this));
    top->addWidget(m_format);
    top->addStretch(1);

    auto* checksBox = new QWidget(this);
    auto* checksLayout = new QVBoxLayout(checksBox);
    checksLayout->setContentsMargins(0, 0, 0, 0);
    checksLayout->addWidget(new QLabel(tr("<b>Checks of the target</b>"), checksBox));
    checksLayout->addWidget(m_checks, 1);
    m_split->addWidget(m_tabs);
    m_split->addWidget(checksBox);
    m_split->setChildrenCollapsible(false);
    // A larger dialog widens the launcher; the checks keep their column (fitToWindow).
    m_split->setStretchFactor(0, 1);
    m_split->setStretchFactor(1, 0);

    auto* buttons = new QDialogButtonBox(this);
    buttons->addButton(m_copy, QDialogButtonBox::ActionRole);
    buttons->addButton(m_saveLauncher, QDialogButtonBox::ActionRole);
    buttons->addButton(m_savePlan, QDialogButtonBox::ActionRole);
    buttons->addButton(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_refusal);
    layout->addWidget(m_split, 1);
    layout->addWidget(m_status);
    layout->addWidget(buttons);

    connect(m_format, &QComboBox::currentIndexChanged, this, [this] {
        m_scriptName.clear();   // another target's launcher: its own default name, not the last file's
        showStatus(QString(), false);   // what was saved or copied was the other target's launcher
        regenerate();
    });
    connect(m_copy, &QPushButton::clicked, this, [this] {
        QApplication::clipboard()->setText(m_script->toPlainText());
        showStatus(tr("Launcher copied to the clipboard."), false);
    });
    connect(m_saveLauncher, &QPushButton::clicked, this, &ExportDialog::onSaveLauncher);
    connect(m_savePlan, &QPushButton::clicked, this, &ExportDialog::onSavePlan);
    clearPlan();   // empty until the explorer gives it a plan
}

void ExportDialog::setPlan(const ExplorerContext& context, const ExplorerPlan& entry)
{
    const bool samePlan = m_hasPlan && entry.kind == m_entry.kind && entry.rank == m_entry.rank &&
                          entry.target == m_entry.target && planText(entry) == planText(m_entry);
    m_context = context;
    m_entry = entry;
    m_hasPlan = true;
    m_savePlan->setEnabled(true);
    setWindowTitle(tr("Export %1").arg(displayName(entry)));
    if (samePlan) {   // a refresh: the user's target and what was saved of this plan stay
        regenerate();
        return;
    }
    showStatus(QString(), false);
    const LauncherFormat preferred = entry.target == Target::FlagScale ? LauncherFormat::FlagScale : LauncherFormat::Megatron;
    if (format() != preferred)
        setFormat(preferred);   // regenerates
    else
        regenerate();
}

void ExportDialog::clearPlan()
{
    hide();
    m_hasPlan = false;
    m_entry = ExplorerPlan{};
    m_result = ExportResult{};
    m_lastSaved.clear();
    m_scriptName.clear();
    setWindowTitle(tr("Export plan"));
    m_script->setPlainText(tr("# No plan to export: run a search and select a plan."));
    m_script->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    m_hostfile->clear();
    m_checks->clear();
    showStatus(QString(), false);
    showVerdict();   // "No plan to export."
    m_copy->setEnabled(false);
    m_saveLauncher->setEnabled(false);
    m_savePlan->setEnabled(false);
}

QString ExportDialog::launcherName() const
{
    if (!m_scriptName.isEmpty())
        return m_scriptName;
    return format() == LauncherFormat::FlagScale ? QStringLiteral("run_flagscale.sh") : QStringLiteral("run_megatron.sh");
}

void ExportDialog::setOutdated(bool outdated)
{
    if (m_outdated == outdated)
        return;
    m_outdated = outdated;
    showVerdict();
}

void ExportDialog::setFormat(LauncherFormat f)
{
    m_format->setCurrentIndex(m_format->findData(static_cast<int>(f)));
}

LauncherFormat ExportDialog::format() const
{
    return static_cast<LauncherFormat>(m_format->currentData().toInt());
}

PlanDocument ExportDialog::document() const
{
    return planDocument(m_context, m_entry);
}

void ExportDialog::regenerate()
{
    if (!m_hasPlan)   // another target chosen in an empty dialog: nothing to generate
        return;
    ExportOptions options;
    options.format = format();
    // The project's device types: a type of its own has a vendor and a collective library too.
    options.catalog = m_context.catalog ? &*m_context.catalog : nullptr;
    options.original = m_context.script;
    // The usage comment names the file: the suggested name until it is saved under another.
    options.script_name = launcherName().toStdString();
    try {
        m_result = exportLauncher(document(), options);
    } catch (const std::exception& e) {
        m_result = ExportResult{};
        m_result.ok = false;
        m_result.refusal = e.what();
    }
    m_script->setPlainText(QString::fromStdString(m_result.script));
    m_hostfile->setPlainText(QString::fromStdString(m_result.hostfile));
    m_checks->clear();
    // Icons of exactly the list's icon size: an icon with several sizes may be placed a pixel
    // apart in its first and later paints, and screenshots must show the settled dialog.
    const QSize iconSize = m_checks->iconSize();
    const QIcon passed(style()->standardIcon(QStyle::SP_DialogApplyButton, nullptr, m_checks).pixmap(iconSize));
    const QIcon failed(style()->standardIcon(QStyle::SP_DialogCancelButton, nullptr, m_checks).pixmap(iconSize));
    for (const ExportCheck& c : m_result.checks) {
        const QString text = c.message.empty() ? QString::fromStdString(c.rule)
                                               : QStringLiteral("%1: %2").arg(QString::fromStdString(c.rule), QString::fromStdString(c.message));
        auto* item = new QListWidgetItem(c.ok ? passed : failed, text, m_checks);
        item->setToolTip(text);
    }
    if (!m_result.ok && m_result.script.empty())
        m_script->setPlainText(tr("# No launcher: %1").arg(QString::fromStdString(m_result.refusal)));
    showVerdict();
    // A script reads best unwrapped; a refusal is one long sentence.
    m_script->setLineWrapMode(m_result.ok ? QPlainTextEdit::NoWrap : QPlainTextEdit::WidgetWidth);
    m_saveLauncher->setEnabled(m_result.ok);
    m_copy->setEnabled(m_result.ok);
}

void ExportDialog::showVerdict()
{
    const QPalette pal = palette();
    if (!m_hasPlan) {
        m_refusal->setText(tr("No plan to export."));
    } else if (m_result.ok && m_outdated) {
        m_refusal->setText(statusHtml(Status::Problem, pal,
                                      tr("<b>Outdated:</b> this plan was computed before the last change to the model, "
                                         "cluster or profile, and the launcher runs the model and cluster as they were "
                                         "then. Run the search again to export the project as it is now.")));
    } else if (m_result.ok) {
        m_refusal->setText(statusHtml(Status::Ok, pal,
                                      tr("All checks pass: this launcher runs the plan on %1.")
                                          .arg(m_format->currentText().toHtmlEscaped())));
    } else {
        m_refusal->setText(statusHtml(Status::Problem, pal,
                                      tr("<b>Refused:</b> %1").arg(QString::fromStdString(m_result.refusal).toHtmlEscaped())));
    }
    for (int row = 0; row < m_checks->count() && row < int(m_result.checks.size()); ++row) {
        QListWidgetItem* item = m_checks->item(row);
        if (m_result.checks[std::size_t(row)].ok)
            item->setData(Qt::ForegroundRole, QVariant());   // the palette's text colour
        else
            item->setForeground(statusColor(Status::Problem, pal));
    }
    if (!m_statusText.isEmpty())
        showStatus(m_statusText, m_statusProblem);
}

void ExportDialog::showStatus(const QString& text, bool problem)
{
    m_statusText = text;
    m_statusProblem = problem;
    m_status->setText(problem ? statusHtml(Status::Problem, palette(), text.toHtmlEscaped()) : text.toHtmlEscaped());
}

void ExportDialog::changeEvent(QEvent* event)
{
    QDialog::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)   // the theme changed: status colours follow
        showVerdict();
}

QSize ExportDialog::sizeFor(const QSize& window) const
{
    const QSize share(window.width() * 85 / 100, window.height() * 85 / 100);
    return share.expandedTo(minimumSizeHint()).boundedTo(window);
}

void ExportDialog::fitToWindow(const QSize& window)
{
    resize(sizeFor(window));
    // The checks' column: as wide as its longest label (icon and margins included), at most
    // two fifths of the dialog, where the labels wrap; the launcher has the rest.
    const QFontMetrics fm = m_checks->fontMetrics();
    int longest = fm.horizontalAdvance(tr("Checks of the target"));
    for (int row = 0; row < m_checks->count(); ++row)
        longest = std::max(longest, fm.horizontalAdvance(m_checks->item(row)->text()));
    const int iconAndMargins = m_checks->iconSize().width() + 3 * fm.averageCharWidth() +
                               style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 2 * m_checks->frameWidth();
    const int total = std::max(0, width() - layout()->contentsMargins().left() - layout()->contentsMargins().right() -
                                      m_split->handleWidth());
    const int checks = std::min(longest + iconAndMargins, total * 2 / 5);
    m_split->setSizes({total - checks, checks});
}

void ExportDialog::setVisible(bool visible)
{
    // Each time it opens, at its size for the window it belongs to.
    if (visible && !isVisible() && parentWidget())
        fitToWindow(parentWidget()->window()->size());
    QDialog::setVisible(visible);
}

QString ExportDialog::saveLauncher(const QString& path)
{
    if (!m_hasPlan)
        return tr("No plan to export.");
    if (const QString name = QFileInfo(path).fileName(); name != m_scriptName) {
        m_scriptName = name;
        regenerate();   // the usage comment runs it by the name it is saved under
    }
    if (!m_result.ok)
        return tr("The plan cannot run on this target: %1").arg(QString::fromStdString(m_result.refusal));
    try {
        // The launcher and its hostfile together or neither: a launcher naming a hostfile that
        // was never written would fail on the cluster.
        std::vector<std::pair<std::string, std::string>> files{{path.toStdString(), m_result.script}};
        if (!m_result.hostfile.empty())
            files.emplace_back(hostfileBeside(path).toStdString(), m_result.hostfile);
        saveFilesAllOrNothing(files);
        QFile::setPermissions(path, QFile::permissions(path) | QFileDevice::ExeOwner | QFileDevice::ExeGroup | QFileDevice::ExeOther);
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

QString ExportDialog::savePlanJson(const QString& path) const
{
    if (!m_hasPlan)
        return tr("No plan to export.");
    try {
        saveFileAtomically(path.toStdString(), writePlan(document()));
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

QString ExportDialog::askFileName(const QString& title, const QString& suggested, const QString& filter)
{
    // A Qt dialog (not the platform's) so that it behaves the same everywhere, offscreen included.
    QFileDialog dialog(this, title, m_folder.isEmpty() ? suggested : QDir(m_folder).filePath(suggested), filter);
    dialog.setObjectName(QStringLiteral("exportFileDialog"));
    dialog.setAcceptMode(QFileDialog::AcceptSave);
    dialog.setOption(QFileDialog::DontUseNativeDialog, true);
    dialog.selectFile(suggested);
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty())
        return {};
    return dialog.selectedFiles().front();
}

void ExportDialog::onSaveLauncher()
{
    const QString path = askFileName(tr("Save launcher"), launcherName(),
                                     tr("Shell script (*.sh);;All files (*)"));
    if (path.isEmpty())
        return;

    const QString error = saveLauncher(path);
    m_lastSaved = error.isEmpty() ? path : QString();
    const QString saved = m_result.hostfile.empty() ? tr("Saved %1").arg(path)
                                                    : tr("Saved %1 and its hostfile %2").arg(path, hostfileBeside(path));
    showStatus(error.isEmpty() ? saved : error, !error.isEmpty());
}

void ExportDialog::onSavePlan()
{
    const QString path = askFileName(tr("Save plan"), QStringLiteral("plan.json"), tr("Plan JSON (*.json);;All files (*)"));
    if (path.isEmpty())
        return;
    const QString error = savePlanJson(path);
    m_lastSaved = error.isEmpty() ? path : QString();
    showStatus(error.isEmpty() ? tr("Saved %1").arg(path) : error, !error.isEmpty());
}

} // namespace hapmoe::ui
