// The project's own device types (Cluster > Device Types): a built-in type's figures changed
// for the project cost its searches as `hapmoe plan --devices` costs them; a type of its own is
// drawn, renamed with its nodes, kept in the project file and carried into exported plans; bad
// figures and files are refused in the dialog with nothing applied.

#include "GuiTestSupport.h"

#include "DeviceTypesDialog.h"
#include "ExportDialog.h"
#include "PlanExplorerWidget.h"
#include "ProjectDocument.h"
#include "SearchPanel.h"

#include "cost/CostModel.h"
#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "megatron/LauncherExport.h"

#include <QDoubleSpinBox>
#include <QFileInfo>

#include <algorithm>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>

#include <nlohmann/json.hpp>

using namespace hapmoe;
using namespace hapmoe::ui;
using namespace hapmoe::ui::test;

namespace {

// Runs the panel's search and waits for its result (3 minutes at most).
SearchResult searchToTheEnd(SearchPanel* panel)
{
    QSignalSpy finished(panel, &SearchPanel::searchFinished);
    if (!panel->run() || !QTest::qWaitFor([&] { return !finished.isEmpty(); }, 180000))
        return {};
    return finished.first().first().value<SearchResult>();
}

// Types text into a line edit of the dialog and ends the edit, as a user's Tab does.
void typeInto(DeviceTypesDialog& dialog, const char* name, const QString& text)
{
    auto* edit = dialog.findChild<QLineEdit*>(QString::fromLatin1(name));
    QVERIFY(edit);
    edit->setText(text);
    emit edit->editingFinished();
}

QDoubleSpinBox* figure(DeviceTypesDialog& dialog, const char* name) { return dialog.findChild<QDoubleSpinBox*>(QString::fromLatin1(name)); }

// New Type from the H800, renamed X100, at 600 TFLOP/s and 96 GiB, through the dialog.
void addX100(MainWindow& w)
{
    DeviceTypesDialog dialog(w.document(), &w);
    QVERIFY(dialog.selectType(QStringLiteral("H800")));
    dialog.addType();
    QCOMPARE(dialog.selectedType(), QStringLiteral("H800 (2)"));
    typeInto(dialog, "typeName", QStringLiteral("X100"));
    figure(dialog, "typeBf16")->setValue(600);
    figure(dialog, "typeMemory")->setValue(96);
    QVERIFY2(dialog.errorText().isEmpty(), qPrintable(dialog.errorText()));
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
}

} // namespace

class DeviceTypesTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { initGuiTest(); }

    void builtInFiguresOfTheProjectCostItsSearch()
    {
        // Mixtral-S on the paper's 16-1 (one H800 node and one 910B node), the H800 at half its
        // catalog GEMM efficiency for this project.
        auto w = makeWindow();
        w->loadExample();
        QVERIFY(w->loadClusterPreset(QStringLiteral("16-1")));
        const double catalogEfficiency = DeviceCatalog::builtin().find("H800")->default_efficiency;
        {
            DeviceTypesDialog dialog(w->document(), w.get());
            QVERIFY(dialog.selectType(QStringLiteral("h800-sxm")));   // an alias selects its type
            QCOMPARE(dialog.selectedType(), QStringLiteral("H800"));
            QVERIFY(dialog.projectTypes().empty());
            // A figure changed and set back is the catalog's again: no entry of the project's.
            figure(dialog, "typeBf16")->setValue(900);
            QCOMPARE(dialog.projectTypes().size(), std::size_t(1));
            figure(dialog, "typeBf16")->setValue(989);
            QVERIFY(dialog.projectTypes().empty());
            // Also a figure the box shows rounded: the STREAM fraction 2.90 / 3.35 reads 0.866.
            figure(dialog, "typeHbmEfficiency")->setValue(0.9);
            QCOMPARE(dialog.projectTypes().size(), std::size_t(1));
            figure(dialog, "typeHbmEfficiency")->setValue(0.866);
            QVERIFY(dialog.projectTypes().empty());
            figure(dialog, "typeEfficiency")->setValue(catalogEfficiency / 2);
            QCOMPARE(dialog.projectTypes().size(), std::size_t(1));
            // Only the figure edited changes; the others stay the catalog's, sources and all
            // but the edited figure's.
            const DeviceType& edited = dialog.projectTypes().front();
            QCOMPARE(edited.bf16_tflops, 989.0);
            QVERIFY(edited.sources.count("bf16_tflops") == 1 && edited.sources.count("default_efficiency") == 0);
            dialog.accept();
            QCOMPARE(dialog.result(), int(QDialog::Accepted));
        }
        const Project& p = w->document()->project();
        QCOMPARE(p.devices.size(), std::size_t(1));
        const double halved = p.devices.front().default_efficiency;
        QVERIFY(std::abs(halved - catalogEfficiency / 2) < 1e-4);   // the box keeps 4 decimals
        QCOMPARE(w->document()->catalog().find("H800")->default_efficiency, halved);
        QCOMPARE(w->document()->undoStack()->undoText(), QStringLiteral("Edit Device Types"));
        DevicePalette* palette = w->devicePalette();
        QVERIFY(palette->item(palette->rowOf(QStringLiteral("H800")))->toolTip().startsWith(QStringLiteral("This project's figures")));
        QVERIFY(!palette->item(palette->rowOf(QStringLiteral("910B-376T")))->toolTip().startsWith(QStringLiteral("This project's")));

        // The studio's search equals the core's on the same types (`hapmoe plan --devices`), and
        // is slower than on the catalog's H800.
        SearchPanel* panel = w->searchPanel();
        const SearchResult studio = searchToTheEnd(panel);
        QVERIFY2(!studio.plans.empty(), studio.no_plan_reason.c_str());
        CostOptions costOptions;
        costOptions.memory_headroom = w->document()->searchSettings().memory_headroom;
        const DeviceCatalog own = catalogWith(p.devices);
        const CostModel cost(w->document()->model(), w->document()->cluster(), own, nullptr, costOptions);
        const SearchResult core = runSearch(cost, panel->currentOptions());
        QVERIFY(!core.plans.empty());
        QCOMPARE(studio.plans.front().prediction.iteration_time_s, core.plans.front().prediction.iteration_time_s);
        const CostModel catalogCost(w->document()->model(), w->document()->cluster(), DeviceCatalog::builtin(), nullptr, costOptions);
        const SearchResult onCatalog = runSearch(catalogCost, panel->currentOptions());
        QVERIFY(!onCatalog.plans.empty());
        QVERIFY2(studio.plans.front().prediction.iteration_time_s > onCatalog.plans.front().prediction.iteration_time_s,
                 qPrintable(QStringLiteral("%1 s with the project's H800, %2 s with the catalog's")
                                .arg(studio.plans.front().prediction.iteration_time_s)
                                .arg(onCatalog.plans.front().prediction.iteration_time_s)));

        // An exported plan file carries the project's H800, so the command line costs it alike.
        auto* exportDialog = qobject_cast<ExportDialog*>(w->explorer()->view(QStringLiteral("export")));
        QVERIFY(exportDialog);
        w->explorer()->selectPlan(0);
        const PlanDocument doc = exportDialog->document();
        QCOMPARE(doc.devices.size(), std::size_t(1));
        QCOMPARE(doc.devices.front().default_efficiency, halved);

        // The plans are the project's figures': undoing the edit outdates them, redoing it
        // makes them current again.
        QVERIFY(w->document()->savedPlansCurrent());
        w->document()->undoStack()->undo();
        QVERIFY(w->document()->project().devices.empty());
        QCOMPARE(w->document()->catalog().find("H800")->default_efficiency, catalogEfficiency);
        QVERIFY(!w->document()->savedPlansCurrent());
        QVERIFY(!panel->outdatedLabel()->isHidden());
        w->document()->undoStack()->redo();
        QVERIFY(w->document()->savedPlansCurrent());

        // Restore Built-in takes the catalog's figures back.
        DeviceTypesDialog dialog(w->document(), w.get());
        QVERIFY(dialog.selectType(QStringLiteral("H800")));
        QVERIFY(dialog.removeSelected().isEmpty());
        QVERIFY(dialog.projectTypes().empty());
        dialog.accept();
        QVERIFY(w->document()->project().devices.empty());
    }

    void ownTypeIsSearchedAndExported()
    {
        // Mixtral-S on one node of a type of the project's own (an H800 at 600 TFLOP/s and
        // 96 GiB) and one H800 node.
        auto w = makeWindow();
        w->loadExample();
        addX100(*w);
        if (QTest::currentTestFailed())
            return;
        QVERIFY(w->loadClusterPreset(QStringLiteral("X100:1x8,H800:1x8")));
        const SearchResult studio = searchToTheEnd(w->searchPanel());
        QVERIFY2(!studio.plans.empty(), studio.no_plan_reason.c_str());
        w->explorer()->selectPlan(0);
        auto* exportDialog = qobject_cast<ExportDialog*>(w->explorer()->view(QStringLiteral("export")));
        QVERIFY(exportDialog);
        // The launcher is the core's on the project's types (a type of one's own has a vendor
        // and a collective library: NCCL here).
        const PlanDocument doc = exportDialog->document();
        QCOMPARE(doc.devices.size(), std::size_t(1));
        QCOMPARE(doc.devices.front().name, std::string("X100"));
        QVERIFY2(exportDialog->result().ok, exportDialog->result().refusal.c_str());
        ExportOptions options;
        options.format = exportDialog->format();
        const DeviceCatalog own = catalogWith(w->document()->project().devices);
        options.catalog = &own;
        const ExportResult core = exportLauncher(doc, options);
        QVERIFY(core.ok);
        const std::vector<ExportCheck>& shown = exportDialog->result().checks;
        QCOMPARE(shown.size(), core.checks.size());
        for (std::size_t i = 0; i < shown.size(); ++i) {
            QCOMPARE(QString::fromStdString(shown[i].rule), QString::fromStdString(core.checks[i].rule));
            QVERIFY2(shown[i].ok, (shown[i].rule + ": " + shown[i].message).c_str());
        }

        // The plan JSON, re-estimated by the command line with no --devices, gives the time the
        // studio shows.
        QTemporaryDir dir;
        const QString planFile = dir.filePath(QStringLiteral("plan.json"));
        QVERIFY(exportDialog->savePlanJson(planFile).isEmpty());
        QProcess cli;
        cli.start(QStringLiteral(HAPMOE_CLI_PATH), {QStringLiteral("estimate"), QStringLiteral("--plan"), planFile, QStringLiteral("--json")});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 0);
        const nlohmann::json estimated = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
        QCOMPARE(estimated["prediction"]["iteration_time_s"].get<double>(), studio.plans.front().prediction.iteration_time_s);

        // The type's notes change no plan; its figures do.
        QVERIFY(w->document()->savedPlansCurrent());
        {
            DeviceTypesDialog dialog(w->document(), w.get());
            QVERIFY(dialog.selectType(QStringLiteral("X100")));
            typeInto(dialog, "typeNotes", QStringLiteral("Our own part."));
            dialog.accept();
        }
        QCOMPARE(w->document()->project().devices.front().notes, std::string("Our own part."));
        QVERIFY(w->document()->savedPlansCurrent());
        {
            DeviceTypesDialog dialog(w->document(), w.get());
            QVERIFY(dialog.selectType(QStringLiteral("X100")));
            figure(dialog, "typeHbmEfficiency")->setValue(0.9);
            dialog.accept();
        }
        QVERIFY(!w->document()->savedPlansCurrent());
    }

    void unchangedTypesMakeNoUndoStep()
    {
        // A project whose file spells H800 "h800" (its entry replaces H800, which keeps its
        // name): the dialog opened and closed with OK changes nothing.
        auto w = makeWindow();
        w->newProject();
        Project p = w->document()->project();
        DeviceType h800 = *DeviceCatalog::builtin().find("H800");
        h800.name = "h800";
        h800.intra_node_gbps = 160;
        p.devices = {h800};
        w->document()->resetProject(p, QString());
        const int steps = w->document()->undoStack()->count();
        DeviceTypesDialog dialog(w->document(), w.get());
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(w->document()->undoStack()->count(), steps);
        QVERIFY(!w->document()->isModified());
    }

    void ownTypeIsDrawnRenamedAndSaved()
    {
        auto w = makeWindow();
        w->newProject();
        addX100(*w);
        if (QTest::currentTestFailed())
            return;
        ProjectDocument* doc = w->document();
        const DeviceType* x100 = doc->catalog().find("X100");
        QVERIFY(x100);
        QCOMPARE(x100->bf16_tflops, 600.0);
        QCOMPARE(x100->memory_gib, 96.0);
        QVERIFY(x100->aliases.empty());   // the H800's names stay the H800's
        QCOMPARE(doc->catalog().find("H800")->bf16_tflops, 989.0);

        // Drawn from the palette like any type.
        QVERIFY(dropDevice(*w, QStringLiteral("X100"), w->clusterView()->viewport()->rect().center()));
        QCOMPARE(doc->cluster().nodes.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(doc->cluster().nodes.front().device_type), QStringLiteral("X100"));
        validateCluster(doc->cluster(), doc->catalog(), "cluster");

        // A name another type has, or one of its aliases, is refused: the type would replace
        // H800, or its node would be taken for an H800. Only the spelling may change.
        {
            DeviceTypesDialog dialog(doc, w.get());
            QVERIFY(dialog.selectType(QStringLiteral("X100")));
            for (const char* taken : {"H800", "h800", "NVIDIA H800"}) {
                typeInto(dialog, "typeName", QString::fromLatin1(taken));
                QVERIFY2(dialog.errorText().contains(QStringLiteral("cannot be renamed")) && dialog.errorText().contains(QStringLiteral("H800")),
                         qPrintable(dialog.errorText()));
                QCOMPARE(dialog.selectedType(), QStringLiteral("X100"));
                QCOMPARE(dialog.findChild<QLineEdit*>(QStringLiteral("typeName"))->text(), QStringLiteral("X100"));
            }
            typeInto(dialog, "typeName", QString());
            QVERIFY2(dialog.errorText().contains(QStringLiteral("needs a name")), qPrintable(dialog.errorText()));
            QCOMPARE(dialog.selectedType(), QStringLiteral("X100"));
            typeInto(dialog, "typeName", QStringLiteral("x100"));
            QCOMPARE(dialog.selectedType(), QStringLiteral("x100"));
            dialog.reject();
        }
        // A node may spell the type as the catalog looks it up ("x-100"): it follows a rename.
        {
            Node spelled = doc->cluster().nodes.front();
            spelled.device_type = "x-100";
            doc->setNode(spelled);
            DeviceTypesDialog dialog(doc, w.get());
            QVERIFY(dialog.selectType(QStringLiteral("X100")));
            typeInto(dialog, "typeName", QStringLiteral("X300"));
            QVERIFY2(dialog.errorText().isEmpty(), qPrintable(dialog.errorText()));
            dialog.accept();
            QCOMPARE(QString::fromStdString(doc->cluster().nodes.front().device_type), QStringLiteral("X300"));
            doc->undoStack()->undo();
            doc->undoStack()->undo();
            QCOMPARE(QString::fromStdString(doc->cluster().nodes.front().device_type), QStringLiteral("X100"));
        }
        QCOMPARE(QString::fromStdString(doc->cluster().nodes.front().device_type), QStringLiteral("X100"));

        // Renamed, its node follows in the same undo step.
        {
            DeviceTypesDialog dialog(doc, w.get());
            QVERIFY(dialog.selectType(QStringLiteral("X100")));
            typeInto(dialog, "typeName", QStringLiteral("X200"));
            dialog.accept();
        }
        QCOMPARE(QString::fromStdString(doc->cluster().nodes.front().device_type), QStringLiteral("X200"));
        QVERIFY(doc->catalog().find("X200") && !doc->catalog().find("X100"));
        QVERIFY(w->devicePalette()->rowOf(QStringLiteral("X200")) >= 0 && w->devicePalette()->rowOf(QStringLiteral("X100")) < 0);
        doc->undoStack()->undo();
        QCOMPARE(QString::fromStdString(doc->cluster().nodes.front().device_type), QStringLiteral("X100"));
        QVERIFY(doc->catalog().find("X100"));

        // A type a node uses is not removed: the dialog says which node.
        {
            DeviceTypesDialog dialog(doc, w.get());
            QVERIFY(dialog.selectType(QStringLiteral("X100")));
            const QString why = dialog.removeSelected();
            QVERIFY2(why.contains(QString::fromStdString(doc->cluster().nodes.front().host)) && why.contains(QStringLiteral("another type")),
                     qPrintable(why));
            QCOMPARE(dialog.projectTypes().size(), std::size_t(1));
        }

        // Saved with the project and read back by another window, whose palette offers it.
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("own.hapmoe"));
        QVERIFY(w->saveTo(file));
        auto other = makeWindow();
        QVERIFY(other->openFile(file));
        QCOMPARE(other->document()->project().devices.size(), std::size_t(1));
        QCOMPARE(other->document()->catalog().find("X100")->bf16_tflops, 600.0);
        QVERIFY(other->devicePalette()->rowOf(QStringLiteral("X100")) >= 0);
        QVERIFY(!other->document()->isModified());
        // The first window's types are its own.
        QVERIFY(!makeWindow()->document()->catalog().find("X100"));

        // A project whose type takes another type's alias is refused, naming the field.
        nlohmann::json j = nlohmann::json::parse(readTextFile(file.toStdString()));
        j["devices"][0]["aliases"] = {"910B"};
        const QString bad = dir.filePath(QStringLiteral("alias.hapmoe"));
        QVERIFY(writeTextFile(bad, QByteArray::fromStdString(j.dump(2))));
        QVERIFY(!other->openFile(bad));
        QVERIFY2(other->lastError().contains(bad) && other->lastError().contains(QStringLiteral("devices[0].aliases")),
                 qPrintable(other->lastError()));
        QCOMPARE(other->document()->fileName(), QFileInfo(file).absoluteFilePath());
    }

    void badTypesAreRefusedInTheDialog()
    {
        auto w = makeWindow();
        w->newProject();
        const int steps = w->document()->undoStack()->count();
        DeviceTypesDialog dialog(w->document(), w.get());
        QVERIFY(dialog.selectType(QStringLiteral("MI300X")));
        dialog.addType();
        // A name is written in cluster shorthands, where ':' separates the parts.
        typeInto(dialog, "typeName", QStringLiteral("MI300X:fast"));
        QVERIFY2(dialog.errorText().contains(QStringLiteral("name")) && dialog.errorText().contains(QStringLiteral("':'")),
                 qPrintable(dialog.errorText()));
        dialog.accept();
        QVERIFY(dialog.result() != QDialog::Accepted);
        QVERIFY(w->document()->project().devices.empty());
        QCOMPARE(w->document()->undoStack()->count(), steps);
        // An alias another type has.
        typeInto(dialog, "typeName", QStringLiteral("MI300X fast"));
        QVERIFY(dialog.errorText().isEmpty());
        typeInto(dialog, "typeAliases", QStringLiteral("H100"));
        QVERIFY2(dialog.errorText().contains(QStringLiteral("\"H100\" already names H100-SXM")), qPrintable(dialog.errorText()));
        typeInto(dialog, "typeAliases", QString());
        QVERIFY(dialog.errorText().isEmpty());
        // Not exported while invalid: `hapmoe --devices` would refuse the file.
        typeInto(dialog, "typeName", QStringLiteral("MI300X:fast"));
        QTemporaryDir invalid;
        QVERIFY(dialog.exportFile(invalid.filePath(QStringLiteral("bad.json"))).startsWith(QStringLiteral("Not exported")));
        QVERIFY(!QFileInfo::exists(invalid.filePath(QStringLiteral("bad.json"))));
        typeInto(dialog, "typeName", QStringLiteral("MI300X fast"));
        // A devices file with a bad figure: the error names the file and the field, and the
        // types stay as they were.
        const QString file = QStringLiteral(HAPMOE_BAD_INPUT_DIR "/devices-bad-tflops.json");
        const QString error = dialog.importFile(file);
        QVERIFY2(error.contains(file) && error.contains(QStringLiteral("devices[0].bf16_tflops")), qPrintable(error));
        QCOMPARE(dialog.projectTypes().size(), std::size_t(1));
        // Export writes what Import (and `hapmoe --devices`) reads back.
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("devices.json"));
        QVERIFY(dialog.exportFile(out).isEmpty());
        const DeviceCatalog written = DeviceCatalog::fromJson(readTextFile(out.toStdString()), out.toStdString());
        QCOMPARE(written.types().size(), std::size_t(1));
        QCOMPARE(written.types().front().name, std::string("MI300X fast"));
        QVERIFY(dialog.removeSelected().isEmpty());
        QVERIFY(dialog.projectTypes().empty());
        QVERIFY(dialog.importFile(out).isEmpty());
        QCOMPARE(dialog.selectedType(), QStringLiteral("MI300X fast"));
        // A file that spells a built-in type otherwise ("h-800", an entry written before
        // hbm_efficiency) replaces it under the catalog's name and HBM fraction, selected for
        // editing.
        DeviceType spelled = *DeviceCatalog::builtin().find("H800");
        spelled.name = "h-800";
        spelled.hbm_efficiency = 0;
        spelled.bf16_tflops = 900;
        const QString spelledFile = dir.filePath(QStringLiteral("spelled.json"));
        saveFileAtomically(spelledFile.toStdString(), DeviceCatalog({spelled}).toJson());
        QVERIFY(dialog.importFile(spelledFile).isEmpty());
        QCOMPARE(dialog.selectedType(), QStringLiteral("H800"));
        QCOMPARE(figure(dialog, "typeBf16")->value(), 900.0);
        figure(dialog, "typeBf16")->setValue(950);
        const auto h800 = std::find_if(dialog.projectTypes().begin(), dialog.projectTypes().end(),
                                       [](const DeviceType& t) { return t.name == "H800"; });
        QVERIFY(h800 != dialog.projectTypes().end());
        QCOMPARE(h800->bf16_tflops, 950.0);
        QCOMPARE(h800->hbm_efficiency, 2.90 / 3.35);
        QVERIFY(dialog.removeSelected().isEmpty());   // back to the catalog's H800
        dialog.accept();
        QCOMPARE(w->document()->project().devices.size(), std::size_t(1));

        // An alias a node names its type by is not taken away while the node uses it.
        QVERIFY(dropDevice(*w, QStringLiteral("H800"), w->clusterView()->viewport()->rect().center()));
        Node node = w->document()->cluster().nodes.front();
        node.device_type = "NVIDIA H800";
        w->document()->setNode(node);
        DeviceTypesDialog aliases(w->document(), w.get());
        QVERIFY(aliases.selectType(QStringLiteral("H800")));
        typeInto(aliases, "typeAliases", QStringLiteral("H800-SXM"));
        QVERIFY2(aliases.errorText().contains(QString::fromStdString(node.host)) && aliases.errorText().contains(QStringLiteral("NVIDIA H800")),
                 qPrintable(aliases.errorText()));
        aliases.accept();
        QVERIFY(aliases.result() != QDialog::Accepted);
        QCOMPARE(w->document()->project().devices.size(), std::size_t(1));
    }
};

QTEST_MAIN(DeviceTypesTest)
#include "DeviceTypesTest.moc"
