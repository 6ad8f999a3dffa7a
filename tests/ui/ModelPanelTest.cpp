// The model panel: validation as you type names the field and commits nothing invalid;
// derived figures follow every edit; presets load and the preset combo names the preset
// the model equals ("Custom" after an edit); a Megatron script imports, and is read again with
// arguments and environment variables (one undo step); the groups stack
// into one column in a small window and stand in two in a large one, never scrolling sideways.

#include "GuiTestSupport.h"

#include "ModelPanel.h"
#include "ProblemsPanel.h"
#include "ProjectDocument.h"
#include "ScriptInputsDialog.h"
#include "SearchPanel.h"

#include "cost/CostModel.h"
#include "io/Presets.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QStatusBar>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPointer>
#include <QTreeWidget>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QUndoStack>

using namespace hapmoe;
using namespace hapmoe::ui;
using namespace hapmoe::ui::test;

namespace {

// "Total parameters ... <b>35.09 B</b>" -> 35.09e9
double derivedFigure(const QString& html, const QString& label)
{
    const QRegularExpression re(QRegularExpression::escape(label) +
                                QStringLiteral("</td><td align='right'><b>([0-9.]+) ([TBM]?)"));
    const auto m = re.match(html);
    if (!m.hasMatch())
        return -1;
    const double scale = m.captured(2) == QLatin1String("T") ? 1e12 : m.captured(2) == QLatin1String("B") ? 1e9 : 1e6;
    return m.captured(1).toDouble() * scale;
}

void typeInto(QAbstractSpinBox* spin, const QString& text)
{
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, text);
}

// Lets posted resizes and layout requests run.
void settle()
{
    for (int i = 0; i < 3; ++i) {
        QApplication::processEvents();
        QTest::qWait(1);
    }
}

// Where a widget inside the scroll area appears in its viewport.
QRect inViewport(const QWidget* widget, const QScrollArea* scroll)
{
    return QRect(widget->mapTo(scroll->viewport(), QPoint(0, 0)), widget->size());
}

} // namespace

class ModelPanelTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { initGuiTest(); }

    void editedPresetCitesWhatItWasMadeFrom()
    {
        // The preset's citation is for the preset: once a field differs (the preset box says
        // Custom), the source line says the model was made from it.
        auto w = makeWindow();
        ProjectDocument* doc = w->document();
        doc->setModel(*findModelPreset("Mixtral-8x7B"), QStringLiteral("Load Mixtral-8x7B"));
        ModelPanel* panel = w->modelPanel();
        auto* source = panel->findChild<QLabel*>(QStringLiteral("modelSource"));
        QVERIFY(source);
        QVERIFY2(source->text().startsWith(QStringLiteral("<b>Source:</b> Jiang")), qPrintable(source->text()));
        ModelSpec m = doc->model();
        m.num_layers = 16;
        doc->setModel(m, QStringLiteral("Layers"), QStringLiteral("num_layers"));
        QVERIFY2(source->text().startsWith(QStringLiteral("<b>Source:</b> modified from Mixtral-8x7B, after Jiang")),
                 qPrintable(source->text()));
        doc->undoStack()->undo();
        QVERIFY2(source->text().startsWith(QStringLiteral("<b>Source:</b> Jiang")), qPrintable(source->text()));
    }

    void invalidValueIsNamedAndNotCommitted()
    {
        auto w = makeWindow();
        w->loadExample();   // Mixtral-S: 8 experts, top-2, 32 heads, 8 query groups
        w->showTab(QStringLiteral("model"));
        ModelPanel* panel = w->modelPanel();
        ProjectDocument* doc = w->document();
        auto* topk = qobject_cast<QSpinBox*>(panel->fieldEditor(QStringLiteral("moe_router_topk")));
        QVERIFY(topk);
        QCOMPARE(topk->value(), 2);
        typeInto(topk, QStringLiteral("9"));   // more than the 8 experts
        QVERIFY2(panel->validationMessage().contains(QStringLiteral("moe_router_topk")), qPrintable(panel->validationMessage()));
        QCOMPARE(doc->model().moe_router_topk, 2);   // nothing invalid reaches the document
        QVERIFY(!doc->isModified());
        typeInto(topk, QStringLiteral("4"));
        QVERIFY(panel->validationMessage().isEmpty());
        QCOMPARE(doc->model().moe_router_topk, 4);

        // Heads must be divisible by the query groups: 30 heads with 8 groups is refused.
        auto* heads = qobject_cast<QSpinBox*>(panel->fieldEditor(QStringLiteral("num_attention_heads")));
        typeInto(heads, QStringLiteral("30"));
        QVERIFY2(panel->validationMessage().contains(QStringLiteral("num_query_groups")) ||
                     panel->validationMessage().contains(QStringLiteral("num_attention_heads")),
                 qPrintable(panel->validationMessage()));
        QCOMPARE(doc->model().num_attention_heads, 32);
        typeInto(heads, QStringLiteral("64"));
        QCOMPARE(doc->model().num_attention_heads, 64);
        // Typing "64" digit by digit is one undo step per field, not one per key.
        doc->undoStack()->undo();
        QCOMPARE(doc->model().num_attention_heads, 32);
        QCOMPARE(heads->value(), 32);
    }

    void imbalanceFollowsTheShapeDown()
    {
        // Top-k 8 of 8 experts sends every token to every expert: the router imbalance can be
        // at most E / k = 1 (validateModel), so the 1.2 the user left alone follows it down
        // in the same step instead of refusing a field nobody touched. One undo restores both.
        auto w = makeWindow();
        w->loadExample();   // Mixtral-S: 8 experts, top-2, imbalance 1.2
        w->showTab(QStringLiteral("model"));
        ModelPanel* panel = w->modelPanel();
        ProjectDocument* doc = w->document();
        QCOMPARE(doc->model().training.router_imbalance, 1.2);
        auto* topk = qobject_cast<QSpinBox*>(panel->fieldEditor(QStringLiteral("moe_router_topk")));
        auto* rho = qobject_cast<QDoubleSpinBox*>(panel->fieldEditor(QStringLiteral("training.router_imbalance")));
        QVERIFY(topk && rho);
        typeInto(topk, QStringLiteral("8"));
        QCOMPARE(doc->model().moe_router_topk, 8);
        QCOMPARE(doc->model().training.router_imbalance, 1.0);
        QCOMPARE(rho->value(), 1.0);
        QVERIFY(panel->pendingEdit().isEmpty());
        QVERIFY2(panel->validationMessage().contains(QStringLiteral("lowered from 1.2 to 1")), qPrintable(panel->validationMessage()));
        doc->undoStack()->undo();
        QCOMPARE(doc->model().moe_router_topk, 2);
        QCOMPARE(doc->model().training.router_imbalance, 1.2);
        QCOMPARE(rho->value(), 1.2);

        // A value typed into the imbalance itself is checked, not capped: 5 > E / k = 4.
        rho->setFocus();
        rho->selectAll();
        QTest::keyClicks(rho, QStringLiteral("5"));
        QVERIFY2(panel->validationMessage().contains(QStringLiteral("router_imbalance")), qPrintable(panel->validationMessage()));
        QCOMPARE(doc->model().training.router_imbalance, 1.2);
    }

    void gradientPrecisionIsAModelField()
    {
        // Default / fp32 / Half map to training.accumulate_allreduce_grads_in_fp32 unset /
        // true / false (docs/cost-model.md section 5.1), one undo step each.
        auto w = makeWindow();
        w->loadExample();   // Mixtral-S in bf16, gradient precision not given
        w->showTab(QStringLiteral("model"));
        ProjectDocument* doc = w->document();
        auto* grads = qobject_cast<QComboBox*>(w->modelPanel()->fieldEditor(QStringLiteral("training.accumulate_allreduce_grads_in_fp32")));
        QVERIFY(grads);
        QCOMPARE(grads->currentText(), QStringLiteral("Default"));
        QVERIFY(!doc->model().training.accumulate_allreduce_grads_in_fp32);
        grads->setCurrentIndex(grads->findText(QStringLiteral("Half")));
        QCOMPARE(doc->model().training.accumulate_allreduce_grads_in_fp32, std::optional<bool>(false));
        QVERIFY(!doc->model().training.fp32Gradients());
        doc->undoStack()->undo();
        QVERIFY(!doc->model().training.accumulate_allreduce_grads_in_fp32);
        QCOMPARE(grads->currentText(), QStringLiteral("Default"));
    }

    void fp8WeightsGoWithFp8Gemms()
    {
        // FP8 GEMMs (training.fp8_format) and FP8 weights (fp8_param_gather, only with FP8):
        // the weights box is enabled with FP8 on, and turning FP8 off clears it in the same step.
        auto w = makeWindow();
        w->loadExample();
        w->showTab(QStringLiteral("model"));
        ProjectDocument* doc = w->document();
        auto* fp8 = qobject_cast<QComboBox*>(w->modelPanel()->fieldEditor(QStringLiteral("training.fp8_format")));
        auto* weights = qobject_cast<QCheckBox*>(w->modelPanel()->fieldEditor(QStringLiteral("training.fp8_param_gather")));
        QVERIFY(fp8 && weights);
        QCOMPARE(fp8->currentText(), QStringLiteral("Off"));
        QVERIFY(!weights->isEnabled());
        fp8->setCurrentIndex(fp8->findText(QStringLiteral("hybrid")));
        QCOMPARE(doc->model().training.fp8_format, Fp8Format::Hybrid);
        QVERIFY(weights->isEnabled());
        weights->setChecked(true);
        QVERIFY(doc->model().training.fp8_param_gather);
        fp8->setCurrentIndex(fp8->findText(QStringLiteral("Off")));
        QVERIFY(!doc->model().training.fp8() && !doc->model().training.fp8_param_gather);
        QVERIFY(!weights->isEnabled() && !weights->isChecked());
        doc->undoStack()->undo();
        QCOMPARE(doc->model().training.fp8_format, Fp8Format::Hybrid);
        QVERIFY(doc->model().training.fp8_param_gather);
        QVERIFY(weights->isEnabled() && weights->isChecked());
    }

    void dropoutAndCrossEntropyFieldsEditTheModel()
    {
        // Attention and hidden dropout (Megatron-LM's --attention-dropout, --hidden-dropout):
        // the example (Mixtral-S, the paper's model, silent on dropout) keeps Megatron-LM's 0.1
        // each; an edit reaches the model alone, and undo restores it.
        auto w = makeWindow();
        w->loadExample();
        w->showTab(QStringLiteral("model"));
        ProjectDocument* doc = w->document();
        auto* attention = qobject_cast<QDoubleSpinBox*>(w->modelPanel()->fieldEditor(QStringLiteral("attention_dropout")));
        auto* hidden = qobject_cast<QDoubleSpinBox*>(w->modelPanel()->fieldEditor(QStringLiteral("hidden_dropout")));
        QVERIFY(attention && hidden);
        QCOMPARE(hidden->value(), 0.1);
        QCOMPARE(attention->value(), 0.1);
        typeInto(hidden, QStringLiteral("0"));
        QCOMPARE(doc->model().hidden_dropout, 0.0);
        QCOMPARE(doc->model().attention_dropout, 0.1);
        doc->undoStack()->undo();
        QCOMPARE(doc->model().hidden_dropout, 0.1);
        QCOMPARE(hidden->value(), 0.1);
        // A value finer than the field shows (0.0004 as 0.000) survives an edit of another field.
        ModelSpec fine = doc->model();
        fine.hidden_dropout = 0.0004;
        doc->setModel(fine, QStringLiteral("fine dropout"));
        QCOMPARE(hidden->value(), 0.0);
        typeInto(attention, QStringLiteral("0"));
        QCOMPARE(doc->model().attention_dropout, 0.0);
        QCOMPARE(doc->model().hidden_dropout, 0.0004);
        doc->undoStack()->undo();
        doc->undoStack()->undo();
        QCOMPARE(doc->model().hidden_dropout, 0.1);

        // The cross-entropy's kernels: one choice sets --cross-entropy-loss-fusion and the
        // implementation.
        auto* crossEntropy = qobject_cast<QComboBox*>(w->modelPanel()->fieldEditor(QStringLiteral("training.cross_entropy_loss_fusion")));
        QVERIFY(crossEntropy);
        QCOMPARE(crossEntropy->currentIndex(), 0);
        crossEntropy->setCurrentIndex(2);
        QVERIFY(doc->model().training.cross_entropy_loss_fusion);
        QCOMPARE(doc->model().training.cross_entropy_fusion_impl, CrossEntropyFusionImpl::TE);
        crossEntropy->setCurrentIndex(1);
        QVERIFY(doc->model().training.cross_entropy_loss_fusion);
        QCOMPARE(doc->model().training.cross_entropy_fusion_impl, CrossEntropyFusionImpl::Native);
        // Successive edits of one field are one undo step, back to the unfused loss.
        doc->undoStack()->undo();
        QVERIFY(!doc->model().training.cross_entropy_loss_fusion);
        QCOMPARE(crossEntropy->currentIndex(), 0);

        // The FP8 recipe (--fp8-recipe) applies with FP8 GEMMs only.
        auto* fp8 = qobject_cast<QComboBox*>(w->modelPanel()->fieldEditor(QStringLiteral("training.fp8_format")));
        auto* recipe = qobject_cast<QComboBox*>(w->modelPanel()->fieldEditor(QStringLiteral("training.fp8_recipe")));
        QVERIFY(fp8 && recipe);
        QVERIFY(!recipe->isEnabled());
        fp8->setCurrentIndex(fp8->findData(int(Fp8Format::Hybrid)));
        QVERIFY(recipe->isEnabled());
        recipe->setCurrentIndex(recipe->findData(int(Fp8Recipe::MXFP8)));
        QCOMPARE(doc->model().training.fp8_recipe, Fp8Recipe::MXFP8);
        doc->undoStack()->undo();
        QCOMPARE(doc->model().training.fp8_recipe, Fp8Recipe::Delayed);
        QCOMPARE(recipe->currentData().toInt(), int(Fp8Recipe::Delayed));
    }

    void runRefusesWhileAFieldHoldsAValueNotTaken()
    {
        // Layers typed as 0 is marked and not taken (validateModel: a positive count); F5
        // would search the model's 24 layers, which the field no longer shows.
        auto w = makeWindow();
        w->loadExample();
        w->showTab(QStringLiteral("model"));
        ModelPanel* panel = w->modelPanel();
        ProjectDocument* doc = w->document();
        const int layers = doc->model().num_layers;
        auto* field = qobject_cast<QSpinBox*>(panel->fieldEditor(QStringLiteral("num_layers")));
        QVERIFY(field);
        typeInto(field, QStringLiteral("0"));
        QCOMPARE(doc->model().num_layers, layers);
        QVERIFY2(panel->pendingEdit().startsWith(QStringLiteral("Layers on the Model tab shows 0, which the model does not take (model.num_layers: ")),
                 qPrintable(panel->pendingEdit()));
        QAction* run = nullptr;
        for (QAction* a : w->findChildren<QAction*>())
            if (a->shortcut() == QKeySequence(Qt::Key_F5))
                run = a;
        QVERIFY(run);
        run->trigger();
        QVERIFY(!w->searchPanel()->isRunning());
        QVERIFY2(w->searchPanel()->statusLabel()->text().contains(QStringLiteral("Cannot search: Layers on the Model tab shows 0")),
                 qPrintable(w->searchPanel()->statusLabel()->text()));
        QVERIFY2(w->statusBar()->currentMessage().startsWith(QStringLiteral("Cannot search: Layers on the Model tab shows 0")),
                 qPrintable(w->statusBar()->currentMessage()));

        // Ctrl+Z in the red field undoes its typing (the project has nothing of it to undo).
        QTest::keyClick(field, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(field->text(), QString::number(layers));
        QVERIFY(panel->pendingEdit().isEmpty());
        QCOMPARE(doc->model().num_layers, layers);
        QVERIFY(w->searchPanel()->statusLabel()->text().isEmpty());

        // Corrected, the field's value is taken and Run starts.
        typeInto(field, QStringLiteral("0"));
        QVERIFY(!panel->pendingEdit().isEmpty());
        typeInto(field, QStringLiteral("32"));
        QCOMPARE(doc->model().num_layers, 32);
        QVERIFY(panel->pendingEdit().isEmpty());
        QSignalSpy stopped(w->searchPanel(), &SearchPanel::searchStopped);
        QVERIFY(w->searchPanel()->run());
        w->searchPanel()->cancel();
        QVERIFY(stopped.wait(60000));
    }

    void invalidModelFromAFileIsMarked()
    {
        // A model that did not come through the fields (a project file, a script) and breaks
        // a rule, hidden size 4095 with 32 heads and no kv_channels, is marked as a typed one
        // would be; a valid model clears the mark.
        auto w = makeWindow();
        w->loadExample();
        w->showTab(QStringLiteral("model"));
        ModelPanel* panel = w->modelPanel();
        ProjectDocument* doc = w->document();
        ModelSpec bad = doc->model();
        bad.hidden_size = 4095;
        bad.kv_channels = 0;
        doc->setModel(bad, QStringLiteral("Load"));
        QVERIFY2(panel->validationMessage().contains(QStringLiteral("num_attention_heads")), qPrintable(panel->validationMessage()));
        QVERIFY(panel->isMarkedInvalid(panel->fieldEditor(QStringLiteral("num_attention_heads"))));
        // The Problems dock lists it; the field path may wrap after its '.' and '_' (a narrow
        // dock cut it to "model.num_attention_hea"), and the message itself is unchanged.
        ProblemsPanel* problems = w->problemsPanel();
        QVERIFY(problems->messages().join(' ').contains(QStringLiteral("model.num_attention_heads")));
        auto* tree = problems->findChild<QTreeWidget*>();
        QVERIFY(tree);
        bool wraps = false;
        for (int i = 0; i < tree->topLevelItemCount(); ++i)
            wraps = wraps || tree->topLevelItem(i)->text(1).contains(QStringLiteral("model.\u200bnum_\u200battention_\u200bheads"));
        QVERIFY(wraps);
        doc->undoStack()->undo();
        QVERIFY(panel->validationMessage().isEmpty());
        QVERIFY(!panel->isMarkedInvalid(panel->fieldEditor(QStringLiteral("num_attention_heads"))));
    }

    void derivedFiguresFollowEdits()
    {
        auto w = makeWindow();
        w->loadExample();
        ModelPanel* panel = w->modelPanel();
        const ModelSpec before = w->document()->model();
        QCOMPARE(before.num_experts, 8);
        const double total8 = derivedFigure(panel->derivedText(), QStringLiteral("Total parameters"));
        const double active8 = derivedFigure(panel->derivedText(), QStringLiteral("Active parameters per token"));
        QVERIFY(total8 > 0);
        auto* experts = qobject_cast<QSpinBox*>(panel->fieldEditor(QStringLiteral("num_experts")));
        typeInto(experts, QStringLiteral("4"));
        QCOMPARE(w->document()->model().num_experts, 4);
        const double total4 = derivedFigure(panel->derivedText(), QStringLiteral("Total parameters"));
        const double active4 = derivedFigure(panel->derivedText(), QStringLiteral("Active parameters per token"));
        // Four SwiGLU experts fewer in each of the 24 MoE layers: 4 x 24 x 3 x 4096 x 14336
        // = 16.91e9 parameters (three H x F matrices per expert; appendix A shapes). The
        // router shrinks by 24 x 4 x 4096 = 0.4e6, below the display's 0.01e9 resolution.
        QVERIFY2(std::abs((total8 - total4) - 16.91e9) <= 0.011e9, qPrintable(QString::number(total8 - total4)));
        // Top-2 routing either way: the active parameters do not depend on the expert count
        // (up to the router's 0.4e6 parameters).
        QVERIFY(std::abs(active8 - active4) <= 0.011e9);
    }

    void largeFlopFiguresTakeALargerUnit()
    {
        auto w = makeWindow();
        w->newProject();
        ModelPanel* panel = w->modelPanel();
        panel->loadPreset(QStringLiteral("GPT-1T"));
        const QString html = panel->derivedText();
        // Korthikanti et al. 2022 App. A per token, 72 L h^2 (1 + s/(6h) + V/(12hL)), with the
        // attention term halved for the causal mask as Megatron-LM counts it (docs/cost-model.md
        // section 1): 72 x 128 x 25600^2 x (1 + 2048/307200 + 51200/39321600) = 6.088e12 FLOP,
        // and 512 x 2048 tokens per iteration give 6.384e18 FLOP.
        QVERIFY2(html.contains(QStringLiteral("<b>6.09 TFLOP</b>")), qPrintable(html));
        QVERIFY2(html.contains(QStringLiteral("<b>6.38 EFLOP</b>")), qPrintable(html));
        QVERIFY(!html.contains(QStringLiteral("GFLOP")));
        QVERIFY(!html.contains(QStringLiteral("PFLOP")));
    }

    void presetAndScriptImport()
    {
        auto w = makeWindow();
        w->loadExample();
        ModelPanel* panel = w->modelPanel();
        ProjectDocument* doc = w->document();
        auto* presets = panel->findChild<QComboBox*>(QStringLiteral("modelPresets"));
        QVERIFY(presets);
        const int row = presets->findData(QStringLiteral("LLaMA-2-7B"), Qt::UserRole, Qt::MatchFixedString);
        QVERIFY(row > 0);
        presets->setCurrentIndex(row);
        emit presets->activated(row);
        // LLaMA-2 7B (Touvron et al. 2023, table 1): 32 layers, hidden 4096, dense.
        QCOMPARE(doc->model().num_layers, 32);
        QCOMPARE(doc->model().hidden_size, 4096);
        QCOMPARE(doc->model().num_experts, 0);
        QCOMPARE(qobject_cast<QSpinBox*>(panel->fieldEditor(QStringLiteral("num_layers")))->value(), 32);
        doc->undoStack()->undo();
        QCOMPARE(doc->model().num_experts, 8);

        QTemporaryDir dir;
        const QString script = dir.filePath(QStringLiteral("train_mixtral.sh"));
        QVERIFY(writeTextFile(script, "#!/bin/bash\n"
                                      "GPUS_PER_NODE=8\n"
                                      "MODEL_ARGS=(\n"
                                      "  --num-layers 16 --hidden-size 2048 --ffn-hidden-size 8192\n"
                                      "  --num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048\n"
                                      "  --num-experts 16 --moe-router-topk 2 --swiglu --disable-bias-linear\n"
                                      ")\n"
                                      "torchrun --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py ${MODEL_ARGS[@]} \\\n"
                                      "  --tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 64 "
                                      "--vocab-size 32000\n"));
        const QString error = panel->importScript(script);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(doc->model().num_layers, 16);
        QCOMPARE(doc->model().hidden_size, 2048);
        QCOMPARE(doc->model().num_experts, 16);
        QCOMPARE(doc->project().current_script, script.toStdString());
        QCOMPARE(qobject_cast<QSpinBox*>(panel->fieldEditor(QStringLiteral("num_experts")))->value(), 16);
        // The script starts one node of 8 (torchrun's --nnodes default) and names no device
        // type: the message says where its configuration lands on the example's 32-3 (910B
        // nodes first), and that the rest is not started.
        QString message = panel->validationMessage();
        QVERIFY2(message.contains(QStringLiteral("8 devices on 910b-376t-0 (8 910B-376T), 24 more not started; the script "
                                                 "names no device type")),
                 qPrintable(message));
        // Redrawn as the nodes it runs on, the message follows the cluster.
        doc->setCluster(resolveCluster("H800:1x8", DeviceCatalog::builtin(), nullptr), QStringLiteral("H800"));
        QTRY_VERIFY2(panel->validationMessage().contains(QStringLiteral("8 devices on node0 (8 H800); the script names no device "
                                                                        "type, so the comparison with it holds when these are the "
                                                                        "devices it runs on.")),
                     qPrintable(panel->validationMessage()));
        doc->undoStack()->undo();
        QTRY_VERIFY2(panel->validationMessage().contains(QStringLiteral("(8 910B-376T)")), qPrintable(panel->validationMessage()));
        QVERIFY(!panel->importScript(dir.filePath(QStringLiteral("missing.sh"))).isEmpty());

        // A script that gives no hidden size is no model: refused with the flag, the model kept.
        const QString partial = dir.filePath(QStringLiteral("partial.sh"));
        QVERIFY(writeTextFile(partial, "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 "
                                       "--num-attention-heads 32 --seq-length 4096 --bf16\n"));
        const QString refused = panel->importScript(partial);
        QVERIFY2(refused.contains(QStringLiteral("--hidden-size")), qPrintable(refused));
        QCOMPARE(doc->model().hidden_size, 2048);
    }

    void scriptArgumentsAndEnvironment()
    {
        auto w = makeWindow();
        w->loadExample();
        ModelPanel* panel = w->modelPanel();
        ProjectDocument* doc = w->document();
        auto* scriptLine = panel->findChild<QLabel*>(QStringLiteral("modelScript"));
        auto* link = panel->findChild<QLabel*>(QStringLiteral("scriptInputs"));
        QVERIFY(scriptLine && link);
        QVERIFY(!link->isVisibleTo(panel));   // no script: nothing to read again
        const ModelSpec example = doc->model();

        // The script picks its depth from $1 and its width from $WIDE, as launch scripts pick
        // 7B or 70B: `bash train_sized.sh big` gives 32 layers, `WIDE=1 bash train_sized.sh`
        // a hidden size of 2048.
        QTemporaryDir dir;
        const QString script = dir.filePath(QStringLiteral("train_sized.sh"));
        QVERIFY(writeTextFile(script, "#!/bin/bash\n"
                                      "if [ \"$1\" = big ]; then LAYERS=32; else LAYERS=8; fi\n"
                                      "if [ \"$WIDE\" = 1 ]; then HIDDEN=2048; else HIDDEN=1024; fi\n"
                                      "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 1 "
                                      "--num-layers $LAYERS --hidden-size $HIDDEN --num-attention-heads 16 "
                                      "--seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
                                      "--global-batch-size 16 --num-experts 8 --moe-router-topk 2 --vocab-size 32000\n"));
        const ScriptInputs big{{"big"}, {}};
        QString error = panel->importScript(script, big);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(doc->model().num_layers, 32);
        QCOMPARE(doc->model().hidden_size, 1024);
        QCOMPARE(doc->project().current_script, script.toStdString());
        QVERIFY(doc->project().current_script_inputs == big);
        QVERIFY(link->isVisibleTo(panel));
        QVERIFY2(scriptLine->text().contains(QStringLiteral("train_sized.sh big (estimated")), qPrintable(scriptLine->text()));

        // Undo takes the model, the script and its inputs back together; redo brings them again.
        doc->undoStack()->undo();
        QCOMPARE(doc->model().num_layers, example.num_layers);
        QVERIFY(doc->project().current_script.empty());
        QVERIFY(doc->project().current_script_inputs.empty());
        QVERIFY(!link->isVisibleTo(panel));
        doc->undoStack()->redo();
        QCOMPARE(doc->model().num_layers, 32);
        QVERIFY(doc->project().current_script_inputs == big);

        // The dialog's OK: the arguments as a shell line, the environment one NAME=VALUE a line.
        const int before = doc->undoStack()->count();
        error = panel->applyScriptInputs(QStringLiteral("small"), QStringLiteral("\n  WIDE=1\n\n"));
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(doc->undoStack()->count(), before + 1);
        QCOMPARE(doc->model().num_layers, 8);
        QCOMPARE(doc->model().hidden_size, 2048);
        QVERIFY(doc->project().current_script_inputs == (ScriptInputs{{"small"}, {{"WIDE", "1"}}}));
        QVERIFY2(scriptLine->text().contains(QStringLiteral("train_sized.sh small with WIDE=1")), qPrintable(scriptLine->text()));
        doc->undoStack()->undo();
        QCOMPARE(doc->model().num_layers, 32);
        QCOMPARE(doc->model().hidden_size, 1024);
        QVERIFY(doc->project().current_script_inputs == big);
        doc->undoStack()->redo();

        // A name the shell takes for no variable, an unterminated quote, a script gone: refused
        // with the reason, and the document as it was.
        const ScriptInputs applied = doc->project().current_script_inputs;
        const int steps = doc->undoStack()->count();
        // A variable on two lines, as --script-env twice: the second would silently win.
        const QString twice = panel->applyScriptInputs(QStringLiteral("big"), QStringLiteral("WIDE=1\nWIDE=2"));
        QVERIFY2(twice.contains(QStringLiteral("Environment, line 2")) && twice.contains(QStringLiteral("WIDE is given twice (WIDE=1, then WIDE=2)")),
                 qPrintable(twice));
        const QString badName = panel->applyScriptInputs(QStringLiteral("big"), QStringLiteral("WIDE=1\n1BAD=x"));
        QVERIFY2(badName.contains(QStringLiteral("Environment, line 2")) && badName.contains(QStringLiteral("1BAD=x")),
                 qPrintable(badName));
        const QString badQuote = panel->applyScriptInputs(QStringLiteral("\"big"), QString());
        QVERIFY2(badQuote.contains(QStringLiteral("unterminated")), qPrintable(badQuote));
        const QString moved = dir.filePath(QStringLiteral("moved.sh"));
        QVERIFY(QFile::rename(script, moved));
        QVERIFY(!panel->applyScriptInputs(QStringLiteral("big"), QString()).isEmpty());
        QVERIFY(QFile::rename(moved, script));
        QCOMPARE(doc->undoStack()->count(), steps);
        QCOMPARE(doc->model().num_layers, 8);
        QCOMPARE(doc->model().hidden_size, 2048);
        QVERIFY(doc->project().current_script_inputs == applied);

        // The dialog itself: it opens on the inputs as they are, shows a refusal and stays open
        // with the text typed; corrected, OK applies and closes.
        panel->editScriptInputs();
        QPointer<ScriptInputsDialog> dialog = panel->findChild<ScriptInputsDialog*>();
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        QCOMPARE(dialog->argumentsEdit()->text(), QStringLiteral("small"));
        QCOMPARE(dialog->environmentEdit()->toPlainText(), QStringLiteral("WIDE=1"));
        dialog->argumentsEdit()->setText(QStringLiteral("big 'two words'"));
        dialog->environmentEdit()->setPlainText(QStringLiteral("1BAD=x"));
        dialog->accept();
        QVERIFY(dialog->isVisible());
        QVERIFY2(dialog->errorText().contains(QStringLiteral("1BAD")), qPrintable(dialog->errorText()));
        QCOMPARE(doc->undoStack()->count(), steps);
        dialog->environmentEdit()->setPlainText(QStringLiteral("WIDE=0"));
        dialog->accept();
        QVERIFY(!dialog || !dialog->isVisible());
        QVERIFY(doc->project().current_script_inputs == (ScriptInputs{{"big", "two words"}, {{"WIDE", "0"}}}));
        QCOMPARE(doc->model().num_layers, 32);
        QCOMPARE(doc->model().hidden_size, 1024);
        QVERIFY2(scriptLine->text().contains(QStringLiteral("train_sized.sh big 'two words' with WIDE=0")), qPrintable(scriptLine->text()));

        // A model edit keeps the script and what it is read with; the project saves both.
        auto* layers = qobject_cast<QSpinBox*>(panel->fieldEditor(QStringLiteral("num_layers")));
        typeInto(layers, QStringLiteral("30"));
        QCOMPARE(doc->model().num_layers, 30);
        QVERIFY(doc->project().current_script_inputs == (ScriptInputs{{"big", "two words"}, {{"WIDE", "0"}}}));
        const QString file = dir.filePath(QStringLiteral("sized.hapmoe"));
        QVERIFY(w->saveTo(file));
        w->newProject();
        QVERIFY(doc->project().current_script_inputs.empty());
        QVERIFY(w->openFile(file));
        QCOMPARE(doc->project().current_script, script.toStdString());
        QVERIFY(doc->project().current_script_inputs == (ScriptInputs{{"big", "two words"}, {{"WIDE", "0"}}}));

        // Opening a script (File > Open, hapmoe-studio train.sh) reads it without inputs.
        QVERIFY(w->openFile(script));
        QVERIFY(doc->project().current_script_inputs.empty());
        QCOMPARE(doc->model().hidden_size, 1024);
    }

    void presetComboShowsTheModelsPreset()
    {
        auto w = makeWindow();
        w->newProject();   // a new project starts from the Mixtral-S preset (MainWindow::newProject)
        ModelPanel* panel = w->modelPanel();
        ProjectDocument* doc = w->document();
        auto* presets = panel->findChild<QComboBox*>(QStringLiteral("modelPresets"));
        QVERIFY(presets);
        QCOMPARE(presets->currentText(), QStringLiteral("Mixtral-S"));

        // Loading a preset (as --model-preset does) shows its name, not a stale one.
        panel->loadPreset(QStringLiteral("LLaMA-2-7B"));
        QCOMPARE(panel->matchingPreset(), QStringLiteral("LLaMA-2-7B"));
        QCOMPARE(presets->currentText(), QStringLiteral("LLaMA-2-7B"));
        QCOMPARE(presets->currentData().toString(), QStringLiteral("LLaMA-2-7B"));

        // An edit makes it a model of its own: the neutral first entry.
        auto* layers = qobject_cast<QSpinBox*>(panel->fieldEditor(QStringLiteral("num_layers")));
        QVERIFY(layers);
        typeInto(layers, QStringLiteral("30"));
        QCOMPARE(doc->model().num_layers, 30);
        // The undo menu names the field as the form does, not its JSON key (num_layers).
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Change Layers"));
        QVERIFY(panel->matchingPreset().isEmpty());
        QCOMPARE(presets->currentIndex(), 0);
        QCOMPARE(presets->currentText(), QStringLiteral("Custom"));
        // Choosing "Custom" loads nothing.
        const int steps = doc->undoStack()->count();
        emit presets->activated(0);
        QCOMPARE(doc->undoStack()->count(), steps);
        QCOMPARE(presets->currentText(), QStringLiteral("Custom"));

        // Undo and redo are model changes like any other: the combo follows them.
        doc->undoStack()->undo();
        QCOMPARE(doc->model().num_layers, 32);
        QCOMPARE(presets->currentText(), QStringLiteral("LLaMA-2-7B"));
        doc->undoStack()->redo();
        QCOMPARE(presets->currentText(), QStringLiteral("Custom"));
        doc->undoStack()->undo();
        doc->undoStack()->undo();   // the preset load
        QCOMPARE(doc->model().name, std::string("Mixtral-S"));
        QCOMPARE(presets->currentText(), QStringLiteral("Mixtral-S"));

        // Editing back to the preset's value makes the model that preset again.
        auto* experts = qobject_cast<QSpinBox*>(panel->fieldEditor(QStringLiteral("num_experts")));
        typeInto(experts, QStringLiteral("4"));
        QCOMPARE(presets->currentText(), QStringLiteral("Custom"));
        typeInto(experts, QStringLiteral("8"));
        QCOMPARE(presets->currentText(), QStringLiteral("Mixtral-S"));

        // A project whose model equals a preset shows that preset when it is opened.
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("llama.hapmoe"));
        panel->loadPreset(QStringLiteral("LLaMA-2-7B"));
        QVERIFY(w->saveTo(file));
        w->newProject();
        QCOMPARE(presets->currentText(), QStringLiteral("Mixtral-S"));
        QVERIFY(w->openFile(file));
        QCOMPARE(presets->currentText(), QStringLiteral("LLaMA-2-7B"));

        // An imported script is no preset.
        const QString script = dir.filePath(QStringLiteral("train.sh"));
        QVERIFY(writeTextFile(script, "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 1024 --ffn-hidden-size 4096 "
                                      "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 "
                                      "--vocab-size 32000\n"));
        QVERIFY(panel->importScript(script).isEmpty());
        QCOMPARE(presets->currentText(), QStringLiteral("Custom"));

        // Opening a launch script (hapmoe-studio train.sh, or File > Open) imports it into the
        // model, keeping the cluster; a script it cannot read is refused, the model untouched.
        w->newProject();
        const std::size_t nodes = w->document()->cluster().nodes.size();
        QVERIFY(w->openFile(script));
        QCOMPARE(w->document()->project().model.num_layers, 4);
        QCOMPARE(w->document()->project().model.hidden_size, 1024);
        QCOMPARE(w->document()->cluster().nodes.size(), nodes);
        const QString broken = dir.filePath(QStringLiteral("broken.bash"));
        QVERIFY(writeTextFile(broken, "torchrun pretrain_gpt.py --num-layers 8\n"));
        QVERIFY(!w->openFile(broken));
        QCOMPARE(w->document()->project().model.num_layers, 4);
    }

    void fitsASmallWindowWithoutScrollingSideways()
    {
        auto w = makeWindow();
        w->loadExample();   // Mixtral-S: its source names the paper and the Mixtral report
        // The design docks step aside on this tab: a 1280 x 800 window stands the groups in two
        // columns (standsInTwoColumnsInALargeWindow), a 1024 x 700 one stacks them.
        w->resize(1024, 700);
        w->showTab(QStringLiteral("model"));
        settle();
        QCOMPARE(w->size(), QSize(1024, 700));   // the panel does not make the window grow
        ModelPanel* panel = w->modelPanel();
        auto* scroll = panel->findChild<QScrollArea*>(QStringLiteral("modelScroll"));
        QVERIFY(scroll);
        QVERIFY2(scroll->viewport()->width() < panel->twoColumnWidth(),
                 qPrintable(QStringLiteral("%1 %2").arg(scroll->viewport()->width()).arg(panel->twoColumnWidth())));
        QCOMPARE(panel->columnCount(), 1);
        QCOMPARE(scroll->horizontalScrollBar()->maximum(), 0);

        // Every group, the pattern's hint and the dispatcher inside the viewport's width.
        const int width = scroll->viewport()->width();
        for (const char* name : {"modelTransformerBox", "modelMoeBox", "modelTrainingBox", "modelDerivedBox"}) {
            auto* box = panel->findChild<QGroupBox*>(QString::fromLatin1(name));
            QVERIFY2(box, name);
            QVERIFY2(inViewport(box, scroll).right() < width, name);
        }
        for (const char* key : {"moe_layer_pattern", "moe_token_dispatcher_type", "hidden_size"})
            QVERIFY2(inViewport(panel->fieldEditor(QString::fromLatin1(key)), scroll).right() < width, key);
        auto* pattern = qobject_cast<QLineEdit*>(panel->fieldEditor(QStringLiteral("moe_layer_pattern")));
        QVERIFY(pattern->width() > pattern->fontMetrics().horizontalAdvance(pattern->placeholderText()));

        // The source wraps and shows all its lines.
        auto* source = panel->findChild<QLabel*>(QStringLiteral("modelSource"));
        QVERIFY(source);
        QVERIFY(source->text().contains(QStringLiteral("arXiv:2401.04088")));
        QVERIFY(inViewport(source, scroll).right() < width);
        QVERIFY(source->height() >= source->heightForWidth(source->width()));
        QVERIFY(source->height() >= 2 * source->fontMetrics().lineSpacing());   // wrapped at this width

        // The derived figures are in view without scrolling at all.
        auto* derived = panel->findChild<QGroupBox*>(QStringLiteral("modelDerivedBox"));
        QCOMPARE(scroll->verticalScrollBar()->value(), 0);
        QVERIFY(scroll->viewport()->rect().contains(inViewport(derived, scroll)));
    }

    void standsInTwoColumnsInALargeWindow()
    {
        auto w = makeWindow();
        w->loadExample();
        w->resize(1900, 1150);
        w->showTab(QStringLiteral("model"));
        settle();
        QCOMPARE(w->size(), QSize(1900, 1150));
        ModelPanel* panel = w->modelPanel();
        auto* scroll = panel->findChild<QScrollArea*>(QStringLiteral("modelScroll"));
        QCOMPARE(panel->columnCount(), 2);
        QCOMPARE(scroll->horizontalScrollBar()->maximum(), 0);
        auto box = [&](const char* name) { return inViewport(panel->findChild<QGroupBox*>(QString::fromLatin1(name)), scroll); };
        // Transformer above Training | Derived figures above Mixture of experts: the figures
        // first in the right column, in view with the preset.
        QCOMPARE(box("modelDerivedBox").top(), box("modelTransformerBox").top());
        QVERIFY(box("modelDerivedBox").left() > box("modelTransformerBox").right());
        QCOMPARE(box("modelMoeBox").left(), box("modelDerivedBox").left());
        QVERIFY(box("modelMoeBox").top() > box("modelDerivedBox").bottom());
        QVERIFY(box("modelMoeBox").top() < box("modelDerivedBox").bottom() + 40);   // right under the figures
        QVERIFY(box("modelTrainingBox").top() > box("modelTransformerBox").bottom());
        QVERIFY(box("modelMoeBox").right() < scroll->viewport()->width());

        // Tab goes down the left column: from the Transformer's last field (hidden dropout) to
        // the training settings under it, not across to the experts.
        // (A spin box's line edit stands for the spin box.)
        QWidget* const start = panel->fieldEditor(QStringLiteral("hidden_dropout"));
        QVERIFY(start);
        QWidget* next = start;
        QWidget* field = nullptr;
        while (!field && (next = next->nextInFocusChain()) != start) {
            QWidget* w = qobject_cast<QAbstractSpinBox*>(next->parentWidget()) ? next->parentWidget() : next;
            if (w != start && (w->focusPolicy() & Qt::TabFocus) && w->isVisibleTo(panel) && w->isEnabled())
                field = w;
        }
        QCOMPARE(field, panel->fieldEditor(QStringLiteral("training.micro_batch_size")));

        // A 1280 x 800 window, the design docks aside: two columns, the figures in view.
        w->resize(1280, 800);
        settle();
        QCOMPARE(panel->columnCount(), 2);
        QCOMPARE(scroll->verticalScrollBar()->value(), 0);
        QVERIFY(scroll->viewport()->rect().contains(box("modelDerivedBox")));

        // Between the two, and down to a 1024 x 700 window, whichever the arrangement,
        // nothing scrolls sideways.
        QSet<int> arrangements;
        for (int width = 1024; width <= 1900; width += 20) {
            w->resize(width, width < 1280 ? 700 : 800);
            settle();
            QVERIFY2(scroll->horizontalScrollBar()->maximum() == 0,
                     qPrintable(QStringLiteral("window %1 px wide: %2 columns, %3 px to scroll")
                                    .arg(width)
                                    .arg(panel->columnCount())
                                    .arg(scroll->horizontalScrollBar()->maximum())));
            arrangements.insert(panel->columnCount());
        }
        QCOMPARE(arrangements, QSet<int>({1, 2}));   // the widths crossed from one arrangement to the other
    }

    void runtimeThemeSwitchRepaintsEveryField()
    {
        // View > Dark Palette at runtime left Layers white while every other field turned
        // dark: the new project's model, checked while the window was being built, marked
        // Layers with a style sheet, and clearing the style sheet of a field not yet polished
        // pinned the light palette on it. Every spin box of the form must draw the theme's
        // Base behind its digits after a switch either way, in a fresh window and after a
        // field was marked invalid and corrected.
        auto w = makeWindow();
        w->showTab(QStringLiteral("model"));
        ModelPanel* panel = w->modelPanel();
        settle();
        // The field drawn at its centre-left (the digits' background).
        const auto background = [](QWidget* field) {
            const QImage image = field->grab().toImage();
            return image.pixelColor(4, image.height() / 2);
        };
        const auto everyFieldFollows = [&] {
            for (ThemeKind kind : {ThemeKind::Dark, ThemeKind::Light}) {
                applyTheme(kind);
                settle();
                const QColor base = themePalette(kind).color(QPalette::Base);
                for (QAbstractSpinBox* spin : panel->findChildren<QAbstractSpinBox*>()) {
                    if (!spin->isVisibleTo(panel) || !spin->isEnabled())
                        continue;
                    QCOMPARE(spin->palette().color(QPalette::Base), base);
                    QVERIFY2(contrastRatio(background(spin), base) < 1.2,
                             qPrintable(QStringLiteral("%1 drawn on %2 instead of %3")
                                            .arg(spin->objectName(), background(spin).name(), base.name())));
                }
            }
        };
        everyFieldFollows();
        if (QTest::currentTestFailed())
            return;

        w->loadExample();
        auto* layers = qobject_cast<QSpinBox*>(panel->fieldEditor(QStringLiteral("num_layers")));
        QVERIFY(layers);
        const int before = layers->value();
        typeInto(layers, QStringLiteral("0"));   // no layers: refused and marked
        QVERIFY2(panel->validationMessage().contains(QStringLiteral("num_layers")), qPrintable(panel->validationMessage()));
        QVERIFY(panel->isMarkedInvalid(layers));
        typeInto(layers, QString::number(before));
        QVERIFY(panel->validationMessage().isEmpty());
        QVERIFY(!panel->isMarkedInvalid(layers));
        everyFieldFollows();
        applyTheme(ThemeKind::Light);
    }

    void countsTakeAUnitBelowAMillion()
    {
        // "Tokens per iteration" read a bare "786432" for 384 x 2048 tokens while the other
        // figures have units: 786,432 is "786.4 K". A count that rounds to 1000 of a unit
        // takes the next one, as the FLOP figures do (999.96e6 is "1.000 B", not "1000.0 M").
        auto w = makeWindow();
        w->loadExample();
        ModelPanel* panel = w->modelPanel();
        ModelSpec m = w->document()->model();
        m.training.global_batch_size = 384;
        m.seq_length = 2048;
        w->document()->setModel(m, QStringLiteral("Tokens"));
        QVERIFY2(panel->derivedText().contains(QStringLiteral("Tokens per iteration</td><td align='right'><b>786.4 K</b>")),
                 qPrintable(panel->derivedText()));
        QCOMPARE(ModelPanel::countText(786432), QStringLiteral("786.4 K"));
        QCOMPARE(ModelPanel::countText(999), QStringLiteral("999"));
        QCOMPARE(ModelPanel::countText(999.6), QStringLiteral("1.000 K"));
        QCOMPARE(ModelPanel::countText(999960), QStringLiteral("1.000 M"));
        QCOMPARE(ModelPanel::countText(999.96e6), QStringLiteral("1.000 B"));
        QCOMPARE(ModelPanel::countText(35.09e9), QStringLiteral("35.09 B"));
        QCOMPARE(ModelPanel::countText(1.2e12), QStringLiteral("1.200 T"));
        // Four significant figures: 256 x 4096 = 2^20 tokens is 1.049 M (1.0 M was 5 % off),
        // and a figure that rounds up to the next decade keeps four (9,999,600 is 10.00 M).
        QCOMPARE(ModelPanel::countText(1048576), QStringLiteral("1.049 M"));
        QCOMPARE(ModelPanel::countText(9999600), QStringLiteral("10.00 M"));
        QCOMPARE(ModelPanel::countText(99996e6), QStringLiteral("100.0 B"));
    }

    void derivedNoteReadsOnBothThemes()
    {
        // The "FLOPs by Megatron-LM's counting" note was color:gray, about 3.5:1 on the dark
        // window: it takes a colour from the palette that reads at 4.5:1 or more on both
        // themes (WCAG 2.1 criterion 1.4.3), and follows a theme switch.
        auto w = makeWindow();
        w->loadExample();
        w->showTab(QStringLiteral("model"));
        ModelPanel* panel = w->modelPanel();
        for (ThemeKind kind : {ThemeKind::Dark, ThemeKind::Light}) {
            applyTheme(kind);
            settle();
            const QString html = panel->derivedText();
            QVERIFY2(!html.contains(QStringLiteral("gray")), qPrintable(html));
            const QRegularExpression note(QStringLiteral("<p style='color:(#[0-9a-fA-F]{6})'>FLOPs by"));
            const auto m = note.match(html);
            QVERIFY2(m.hasMatch(), qPrintable(html));
            const QPalette pal = themePalette(kind);
            for (QPalette::ColorRole role : {QPalette::Window, QPalette::Base})
                QVERIFY2(contrastRatio(QColor(m.captured(1)), pal.color(role)) >= 4.5, qPrintable(m.captured(1)));
            // Quieter than the figures themselves.
            QVERIFY(QColor(m.captured(1)) != pal.color(QPalette::WindowText));
        }
        applyTheme(ThemeKind::Light);
    }

    void validationMessageReadsOnTheDarkPalette()
    {
        applyTheme(ThemeKind::Dark);
        auto w = makeWindow();
        w->loadExample();
        w->showTab(QStringLiteral("model"));
        ModelPanel* panel = w->modelPanel();
        auto* topk = qobject_cast<QSpinBox*>(panel->fieldEditor(QStringLiteral("moe_router_topk")));
        typeInto(topk, QStringLiteral("9"));   // more than the 8 experts
        const QRegularExpression colour(QStringLiteral("color:(#[0-9a-fA-F]{6})"));
        const auto m = colour.match(panel->validationMessage());
        QVERIFY2(m.hasMatch(), qPrintable(panel->validationMessage()));
        // 4.5:1 on the window (WCAG 2.1 criterion 1.4.3); #d32f2f there was 2.8:1.
        QVERIFY(contrastRatio(QColor(m.captured(1)), panel->palette().color(QPalette::Window)) >= 4.5);
        applyTheme(ThemeKind::Light);
    }
};

QTEST_MAIN(ModelPanelTest)
#include "ModelPanelTest.moc"
