#include "WhatIfPanel.h"

#include "BreakdownView.h"
#include "ExplorerStyle.h"
#include "Theme.h"
#include "cost/CostModel.h"
#include "plan/Deployability.h"

#include <QComboBox>
#include <QEvent>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSet>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <exception>
#include <set>

namespace hapmoe::ui {

namespace {
// A change of the iteration time beyond this fraction suggests the ranking may change.
constexpr double kRankingShift = 0.15;
// Peak memory below this share of capacity leaves room for less recompute or fewer devices.
constexpr double kHeadroomShare = 0.6;
// A Change cell whose figure moved: highlighted as Compare marks what differs (paintChanges).
constexpr int kChangedRole = Qt::UserRole + 1;

// A stage's recompute set to one of What-if's choices.
void applyRecompute(StagePlan& s, WhatIfRecompute choice)
{
    s.recompute_layers = 0;
    s.recompute_modules = recompute_module::defaults;
    switch (choice) {
    case WhatIfRecompute::None: s.recompute = Recompute::None; return;
    case WhatIfRecompute::Full: s.recompute = Recompute::Full; return;
    case WhatIfRecompute::CoreAttention: break;
    case WhatIfRecompute::MoeActLayernorm: s.recompute_modules = recompute_module::moe_act | recompute_module::layernorm; break;
    case WhatIfRecompute::MoeLayer: s.recompute_modules = recompute_module::layernorm | recompute_module::moe; break;
    case WhatIfRecompute::Mlp: s.recompute_modules = recompute_module::mlp; break;
    case WhatIfRecompute::WholeBlocks:
        s.recompute_modules = recompute_module::layernorm | recompute_module::mlp | recompute_module::moe;
        break;
    }
    s.recompute = Recompute::Selective;
}

} // namespace

WhatIfPanel::WhatIfPanel(QWidget* parent)
    : QWidget(parent)
    , m_gbs(new QSpinBox(this))
    , m_mbs(new QSpinBox(this))
    , m_seq(new QSpinBox(this))
    , m_rho(new QDoubleSpinBox(this))
    , m_fp8(new QComboBox(this))
    , m_offload(new QSpinBox(this))
    , m_recompute(new QComboBox(this))
    , m_nodeType(new QComboBox(this))
    , m_nodeCount(new QSpinBox(this))
    , m_reset(new QPushButton(tr("Reset"), this))
    , m_figures(new QTableWidget(this))
    , m_stages(new QTableWidget(this))
    , m_hintLabel(new QLabel(this))
{
    setObjectName(QStringLiteral("whatIf"));
    m_gbs->setRange(1, 1 << 20);
    m_gbs->setToolTip(tr("Global batch size in sequences; must stay a multiple of the first stage's DP × micro-batch size"));
    m_mbs->setRange(1, 1024);
    m_mbs->setToolTip(tr("Micro-batch size of the first stage (--micro-batch-size); every other stage runs DP of the first "
                         "× this / its own DP sequences per micro-batch (FlagScale's rule), which must be whole"));
    m_seq->setRange(128, 1 << 20);
    m_seq->setSingleStep(512);
    m_seq->setSuffix(tr(" tokens"));
    m_rho->setRange(1.0, 16.0);
    m_rho->setDecimals(2);
    m_rho->setSingleStep(0.05);
    m_rho->setToolTip(tr("Router imbalance rho = busiest expert's tokens / mean (paper section 3.2); 1 is perfectly balanced. "
                         "A stage of EP 1 holds every expert and routes the same tokens whatever rho is; a rank of EP n "
                         "gets at most n times the mean (docs/cost-model.md section 3.4)"));
    m_fp8->addItem(tr("Off"), int(Fp8Format::None));
    m_fp8->addItem(QStringLiteral("hybrid"), int(Fp8Format::Hybrid));
    m_fp8->addItem(QStringLiteral("e4m3"), int(Fp8Format::E4M3));
    m_fp8->setObjectName(QStringLiteral("whatIfFp8"));
    m_fp8->setToolTip(tr("The linear layers' GEMMs in FP8 (Megatron-LM --fp8-format), on devices with FP8 tensor cores"));
    m_recompute->setObjectName(QStringLiteral("whatIfRecompute"));
    m_recompute->setToolTip(tr("Every stage's activation recompute (Megatron-LM --recompute-granularity, and selective "
                               "recompute's --recompute-modules): less memory for more backward time"));
    m_offload->setRange(0, 100);
    m_offload->setSingleStep(25);
    m_offload->setSuffix(tr(" %"));
    m_offload->setToolTip(tr("Share of the optimizer states kept and stepped in host memory "
                             "(Megatron-Core --optimizer-cpu-offload --optimizer-offload-fraction; above 0 the plan uses "
                             "the distributed optimizer, from which Megatron-Core offloads)"));
    m_nodeCount->setRange(0, 4096);
    m_nodeCount->setSuffix(tr(" nodes"));
    connect(m_nodeCount, &QSpinBox::valueChanged, this,
            [this](int n) { m_nodeCount->setSuffix(n == 1 ? tr(" node") : tr(" nodes")); });
    m_nodeType->setToolTip(tr("Device type whose node count to change"));
    // Wide enough for the longest type name ("910B-376T"), however narrow the panel.
    m_nodeType->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    for (QSpinBox* box : {m_gbs, m_mbs, m_seq, m_offload, m_nodeCount})
        box->setKeyboardTracking(false);
    m_rho->setKeyboardTracking(false);

    auto* inputs = new QGroupBox(tr("Change"), this);
    auto* form = new QFormLayout(inputs);
    // In a narrow window the labels go above their fields, leaving the figures room.
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    form->addRow(tr("Global batch size"), m_gbs);
    form->addRow(tr("Micro-batch size"), m_mbs);
    form->addRow(tr("Sequence length"), m_seq);
    form->addRow(tr("Router imbalance ρ"), m_rho);
    form->addRow(tr("FP8 GEMMs"), m_fp8);
    form->addRow(tr("Optimizer in host memory"), m_offload);
    form->addRow(tr("Recompute"), m_recompute);
    auto* nodes = new QHBoxLayout;
    nodes->addWidget(m_nodeType, 1);
    nodes->addWidget(m_nodeCount);
    form->addRow(tr("Nodes of type"), nodes);
    form->addRow(QString(), m_reset);
    // A value a field did not take says why it stayed, under the fields.
    m_rangeCheck = new SpinBoxRangeCheck(this, QStringLiteral("whatIfInputMessage"));
    form->addRow(m_rangeCheck->messageLabel());
    m_rangeCheck->watch(m_gbs, tr("Global batch size"));
    m_rangeCheck->watch(m_mbs, tr("Micro-batch size"));
    m_rangeCheck->watch(m_seq, tr("Sequence length"));
    m_rangeCheck->watch(m_rho, tr("Router imbalance ρ"));
    m_rangeCheck->watch(m_offload, tr("Optimizer in host memory"));
    m_rangeCheck->watch(m_nodeCount, tr("Nodes of type"));

    m_figures->setColumnCount(3);
    m_figures->setHorizontalHeaderLabels({tr("Plan"), tr("What-if"), tr("Change")});
    m_figures->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_figures->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_figures->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_figures->setWordWrap(false);   // one line a figure; a cut one is elided, whole in the tooltip
    m_stages->setColumnCount(6);
    m_stages->setHorizontalHeaderLabels({tr("Stage"), tr("Fwd+bwd / mb"), tr("What-if"), tr("Memory"), tr("What-if"), tr("Capacity")});
    m_stages->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_stages->verticalHeader()->hide();
    // Columns as wide as their header and cells (never clipped), the spare width to the last.
    m_stages->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_stages->horizontalHeader()->setStretchLastSection(true);
    m_hintLabel->setWordWrap(true);
    m_hintLabel->setTextFormat(Qt::RichText);
    m_hintLabel->setObjectName(QStringLiteral("whatIfHint"));

    auto* left = new QVBoxLayout;
    left->addWidget(inputs);
    left->addWidget(m_hintLabel);
    left->addStretch(1);
    m_figures->setMinimumWidth(330);   // row names and three columns of "7.401 s"
    auto* right = new QVBoxLayout;
    right->addWidget(m_figures, 2);
    right->addWidget(m_stages, 3);
    m_inputs = left;
    m_columns = new QBoxLayout(QBoxLayout::LeftToRight, this);
    m_columns->addLayout(left, 2);
    m_columns->addLayout(right, 3);

    connect(m_gbs, &QSpinBox::valueChanged, this, &WhatIfPanel::reestimate);
    connect(m_mbs, &QSpinBox::valueChanged, this, &WhatIfPanel::reestimate);
    connect(m_seq, &QSpinBox::valueChanged, this, &WhatIfPanel::reestimate);
    connect(m_rho, &QDoubleSpinBox::valueChanged, this, &WhatIfPanel::reestimate);
    connect(m_fp8, &QComboBox::currentIndexChanged, this, &WhatIfPanel::reestimate);
    connect(m_offload, &QSpinBox::valueChanged, this, &WhatIfPanel::reestimate);
    connect(m_recompute, &QComboBox::currentIndexChanged, this, &WhatIfPanel::reestimate);
    connect(m_nodeCount, &QSpinBox::valueChanged, this, &WhatIfPanel::reestimate);
    connect(m_nodeType, &QComboBox::currentIndexChanged, this, &WhatIfPanel::nodeTypeChanged);
    connect(m_reset, &QPushButton::clicked, this, &WhatIfPanel::resetInputs);
    setEnabled(false);
}

void WhatIfPanel::fitWidth(int available)
{
    const QMargins margins = m_columns->contentsMargins();
    const int sideBySide = margins.left() + m_inputs->minimumSize().width() + m_columns->spacing() +
                           m_figures->minimumWidth() + margins.right();
    m_columns->setDirection(available >= sideBySide ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom);
}

bool WhatIfPanel::isStacked() const
{
    return m_columns->direction() == QBoxLayout::TopToBottom;
}

void WhatIfPanel::setContext(const ExplorerContext& context)
{
    m_context = context;
    m_resetting = true;
    m_nodeType->clear();
    std::vector<std::string> types;
    for (const Node& n : context.cluster.nodes) {
        if (std::find(types.begin(), types.end(), n.device_type) == types.end())
            types.push_back(n.device_type);
    }
    for (const std::string& t : types)
        m_nodeType->addItem(QString::fromStdString(t));
    // The whole name, however narrow the panel: the node count beside it gives way first.
    m_nodeType->setMinimumWidth(m_nodeType->sizeHint().width());
    m_resetting = false;
    resetInputs();
}

void WhatIfPanel::setPlan(const ExplorerPlan* entry)
{
    if (entry)
        m_entry = *entry;
    else
        m_entry.reset();
    resetInputs();
}

void WhatIfPanel::setEmptyText(const QString& text)
{
    if (m_emptyText == text)
        return;
    m_emptyText = text;
    if (!m_entry)
        showFigures();
}

int WhatIfPanel::nodesOfType(const QString& type) const
{
    int n = 0;
    for (const Node& node : m_context.cluster.nodes) {
        if (QString::fromStdString(node.device_type) == type)
            ++n;
    }
    return n;
}

void WhatIfPanel::nodeTypeChanged()
{
    if (m_resetting)
        return;
    m_resetting = true;
    const QString type = m_nodeType->currentText();
    const auto it = m_wantNodes.find(type);
    m_nodeCount->setValue(it != m_wantNodes.end() ? it->second : nodesOfType(type));
    m_resetting = false;
    reestimate();
}

void WhatIfPanel::resetInputs()
{
    m_resetting = true;
    const ModelSpec& model = m_context.model;
    const int gbs = m_entry && m_entry->plan().global_batch_size > 0 ? m_entry->plan().global_batch_size : model.training.global_batch_size;
    m_gbs->setValue(gbs);
    m_mbs->setValue(m_entry && !m_entry->plan().stages.empty() ? m_entry->plan().stages.front().micro_batch_size
                                                               : model.training.micro_batch_size);
    m_seq->setValue(model.seq_length);
    // The rho the plan was costed with: a calibrated one in the profile wins over the model's
    // (CostModel), so that the unchanged plan shows its listed figures.
    m_rho->setValue(m_context.profile && m_context.profile->router_imbalance ? *m_context.profile->router_imbalance
                                                                             : model.training.router_imbalance);
    m_offload->setValue(m_entry ? qRound(100 * m_entry->plan().optimizer_offload_fraction) : 0);
    m_fp8->setCurrentIndex(std::max(0, m_fp8->findData(int(model.training.fp8_format))));
    // The recompute choices: the plan's own, none, Megatron-Core's selective modules that
    // apply to the model (docs/cost-model.md section 3.5), full recompute of every layer.
    m_recompute->clear();
    m_recompute->addItem(tr("As planned"), -1);
    m_recompute->addItem(tr("None"), int(WhatIfRecompute::None));
    m_recompute->addItem(tr("Selective: core_attn"), int(WhatIfRecompute::CoreAttention));
    if (model.isMoe()) {
        m_recompute->addItem(tr("Selective: moe_act, layernorm"), int(WhatIfRecompute::MoeActLayernorm));
        m_recompute->addItem(tr("Selective: layernorm, moe"), int(WhatIfRecompute::MoeLayer));
    }
    if (model.numMoeLayers(0, model.num_layers) < model.num_layers) {
        m_recompute->addItem(tr("Selective: mlp"), int(WhatIfRecompute::Mlp));
        if (model.isMoe())
            m_recompute->addItem(tr("Selective: layernorm, mlp, moe"), int(WhatIfRecompute::WholeBlocks));
    }
    m_recompute->addItem(tr("Full, every layer"), int(WhatIfRecompute::Full));
    m_recompute->setCurrentIndex(0);
    m_wantNodes.clear();
    m_nodeCount->setValue(nodesOfType(m_nodeType->currentText()));
    // Without a plan the fields show a dash, not figures of no plan (the spin boxes' least
    // values).
    for (QAbstractSpinBox* box : std::initializer_list<QAbstractSpinBox*>{m_gbs, m_mbs, m_seq, m_rho, m_offload, m_nodeCount})
        box->setSpecialValueText(m_entry ? QString() : QStringLiteral("\u2013"));
    if (!m_entry) {
        for (QSpinBox* box : {m_gbs, m_mbs, m_seq, m_offload, m_nodeCount})
            box->setValue(box->minimum());
        m_rho->setValue(m_rho->minimum());
    }
    m_resetting = false;
    setEnabled(m_entry.has_value() && m_context.catalog.has_value());
    // A dense model has no router: its imbalance does not apply (as on the Model tab).
    m_rho->setEnabled(model.isMoe());
    m_reestimatingReset = true;
    reestimate();
    m_reestimatingReset = false;
}

QString WhatIfPanel::hint() const
{
    return m_hints.join(QLatin1Char('\n'));
}

void WhatIfPanel::reestimate()
{
    if (m_resetting)
        return;
    m_rangeCheck->showMessage(QString());
    m_result.reset();
    m_problem.clear();
    m_hints.clear();
    if (!m_entry || !m_context.catalog || m_entry->plan().stages.empty()) {
        showFigures();
        withdrawSuggestion();
        return;
    }
    const Plan& base = m_entry->plan();
    const Prediction& basePred = m_entry->prediction();

    ModelSpec model = m_context.model;
    model.seq_length = m_seq->value();
    // Megatron-LM refuses a sequence longer than --max-position-embeddings (the export checks
    // say so): the what-if raises the positions with it, and says the model needs the same.
    // A model without its own positions (0) follows its sequence length: nothing to say.
    if (m_context.model.max_position_embeddings > 0 && model.seq_length > m_context.model.max_position_embeddings) {
        model.max_position_embeddings = model.seq_length;
        m_hints << tr("Sequence length %1 is beyond the model's %2 positions: this estimate raises "
                      "--max-position-embeddings to %1 (with learned positions, a larger embedding table); "
                      "the model needs the same change before a search or an export.")
                       .arg(model.seq_length)
                       .arg(m_context.model.maxPositions());
    }
    model.training.router_imbalance = m_rho->value();
    model.training.global_batch_size = m_gbs->value();
    model.training.fp8_format = Fp8Format(m_fp8->currentData().toInt());
    model.training.fp8_param_gather = model.training.fp8() && m_context.model.training.fp8_param_gather;
    std::optional<Profile> profile = m_context.profile;
    if (profile && profile->router_imbalance)
        profile->router_imbalance = m_rho->value();   // the user's rho wins over the calibrated one

    Plan plan = base;
    if (const int choice = m_recompute->currentData().toInt(); choice >= 0)
        for (StagePlan& s : plan.stages)
            applyRecompute(s, WhatIfRecompute(choice));
    plan.global_batch_size = m_gbs->value();
    plan.optimizer_offload_fraction = m_offload->value() / 100.0;
    // Megatron-Core offloads only from the distributed optimizer, as the search's plans do.
    if (plan.optimizer_offload_fraction > 0)
        plan.distributed_optimizer = true;
    // Another micro-batch size: the first stage's, and every stage's by FlagScale's rule
    // (DESIGN section 3): the same micro-batch step DP_0 x MBS_0 on every mesh.
    if (m_mbs->value() != base.stages.front().micro_batch_size) {
        const long long step = static_cast<long long>(base.stages.front().dp) * m_mbs->value();
        for (std::size_t i = 0; i < plan.stages.size(); ++i) {
            StagePlan& s = plan.stages[i];
            if (s.dp <= 0 || step % s.dp != 0) {
                m_problem = tr("Micro-batch size %1 gives stage %2 (DP %3) %4 / %3 sequences per micro-batch, not a whole number.")
                                .arg(m_mbs->value()).arg(i).arg(s.dp).arg(step);
                m_hints << tr("A micro-batch size that makes DP of the first stage × it a multiple of every stage's DP keeps "
                              "this plan; a new search with \"Search micro-batch size\" chooses one.");
                break;
            }
            s.micro_batch_size = static_cast<int>(step / s.dp);
        }
    }
    const StagePlan& first = plan.stages.front();
    const int perStep = first.dp * first.micro_batch_size;
    const bool stepRefused = !m_problem.isEmpty();   // the micro-batch size, said above
    if (!stepRefused && (perStep <= 0 || plan.global_batch_size % perStep != 0)) {
        m_problem = tr("Global batch %1 is not a multiple of DP × micro-batch = %2 of the first stage.")
                        .arg(plan.global_batch_size).arg(perStep);
        m_hints << (m_mbs->value() != base.stages.front().micro_batch_size
                        ? tr("A smaller micro-batch size, or a new search with a data-parallel width that divides %1.")
                        : tr("A new search can choose a data-parallel width that divides %1."))
                       .arg(plan.global_batch_size);
    } else if (!stepRefused && plan.vpp > 1 && (plan.global_batch_size / perStep) % plan.pp() != 0) {
        // The interleaved schedule runs micro-batches in groups of PP (core/io/Documents.cpp).
        m_problem = tr("Interleaved 1F1B (VPP %1) needs the %2 micro-batches to be a multiple of the %3 stages.")
                        .arg(plan.vpp).arg(plan.global_batch_size / perStep).arg(plan.pp());
        m_hints << tr("A global batch of a multiple of %1 keeps this plan's interleaving.").arg(perStep * plan.pp());
    }

    // FP8 runs only where every stage has FP8 tensor cores (docs/cost-model.md section 3.7).
    if (m_problem.isEmpty() && model.training.fp8())
        if (const StageRuledOut r = firstStageRuledOut(plan, *m_context.catalog,
                                                       [recipe = model.training.fp8_recipe](const DeviceCatalog& c, const std::string& type) {
                                                           return fp8Unavailable(c, type, recipe);
                                                       });
            r.stage >= 0) {
            m_problem = tr("Stage %1 runs on %2: %3, so this plan cannot train in FP8.")
                            .arg(r.stage)
                            .arg(QString::fromStdString(plan.stages[static_cast<std::size_t>(r.stage)].device_type),
                                 QString::fromStdString(r.why));
            m_hints << tr("FP8 GEMMs and the FP8 recipe on the Model tab, and a new search, leave such device types out.");
        }

    // A recompute Megatron-Core refuses here (moe_act without grouped GEMM, moe_act or
    // layernorm under delayed-scaling FP8): costed as asked, and said.
    if (m_recompute->currentData().toInt() >= 0)
        for (const DeploymentProblem& p : deploymentProblems(plan, model, m_context.cluster, *m_context.catalog, plan.target))
            if (p.rule.rfind("recompute.", 0) == 0) {
                m_hints << tr("No launcher can run this recompute: %1.").arg(QString::fromStdString(p.message));
                break;
            }

    // Node count: add copies of a node of the type (same links), or remove the ones the
    // plan does not use; removing a node the plan runs on needs a new plan.
    Cluster cluster = m_context.cluster;
    if (!m_nodeType->currentText().isEmpty())
        m_wantNodes[m_nodeType->currentText()] = m_nodeCount->value();
    std::set<int> used;
    for (const StagePlan& s : plan.stages)
        for (const DeviceSlot& slot : s.devices)
            used.insert(slot.node);
    QStringList idle;   // "16 910B-376T" per type with added nodes
    int addedDevices = 0;
    for (const auto& [type, want] : m_wantNodes) {
        const int have = nodesOfType(type);
        if (want > have) {
            const Node* proto = nullptr;
            for (const Node& n : cluster.nodes)
                if (QString::fromStdString(n.device_type) == type)
                    proto = &n;
            if (!proto)
                continue;
            const Node templ = *proto;
            std::vector<Link> protoLinks;
            for (const Link& l : cluster.links)
                if (l.a == templ.id || l.b == templ.id)
                    protoLinks.push_back(l);
            int added = 0;
            for (int k = have; k < want; ++k) {
                Node n = templ;
                n.id = cluster.nextFreeId();
                n.host = templ.host + "-whatif" + std::to_string(k - have + 1);
                cluster.nodes.push_back(n);
                for (Link l : protoLinks) {
                    if (l.a == templ.id && l.b != templ.id)
                        l.a = n.id;
                    else
                        l.b = n.id;
                    cluster.links.push_back(l);
                }
                added += n.count;
            }
            idle << QStringLiteral("%1 %2").arg(added).arg(type);
            addedDevices += added;
        } else if (want < have) {
            int toRemove = have - want;
            for (int i = static_cast<int>(cluster.nodes.size()) - 1; i >= 0 && toRemove > 0; --i) {
                const Node& n = cluster.nodes[static_cast<size_t>(i)];
                if (QString::fromStdString(n.device_type) != type || used.count(n.id))
                    continue;
                const int id = n.id;
                cluster.links.erase(std::remove_if(cluster.links.begin(), cluster.links.end(),
                                                   [id](const Link& l) { return l.a == id || l.b == id; }),
                                    cluster.links.end());
                cluster.nodes.erase(cluster.nodes.begin() + i);
                --toRemove;
            }
            if (toRemove > 0 && m_problem.isEmpty()) {
                int usedOfType = 0;
                for (const Node& n : m_context.cluster.nodes)
                    usedOfType += QString::fromStdString(n.device_type) == type && used.count(n.id) ? 1 : 0;
                m_problem = (usedOfType == 1 ? tr("The plan runs on 1 %1 node; it cannot run on %2.").arg(type).arg(want)
                                             : tr("The plan runs on %1 %2 nodes; it cannot run on %3.").arg(usedOfType).arg(type).arg(want));
                m_hints << (want == 0   ? tr("A new search is needed for a cluster without %1 nodes.").arg(type)
                                : want == 1 ? tr("A new search is needed for a cluster with 1 %1 node.").arg(type)
                                            : tr("A new search is needed for a cluster with %1 %2 nodes.").arg(want).arg(type));
            }
        }
    }

    if (m_problem.isEmpty()) {
        try {
            // The overlap switches the plan's prediction assumed: an unchanged plan keeps it.
            CostOptions options;
            options.overlap = basePred.overlap;
            options.memory_headroom = basePred.memory_headroom;   // the capacity the plan was searched with
            CostModel cost(model, cluster, *m_context.catalog, profile ? &*profile : nullptr, options);
            m_result = cost.estimate(plan);
        } catch (const std::exception& e) {
            m_problem = QString::fromStdString(e.what());
        }
    }

    if (m_result) {
        const Prediction& p = *m_result;
        if (!p.feasible)
            m_hints << tr("The plan no longer fits (%1): more recompute (Recompute above), or a new search with more recompute or "
                          "another split, may make it fit.")
                           .arg(QString::fromStdString(p.infeasible_reason));
        if (p.num_microbatches < plan.pp()) {
            const QString microbatches = p.num_microbatches == 1 ? tr("1 micro-batch") : tr("%1 micro-batches").arg(p.num_microbatches);
            m_hints << tr("%1 for %2 stages: each stage waits for the others most of the iteration; a larger global batch "
                          "or a new search with fewer stages would keep them busy.")
                           .arg(microbatches)
                           .arg(plan.pp());
        }
        if (addedDevices > 0)
            m_hints << tr("The added devices (%1) sit idle in this plan: a new search would use them.")
                           .arg(idle.join(QStringLiteral(", ")));
        // Throughput, not iteration time: a larger batch takes longer per iteration and may
        // still train faster per token.
        const double shift = basePred.tokens_per_s > 0 ? p.tokens_per_s / basePred.tokens_per_s - 1.0 : 0.0;
        // The bottleneck decides the steady state (paper eq. 5): if another stage takes
        // over, the layer split is no longer balanced.
        if (!basePred.stages.empty() && !p.stages.empty() && bottleneckStage(basePred) != bottleneckStage(p))
            m_hints << tr("The bottleneck moved from stage %1 to stage %2: a new search can rebalance the layers.")
                           .arg(bottleneckStage(basePred)).arg(bottleneckStage(p));
        else if (std::abs(shift) > kRankingShift)
            m_hints << (shift > 0 ? tr("Tokens/s rose by %1 %: with this much change the plans may rank differently.")
                                  : tr("Tokens/s fell by %1 %: with this much change the plans may rank differently."))
                           .arg(std::abs(shift) * 100, 0, 'f', 0);
        bool anyRecompute = false;
        for (const StagePlan& s : plan.stages)
            anyRecompute = anyRecompute || s.recompute != Recompute::None;
        if (p.feasible && anyRecompute && style::fullestDevice(p).share() < kHeadroomShare)
            m_hints << tr("Every stage uses under %1 % of its memory while it recomputes: a new search can drop recompute.").arg(kHeadroomShare * 100, 0, 'f', 0);
    }
    showFigures();
    emit reestimated();
    if (!m_hints.isEmpty() && !m_reestimatingReset) {
        m_suggesting = true;
        emit newSearchSuggested(m_hints.join(QLatin1Char(' ')));
    } else {
        withdrawSuggestion();
    }
}

void WhatIfPanel::withdrawSuggestion()
{
    if (!m_suggesting)
        return;
    m_suggesting = false;
    emit newSearchSuggestionWithdrawn();
}

void WhatIfPanel::showFigures()
{
    const bool have = m_entry.has_value();
    const Prediction* a = have ? &m_entry->prediction() : nullptr;
    const Prediction* b = m_result ? &*m_result : nullptr;
    struct Fig { QString name; double (*get)(const Prediction&); QString (*fmt)(double); };
    std::vector<Fig> figs = {
        {tr("Iteration time"), [](const Prediction& p) { return p.iteration_time_s; }, [](double v) { return style::formatSeconds(v); }},
        {tr("Tokens/s"), [](const Prediction& p) { return p.tokens_per_s; }, [](double v) { return QStringLiteral("%L1").arg(v, 0, 'f', 0); }},
        {tr("TFLOP/s per device"), [](const Prediction& p) { return p.tflops_per_device; }, [](double v) { return QString::number(v, 'f', 1); }},
        {tr("MFU"), [](const Prediction& p) { return p.mfu * 100; }, [](double v) { return QStringLiteral("%1 %").arg(v, 0, 'f', 1); }},
        // As the plan list ranks memory: the device nearest its capacity (a 910B stage may be
        // fuller than an MI300X one that holds more bytes); its text is set below.
        // Its change is that of the share of capacity, which ranks it: the fullest stage may be
        // another after the change.
        {tr("Fullest device"), [](const Prediction& p) { return style::fullestDevice(p).share(); },
         [](double v) { return QStringLiteral("%1 %").arg(100 * v, 0, 'f', 1); }},
        {tr("Micro-batches"), [](const Prediction& p) { return double(p.num_microbatches); }, [](double v) { return QString::number(v, 'f', 0); }},
    };
    // Then the Breakdown's bars, all of them and in its order: a change of batch or nodes
    // moves the DP sync most, of sequence length the compute.
    const int fixedRows = static_cast<int>(figs.size());
    const QStringList components = BreakdownView::componentNames();
    const QVector<double> componentsA = a ? BreakdownView::componentValues(*a) : QVector<double>();
    const QVector<double> componentsB = b ? BreakdownView::componentValues(*b) : QVector<double>();
    const int n = fixedRows + static_cast<int>(components.size());
    const auto value = [&](int row, const Prediction* p, const QVector<double>& parts) {
        if (!p)
            return 0.0;
        return row < fixedRows ? figs[static_cast<size_t>(row)].get(*p) : parts.value(row - fixedRows);
    };
    const auto format = [&](int row, double v) {
        return row < fixedRows ? figs[static_cast<size_t>(row)].fmt(v) : style::formatSeconds(v);
    };
    m_figures->setRowCount(n);
    const int bottleneckA = a && !a->stages.empty() ? bottleneckStage(*a) : -1;
    const int bottleneckB = b && !b->stages.empty() ? bottleneckStage(*b) : -1;
    for (int r = 0; r < n; ++r) {
        const QString name = r < fixedRows ? figs[static_cast<size_t>(r)].name : components[r - fixedRows];
        m_figures->setVerticalHeaderItem(r, new QTableWidgetItem(name));
        const double va = value(r, a, componentsA);
        const double vb = value(r, b, componentsB);
        m_figures->setItem(r, 0, new QTableWidgetItem(a ? format(r, va) : QString()));
        m_figures->setItem(r, 1, new QTableWidgetItem(b ? format(r, vb) : QStringLiteral("—")));
        if (r < fixedRows && figs[static_cast<size_t>(r)].name == tr("Fullest device")) {
            // "45.1/64 GiB (S0)", the plan list's figure with its stage; the tooltip adds the
            // most bytes on any device, which may be another stage's.
            for (const auto& [column, p] : {std::pair{0, a}, std::pair{1, b}}) {
                if (!p)
                    continue;
                const style::FullestDevice f = style::fullestDevice(*p);
                if (f.stage < 0)
                    continue;
                QTableWidgetItem* item = m_figures->item(r, column);
                item->setText(tr("%1 (S%2)").arg(style::fullestDeviceText(f)).arg(f.stage));
                if (column == 1 && f.share() > 1.0)
                    item->setForeground(style::problemColor());   // the what-if no longer fits
                item->setToolTip(tr("Stage %1: %2 of %3 GiB (%4 %); the most bytes on a device: %5 GiB")
                                     .arg(f.stage)
                                     .arg(f.used / style::kGiB, 0, 'f', 2)
                                     .arg(f.capacity / style::kGiB, 0, 'f', 2)
                                     .arg(100 * f.share(), 0, 'f', 1)
                                     .arg(p->peak_memory_gib, 0, 'f', 2));
            }
        }
        QString change;
        // The bottleneck stage's terms of two different stages are no change of either: the
        // row says which stages they are.
        const bool otherStage = r >= fixedRows && r - fixedRows < BreakdownView::FirstIterationComponent && a && b
            && bottleneckA != bottleneckB;
        if (otherStage) {
            auto* item = new QTableWidgetItem(tr("S%1 → S%2").arg(bottleneckA).arg(bottleneckB));
            item->setToolTip(tr("The bottleneck stage's figure, as in Breakdown: it moved from stage %1 to stage %2, so the two "
                                "columns are of different stages")
                                 .arg(bottleneckA)
                                 .arg(bottleneckB));
            item->setData(kChangedRole, true);
            m_figures->setItem(r, 2, item);
            continue;
        }
        // A term below a nanosecond (the pipeline send of a plan with no boundary that
        // costs anything, 4e-17 s by rounding) reads "0 s": no change is computed from it.
        if (a && b && std::abs(va) > 1e-9) {
            // One decimal; a change that rounds to none reads "0.0 %", never "-0.0 %".
            const double pct = (vb / va - 1) * 100;
            change = std::abs(pct) < 0.05 ? QStringLiteral("0.0 %")
                                          : QStringLiteral("%1%2 %").arg(pct > 0 ? QStringLiteral("+") : QString()).arg(pct, 0, 'f', 1);
        } else if (a && b && std::abs(vb) <= 1e-9) {
            change = QStringLiteral("0.0 %");   // none before and none after: unchanged, as the other rows say
        } else if (a && b) {
            change = tr("from 0");   // from none: no ratio to give
        }
        auto* item = new QTableWidgetItem(change);
        item->setData(kChangedRole, a && b && std::abs(vb - va) > 1e-12 * std::max(1.0, std::abs(va)));
        m_figures->setItem(r, 2, item);
    }
    paintChanges();
    // Every figure in view: the stage table below scrolls instead.
    int figuresHeight = m_figures->horizontalHeader()->height() + 2 * m_figures->frameWidth();
    // A dense model has no expert dispatch (as in Breakdown).
    const int dispatchRow = fixedRows + BreakdownView::DispatchComponent;
    for (int r = fixedRows; r < n; ++r)
        m_figures->setRowHidden(r, r == dispatchRow && !m_context.model.isMoe());
    for (int r = 0; r < n; ++r)
        if (!m_figures->isRowHidden(r))
            figuresHeight += m_figures->rowHeight(r);
    m_figures->setMinimumHeight(figuresHeight);

    const int stages = a ? static_cast<int>(a->stages.size()) : 0;
    m_stages->setRowCount(stages);
    for (int s = 0; s < stages; ++s) {
        const StageEstimate& ea = a->stages[static_cast<size_t>(s)];
        const StageEstimate* eb = b && s < static_cast<int>(b->stages.size()) ? &b->stages[static_cast<size_t>(s)] : nullptr;
        const QString dev = s < m_entry->plan().pp() ? QString::fromStdString(m_entry->plan().stages[static_cast<size_t>(s)].device_type) : QString();
        const QStringList cells = {QStringLiteral("S%1 %2").arg(s).arg(dev), style::formatSeconds(ea.t_fwd + ea.t_bwd),
                                   eb ? style::formatSeconds(eb->t_fwd + eb->t_bwd) : QStringLiteral("—"), style::formatGiB(ea.memory.total()),
                                   eb ? style::formatGiB(eb->memory.total()) : QStringLiteral("—"), style::formatGiB(ea.memory.capacity)};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c == 4 && eb && !eb->memory.fits())
                item->setForeground(style::problemColor());
            m_stages->setItem(s, c, item);
        }
    }

    QString html;
    if (!m_problem.isEmpty())
        html += QStringLiteral("<p><b>%1</b></p>").arg(statusHtml(Status::Problem, palette(), m_problem.toHtmlEscaped()));
    if (!m_hints.isEmpty()) {
        html += tr("<p><b>A new search would help:</b></p><ul>");
        for (const QString& h : m_hints)
            html += QStringLiteral("<li>%1</li>").arg(h.toHtmlEscaped());
        html += QStringLiteral("</ul>");
    } else if (b) {
        html += tr("<p>Re-estimated with the cost model for the same plan; no new search needed.</p>");
    } else if (!have) {
        html += QStringLiteral("<p>%1</p>").arg(m_emptyText.toHtmlEscaped());
    }
    m_hintLabel->setText(html);
}

void WhatIfPanel::paintChanges()
{
    // Compare's highlight of what differs, in the palette's colours: the light theme's pale
    // amber under black text was a bright patch on the dark theme.
    const QPalette& pal = palette();
    for (int r = 0; r < m_figures->rowCount(); ++r) {
        QTableWidgetItem* item = m_figures->item(r, 2);
        if (!item)
            continue;
        style::markDiffers(item, item->data(kChangedRole).toBool(), pal);
    }
}

void WhatIfPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)   // the theme changed: the highlight follows
        paintChanges();
}

} // namespace hapmoe::ui
