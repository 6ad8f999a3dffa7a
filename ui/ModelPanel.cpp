#include "ModelPanel.h"

#include "ProjectDocument.h"
#include "ScriptInputsDialog.h"
#include "Theme.h"

#include "cost/CostModel.h"
#include "io/Documents.h"
#include "io/Presets.h"
#include "megatron/ScriptImport.h"
#include "util/Strings.h"

#include <QCheckBox>
#include <QSignalBlocker>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QResizeEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>
#include <vector>

namespace hapmoe::ui {

namespace {

QSpinBox* intEditor(int min, int max, const QString& special = {})
{
    auto* spin = new QSpinBox;
    spin->setRange(min, max);
    spin->setKeyboardTracking(true);   // validation as you type
    spin->setGroupSeparatorShown(true);
    if (!special.isEmpty())
        spin->setSpecialValueText(special);
    return spin;
}

// The model's value while the editor shows it: a spin box rounds to its decimals, and writing
// that back on an edit of another field would change a value nobody touched (a dropout of
// 0.0004 shown as 0.000 would become 0).
double shownOr(const QDoubleSpinBox* spin, double model)
{
    const double half = 0.5 * std::pow(10.0, -spin->decimals());
    return std::fabs(spin->value() - model) < half ? model : spin->value();
}

QDoubleSpinBox* doubleEditor(double min, double max, int decimals, double step)
{
    auto* spin = new QDoubleSpinBox;
    spin->setRange(min, max);
    spin->setDecimals(decimals);
    spin->setSingleStep(step);
    spin->setKeyboardTracking(true);
    return spin;
}

// A count in the unit that keeps the number below 1000 once rounded to the decimals shown
// (as flopText: 999.96e6 would read "1000.0 M", so it takes the next unit, "1.000 B"), to
// four significant figures: "35.09 B", "1.049 M", "786.4 K"; below a thousand the count itself.
QString humanCount(double v)
{
    if (std::round(v) < 1000)
        return QString::number(v, 'f', 0);
    static const char* const units[] = {"K", "M", "B", "T"};
    double scale = 1e3;
    for (std::size_t u = 0; u < std::size(units); ++u, scale *= 1e3) {
        const double x = v / scale;
        // Four significant figures (1.049 M, 35.09 B, 786.4 K): a token count of 2^20 is not "1.0 M".
        int decimals = x < 10 ? 3 : x < 100 ? 2 : 1;
        const auto rounded = [&] { return std::round(x * std::pow(10.0, decimals)) / std::pow(10.0, decimals); };
        while (decimals > 1 && rounded() >= (decimals == 3 ? 10 : 100))
            --decimals;   // 9.9996 rounds to 10.00, not 10.000
        if (rounded() < 1000 || u + 1 == std::size(units))
            return QStringLiteral("%1 %2").arg(x, 0, 'f', decimals).arg(QLatin1String(units[u]));
    }
    return {};
}

// FLOPs in the unit that keeps the number below 1000, to three significant figures:
// "6.09 TFLOP", "412 GFLOP", "6.38 EFLOP".
QString flopText(double flops)
{
    static const char* const units[] = {"MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP", "ZFLOP"};
    constexpr int last = static_cast<int>(std::size(units)) - 1;
    int u = 0;
    double v = flops / 1e6;
    // Rounded to its shown precision, 999.6 would read "1000": it takes the next unit.
    while (u < last && v >= 999.5) {
        v /= 1000;
        ++u;
    }
    const int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
    return QStringLiteral("%1 %2").arg(v, 0, 'f', decimals).arg(QLatin1String(units[u]));
}

QString patternText(const std::vector<std::uint8_t>& pattern)
{
    QStringList parts;
    for (auto v : pattern)
        parts << QString::number(int(v));
    return parts.join(QLatin1Char(','));
}

} // namespace

ModelPanel::ModelPanel(ProjectDocument* document, QWidget* parent) : QWidget(parent), m_document(document)
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    m_scroll = new QScrollArea;
    m_scroll->setObjectName(QStringLiteral("modelScroll"));
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    outer->addWidget(m_scroll);
    auto* content = new QWidget;
    m_scroll->setWidget(content);
    auto* layout = new QVBoxLayout(content);
    layout->setContentsMargins(12, 12, 12, 12);

    // Presets and import: one row, or the import button under the presets in a narrow tab.
    m_top = new QGridLayout;
    auto* top = m_top;
    m_presetLabel = new QLabel(tr("Preset:"));
    top->addWidget(m_presetLabel, 0, 0);
    m_presets = new QComboBox;
    m_presets->setObjectName(QStringLiteral("modelPresets"));
    // The first entry stands for a model that equals no preset (edited, imported or opened).
    m_presets->addItem(tr("Custom"));
    m_presets->setItemData(0, tr("The model equals no preset; choose one to load it"), Qt::ToolTipRole);
    for (const auto& p : modelPresets()) {
        const QString name = QString::fromStdString(p.name);
        m_presets->addItem(name, name);
        m_presets->setItemData(m_presets->count() - 1,
                               QString::fromStdString(p.summary + "\n" + p.source), Qt::ToolTipRole);
        if (const ModelSpec* preset = findModelPreset(p.name))
            m_presetTexts.append({name, writeModel(*preset)});
    }
    m_presets->setMinimumContentsLength(22);
    top->addWidget(m_presets, 0, 1);
    auto* import = new QPushButton(tr("Import Megatron script\u2026"));
    import->setObjectName(QStringLiteral("importScript"));
    m_import = import;
    top->addWidget(import, 0, 2);
    top->setColumnStretch(3, 1);
    layout->addLayout(top);
    m_source = new QLabel;
    m_source->setObjectName(QStringLiteral("modelSource"));
    m_source->setWordWrap(true);
    m_source->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_source);
    // The script the model came from, and a link to read it with arguments and environment.
    auto* scriptRow = new QHBoxLayout;
    m_script = new QLabel;
    m_script->setObjectName(QStringLiteral("modelScript"));
    m_script->setWordWrap(true);
    m_script->setTextInteractionFlags(Qt::TextSelectableByMouse);
    scriptRow->addWidget(m_script, 1);
    m_scriptInputs = new QLabel(QStringLiteral("<a href=\"inputs\">%1</a>").arg(tr("Arguments and environment\u2026")));
    m_scriptInputs->setObjectName(QStringLiteral("scriptInputs"));
    m_scriptInputs->setTextFormat(Qt::RichText);
    m_scriptInputs->setTextInteractionFlags(Qt::LinksAccessibleByMouse | Qt::LinksAccessibleByKeyboard);
    m_scriptInputs->setToolTip(tr("Read the script with arguments ($1, $2, \u2026) and environment variables, as its "
                                  "tests on them choose the configuration"));
    scriptRow->addWidget(m_scriptInputs, 0, Qt::AlignTop);
    layout->addLayout(scriptRow);
    m_message = new QLabel;
    m_message->setWordWrap(true);
    m_message->setObjectName(QStringLiteral("modelValidation"));
    layout->addWidget(m_message);

    m_grid = new QGridLayout;
    m_grid->setHorizontalSpacing(16);
    layout->addLayout(m_grid);
    auto makeBox = [&](const QString& title, const QString& objectName, QGroupBox*& box) {
        box = new QGroupBox(title);
        box->setObjectName(objectName);
        auto* form = new QFormLayout(box);
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        form->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
        // In a narrow tab a label goes above a field too wide to stand beside it.
        form->setRowWrapPolicy(QFormLayout::WrapLongRows);
        return form;
    };
    QFormLayout* arch = makeBox(tr("Transformer"), QStringLiteral("modelTransformerBox"), m_archBox);
    QFormLayout* moe = makeBox(tr("Mixture of experts"), QStringLiteral("modelMoeBox"), m_moeBox);
    QFormLayout* train = makeBox(tr("Training"), QStringLiteral("modelTrainingBox"), m_trainBox);
    m_derivedBox = new QGroupBox(tr("Derived figures"));
    m_derivedBox->setObjectName(QStringLiteral("modelDerivedBox"));
    auto* derivedLayout = new QVBoxLayout(m_derivedBox);
    m_derived = new QLabel;
    m_derived->setObjectName(QStringLiteral("modelDerived"));
    m_derived->setTextFormat(Qt::RichText);
    m_derived->setWordWrap(true);
    m_derived->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_derived->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    derivedLayout->addWidget(m_derived);
    derivedLayout->addStretch(1);
    arrangeGroups(2);
    layout->addStretch(1);

    auto intField = [&](QFormLayout* form, const QString& label, const QString& key, int ModelSpec::*member, int min,
                        int max, const QString& special = {}) {
        QSpinBox* spin = intEditor(min, max, special);
        form->addRow(label, spin);
        addField(key, spin, [spin, member](const ModelSpec& m) { spin->setValue(m.*member); },
                 [spin, member](ModelSpec& m) { m.*member = spin->value(); });
        return spin;
    };
    auto boolField = [&](QFormLayout* form, const QString& label, const QString& key, bool ModelSpec::*member) {
        auto* check = new QCheckBox(label);
        form->addRow(QString(), check);
        addField(key, check, [check, member](const ModelSpec& m) { check->setChecked(m.*member); },
                 [check, member](ModelSpec& m) { m.*member = check->isChecked(); });
    };
    // A choice among items with int data: `of` gives the model's item, `set` puts one in the model.
    auto choiceField = [&](QFormLayout* form, const QString& label, const QString& key,
                           const std::vector<std::pair<QString, int>>& items, std::function<int(const ModelSpec&)> of,
                           std::function<void(ModelSpec&, int)> set) {
        auto* combo = new QComboBox;
        for (const auto& [text, data] : items)
            combo->addItem(text, data);
        form->addRow(label, combo);
        addField(key, combo, [combo, of](const ModelSpec& m) { combo->setCurrentIndex(combo->findData(of(m))); },
                 [combo, set](ModelSpec& m) { set(m, combo->currentData().toInt()); });
        return combo;
    };

    auto* name = new QLineEdit;
    arch->addRow(tr("Name:"), name);
    addField(QStringLiteral("name"), name, [name](const ModelSpec& m) { name->setText(QString::fromStdString(m.name)); },
             [name](ModelSpec& m) { m.name = name->text().toStdString(); });
    intField(arch, tr("Layers:"), QStringLiteral("num_layers"), &ModelSpec::num_layers, 0, 1000);
    intField(arch, tr("Hidden size:"), QStringLiteral("hidden_size"), &ModelSpec::hidden_size, 0, 262144);
    intField(arch, tr("FFN hidden size:"), QStringLiteral("ffn_hidden_size"), &ModelSpec::ffn_hidden_size, 0, 1048576);
    intField(arch, tr("Attention heads:"), QStringLiteral("num_attention_heads"), &ModelSpec::num_attention_heads, 0, 4096);
    intField(arch, tr("Query groups (GQA):"), QStringLiteral("num_query_groups"), &ModelSpec::num_query_groups, 0, 4096,
             tr("none (MHA)"));
    intField(arch, tr("KV channels:"), QStringLiteral("kv_channels"), &ModelSpec::kv_channels, 0, 65536, tr("hidden / heads"));
    intField(arch, tr("Vocabulary:"), QStringLiteral("vocab_size"), &ModelSpec::vocab_size, 0, 10000000);
    QSpinBox* padding = intField(arch, tr("Vocabulary padding:"), QStringLiteral("make_vocab_size_divisible_by"),
                                 &ModelSpec::make_vocab_size_divisible_by, 1, kMaxVocabMultiple);
    padding->setPrefix(tr("multiple of "));
    padding->setSuffix(tr(" × TP"));
    padding->setToolTip(tr("Megatron-LM's --make-vocab-size-divisible-by: the word embedding and the output layer "
                           "hold the vocabulary rounded up to a multiple of this times TP (default 128)."));
    intField(arch, tr("Sequence length:"), QStringLiteral("seq_length"), &ModelSpec::seq_length, 0, 10000000);
    intField(arch, tr("Max positions:"), QStringLiteral("max_position_embeddings"), &ModelSpec::max_position_embeddings, 0,
             10000000, tr("= sequence length"));
    auto* norm = new QComboBox;
    norm->addItems({QStringLiteral("RMSNorm"), QStringLiteral("LayerNorm")});
    arch->addRow(tr("Normalization:"), norm);
    addField(QStringLiteral("normalization"), norm,
             [norm](const ModelSpec& m) { norm->setCurrentText(QString::fromStdString(m.normalization)); },
             [norm](ModelSpec& m) { m.normalization = norm->currentText().toStdString(); });
    boolField(arch, tr("SwiGLU (gated activation)"), QStringLiteral("swiglu"), &ModelSpec::swiglu);
    boolField(arch, tr("Bias in linear layers"), QStringLiteral("add_bias_linear"), &ModelSpec::add_bias_linear);
    boolField(arch, tr("Untied embedding and output"), QStringLiteral("untie_embeddings_and_output_weights"),
              &ModelSpec::untie_embeddings_and_output_weights);
    boolField(arch, tr("Query and key norms (QK layernorm)"), QStringLiteral("qk_layernorm"), &ModelSpec::qk_layernorm);
    // Megatron-LM's --multi-latent-attention and its sizes (docs/cost-model.md section 3.8).
    boolField(arch, tr("Multi-latent attention (MLA)"), QStringLiteral("multi_latent_attention"),
              &ModelSpec::multi_latent_attention);
    intField(arch, tr("MLA query latent:"), QStringLiteral("q_lora_rank"), &ModelSpec::q_lora_rank, 0, 1048576,
             tr("none (full-rank query)"));
    intField(arch, tr("MLA key/value latent:"), QStringLiteral("kv_lora_rank"), &ModelSpec::kv_lora_rank, 1, 1048576);
    intField(arch, tr("MLA query/key head dim:"), QStringLiteral("qk_head_dim"), &ModelSpec::qk_head_dim, 1, 65536);
    intField(arch, tr("MLA rotary head dim:"), QStringLiteral("qk_pos_emb_head_dim"), &ModelSpec::qk_pos_emb_head_dim, 0, 65536);
    intField(arch, tr("MLA value head dim:"), QStringLiteral("v_head_dim"), &ModelSpec::v_head_dim, 1, 65536);
    // Megatron-LM's --mtp-num-layers (docs/cost-model.md section 3.9).
    intField(arch, tr("Multi-token prediction:"), QStringLiteral("mtp_num_layers"), &ModelSpec::mtp_num_layers, 0, kMaxLayers,
             tr("none"))
        ->setSuffix(tr(" depth(s)"));
    // Megatron-LM's --attention-dropout and --hidden-dropout (docs/cost-model.md section 5.2):
    // above 0 each keeps a 1-byte mask per element for backward.
    auto dropoutField = [&](const QString& label, const QString& key, double ModelSpec::*member, const QString& tip) {
        QDoubleSpinBox* spin = doubleEditor(0, 1, 3, 0.05);
        spin->setToolTip(tip);
        arch->addRow(label, spin);
        addField(key, spin, [spin, member](const ModelSpec& m) { spin->setValue(m.*member); },
                 [spin, member](ModelSpec& m) { m.*member = shownOr(spin, m.*member); });
    };
    dropoutField(tr("Attention dropout:"), QStringLiteral("attention_dropout"), &ModelSpec::attention_dropout,
                 tr("Dropout on the attention probabilities (Megatron-LM --attention-dropout, default 0.1). Above 0 "
                    "the unfused attention keeps a mask and the dropped probabilities per score."));
    dropoutField(tr("Hidden dropout:"), QStringLiteral("hidden_dropout"), &ModelSpec::hidden_dropout,
                 tr("Dropout on each sub-layer's output and on the embedding (Megatron-LM --hidden-dropout, default "
                    "0.1). Above 0 every layer keeps two 1-byte masks per token and hidden element."));

    intField(moe, tr("Experts:"), QStringLiteral("num_experts"), &ModelSpec::num_experts, 0, 4096, tr("dense model"));
    intField(moe, tr("Router top-k:"), QStringLiteral("moe_router_topk"), &ModelSpec::moe_router_topk, 0, 4096);
    intField(moe, tr("Expert FFN size:"), QStringLiteral("moe_ffn_hidden_size"), &ModelSpec::moe_ffn_hidden_size, 0, 1048576,
             tr("= FFN hidden size"));
    intField(moe, tr("MoE every k-th layer:"), QStringLiteral("moe_layer_freq"), &ModelSpec::moe_layer_freq, 0, 1000);
    auto* pattern = new QLineEdit;
    pattern->setPlaceholderText(tr("optional: 1,0,1,\u2026 one entry per layer"));
    // Wide enough for its hint (a QLineEdit's own size hint is about 17 characters).
    pattern->setMinimumWidth(pattern->fontMetrics().horizontalAdvance(pattern->placeholderText()) +
                             4 * pattern->fontMetrics().averageCharWidth());
    moe->addRow(tr("MoE layer pattern:"), pattern);
    addField(QStringLiteral("moe_layer_pattern"), pattern,
             [pattern](const ModelSpec& m) { pattern->setText(patternText(m.moe_layer_pattern)); },
             [pattern](ModelSpec& m) {
                 m.moe_layer_pattern.clear();
                 for (const QString& part : pattern->text().split(QRegularExpression(QStringLiteral("[,\\s]+")),
                                                                 Qt::SkipEmptyParts))
                     m.moe_layer_pattern.push_back(part.trimmed() == QLatin1String("0") ? 0 : 1);
             });
    intField(moe, tr("Shared expert size:"), QStringLiteral("moe_shared_expert_intermediate_size"),
             &ModelSpec::moe_shared_expert_intermediate_size, 0, 1048576, tr("none"));
    choiceField(moe, tr("Token dispatcher:"), QStringLiteral("moe_token_dispatcher_type"),
                {{QStringLiteral("alltoall"), int(TokenDispatcher::AllToAll)},
                 {QStringLiteral("allgather"), int(TokenDispatcher::AllGather)},
                 {QStringLiteral("flex"), int(TokenDispatcher::Flex)}},
                [](const ModelSpec& m) { return int(m.moe_token_dispatcher_type); },
                [](ModelSpec& m, int choice) { m.moe_token_dispatcher_type = TokenDispatcher(choice); });
    // The router's recipe (Megatron-LM's --moe-router-* flags): written by the launchers, costed
    // as any router.
    choiceField(moe, tr("Router scores:"), QStringLiteral("moe_router_score_function"),
                {{QStringLiteral("softmax"), int(RouterScore::Softmax)},
                 {QStringLiteral("sigmoid"), int(RouterScore::Sigmoid)},
                 {QStringLiteral("sqrtsoftplus"), int(RouterScore::SqrtSoftplus)}},
                [](const ModelSpec& m) { return int(m.moe_router_score_function); },
                [](ModelSpec& m, int choice) { m.moe_router_score_function = RouterScore(choice); });
    boolField(moe, tr("Expert bias (aux-loss-free balancing)"), QStringLiteral("moe_router_enable_expert_bias"),
              &ModelSpec::moe_router_enable_expert_bias);
    intField(moe, tr("Router expert groups:"), QStringLiteral("moe_router_num_groups"), &ModelSpec::moe_router_num_groups, 0, 4096,
             tr("none"));
    intField(moe, tr("Groups per token:"), QStringLiteral("moe_router_group_topk"), &ModelSpec::moe_router_group_topk, 0, 4096,
             tr("none"));
    {
        QDoubleSpinBox* scale = doubleEditor(0, 1000, 3, 0.1);
        scale->setSpecialValueText(tr("none"));
        scale->setToolTip(tr("Megatron-LM's --moe-router-topk-scaling-factor: the top-k routing weights are multiplied by it "
                             "(DeepSeek-V3 2.5)."));
        moe->addRow(tr("Top-k weight scale:"), scale);
        addField(QStringLiteral("moe_router_topk_scaling_factor"), scale,
                 [scale](const ModelSpec& m) { scale->setValue(m.moe_router_topk_scaling_factor); },
                 [scale](ModelSpec& m) { m.moe_router_topk_scaling_factor = shownOr(scale, m.moe_router_topk_scaling_factor); });
    }

    auto* mbs = intEditor(0, 65536);
    train->addRow(tr("Micro-batch size:"), mbs);
    addField(QStringLiteral("training.micro_batch_size"), mbs,
             [mbs](const ModelSpec& m) { mbs->setValue(m.training.micro_batch_size); },
             [mbs](ModelSpec& m) { m.training.micro_batch_size = mbs->value(); });
    auto* gbs = intEditor(0, 10000000);
    train->addRow(tr("Global batch size:"), gbs);
    addField(QStringLiteral("training.global_batch_size"), gbs,
             [gbs](const ModelSpec& m) { gbs->setValue(m.training.global_batch_size); },
             [gbs](ModelSpec& m) { m.training.global_batch_size = gbs->value(); });
    choiceField(train, tr("Precision:"), QStringLiteral("training.precision"),
                {{QStringLiteral("bf16"), int(Precision::BF16)}, {QStringLiteral("fp16"), int(Precision::FP16)}},
                [](const ModelSpec& m) { return int(m.training.precision); },
                [](ModelSpec& m, int choice) { m.training.precision = Precision(choice); });
    // Megatron-LM's --fp8-format (docs/cost-model.md section 3.7): the linear layers' GEMMs in
    // FP8; the search leaves out device types without FP8 tensor cores.
    QComboBox* fp8 = choiceField(
        train, tr("FP8 GEMMs:"), QStringLiteral("training.fp8_format"),
        {{tr("Off"), int(Fp8Format::None)}, {QStringLiteral("hybrid"), int(Fp8Format::Hybrid)},
         {QStringLiteral("e4m3"), int(Fp8Format::E4M3)}},
        [](const ModelSpec& m) { return int(m.training.fp8_format); },
        [](ModelSpec& m, int choice) {
            m.training.fp8_format = Fp8Format(choice);
            if (!m.training.fp8())
                m.training.fp8_param_gather = false;
        });
    fp8->setToolTip(tr("Run the linear layers' GEMMs in FP8 through Transformer Engine (Megatron-LM --fp8-format): "
                       "at the device's FP8 peak, with the casts and 2 bytes per parameter of FP8 weight copies. "
                       "Device types without FP8 tensor cores (A100, MI250X, Ascend 910B/C) are left out of the search."));
    // Megatron-LM's --fp8-recipe (section 3.7): the casts' traffic, and the device types that run it.
    QComboBox* recipe = choiceField(
        train, tr("FP8 recipe:"), QStringLiteral("training.fp8_recipe"),
        {{tr("Delayed scaling"), int(Fp8Recipe::Delayed)}, {tr("Tensorwise (current scaling)"), int(Fp8Recipe::Tensorwise)},
         {tr("MXFP8 (Blackwell)"), int(Fp8Recipe::MXFP8)}, {tr("Blockwise (1×128, 128×128)"), int(Fp8Recipe::Blockwise)}},
        [](const ModelSpec& m) { return int(m.training.fp8_recipe); },
        [](ModelSpec& m, int choice) { m.training.fp8_recipe = Fp8Recipe(choice); });
    recipe->setToolTip(tr("How Transformer Engine scales the FP8 tensors (Megatron-LM --fp8-recipe). Tensorwise reads "
                          "each tensor once more for its amax; MXFP8 and blockwise write both orientations with block "
                          "scales and need no transpose. MXFP8 runs on compute capability 10.x (B200), blockwise on 9.0 "
                          "or higher: the search leaves other device types out."));
    auto* fp8Params = new QCheckBox(tr("FP8 weights (--fp8-param-gather)"));
    fp8Params->setToolTip(tr("The linear layers' weights held and gathered in FP8 in place of bf16: no separate "
                             "FP8 copies. Needs FP8 GEMMs and the distributed optimizer."));
    train->addRow(QString(), fp8Params);
    addField(QStringLiteral("training.fp8_param_gather"), fp8Params,
             [fp8Params](const ModelSpec& m) { fp8Params->setChecked(m.training.fp8_param_gather); },
             [fp8Params](ModelSpec& m) { m.training.fp8_param_gather = m.training.fp8() && fp8Params->isChecked(); });
    // Gradient precision (docs/cost-model.md section 5.1): unset follows Megatron-LM's default
    // for the precision; the two others are its --accumulate-allreduce-grads-in-fp32 and
    // --grad-reduce-in-bf16 (half-precision gradients).
    QComboBox* grads = choiceField(
        train, tr("Gradients:"), QStringLiteral("training.accumulate_allreduce_grads_in_fp32"),
        {{tr("Default"), 0}, {tr("fp32"), 1}, {tr("Half"), 2}},
        [](const ModelSpec& m) {
            const auto& g = m.training.accumulate_allreduce_grads_in_fp32;
            return !g ? 0 : *g ? 1 : 2;
        },
        [](ModelSpec& m, int choice) {
            m.training.accumulate_allreduce_grads_in_fp32 = choice == 0 ? std::nullopt : std::optional<bool>(choice == 1);
        });
    grads->setToolTip(tr("Gradients accumulated and reduced over data parallelism in fp32 (18 bytes per parameter, "
                         "6 + 12/d distributed) or in the training precision (20, 4 + 16/d, and half the gradient "
                         "traffic). Default is Megatron-LM's: fp32 for bf16, half for fp16."));
    // Megatron-LM's --cross-entropy-loss-fusion and --cross-entropy-fusion-impl
    // (docs/cost-model.md section 3.6): one choice for the two flags.
    QComboBox* crossEntropy = choiceField(
        train, tr("Cross-entropy:"), QStringLiteral("training.cross_entropy_loss_fusion"),
        {{tr("Unfused"), 0}, {tr("Fused (native)"), 1}, {tr("Fused (Transformer Engine)"), 2}},
        [](const ModelSpec& m) {
            const auto& t = m.training;
            return !t.cross_entropy_loss_fusion ? 0 : t.cross_entropy_fusion_impl == CrossEntropyFusionImpl::TE ? 2 : 1;
        },
        [](ModelSpec& m, int choice) {
            m.training.cross_entropy_loss_fusion = choice > 0;
            m.training.cross_entropy_fusion_impl = choice == 2 ? CrossEntropyFusionImpl::TE : CrossEntropyFusionImpl::Native;
        });
    crossEntropy->setToolTip(tr("The loss over the vocabulary: Megatron-LM's unfused passes (38 + 14 bytes per logit, "
                                "the fp32 softmax kept), its fused kernels (--cross-entropy-loss-fusion: 26 + 14), or "
                                "Transformer Engine's (--cross-entropy-fusion-impl te: 6 + 4, the bf16 gradient kept "
                                "instead of the fp32 softmax)."));
    auto* distOpt = new QCheckBox(tr("Distributed optimizer"));
    train->addRow(QString(), distOpt);
    addField(QStringLiteral("training.use_distributed_optimizer"), distOpt,
             [distOpt](const ModelSpec& m) { distOpt->setChecked(m.training.use_distributed_optimizer); },
             [distOpt](ModelSpec& m) { m.training.use_distributed_optimizer = distOpt->isChecked(); });
    auto* rho = doubleEditor(0, 64, 2, 0.05);
    rho->setToolTip(tr("Router imbalance rho = max expert load / mean expert load (paper section 3.2)"));
    train->addRow(tr("Router imbalance \u03c1:"), rho);
    addField(QStringLiteral("training.router_imbalance"), rho,
             [rho](const ModelSpec& m) { rho->setValue(m.training.router_imbalance); },
             [rho](ModelSpec& m) { m.training.router_imbalance = shownOr(rho, m.training.router_imbalance); });
    auto* gamma = doubleEditor(-1, 2, 2, 0.05);
    gamma->setToolTip(tr("Weight gamma of the imbalance on the MoE critical path: 1 + gamma (min(rho, EP) - 1)"));
    train->addRow(tr("Imbalance weight \u03b3:"), gamma);
    addField(QStringLiteral("training.imbalance_weight"), gamma,
             [gamma](const ModelSpec& m) { gamma->setValue(m.training.imbalance_weight); },
             [gamma](ModelSpec& m) { m.training.imbalance_weight = shownOr(gamma, m.training.imbalance_weight); });

    connect(m_presets, &QComboBox::activated, this, [this](int index) {
        if (index > 0)
            loadPreset(m_presets->itemData(index).toString());
        // Loading refreshes the combo through modelChanged; "Custom" changes nothing and
        // the combo goes back to what the model is.
        showMatchingPreset();
    });
    connect(import, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Import a Megatron-LM launch script"), QString(),
                                                          tr("Shell scripts (*.sh *.bash);;All files (*)"));
        if (path.isEmpty())
            return;
        const QString error = importScript(path);
        if (!error.isEmpty())
            m_message->setText(QStringLiteral("<b>%1</b> %2").arg(tr("Import failed:"), error.toHtmlEscaped()));
    });
    connect(m_scriptInputs, &QLabel::linkActivated, this, &ModelPanel::editScriptInputs);
    connect(document, &ProjectDocument::modelChanged, this, &ModelPanel::refresh);
    // One update per edit, which may send several of these (a preset: reset and change).
    for (auto signal : {&ProjectDocument::clusterChanged, &ProjectDocument::clusterReset, &ProjectDocument::devicesChanged})
        connect(document, signal, this, [this] {
            if (!m_placementPending) {
                m_placementPending = true;
                QTimer::singleShot(0, this, [this] {
                    m_placementPending = false;
                    updatePlacementNote();
                });
            }
        });
    orderTabs();   // arrangeGroups ran before the fields were made
    refresh();
}

void ModelPanel::addField(const QString& key, QWidget* editor, std::function<void(const ModelSpec&)> read,
                          std::function<void(ModelSpec&)> write)
{
    editor->setObjectName(key);
    m_fields.insert(key, Field{editor, std::move(read), std::move(write)});
    m_order << key;
    if (auto* spin = qobject_cast<QSpinBox*>(editor))
        connect(spin, &QSpinBox::valueChanged, this, [this, key] { edited(key); });
    else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(editor))
        connect(dspin, &QDoubleSpinBox::valueChanged, this, [this, key] { edited(key); });
    else if (auto* combo = qobject_cast<QComboBox*>(editor))
        connect(combo, &QComboBox::currentIndexChanged, this, [this, key] { edited(key); });
    else if (auto* check = qobject_cast<QCheckBox*>(editor))
        connect(check, &QCheckBox::toggled, this, [this, key] { edited(key); });
    else if (auto* line = qobject_cast<QLineEdit*>(editor))
        connect(line, &QLineEdit::textEdited, this, [this, key] { edited(key); });
}

int ModelPanel::twoColumnWidth() const
{
    const QMargins margins = m_scroll->widget()->layout()->contentsMargins();
    const int left = std::max(m_archBox->sizeHint().width(), m_trainBox->sizeHint().width());
    const int right = std::max(m_moeBox->sizeHint().width(), m_derivedBox->minimumSizeHint().width());
    // The vertical scroll bar counted in: the decision must not depend on the content's
    // height, which depends on the decision.
    return margins.left() + left + m_grid->horizontalSpacing() + right + margins.right() +
           m_scroll->verticalScrollBar()->sizeHint().width();
}

int ModelPanel::presetRowWidth() const
{
    const QMargins margins = m_scroll->widget()->layout()->contentsMargins();
    return margins.left() + m_presetLabel->sizeHint().width() + m_presets->minimumSizeHint().width() +
           m_import->sizeHint().width() + 2 * m_top->horizontalSpacing() + margins.right() +
           m_scroll->verticalScrollBar()->sizeHint().width();
}

void ModelPanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    arrangeGroups(event->size().width() >= twoColumnWidth() ? 2 : 1);
    const bool oneRow = event->size().width() >= presetRowWidth();
    if (oneRow != (m_top->itemAtPosition(0, 2) != nullptr)) {
        m_top->removeWidget(m_import);
        if (oneRow)
            m_top->addWidget(m_import, 0, 2);
        else
            m_top->addWidget(m_import, 1, 1, Qt::AlignLeft);
    }
}

void ModelPanel::arrangeGroups(int columns)
{
    if (columns == m_columns)
        return;
    m_columns = columns;
    for (QWidget* box : {static_cast<QWidget*>(m_archBox), static_cast<QWidget*>(m_moeBox),
                         static_cast<QWidget*>(m_trainBox), static_cast<QWidget*>(m_derivedBox)})
        m_grid->removeWidget(box);
    if (columns == 2) {
        // The derived figures first here too, at the top of the right column (in view with the
        // preset in a 1280 x 800 window), the experts under them; the Transformer and the
        // training settings on the left. Each column's boxes follow one another.
        m_grid->addWidget(m_archBox, 0, 0, 2, 1);
        m_grid->addWidget(m_derivedBox, 0, 1);
        m_grid->addWidget(m_moeBox, 1, 1, 2, 1);
        m_grid->addWidget(m_trainBox, 2, 0);
        m_grid->setColumnStretch(1, 1);
        // The height the Transformer needs beyond the derived figures goes to the middle row,
        // which both spanning boxes share: the experts start right under the figures.
        m_grid->setRowStretch(1, 1);
    } else {
        m_grid->setRowStretch(1, 0);
        // Stacked, the derived figures come first: in view with the preset, above the fields.
        m_grid->addWidget(m_derivedBox, 0, 0);
        m_grid->addWidget(m_archBox, 1, 0);
        m_grid->addWidget(m_moeBox, 2, 0);
        m_grid->addWidget(m_trainBox, 3, 0);
        m_grid->setColumnStretch(1, 0);
    }
    m_grid->setColumnStretch(0, 1);
    orderTabs();
}

void ModelPanel::orderTabs()
{
    // Tab goes down each column as it is drawn: from the Transformer's last field to the
    // training settings under it in two columns, to the experts in one.
    QList<QWidget*> chain;
    const QList<QGroupBox*> boxes = m_columns == 2 ? QList<QGroupBox*>{m_archBox, m_trainBox, m_moeBox}
                                                 : QList<QGroupBox*>{m_archBox, m_moeBox, m_trainBox};
    for (QGroupBox* box : boxes)
        for (const QString& key : std::as_const(m_order))
            if (QWidget* editor = m_fields.value(key).editor; editor && box->isAncestorOf(editor))
                chain << editor;
    for (qsizetype i = 1; i < chain.size(); ++i)
        QWidget::setTabOrder(chain[i - 1], chain[i]);
}

QWidget* ModelPanel::fieldEditor(const QString& key) const { return m_fields.value(key).editor; }

QString ModelPanel::fieldLabel(const QString& key) const
{
    // The name the form shows ("Layers"), for the undo menu; the key where there is none.
    QWidget* editor = fieldEditor(key);
    if (!editor)
        return key;
    QString text;
    if (auto* check = qobject_cast<QCheckBox*>(editor))
        text = check->text();
    for (const QFormLayout* form : findChildren<QFormLayout*>())
        if (auto* label = qobject_cast<QLabel*>(form->labelForField(editor)))
            text = label->text();
    text.remove(QLatin1Char('&'));
    while (text.endsWith(QLatin1Char(':')))
        text.chop(1);
    return text.isEmpty() ? key : text;
}
QString ModelPanel::validationMessage() const { return m_message->text(); }
QString ModelPanel::derivedText() const { return m_derived->text(); }
QString ModelPanel::countText(double count) { return humanCount(count); }

void ModelPanel::refresh()
{
    if (m_committing) {
        // Our own commit: the editors already show the document; leave the one being typed in alone.
        updateDerived(m_document->model());
        enableDependentFields(m_document->model());
        showMatchingPreset();
        return;
    }
    m_updating = true;
    const ModelSpec& m = m_document->model();
    for (const QString& key : std::as_const(m_order))
        m_fields[key].read(m);
    m_source->setText(m.source.empty() ? QString()
                                       : tr("<b>Source:</b> %1").arg(QString::fromStdString(m.source).toHtmlEscaped()));
    const std::string& script = m_document->project().current_script;
    // The script as it is read: "train.sh 70B with NNODES=4", as the model's source names it.
    QString scriptText = QString::fromStdString(script);
    if (const QString inputs = ScriptInputsDialog::summary(m_document->project().current_script_inputs); !inputs.isEmpty())
        scriptText += QLatin1Char(' ') + inputs;
    m_script->setText(script.empty() ? QString()
                                     : tr("<b>Current configuration:</b> imported from %1 (estimated beside the plans)")
                                           .arg(scriptText.toHtmlEscaped()));
    // Without a source or a script their lines leave no gap above the groups.
    m_source->setVisible(!m.source.empty());
    m_script->setVisible(!script.empty());
    m_scriptInputs->setVisible(!script.empty());
    m_invalidKey.clear();
    for (const auto& f : std::as_const(m_fields))
        markField(f.editor, false);
    m_message->clear();
    setPendingEdit(QString());   // the fields show the document again
    // A model read from a file or a script may break a rule the fields enforce when typed
    // (hidden size 4095 with 32 heads): the field at fault is marked as it would be.
    try {
        validateModel(m, "model");
    } catch (const InputError& e) {
        markInvalid(e, QString());
    }
    m_updating = false;
    updateDerived(m);
    enableDependentFields(m);
    showMatchingPreset();
}

QString ModelPanel::matchingPreset() const
{
    const std::string text = writeModel(m_document->model());
    for (const auto& [name, presetText] : m_presetTexts) {
        if (presetText == text)
            return name;
    }
    return {};
}

void ModelPanel::showMatchingPreset()
{
    const QString name = matchingPreset();
    const int row = name.isEmpty() ? 0 : m_presets->findData(name);
    m_presets->setCurrentIndex(std::max(row, 0));
    // A preset's citation is for the preset: once a field differs, it is what the model was
    // made from.
    const ModelSpec& m = m_document->model();
    const QString own = QString::fromStdString(m.name);
    const bool fromPreset
        = std::any_of(m_presetTexts.begin(), m_presetTexts.end(), [&own](const auto& p) { return p.first == own; });
    const QString source = QString::fromStdString(m.source).toHtmlEscaped();
    if (!m.source.empty())
        m_source->setText(name.isEmpty() && fromPreset
                              ? tr("<b>Source:</b> modified from %1, after %2").arg(own.toHtmlEscaped(), source)
                              : tr("<b>Source:</b> %1").arg(source));
}

void ModelPanel::enableDependentFields(const ModelSpec& m)
{
    // FP8 weights need FP8 GEMMs (Megatron-LM's --fp8-param-gather under --fp8-format); turning
    // FP8 off clears them (the FP8 GEMMs field's write), which the box shows.
    if (auto* box = qobject_cast<QCheckBox*>(fieldEditor(QStringLiteral("training.fp8_param_gather")))) {
        const QSignalBlocker quiet(box);
        box->setChecked(m.training.fp8_param_gather);
        box->setEnabled(m.training.fp8());
    }
    if (QWidget* recipe = fieldEditor(QStringLiteral("training.fp8_recipe")))
        recipe->setEnabled(m.training.fp8());
    // Multi-latent attention has its own sizes, shown with it; query groups and KV channels do
    // not apply to it.
    for (const char* key : {"q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim"})
        if (QWidget* w = fieldEditor(QString::fromLatin1(key))) {
            w->setEnabled(m.multi_latent_attention);
            if (auto* form = w->parentWidget() ? qobject_cast<QFormLayout*>(w->parentWidget()->layout()) : nullptr)
                form->setRowVisible(w, m.multi_latent_attention);
        }
    for (const char* key : {"num_query_groups", "kv_channels"})
        if (QWidget* w = fieldEditor(QString::fromLatin1(key)))
            w->setEnabled(!m.multi_latent_attention);
    // A dense model has no router, experts or dispatcher: their settings do not apply.
    for (const char* key : {"moe_router_topk", "moe_ffn_hidden_size", "moe_layer_freq", "moe_layer_pattern",
"moe_shared_expert_intermediate_size", "moe_token_dispatcher_type", "moe_router_score_function",
                            "moe_router_enable_expert_bias", "moe_router_num_groups", "moe_router_group_topk",
                            "moe_router_topk_scaling_factor", "training.router_imbalance",
                            "training.imbalance_weight"})
        if (QWidget* w = fieldEditor(QString::fromLatin1(key)))
            w->setEnabled(m.num_experts > 0);
}

void ModelPanel::edited(const QString& key)
{
    if (m_updating)
        return;
    ModelSpec candidate = m_document->model();
    for (const QString& k : std::as_const(m_order))
        m_fields[k].write(candidate);
    // Fewer experts or a larger top-k can put the imbalance the user left alone above E / k,
    // the most a router can reach; it follows the shape down in the same step (one undo)
    // rather than refusing a field the user did not touch.
    const double previousRho = candidate.training.router_imbalance;
    const bool rhoCapped = key != QLatin1String("training.router_imbalance") && candidate.capRouterImbalance();
    if (!m_invalidKey.isEmpty())
        if (QWidget* w = fieldEditor(m_invalidKey))
            markField(w, false);
    m_invalidKey.clear();
    try {
        validateModel(candidate, "model");
    } catch (const InputError& e) {
        // Keep what the user typed on screen, name the field at fault, do not commit.
        markInvalid(e, key);
        m_pendingKey = key;
        setPendingEdit(tr("%1 on the Model tab shows %2, which the model does not take (%3: %4); correct it, or "
                          "undo to put the model's value back")
                           .arg(fieldLabel(key), shownValue(key), QString::fromStdString(e.where()),
                                QString::fromStdString(e.detail())));
        return;
    }
    m_message->clear();
    setPendingEdit(QString());
    m_committing = true;
    m_document->setModel(candidate, tr("Change %1").arg(fieldLabel(key)), key);
    m_committing = false;
    updateDerived(candidate);
    if (rhoCapped) {
        m_updating = true;
        m_fields[QStringLiteral("training.router_imbalance")].read(candidate);
        m_updating = false;
        m_message->setText(tr("%1 lowered from %2 to %3: with %4 experts and top-%5 an expert gets at most E / k = %3 "
                              "times the mean load.")
                               .arg(fieldLabel(QStringLiteral("training.router_imbalance")), QString::number(previousRho, 'g', 4),
                                    QString::number(candidate.training.router_imbalance, 'g', 4))
                               .arg(candidate.num_experts)
                               .arg(candidate.moe_router_topk));
    }
}

QString ModelPanel::shownValue(const QString& key) const
{
    const QWidget* w = fieldEditor(key);
    if (const auto* spin = qobject_cast<const QAbstractSpinBox*>(w))
        return spin->text();
    if (const auto* combo = qobject_cast<const QComboBox*>(w))
        return QStringLiteral("\"%1\"").arg(combo->currentText());
    if (const auto* line = qobject_cast<const QLineEdit*>(w))
        return QStringLiteral("\"%1\"").arg(line->text());
    return {};
}

void ModelPanel::setPendingEdit(const QString& problem)
{
    if (problem == m_pendingEdit)
        return;
    m_pendingEdit = problem;
    emit pendingEditChanged(problem);
}

void ModelPanel::markInvalid(const InputError& e, const QString& fallbackKey)
{
    QString where = QString::fromStdString(e.where());
    if (where.startsWith(QLatin1String("model.")))
        where = where.mid(6);
    m_invalidKey = m_fields.contains(where) ? where : fallbackKey;
    if (QWidget* w = fieldEditor(m_invalidKey))
        markField(w, true);
    m_message->setText(statusHtml(Status::Problem, palette(),
                                  QStringLiteral("\u26a0 <b>%1</b>: %2")
                                      .arg(where.toHtmlEscaped(), QString::fromStdString(e.detail()).toHtmlEscaped())));
}

void ModelPanel::markField(QWidget* editor, bool invalid)
{
    if (!invalid) {
        if (editor->property("invalidMark").toBool()) {
            editor->setPalette(QPalette());   // no role of its own: the theme's, now and after a switch
            editor->setProperty("invalidMark", false);
        }
        return;
    }
    QPalette p;
    const QPalette& theme = palette();
    for (QPalette::ColorRole role : {QPalette::Base, QPalette::Button})
        p.setColor(role, problemFieldBackground(theme));
    for (QPalette::ColorRole role : {QPalette::Text, QPalette::ButtonText})
        p.setColor(role, problemFieldText(theme));
    editor->setPalette(p);
    editor->setProperty("invalidMark", true);
}

bool ModelPanel::isMarkedInvalid(const QWidget* editor) const
{
    return editor && editor->property("invalidMark").toBool();
}

void ModelPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() != QEvent::PaletteChange || !m_derived)
        return;
    // The theme changed: the red of a refused field and the note's colour are the theme's.
    if (QWidget* w = fieldEditor(m_invalidKey))
        markField(w, true);
    updateDerived(m_document->model());
}

void ModelPanel::updateDerived(const ModelSpec& m)
{
    try {
        const ParameterCount params = countParameters(m);
        const int gbs = m.training.global_batch_size;
        const double tokens = double(gbs) * m.seq_length;
        const double flops = modelFlopsPerIteration(m, gbs);
        const QString row = QStringLiteral("<tr><td style='padding-right:14px'>%1</td><td align='right'><b>%2</b></td></tr>");
        QString html = QStringLiteral("<table cellspacing='3'>");
        html += row.arg(tr("Total parameters"), humanCount(params.total));
        html += row.arg(tr("Active parameters per token"), humanCount(params.active));
        html += row.arg(tr("Embedding parameters"), humanCount(params.embedding));
        // Not in the total, as published counts leave them out (DeepSeek-V3's 671B).
        if (params.mtp > 0)
            html += row.arg(tr("MTP parameters (besides the total)"), humanCount(params.mtp));
        if (m.isMoe()) {
            html += row.arg(tr("MoE layers"), QStringLiteral("%1 of %2").arg(m.numMoeLayers()).arg(m.num_layers));
            html += row.arg(tr("Expert parameters per MoE layer"), humanCount(params.expert_per_layer));
        }
        html += row.arg(tr("Model FLOPs per token"), flopText(flops / tokens));
        html += row.arg(tr("Tokens per iteration"), humanCount(tokens));
        html += row.arg(tr("Model FLOPs per iteration"), flopText(flops));
        html += QStringLiteral("</table><p style='color:%1'>%2</p>")
                    .arg(quietTextColor(palette()).name(), tr("FLOPs by Megatron-LM's counting: forward and backward (3x forward), the causal half of attention, the vocabulary padded as at TP 1."));
        m_derived->setText(html);
    } catch (const std::exception& e) {
        m_derived->setText(tr("Not available: %1").arg(QString::fromUtf8(e.what()).toHtmlEscaped()));
    }
}

void ModelPanel::loadPreset(const QString& name)
{
    if (const ModelSpec* preset = findModelPreset(name.toStdString()))
        m_document->setModel(*preset, tr("Load model preset %1").arg(name));
}

QString ModelPanel::importScript(const QString& path, const ScriptInputs& inputs)
{
    try {
        const std::string text = readTextFile(path.toStdString());
        const ImportedScript script = importMegatronScript(text, path.toStdString(), inputs);
        validateScriptModel(script);   // a script without a hidden size is no model to plan
        ModelSpec model = script.model;
        if (model.name.empty())
            model.name = withoutControls(QFileInfo(path).completeBaseName().toStdString());
        m_document->setModelFromScript(model, path, inputs);
        QStringList w;
        for (const auto& s : script.warnings)
            w << QString::fromStdString(s).toHtmlEscaped();
        m_importWarnings = w.join(QStringLiteral("; "));
        showImportMessage(script);
        return {};
    } catch (const InputError& e) {
        return QString::fromUtf8(e.what());
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
}

void ModelPanel::showImportMessage(const ImportedScript& script)
{
    // The script's configuration is compared on the project's cluster as drawn: say on
    // which nodes and devices it lands, since a plain Megatron-LM script names no device
    // type (hapmoe import takes --cluster or --device for the same reason).
    const QString placed = placementNote(script).toHtmlEscaped();
    m_importMessage = m_importWarnings.isEmpty() ? tr("<b>Imported.</b> %1").arg(placed)
                                                 : tr("<b>Imported with notes:</b> %1. %2").arg(m_importWarnings, placed);
    m_message->setText(m_importMessage);
}

void ModelPanel::updatePlacementNote()
{
    // Only while the import's message is the one shown (an edit of the model replaces it).
    const std::string& path = m_document->project().current_script;
    if (m_importMessage.isEmpty() || m_message->text() != m_importMessage || path.empty())
        return;
    try {
        showImportMessage(importMegatronScript(readTextFile(path), path, m_document->project().current_script_inputs));
    } catch (const std::exception&) {
        m_message->clear();   // the script cannot be read now: its placement is not known
        m_importMessage.clear();
    }
}

QString ModelPanel::placementNote(const ImportedScript& script) const
{
    const Cluster& cluster = m_document->cluster();
    Plan current;
    try {
        current = planFromScript(script, cluster, m_document->catalog());
    } catch (const InputError& e) {
        return tr("Its configuration does not fit the project's cluster as drawn (%1: %2): draw the nodes it runs on, "
                  "or pick a cluster preset, before a search compares with it.")
            .arg(QString::fromStdString(e.where()), QString::fromStdString(e.detail()));
    } catch (const std::exception& e) {   // the import itself stands: only its placement is unknown
        return tr("Its configuration could not be placed on the project's cluster: %1.").arg(QString::fromUtf8(e.what()));
    }
    // Devices per type and the nodes they are on, in node order.
    std::vector<std::pair<std::string, int>> types;
    QStringList hosts;
    std::vector<int> seen;
    for (const StagePlan& st : current.stages) {
        auto t = std::find_if(types.begin(), types.end(), [&](const auto& e) { return e.first == st.device_type; });
        if (t == types.end())
            types.emplace_back(st.device_type, 0), t = std::prev(types.end());
        t->second += st.numDevices();
        for (const DeviceSlot& d : st.devices)
            if (std::find(seen.begin(), seen.end(), d.node) == seen.end()) {
                seen.push_back(d.node);
                if (const Node* n = cluster.node(d.node))
                    hosts << QString::fromStdString(n->host);
            }
    }
    QStringList on;
    for (const auto& [type, count] : types)
        on << tr("%1 %2").arg(count).arg(QString::fromStdString(type));
    int idle = 0;
    for (const UnusedDevices& u : current.unused)
        idle += u.count;
    QString note = tr("Its configuration runs on the project's cluster as drawn: %1 devices on %2 (%3)")
                       .arg(current.numDevices())
                       .arg(hosts.size() > 4 ? tr("%1 nodes").arg(hosts.size()) : hosts.join(QStringLiteral(", ")))
                       .arg(on.join(QStringLiteral(", ")));
    if (idle > 0)
        note += tr(", %1 more not started").arg(idle);
    // A FlagScale script names its meshes' types; a Megatron-LM one runs on whatever it is given.
    if (!script.parallel.hetero())
        note += tr("; the script names no device type, so the comparison with it holds when these are the devices it "
                   "runs on");
    return note + QStringLiteral(".");
}

QString ModelPanel::applyScriptInputs(const QString& arguments, const QString& environment)
{
    const std::string& script = m_document->project().current_script;
    if (script.empty())
        return tr("The model was not imported from a script.");
    ScriptInputs inputs;
    try {
        inputs = ScriptInputsDialog::parse(arguments, environment);
    } catch (const InputError& e) {
        return QString::fromUtf8(e.what());
    }
    return importScript(QString::fromStdString(script), inputs);
}

void ModelPanel::editScriptInputs()
{
    const std::string& script = m_document->project().current_script;
    if (script.empty())
        return;
    // Window-modal and not exec(): no nested event loop while the dialog is open.
    auto* dialog = new ScriptInputsDialog(QString::fromStdString(script), m_document->project().current_script_inputs,
                                          [this](const QString& arguments, const QString& environment) {
                                              return applyScriptInputs(arguments, environment);
                                          },
                                          this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->open();
}

} // namespace hapmoe::ui
