#include "SearchPanel.h"

#include "ExplorerPlan.h"
#include "ExplorerStyle.h"
#include "ProjectDocument.h"
#include "SearchRunner.h"
#include "SpinBoxRangeCheck.h"
#include "Theme.h"

#include "hardware/ClusterTopology.h"
#include "io/Documents.h"
#include "megatron/ScriptImport.h"
#include "plan/PlanRelation.h"

#include <QAbstractScrollArea>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStyle>
#include <QThread>
#include <QToolButton>
#include <QTreeWidget>
#include <QResizeEvent>
#include <QShowEvent>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <utility>

namespace hapmoe::ui {

namespace {

// An iteration time as the plan table shows it (three decimals in seconds, one in
// milliseconds below a second): plans a few milliseconds apart differ.
QString seconds(double s)
{
    if (s <= 0)
        return QStringLiteral("\u2013");
    return style::formatSeconds(s);
}

// How long the search ran.
QString elapsed(double s)
{
    return s < 1 ? QStringLiteral("%1 ms").arg(s * 1000, 0, 'f', 0) : QStringLiteral("%1 s").arg(s, 0, 'f', s < 100 ? 3 : 1);
}

QString count(long long n) { return QLocale(QLocale::English).toString(n); }

// What `box` holds, as the project's value (the box shows it times `scale`): the project's
// own value while the box still shows it. A value finer than the box shows (a headroom of
// 0.1234, an eta of 0.005) stays as it is until the box itself is changed: another
// setting's change must not round it.
double boxValue(const QDoubleSpinBox* box, double stored, double scale = 1)
{
    const double step = std::pow(10.0, box->decimals());
    const double shown = std::clamp(std::round(stored * scale * step) / step, box->minimum(), box->maximum());
    return std::abs(box->value() - shown) > 1e-9 ? box->value() / scale : stored;
}

QString shape(const Plan& plan, bool experts)
{
    // Pipeline depth and the knobs of the stages, compact: "PP2 TP1 DP8 EP8" (CP and ETP
    // only when above 1; no expert knobs for a dense model, as the explorer); "sizes vary"
    // when the stages' sizes differ ("mixed" would read as mixed device types); the first mesh's micro-batch size when above 1 ("MBS2").
    if (plan.stages.empty())
        return {};
    const StagePlan& s = plan.stages.front();
    bool uniform = true;
    for (const auto& st : plan.stages)
        uniform = uniform && st.tp == s.tp && st.cp == s.cp && st.dp == s.dp &&
                  (!experts || (st.ep == s.ep && st.etp == s.etp));
    const QString mbs = s.micro_batch_size > 1 ? QStringLiteral(" MBS%1").arg(s.micro_batch_size) : QString();
    QString text = QStringLiteral("PP%1").arg(plan.pp());
    if (plan.vpp > 1)
        text += QStringLiteral(" VPP%1").arg(plan.vpp);
    if (!uniform)
        return text + QStringLiteral(" sizes vary") + mbs;
    text += QStringLiteral(" TP%1").arg(s.tp);
    if (s.cp > 1)
        text += QStringLiteral(" CP%1").arg(s.cp);
    text += QStringLiteral(" DP%1").arg(s.dp);
    if (experts)
        text += QStringLiteral(" EP%1").arg(s.ep);
    if (experts && s.etp > 1)
        text += QStringLiteral(" ETP%1").arg(s.etp);
    return text + mbs;
}

// The shape in full, a line per stage: what "sizes vary" stands for.
QString shapeToolTip(const Plan& plan, bool experts)
{
    QStringList lines;
    for (size_t i = 0; i < plan.stages.size(); ++i) {
        const StagePlan& st = plan.stages[i];
        lines << QStringLiteral("S%1 %2, %3 layers: %4")
                     .arg(i)
                     .arg(QString::fromStdString(st.device_type))
                     .arg(st.num_layers)
                     .arg(style::knobsLabel(st, experts));
    }
    return lines.join(QLatin1Char('\n'));
}

} // namespace

SearchPanel::SearchPanel(ProjectDocument* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_runner(new SearchRunner(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 8, 8, 8);

    auto* settings = new QGroupBox(tr("Search settings"));
    m_settingsBox = settings;
    auto* form = new QGridLayout(settings);
    form->setHorizontalSpacing(8);
    m_target = new QComboBox;
    m_target->setObjectName(QStringLiteral("searchTarget"));
    m_target->addItem(tr("Any"), int(Target::Any));
    m_target->setToolTip(tr("Any: the best target the cluster allows"));
    m_target->addItem(QStringLiteral("Megatron-LM"), int(Target::Megatron));
    m_target->addItem(QStringLiteral("FlagScale"), int(Target::FlagScale));
    m_algorithm = new QComboBox;
    m_algorithm->setObjectName(QStringLiteral("searchAlgorithm"));
    m_algorithm->addItem(tr("HS-DP"), int(Algorithm::HsDp));
    m_algorithm->addItem(tr("Exhaustive (oracle)"), int(Algorithm::Exhaustive));
    m_topK = new QSpinBox;
    m_topK->setObjectName(QStringLiteral("searchTopK"));
    m_topK->setRange(1, 50);
    m_delta = new QDoubleSpinBox;
    m_delta->setObjectName(QStringLiteral("searchDelta"));
    // The ranges the project reader takes (core/io/Documents.cpp, readProject): delta in
    // [0, 1), eta above 0 and at most 1e6; at two decimals, 0.99 and 0.01 are the ends.
    m_delta->setRange(0, 0.99);
    m_delta->setSingleStep(0.05);
    m_delta->setToolTip(tr("Load-balance tolerance \u03b4 (paper section 3.4)"));
    m_eta = new QDoubleSpinBox;
    m_eta->setObjectName(QStringLiteral("searchEta"));
    m_eta->setRange(0.01, 1e6);
    m_eta->setSingleStep(0.1);
    m_eta->setToolTip(tr("Heterogeneous communication threshold \u03b7 (paper section 3.4)"));
    m_timeLimit = new QDoubleSpinBox;
    m_timeLimit->setObjectName(QStringLiteral("searchTimeLimit"));
    m_timeLimit->setRange(0, 36000);
    m_timeLimit->setDecimals(0);
    m_timeLimit->setSuffix(tr(" s"));
    m_timeLimit->setSpecialValueText(tr("none"));
    m_exact = new QCheckBox(tr("Exact (no pruning)"));
    m_exact->setToolTip(tr("Search without the load-balance and communication prunings: the best plan and "
                           "the Top K alternatives are then exact, at a cost in time on large clusters. "
                           "Unticked, the pruned search is followed by an exact check with a budget of work (2-4 s on two cores for the "
                           "paper's clusters, longer for clusters of more device types, within the time limit), "
                           "which makes the plans exact when it finishes (the status line says whether it did)."));
    m_microBatch = new QCheckBox(tr("Search micro-batch size"));
    m_microBatch->setObjectName(QStringLiteral("searchMicroBatch"));
    m_microBatch->setToolTip(tr("Search each of the micro-batch sizes 1, 2, 4, 8 and the model's own that divides the global "
                                "batch, and keep the fastest plans over them; the baselines are the fastest over them too. "
                                "Each size is a search of its own, so the search takes up to four times as long."));
    m_offload = new QComboBox;
    m_offload->setObjectName(QStringLiteral("searchOffload"));
    m_offload->addItem(tr("If needed"), int(OptimizerOffload::IfNeeded));
    m_offload->addItem(tr("Never"), int(OptimizerOffload::Never));
    m_offload->addItem(tr("Always"), int(OptimizerOffload::Always));
    m_offload->addItem(tr("Fastest"), int(OptimizerOffload::Fastest));
    m_offload->setToolTip(tr("Optimizer states and their Adam step in host memory (Megatron-Core "
                             "--optimizer-cpu-offload). If needed: only when no plan fits without it. "
                             "Fastest: the devices and a quarter, half and all offloaded are searched, "
                             "each only for plans faster than the Top K-th so far, and the fastest plans are kept."));
    m_maxVpp = new QSpinBox;
    m_maxVpp->setObjectName(QStringLiteral("searchMaxVpp"));
    m_maxVpp->setRange(1, kMaxVpp);
    m_maxVpp->setSpecialValueText(tr("1 (plain)"));
    m_maxVpp->setToolTip(tr("Megatron-LM's interleaved 1F1B: each plan Megatron-LM can run (PP of 2 or more, micro-batches a "
                            "multiple of PP) is also tried at 2 up to this many virtual stages per pipeline rank, with the least "
                            "recompute that fits, and kept in its fastest form. 1: plain 1F1B only, as the paper searches. "
                            "FlagScale runs no virtual pipeline."));
    m_headroom = new QDoubleSpinBox;
    m_headroom->setObjectName(QStringLiteral("searchHeadroom"));
    m_headroom->setRange(0, 50);
    m_headroom->setDecimals(1);
    m_headroom->setSuffix(tr(" %"));
    m_headroom->setToolTip(tr("Memory every device keeps free: a plan fits when each device's total is at most the rest "
                              "(for the caching allocator's fragmentation; the 2 GiB runtime overhead is counted apart)"));
    for (QAbstractSpinBox* spin : std::initializer_list<QAbstractSpinBox*>{m_topK, m_delta, m_eta, m_timeLimit, m_maxVpp, m_headroom})
        spin->setKeyboardTracking(false);
    m_settingsForm = form;
    const auto label = [](const QString& text, QWidget* field) {
        auto* l = new QLabel(text);
        l->setToolTip(field->toolTip());
        return l;
    };
    m_settingPairs = {{label(tr("Target:"), m_target), m_target},
                      {label(tr("Algorithm:"), m_algorithm), m_algorithm},
                      {label(tr("Top K:"), m_topK), m_topK},
                      {label(tr("Time limit:"), m_timeLimit), m_timeLimit},
                      {label(tr("\u03b4 (balance):"), m_delta), m_delta},
                      {label(tr("\u03b7 (comm.):"), m_eta), m_eta},
                      {nullptr, m_exact},
                      {nullptr, m_microBatch},
                      {label(tr("Offload:"), m_offload), m_offload},
                      {label(tr("Max VPP:"), m_maxVpp), m_maxVpp},
                      {label(tr("Keep free:"), m_headroom), m_headroom}};
    // Two pairs a row where the dock is wide enough for them, one pair a row where it is not
    // (a small screen): the box asks only for the width of one pair, and resizeEvent picks.
    measureSettings();   // again once the widgets have their style (showEvent)
    layout->addWidget(settings);
    // Under the settings, the reason a value typed into one of them was not taken.
    m_rangeCheck = new SpinBoxRangeCheck(this, QStringLiteral("searchInputMessage"));
    layout->addWidget(m_rangeCheck->messageLabel());
    const std::pair<QAbstractSpinBox*, QString> checked[] = {{m_topK, tr("Top K")},
                                                              {m_timeLimit, tr("Time limit")},
                                                              {m_delta, tr("\u03b4 (balance)")},
                                                              {m_eta, tr("\u03b7 (comm.)")},
                                                              {m_maxVpp, tr("Max VPP")},
                                                              {m_headroom, tr("Keep free")}};
    for (const auto& [box, field] : checked)
        m_rangeCheck->watch(box, field);
    connect(m_rangeCheck, &SpinBoxRangeCheck::rejected, this,
            [this](QAbstractSpinBox*, const QString& message) { emit inputRejected(message); });

    // The measured profile the search costs plans with, and the buttons that change it.
    auto* profileRow = new QHBoxLayout;
    m_profile = new QLabel;
    m_profile->setObjectName(QStringLiteral("searchProfile"));
    m_profile->setWordWrap(true);
    m_profile->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // One button with the two actions in its menu: two buttons would leave the label a third
    // of a narrow dock, in three lines.
    m_profileButton = new QPushButton;
    m_profileButton->setObjectName(QStringLiteral("profileButton"));
    m_profileButton->setText(tr("Change"));
    m_profileButton->setToolTip(tr("Load a measured profile, or go back to the analytic defaults"));
    m_profileButton->hide();   // until the main window gives it its actions
    profileRow->addWidget(m_profile, 1);
    profileRow->addWidget(m_profileButton, 0, Qt::AlignTop);
    layout->addLayout(profileRow);

    auto* buttons = new QHBoxLayout;
    m_run = new QPushButton(studioIcon(QStringLiteral("run")), tr("Run search"));
    m_run->setObjectName(QStringLiteral("runSearch"));
    m_run->setDefault(true);
    m_cancel = new QPushButton(studioIcon(QStringLiteral("stop")), tr("Cancel"));
    m_cancel->setObjectName(QStringLiteral("cancelSearch"));
    m_cancel->setEnabled(false);
    buttons->addWidget(m_run);
    buttons->addWidget(m_cancel);
    buttons->addStretch(1);
    layout->addLayout(buttons);

    m_progress = new QProgressBar;
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setFormat(QStringLiteral("%p %"));
    layout->addWidget(m_progress);

    auto* live = new QFormLayout;
    m_live = live;
    live->setLabelAlignment(Qt::AlignRight);
    m_states = new QLabel(QStringLiteral("\u2013"));
    m_states->setObjectName(QStringLiteral("searchStates"));
    m_pruned = new QLabel(QStringLiteral("\u2013"));
    m_pruned->setWordWrap(true);
    m_best = new QLabel(QStringLiteral("\u2013"));
    m_best->setObjectName(QStringLiteral("searchBest"));
    live->addRow(tr("States explored:"), m_states);
    live->addRow(tr("Options pruned:"), m_pruned);
    // The counters follow the order in which the threads share their best plan so far, which
    // changes from run to run; the plans do not (docs/search.md section 5).
    const QString varies = tr("It varies by a few per cent from run to run: the search's threads share their best plan so "
                              "far in a different order each time. The plans found are the same.");
    m_states->setToolTip(tr("Partial plans the search extended. %1").arg(varies));
    m_pruned->setToolTip(tr("Choices of a stage rejected before they became states (HS-DP's prunings, paper section 3.4). %1")
                             .arg(varies));
    live->addRow(tr("Best iteration:"), m_best);
    layout->addLayout(live);
    m_status = new QLabel;
    m_status->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("searchStatus"));
    layout->addWidget(m_status);
    // The notes of a finished search (the devices left out, how the imported script's own
    // run differs from the comparison, ...): folded under one line, so that they do not push
    // the ranked list out of a small window; the line says how many there are.
    m_notesToggle = new QToolButton;
    m_notesToggle->setObjectName(QStringLiteral("searchNotesToggle"));
    m_notesToggle->setCheckable(true);
    m_notesToggle->setAutoRaise(true);
    m_notesToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_notesToggle->setArrowType(Qt::RightArrow);
    m_notesToggle->hide();
    layout->addWidget(m_notesToggle);
    m_notes = new QLabel;
    m_notes->setObjectName(QStringLiteral("searchNotes"));
    m_notes->setWordWrap(true);
    m_notes->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notes->hide();
    layout->addWidget(m_notes);
    connect(m_notesToggle, &QToolButton::toggled, this, [this](bool open) {
        m_notesOpen = open;
        m_notesToggle->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
        m_notes->setVisible(open && !m_notesToggle->isHidden());
    });

    m_results = new QTreeWidget;
    m_results->setObjectName(QStringLiteral("searchResults"));
    m_results->setRootIsDecorated(false);
    m_results->setAlternatingRowColors(true);
    m_results->setUniformRowHeights(true);
    m_results->setHeaderLabels({tr("#"), tr("Plan"), tr("Iteration"), tr("Tokens/s"), tr("MFU"), tr("Shape")});
    // Sized by fitResultColumns() to the dock's width.
    m_results->header()->setStretchLastSection(false);
    m_results->header()->setSectionResizeMode(QHeaderView::Fixed);
    m_results->setTextElideMode(Qt::ElideRight);
    {
        // Never so narrow that a plan's rank, name, iteration or shape is cut (Tokens/s and
        // MFU give way first): the widest of each a search lists, with the delegate's margins.
        const QFontMetrics fm(m_results->font());
        int need = 2 * m_results->frameWidth();
        for (const QString& sample : {QStringLiteral("base"), QStringLiteral("HS-DP #10"), tr("Iteration"),
                                      QStringLiteral("PP8 TP8 DP16 EP8")})
            need += fm.horizontalAdvance(sample) + 10;
        m_results->setMinimumWidth(need);
    }
    m_results->viewport()->installEventFilter(this);
    m_outdated = new QLabel;
    m_outdated->setWordWrap(true);
    m_outdated->setObjectName(QStringLiteral("searchOutdated"));
    m_outdated->hide();
    layout->addWidget(m_outdated);
    layout->addWidget(m_results, 1);

    connect(m_run, &QPushButton::clicked, this, &SearchPanel::run);
    connect(m_cancel, &QPushButton::clicked, this, &SearchPanel::cancel);
    connect(m_runner, &SearchRunner::progressChanged, this, &SearchPanel::showProgress);
    connect(m_runner, &SearchRunner::finished, this, &SearchPanel::showResult);
    connect(m_runner, &SearchRunner::failed, this, [this](const QString& message) {
        setRunning(false);
        if (!std::exchange(m_abandoned, false))
            showStatus(statusHtml(Status::Problem, palette(), message.toHtmlEscaped()));
        emit searchStopped();
    });
    // A refusal ("Cannot search: ... appears on more than one node") describes the project as
    // it was: it goes once the model or cluster changes.
    for (auto signal : {&ProjectDocument::clusterChanged, &ProjectDocument::modelChanged})
        connect(document, signal, this, [this] {
            if (std::exchange(m_refusalShown, false) && !m_runner->isRunning())
                showStatus({});
        });
    connect(document, &ProjectDocument::projectReset, this, &SearchPanel::abandon);
    connect(m_results, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
        if (item)
            emit planActivated(m_results->indexOfTopLevelItem(item));
    });
    connect(m_target, &QComboBox::currentIndexChanged, this, &SearchPanel::commitSettings);
    connect(m_algorithm, &QComboBox::currentIndexChanged, this, &SearchPanel::commitSettings);
    connect(m_topK, &QSpinBox::valueChanged, this, &SearchPanel::commitSettings);
    connect(m_delta, &QDoubleSpinBox::valueChanged, this, &SearchPanel::commitSettings);
    connect(m_eta, &QDoubleSpinBox::valueChanged, this, &SearchPanel::commitSettings);
    connect(m_timeLimit, &QDoubleSpinBox::valueChanged, this, &SearchPanel::commitSettings);
    connect(m_exact, &QCheckBox::toggled, this, &SearchPanel::commitSettings);
    connect(m_microBatch, &QCheckBox::toggled, this, &SearchPanel::commitSettings);
    connect(m_offload, &QComboBox::currentIndexChanged, this, &SearchPanel::commitSettings);
    connect(m_maxVpp, &QSpinBox::valueChanged, this, &SearchPanel::commitSettings);
    connect(m_headroom, &QDoubleSpinBox::valueChanged, this, &SearchPanel::commitSettings);
    connect(document, &ProjectDocument::searchSettingsChanged, this, &SearchPanel::refreshSettings);
    connect(document, &ProjectDocument::profileChanged, this, &SearchPanel::refreshProfile);
    refreshSettings();
    refreshProfile();
}

void SearchPanel::setProfileActions(QAction* load, QAction* clear)
{
    auto* menu = new QMenu(m_profileButton);
    menu->addAction(load);
    menu->addAction(clear);
    m_profileButton->setMenu(menu);
    m_profileButton->show();
}

QString SearchPanel::profileSummary(const std::optional<Profile>& profile, const std::string& file)
{
    if (!profile)
        return tr("Analytic defaults (no profile)");
    const QString name = profile->name.empty() ? tr("unnamed") : QString::fromStdString(profile->name);
    return file.empty() ? tr("Profile: %1 (saved in the project)").arg(name)
                        : tr("Profile: %1 (%2)").arg(name, QFileInfo(QString::fromStdString(file)).fileName());
}

void SearchPanel::refreshProfile()
{
    const Project& project = m_document->project();
    m_profile->setText(profileSummary(project.profile, project.profile_file));
    if (!project.profile) {
        m_profile->setToolTip(tr("Plans are costed with the device catalog and the analytic formulas. "
                                 "Search > Load Profile\u2026 reads measured tables (a hapmoe.profile file)."));
        return;
    }
    const Profile& p = *project.profile;
    QStringList lines;
    if (!project.profile_file.empty())
        lines << tr("Loaded from %1; the project keeps a copy.").arg(QString::fromStdString(project.profile_file));
    if (!p.source.empty())
        lines << QString::fromStdString(p.source);
    lines << tr("%1 compute, %2 collective, %3 memory entries")
                 .arg(p.compute.size())
                 .arg(p.collectives.size())
                 .arg(p.memory.size());
    for (const auto& [type, efficiency] : p.device_efficiency)
        lines << tr("%1: %2 % of peak").arg(QString::fromStdString(type)).arg(100 * efficiency, 0, 'f', 1);
    if (p.router_imbalance)
        lines << tr("Router imbalance \u03c1 %1 (calibrated)").arg(*p.router_imbalance, 0, 'f', 2);
    m_profile->setToolTip(lines.join(QLatin1Char('\n')));
}

SearchPanel::~SearchPanel() = default;   // the runner (a child) cancels and waits

bool SearchPanel::isRunning() const { return m_runner->isRunning(); }

QString SearchPanel::inputMessage() const { return m_rangeCheck->shownMessage(); }

void SearchPanel::refreshSettings()
{
    m_updating = true;
    const SearchSettings& s = m_document->searchSettings();
    m_target->setCurrentIndex(m_target->findData(int(s.target)));
    m_algorithm->setCurrentIndex(std::max(0, m_algorithm->findData(int(s.algorithm))));
    m_topK->setValue(s.top_k);
    m_delta->setValue(s.delta);
    m_eta->setValue(s.eta);
    m_timeLimit->setValue(s.time_limit_s);
    m_exact->setChecked(s.exact);
    m_microBatch->setChecked(s.search_micro_batch);
    m_offload->setCurrentIndex(std::max(0, m_offload->findData(int(s.optimizer_offload))));
    m_headroom->setValue(s.memory_headroom * 100);
    m_maxVpp->setValue(s.max_vpp);
    m_updating = false;
    // A value was taken, or an undo changed the settings: what a field kept is no longer news.
    m_rangeCheck->showMessage(QString());
}

void SearchPanel::commitSettings()
{
    if (m_updating)
        return;
    SearchSettings s = m_document->searchSettings();
    s.target = Target(m_target->currentData().toInt());
    s.algorithm = Algorithm(m_algorithm->currentData().toInt());
    s.top_k = m_topK->value();
    s.delta = boxValue(m_delta, s.delta);
    s.eta = boxValue(m_eta, s.eta);
    s.time_limit_s = boxValue(m_timeLimit, s.time_limit_s);
    s.exact = m_exact->isChecked();
    s.search_micro_batch = m_microBatch->isChecked();
    s.optimizer_offload = OptimizerOffload(m_offload->currentData().toInt());
    s.memory_headroom = boxValue(m_headroom, s.memory_headroom, 100);
    s.max_vpp = m_maxVpp->value();
    m_document->setSearchSettings(s);
}

SearchOptions SearchPanel::currentOptions() const
{
    const SearchSettings& s = m_document->searchSettings();
    SearchOptions o;
    o.algorithm = s.algorithm;
    o.target = s.target;
    o.exact = s.exact;
    o.delta = s.delta;
    o.eta = s.eta;
    o.top_k = s.top_k;
    o.time_limit_s = s.time_limit_s;
    o.optimizer_offload = s.optimizer_offload;
    o.max_vpp = s.max_vpp;
    if (s.search_micro_batch)
        o.micro_batch_sizes = microBatchCandidates(m_document->project().model.training.global_batch_size,
                                                   m_document->project().model.training.micro_batch_size);
    // Every core, as `hapmoe plan` uses: the GUI thread only paints the progress, and the
    // search's threads run at a lower priority (SearchRunner), so the window stays responsive.
    o.threads = std::max(1, QThread::idealThreadCount());
    o.baselines = true;
    return o;
}

QString SearchPanel::checkStatus(const SearchResult& r)
{
    if (r.plans.empty())
        return {};
    QStringList parts;
    const QString took = elapsed(r.exact_check_s);
    switch (r.exact_check) {
    case ExactCheck::Finished:
        if (r.pruned_best_s <= 0)
            parts << tr("exact: the check (%1) found nothing faster").arg(took);
        else if (!r.offload_needed && r.plans.front().prediction.iteration_time_s >= r.pruned_best_s)
            parts << tr("the exact check (%1) found plans with the optimizer on the devices (the pruned search's best "
                        "offloaded it: %2 s)")
                         .arg(took)
                         .arg(r.pruned_best_s, 0, 'f', 3);
        else
            parts << tr("the exact check (%1) found a faster plan than the pruned search's %2 s").arg(took).arg(r.pruned_best_s, 0, 'f', 3);
        break;
    case ExactCheck::WorkBudget:
    case ExactCheck::TimeLimit:
        if (r.exact_check_best)
            parts << (r.exact_check == ExactCheck::WorkBudget
                          ? tr("the exact check found the best plan, then stopped at its work budget before the alternatives")
                          : tr("the exact check found the best plan, then stopped at the time limit before the alternatives"))
                    + (r.plans.size() == 1 ? tr(": #1 is the exact best, the next are not known (tick Exact to find them)")
                                           : tr(": #1 is the exact best, the others are not known to be the next best"));
        else
            parts << (r.exact_check == ExactCheck::WorkBudget ? tr("the exact check stopped at its work budget")
                                                              : tr("the exact check stopped at the time limit"))
                    + tr(", so a faster plan may exist (tick Exact to search without the prunings)");
        break;
    case ExactCheck::NotTriedWork:
    case ExactCheck::NotTriedTime:
        parts << (r.exact_check == ExactCheck::NotTriedWork
                      ? tr("the exact check was not tried (the pruned search alone did more work than its budget)")
                      : tr("the exact check was not tried (the time limit was near)"))
                + tr(", so a faster plan may exist");
        break;
    case ExactCheck::Cancelled:   // the status already says the search was cancelled
    case ExactCheck::Off: break;
    }
    if (r.max_vpp > 1) {
        const auto interleaved = std::count_if(r.plans.begin(), r.plans.end(), [](const RankedPlan& p) { return p.plain_time_s > 0; });
        QString text = r.plans.size() == 1
            ? (interleaved ? tr("the plan is faster interleaved (VPP %1)").arg(r.plans.front().plan.vpp)
                           : tr("the plan is not faster interleaved (tried up to VPP %1)").arg(r.max_vpp))
            : interleaved == 0 ? tr("no plan is faster interleaved (tried up to VPP %1)").arg(r.max_vpp)
            : interleaved == 1 ? tr("1 of the %1 plans is faster interleaved (tried up to VPP %2)").arg(r.plans.size()).arg(r.max_vpp)
                               : tr("%1 of the %2 plans are faster interleaved (tried up to VPP %3)").arg(interleaved).arg(r.plans.size()).arg(r.max_vpp);
        if (r.interleave_cut != InterleaveCut::No && r.interleave_tried == 0)
            text = r.interleave_cut == InterleaveCut::Cancelled ? tr("the cancel stopped the interleaving pass before it tried a plan")
                                                                : tr("the time limit stopped the interleaving pass before it tried a plan");
        else if (r.interleave_cut != InterleaveCut::No)
            text += r.interleave_cut == InterleaveCut::Cancelled ? tr(", though the cancel stopped it before it had tried every plan")
                                                                 : tr(", though the time limit stopped it before it had tried every plan");
        else if (r.exact_check == ExactCheck::Finished && interleaved > 0)
            text += tr("; the exact check ranks the plans under plain 1F1B");
        parts << text;
    }
    const bool fastest = r.optimizer_offload == OptimizerOffload::Fastest;
    if (r.offload_needed && !fastest)
        parts << tr("the search found no plan with the optimizer on the devices, so these keep it in host memory");
    else if (fastest && r.plans.front().plan.optimizer_offload_fraction > 0)
        parts << tr("%1 %2 of the optimizer in host memory gives the fastest plan")
                     .arg(r.plans.front().plan.optimizer_offload_fraction * 100, 0, 'f', 0)
                     .arg(QStringLiteral("%"));
    return parts.join(QStringLiteral("; "));
}

QString SearchPanel::baselineStatus(const SearchResult& r)
{
    // The status compares the best plan with the uniform baseline either way; where there is
    // nothing to compare with, it says why rather than nothing.
    if (r.plans.empty() || r.algorithm == Algorithm::Uniform)
        return {};
    const double plan = r.plans.front().prediction.iteration_time_s;
    if (!r.uniform_baseline) {
        if (r.cancelled || r.timed_out)
            return tr("no comparison with the uniform baseline: the search stopped before it ran");
        return tr("no comparison with the uniform baseline: no uniform split fits this cluster");
    }
    const Prediction& base = r.uniform_baseline->prediction;
    if (!base.feasible)
        return base.infeasible_reason.empty()
            ? tr("no comparison with the uniform baseline: it does not fit")
            : tr("no comparison with the uniform baseline: it does not fit (%1)").arg(QString::fromStdString(base.infeasible_reason));
    if (plan <= 0 || base.iteration_time_s <= 0)
        return {};
    return baselineComparison(plan, base.iteration_time_s);
}

QString SearchPanel::baselineComparison(double planSeconds, double baselineSeconds)
{
    // Two decimals, as the status writes the factor: within 0.5 % the two are level.
    if (baselineSeconds >= planSeconds * 1.005)
        return tr("%1\u00d7 faster than the uniform baseline").arg(baselineSeconds / planSeconds, 0, 'f', 2);
    if (planSeconds >= baselineSeconds * 1.005)
        return tr("the uniform baseline is %1\u00d7 faster").arg(planSeconds / baselineSeconds, 0, 'f', 2);
    return tr("as fast as the uniform baseline");
}

QString SearchPanel::currentStatus(const SearchResult& r)
{
    // The best plan against the configuration run today, per sequence where the two run
    // different global batches (SearchResult::current_note); when the current one is as fast
    // or faster, core's note says so and what to do.
    if (r.plans.empty() || !r.current || !r.current->prediction.feasible)
        return {};
    if (const std::string note = currentConfigurationNote(r); !note.empty())
        return QString::fromStdString(note);
    const double best = secondsPerSequence(r.plans.front()), current = secondsPerSequence(*r.current);
    if (best <= 0 || current <= best)
        return {};
    const QString perSequence = r.current->plan.global_batch_size != r.plans.front().plan.global_batch_size
        ? tr(" per sequence") : QString();
    // Two decimals, as the baseline's factor: below 1.005 the gain is said in per cent, and
    // below 0.05 %, which rounds to none, the two are level.
    if (current >= best * 1.005)
        return tr("%1\u00d7 faster than the current configuration%2").arg(current / best, 0, 'f', 2).arg(perSequence);
    if (current < best * 1.0005)
        return tr("as fast as the current configuration%1").arg(perSequence);
    return tr("%1 % faster than the current configuration%2").arg(100.0 * (current / best - 1.0), 0, 'f', 1).arg(perSequence);
}

void SearchPanel::showStatus(const QString& text, const QStringList& notes)
{
    m_status->setText(text);
    m_notes->setText(noteListHtml(notes));
    m_notesToggle->setText(notes.size() == 1 ? tr("1 note") : tr("%1 notes").arg(notes.size()));
    m_notesToggle->setToolTip(notes.isEmpty() ? QString() : notes.join(QStringLiteral("\n\n")));
    m_notesToggle->setVisible(!notes.isEmpty());
    m_notesToggle->setChecked(m_notesOpen);
    m_notes->setVisible(!notes.isEmpty() && m_notesOpen);
}

void SearchPanel::setPendingEdit(const QString& problem)
{
    m_pendingEdit = problem;
    if (problem.isEmpty() && std::exchange(m_pendingShown, false) && !m_runner->isRunning())
        showStatus({});
}

bool SearchPanel::run()
{
    if (m_runner->isRunning()) {
        m_refusal = tr("a search is running");
        return false;
    }
    // A field that shows a value the project did not take: the search would run on the value
    // the field no longer shows.
    if (!m_pendingEdit.isEmpty()) {
        m_refusal = tr("Cannot search: %1").arg(m_pendingEdit);
        showStatus(statusHtml(Status::Problem, palette(), m_refusal.toHtmlEscaped()));
        m_pendingShown = true;
        return false;
    }
    SearchOptions options = currentOptions();
    try {
        validateModel(m_document->model(), "model");
        validateCluster(m_document->cluster(), m_document->catalog(), "cluster");
        // As `hapmoe plan`: nodes that cannot reach each other would be costed as linked.
        try {
            requireConnected(m_document->cluster(), m_document->catalog(), "cluster");
        } catch (const InputError& e) {
            // Its path is the cluster document's ("links"); in the project it is the cluster's.
            throw InputError(e.file(), "cluster." + e.where(), e.detail());
        }
    } catch (const InputError& e) {
        m_refusal = tr("Cannot search: %1: %2").arg(QString::fromStdString(e.where()), QString::fromStdString(e.detail()));
        showStatus(statusHtml(Status::Problem, palette(), m_refusal.toHtmlEscaped()));
        m_refusalShown = true;
        return false;
    }
    m_refusal.clear();
    m_refusalShown = false;
    QString note;
    m_scriptNote.clear();
    m_scriptProblem.clear();
    CostOptions costOptions;
    const std::string& script = m_document->project().current_script;
    if (!script.empty()) {
        try {
            const ImportedScript imported =
                importMegatronScript(readTextFile(script), script, m_document->project().current_script_inputs);
            options.current = planFromScript(imported, m_document->cluster(), m_document->catalog());
            costOptions = exportCostOptions(imported);
            m_scriptNote = QString::fromStdString(scriptOverlapNote(imported));
        } catch (const std::exception& e) {
            m_scriptProblem = QString::fromUtf8(e.what());
            note = tr(" (the imported configuration is not estimated: %1)").arg(m_scriptProblem);
        }
    } else {
        // A configuration kept without its script (a plan document of hapmoe estimate, opened
        // as a project): compared with as a script's is, while it still fits the model and
        // the cluster.
        const std::vector<SavedPlan>& saved = m_document->project().plans;
        const auto current = std::find_if(saved.begin(), saved.end(), [](const SavedPlan& sp) { return sp.source == SavedPlan::Source::Current; });
        if (current != saved.end()) {
            try {
                validatePlanDocument(PlanDocument{m_document->model(), m_document->cluster(), current->plan, std::nullopt, std::nullopt, {}},
                                     m_document->catalog(), "");
                options.current = current->plan;
            } catch (const InputError& e) {
                m_scriptProblem = QString::fromStdString(e.where() + ": " + e.detail());
                note = tr(" (the current configuration is not estimated: it no longer fits the project, %1)").arg(m_scriptProblem);
            }
        }
    }
    m_results->clear();
    m_outdated->hide();   // the list it spoke of is gone; the search's own plans are current
    showSearchFigures(true);
    m_progress->setValue(0);
    m_states->setText(QStringLiteral("0"));
    m_pruned->setText(QStringLiteral("\u2013"));
    m_best->setText(QStringLiteral("\u2013"));
    showStatus(tr("Searching %1 devices\u2026").arg(m_document->cluster().totalDevices()) + note);
    setRunning(true);
    costOptions.memory_headroom = m_document->searchSettings().memory_headroom;
    m_runner->start(m_document->model(), m_document->cluster(), options, costOptions, m_document->profile(), m_document->catalog());
    emit searchStarted();
    return true;
}

void SearchPanel::cancel()
{
    if (!m_runner->isRunning())
        return;
    m_cancel->setEnabled(false);
    showStatus(tr("Cancelling\u2026"));
    m_runner->cancel();
}

void SearchPanel::abandon()
{
    if (!m_runner->isRunning() || m_abandoned)
        return;
    m_abandoned = true;
    m_cancel->setEnabled(false);
    m_runner->cancel();
    m_results->clear();
    showSearchFigures(false);
    showStatus(tr("The search of the previous project was cancelled."));
}

void SearchPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        setOutdated(!m_outdated->isHidden());
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange)
        m_twoColumnsMinWidth = 0;   // the settings are measured again at the next resize
}

void SearchPanel::setOutdated(bool outdated)
{
    m_outdated->setText(statusHtml(Status::Problem, palette(),
                                   tr("These plans were computed before the last change to the cluster, model or "
                                      "profile: run the search again.")));
    m_outdated->setVisible(outdated);
}

void SearchPanel::setRunning(bool running)
{
    m_run->setEnabled(!running);
    m_cancel->setEnabled(running);
    // The settings a run uses are read when it starts: they are locked until it ends.
    m_settingsBox->setEnabled(!running);
    m_settingsBox->setToolTip(running ? tr("Locked while the search runs") : QString());
}

void SearchPanel::showProgress(const SearchProgress& p)
{
    m_progress->setValue(int(std::clamp(p.fraction, 0.0, 1.0) * 1000));
    m_states->setText(count(p.states));
    const long long total = p.pruned.load_balance + p.pruned.memory + p.pruned.communication;
    m_pruned->setText(tr("%1 (load balance %2, memory %3, communication %4)")
                          .arg(count(total), count(p.pruned.load_balance), count(p.pruned.memory),
                               count(p.pruned.communication)));
    m_best->setText(seconds(p.best_time_s));
}

void SearchPanel::showResult(const SearchResult& r)
{
    setRunning(false);
    if (std::exchange(m_abandoned, false)) {
        emit searchStopped();   // the project it searched is gone; the list shows the new one's
        return;
    }
    m_progress->setValue(r.cancelled || r.timed_out ? m_progress->value() : 1000);
    m_states->setText(count(r.states));
    const long long total = r.pruned.load_balance + r.pruned.memory + r.pruned.communication;
    m_pruned->setText(tr("%1 (load balance %2, memory %3, communication %4)")
                          .arg(count(total), count(r.pruned.load_balance), count(r.pruned.memory),
                               count(r.pruned.communication)));
    m_best->setText(r.plans.empty() ? QStringLiteral("\u2013") : seconds(r.plans.front().prediction.iteration_time_s));

    fillList(r, m_runner->model().isMoe());   // the model searched

    // The line: how the run ended and how its best plan compares; the rest are notes.
    QString status = runStatus(r);
    if (const QString check = checkStatus(r); !check.isEmpty())   // empty without plans
        status += QStringLiteral("; ") + check;
    if (const QString comparison = baselineStatus(r); !comparison.isEmpty())   // empty without plans
        status += QStringLiteral("; ") + comparison;
    if (const QString current = currentStatus(r); !current.isEmpty())
        status += QStringLiteral("; ") + current;
    QStringList notes;
    if (!r.plans.empty() && !r.devices_left_out.empty())
        notes << QString::fromStdString(r.devices_left_out);
    if (!r.plans.empty() && r.exact_fallback)
        notes << tr("the load-balance and communication prunings left nothing that fits, so the search ran again without them");
    if (r.current && !m_scriptNote.isEmpty())
        notes << m_scriptNote;
    // The imported script's configuration, when it is not in the list: say why (the script
    // gone or unreadable, or a model edited since, whose layers its stages no longer hold).
    const QString scriptProblem = r.current_error.empty() ? m_scriptProblem : QString::fromStdString(r.current_error);
    if (!r.current && !scriptProblem.isEmpty())
        notes << (m_document->project().current_script.empty()
                      ? tr("the current configuration is not estimated: it no longer fits the project, %1").arg(scriptProblem)
                      : tr("the imported configuration (%1) is not estimated: %2")
                            .arg(QFileInfo(QString::fromStdString(m_document->project().current_script)).fileName(), scriptProblem));
    if (r.current && !r.current_note.empty())
        notes << QString::fromStdString(r.current_note);
    showStatus(status.toHtmlEscaped(), notes);
    emit searchStopped();
    emit searchFinished(r);
}

QString SearchPanel::runStatus(const SearchResult& r)
{
    // The reason says whether a cancel or the time limit stopped it; there is no best.
    if (r.plans.empty())
        return tr("No plan found: %1").arg(noPlanReason(r));
    QString status = (r.plans.size() == 1 ? tr("1 plan in %1") : tr("%1 plans in %2").arg(r.plans.size())).arg(elapsed(r.time_s));
    if (!r.micro_batch_sizes.empty()) {
        QStringList sizes;
        for (const int m : r.micro_batch_sizes)
            sizes << QString::number(m);
        status += tr(" over micro-batch sizes %1").arg(sizes.join(QStringLiteral(", ")));
    }
    if (r.cancelled)
        status += tr(" \u2013 cancelled, best so far shown");
    else if (r.timed_out)
        status += tr(" \u2013 time limit reached, best so far shown");
    if (r.list_cut)
        status += r.plans.size() == 1 ? tr("; the time limit ended the list at its first plan")
                                      : tr("; the time limit ended the list at %1 plans").arg(r.plans.size());
    return status;
}

void SearchPanel::fillList(const SearchResult& r, bool experts)
{
    m_results->clear();
    auto add = [this, experts](const QString& rank, const RankedPlan& rp, bool baseline) {
        const Prediction& p = rp.prediction;
        auto* item = new QTreeWidgetItem(m_results);
        item->setText(RankColumn, rank);
        // "base" in the first column already says baseline: "uniform", "Metis-style".
        QString name = QString::fromStdString(rp.plan.name);
        if (rank == tr("base") && name.endsWith(QStringLiteral(" baseline")))
            name.chop(9);
        item->setText(PlanColumn, name);
        item->setText(IterationColumn, p.feasible ? seconds(p.iteration_time_s) : tr("does not fit"));
        if (rp.plain_time_s > 0)
            item->setToolTip(IterationColumn, tr("%1 under plain 1F1B: interleaving (VPP %2) saves %3 %")
                                                  .arg(seconds(rp.plain_time_s))
                                                  .arg(rp.plan.vpp)
                                                  .arg((1 - p.iteration_time_s / rp.plain_time_s) * 100, 0, 'f', 1));
        item->setText(TokensColumn, p.feasible ? count(qRound64(p.tokens_per_s)) : QString());
        item->setText(MfuColumn, p.feasible ? QStringLiteral("%1 %").arg(p.mfu * 100, 0, 'f', 1) : QString());   // as the plan table
        item->setText(ShapeColumn, shape(rp.plan, experts));
        item->setToolTip(ShapeColumn, shape(rp.plan, experts) + QLatin1Char('\n') + shapeToolTip(rp.plan, experts));
        // The name may be elided, and Tokens/s and MFU hidden, in a narrow dock.
        item->setToolTip(PlanColumn, QString::fromStdString(rp.plan.name) + QLatin1Char('\n')
                                         + (p.feasible ? tr("%1 tokens/s, MFU %2").arg(item->text(TokensColumn), item->text(MfuColumn))
                                                       : QString::fromStdString(p.infeasible_reason)));
        for (int c : {IterationColumn, TokensColumn, MfuColumn})
            item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
        if (baseline) {
            QFont f = item->font(PlanColumn);
            f.setItalic(true);
            for (int c = 0; c < ResultColumnCount; ++c)
                item->setFont(c, f);
        }
    };
    int rank = 1;
    for (const auto& rp : r.plans)
        add(QString::number(rank++), rp, false);
    // "PP7 mixed" reads alike for an alternative that holds an earlier plan's stages in
    // another order: its shape's tooltip says which (as the plan table's does).
    std::vector<const Plan*> ranked;
    for (const RankedPlan& rp : r.plans)
        ranked.push_back(&rp.plan);
    const std::vector<int> reordered = reorderedFrom(ranked);
    for (std::size_t i = 0; i < reordered.size(); ++i)
        if (reordered[i] >= 0)
            if (QTreeWidgetItem* item = m_results->topLevelItem(static_cast<int>(i)))
                item->setToolTip(ShapeColumn, item->toolTip(ShapeColumn) + QLatin1Char('\n')
                                                  + tr("The stages of %1 in another order")
                                                        .arg(QString::fromStdString(r.plans[static_cast<std::size_t>(reordered[i])].plan.name)));
    if (r.uniform_baseline)
        add(tr("base"), *r.uniform_baseline, true);
    if (r.metis_baseline)
        add(tr("base"), *r.metis_baseline, true);
    if (r.current)
        add(tr("now"), *r.current, true);

    fitResultColumns();
    if (m_results->topLevelItemCount() > 0) {
        QSignalBlocker block(m_results);
        m_results->setCurrentItem(m_results->topLevelItem(0));
    }
}

bool SearchPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_results->viewport() && event->type() == QEvent::Resize)
        fitResultColumns();
    return QWidget::eventFilter(watched, event);
}

void SearchPanel::arrangeSettings(bool twoColumns)
{
    m_twoColumns = twoColumns;
    while (QLayoutItem* item = m_settingsForm->takeAt(0))
        delete item;   // the widgets stay in the box
    for (int c = 0; c < 4; ++c)
        m_settingsForm->setColumnStretch(c, 0);
    if (twoColumns) {
        // Target | Algorithm, Top K | Time limit, delta | eta; Exact; micro-batch sizes; Offload over two
        // columns (so that "If needed" stays whole); Max VPP | Keep free.
        int row = 0, col = 0;
        for (const auto& [name, field] : std::as_const(m_settingPairs)) {
            if (!name) {   // the check box, under the fields
                m_settingsForm->addWidget(field, row++, 1, 1, 3);
                col = 0;
                continue;
            }
            const bool wide = field == m_offload, alone = field == m_offload;
            m_settingsForm->addWidget(name, row, col, Qt::AlignRight);
            m_settingsForm->addWidget(field, row, col + 1, 1, wide ? 2 : 1);
            if (alone || col == 2) {
                ++row;
                col = 0;
            } else {
                col = 2;
            }
        }
        m_settingsForm->setColumnStretch(1, 1);
        m_settingsForm->setColumnStretch(3, 1);
    } else {
        int row = 0;
        for (const auto& [name, field] : std::as_const(m_settingPairs)) {
            if (name)
                m_settingsForm->addWidget(name, row, 0, Qt::AlignRight);
            m_settingsForm->addWidget(field, row++, 1);
        }
        m_settingsForm->setColumnStretch(1, 1);
    }
    m_settingsForm->invalidate();
}

void SearchPanel::measureSettings()
{
    arrangeSettings(false);
    const int oneColumn = m_settingsBox->minimumSizeHint().width();
    arrangeSettings(true);
    m_twoColumnsMinWidth = m_settingsBox->minimumSizeHint().width();
    m_settingsBox->setMinimumWidth(oneColumn);
    updateGeometry();
}

void SearchPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    // The widths measured before the widgets had their style (the constructor) are a little
    // wide: measured again, the form takes two columns where they fit.
    measureSettings();
    arrangeForWidth(width());
}

void SearchPanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    if (m_twoColumnsMinWidth == 0)
        measureSettings();
    arrangeForWidth(event->size().width());
}

void SearchPanel::arrangeForWidth(int width)
{
    // In the dock's scroll area, the width as if its scroll bar showed: the one-column form is
    // taller and brings the bar, which would narrow the panel and keep the form in one column
    // at a width where, without the bar, it takes two (it would depend on the way there).
    if (auto* area = qobject_cast<QAbstractScrollArea*>(parentWidget() ? parentWidget()->parentWidget() : nullptr))
        width = area->width() - area->frameWidth() * 2 - area->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, area);
    const QMargins margins = layout()->contentsMargins();
    const bool twoColumns = width - margins.left() - margins.right() >= m_twoColumnsMinWidth;
    if (twoColumns != m_twoColumns)
        arrangeSettings(twoColumns);
}

void SearchPanel::fitResultColumns()
{
    QHeaderView* header = m_results->header();
    for (int c : {TokensColumn, MfuColumn})
        header->setSectionHidden(c, false);
    header->resizeSections(QHeaderView::ResizeToContents);   // once, to measure
    int widths[ResultColumnCount];
    for (int c = 0; c < ResultColumnCount; ++c)
        widths[c] = header->sectionSize(c);
    const int room = m_results->viewport()->width();
    // The names in full: Tokens/s gives way for any name, MFU only for a ranked plan's
    // ("HS-DP #5"); a baseline's longer name may be elided then.
    // The delegate's text margins, and a few pixels for an italic name's overhang: a name
    // measured to the pixel was still elided ("Metis-st…").
    const int margins = 2 * (m_results->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, m_results) + 1) + 4;
    int ranked = header->sectionSizeHint(PlanColumn), all = ranked;
    for (int i = 0; i < m_results->topLevelItemCount(); ++i) {
        const QTreeWidgetItem* item = m_results->topLevelItem(i);
        const int w = QFontMetrics(item->font(PlanColumn)).horizontalAdvance(item->text(PlanColumn)) + margins;
        all = std::max(all, w);
        if (!item->font(PlanColumn).italic())
            ranked = std::max(ranked, w);
    }
    auto others = [&] {
        int sum = 0;
        for (int c = 0; c < ResultColumnCount; ++c)
            sum += c != PlanColumn && !header->isSectionHidden(c) ? widths[c] : 0;
        return sum;
    };
    header->setSectionHidden(TokensColumn, others() + all > room);
    header->setSectionHidden(MfuColumn, others() + ranked > room);
    for (int c = 0; c < ResultColumnCount; ++c)
        if (c != PlanColumn)
            header->resizeSection(c, widths[c]);
    header->resizeSection(PlanColumn, std::max(room - others(), ranked));
}

void SearchPanel::showSearchFigures(bool visible)
{
    m_progress->setVisible(visible);
    m_live->setRowVisible(m_states, visible);
    m_live->setRowVisible(m_pruned, visible);
}

void SearchPanel::showSavedPlans(const SearchResult& saved, const QString& source)
{
    if (m_runner->isRunning() && !m_abandoned)
        return;   // its result replaces the list when it ends
    fillList(saved, m_document->model().isMoe());
    m_scriptNote.clear();
    const int count = int(saved.plans.size()) + (saved.current ? 1 : 0);
    const int baselines = (saved.uniform_baseline ? 1 : 0) + (saved.metis_baseline ? 1 : 0);
    showSearchFigures(count == 0);
    m_progress->setValue(0);
    m_states->setText(QStringLiteral("\u2013"));
    m_pruned->setText(QStringLiteral("\u2013"));
    m_best->setText(saved.plans.empty() ? QStringLiteral("\u2013") : seconds(saved.plans.front().prediction.iteration_time_s));
    // A search stopped early saved the best plans it had then: a finished one may find faster.
    const QString stopped = saved.plans.empty() ? QString()
                            : saved.cancelled   ? tr("; the search that found them was cancelled: the best so far, "
                                                     "a finished search may find faster")
                            : saved.timed_out   ? tr("; the search that found them reached its time limit: the best so "
                                                     "far, a finished search may find faster")
                                                : QString();
    // A plan document of a search that found nothing (hapmoe plan, no plan fits) keeps its reason.
    if (count == 0 && !saved.no_plan_reason.empty()) {
        showStatus(statusHtml(Status::Problem, palette(),
                                     tr("The search saved in %1 found no feasible plan: %2")
                                         .arg(source, noPlanReason(saved))
                                         .toHtmlEscaped()));
        return;
    }
    showStatus(count == 0 ? QString()
                                 : ((count == 1 ? tr("1 plan") : tr("%1 plans").arg(count))
                                    + (baselines == 0 ? QString() : baselines == 1 ? tr(" and a baseline") : tr(" and the baselines"))
                                    + tr(" from %1, as saved (without the search's counts: run the search to see them)")
                                          .arg(source)
                                    + stopped)
                                       .toHtmlEscaped());
}

void SearchPanel::showCurrentPlan(int row)
{
    QTreeWidgetItem* item = m_results->topLevelItem(row);
    if (!item || item == m_results->currentItem())
        return;
    const QSignalBlocker block(m_results);
    m_results->setCurrentItem(item);
}

} // namespace hapmoe::ui
