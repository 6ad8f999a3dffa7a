#pragma once
// Export a plan to its cluster: preview of the Megatron-LM or FlagScale launcher with the
// target's checks listed, copy or save it, save the plan JSON; when the plan cannot run on
// the chosen target the launcher is refused with the rule it breaks. It opens at a size
// relative to its window (sizeFor) and its check labels wrap to the column's width.

#include "ExplorerPlan.h"
#include "PlanExplorerWidget.h"
#include "megatron/LauncherExport.h"

#include <QDialog>

class QComboBox;
class QPlainTextEdit;
class QListWidget;
class QLabel;
class QPushButton;
class QSplitter;
class QTabWidget;

namespace hapmoe::ui {

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    explicit ExportDialog(QWidget* parent = nullptr);

    // Another plan clears the status line ("Saved …/run_megatron.sh"), which spoke of the last
    // one, and picks the target the plan deploys on; the same plan again (a refresh, or a new
    // context with renamed hosts) keeps the status line and the target the user chose.
    void setPlan(const ExplorerContext& context, const ExplorerPlan& entry);
    // The explorer has no plan any more (File > New or Open, a search that found none): the
    // dialog closes and empties, with Copy and both Saves disabled, so that it never shows or
    // saves the previous project's plan.
    void clearPlan();
    bool hasPlan() const { return m_hasPlan; }
    // The folder Save launcher and Save plan JSON open in (the project's); empty: the working folder.
    void setFolder(const QString& folder) { m_folder = folder; }
    QString folder() const { return m_folder; }
    // The status line under the launcher (plain text): what was saved or copied, or why not.
    QString statusText() const { return m_statusText; }
    // The plan was computed before the last change to the model or cluster: the verdict says
    // that the launcher runs the model and cluster of that search, not the project's current
    // ones, whatever its checks say.
    void setOutdated(bool outdated);
    bool isOutdated() const { return m_outdated; }
    void setFormat(LauncherFormat format);
    LauncherFormat format() const;

    const ExportResult& result() const { return m_result; }
    PlanDocument document() const;

    // Write files (atomically). Return an empty string on success, else the reason. The
    // launcher's usage comment names the file it is saved as.
    QString saveLauncher(const QString& path);
    QString savePlanJson(const QString& path) const;

    QPushButton* saveLauncherButton() const { return m_saveLauncher; }
    QPushButton* savePlanButton() const { return m_savePlan; }
    QPushButton* copyButton() const { return m_copy; }
    QComboBox* formatBox() const { return m_format; }
    QListWidget* checksList() const { return m_checks; }
    QLabel* refusalLabel() const { return m_refusal; }
    QPlainTextEdit* preview() const { return m_script; }
    // The last file written through a button, for the status line.
    QString lastSavedPath() const { return m_lastSaved; }
    QSplitter* splitter() const { return m_split; }

    // The size the dialog opens at over a window of the given size: 85 % of it, so that the
    // launcher reads without scrolling on a large screen and the window shows around it;
    // never below the dialog's minimum size and never beyond the window.
    QSize sizeFor(const QSize& window) const;
    void setVisible(bool visible) override;

protected:
    void changeEvent(QEvent* event) override;

private:
    void regenerate();
    // The verdict, the failed checks and the status line in the palette's status colours.
    void showVerdict();
    void showStatus(const QString& text, bool problem);
    void fitToWindow(const QSize& window);
    void onSaveLauncher();
    void onSavePlan();
    QString askFileName(const QString& title, const QString& suggested, const QString& filter);
    // The launcher's file name: the one it was last saved as for this target, else the
    // target's default (run_megatron.sh, run_flagscale.sh).
    QString launcherName() const;

    ExplorerContext m_context;
    ExplorerPlan m_entry;
    ExportResult m_result;
    QString m_lastSaved;
    QString m_scriptName;   // the launcher's file name once saved; the usage comment uses it
    QString m_statusText;
    QString m_folder;
    bool m_statusProblem = false;
    bool m_outdated = false;
    bool m_hasPlan = false;

    QComboBox* m_format;
    QTabWidget* m_tabs;
    QSplitter* m_split;
    QPlainTextEdit* m_script;
    QPlainTextEdit* m_hostfile;
    QListWidget* m_checks;
    QLabel* m_refusal;
    QLabel* m_status;
    QPushButton* m_copy;
    QPushButton* m_saveLauncher;
    QPushButton* m_savePlan;
};

} // namespace hapmoe::ui
