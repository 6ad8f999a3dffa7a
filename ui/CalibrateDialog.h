#pragma once
// Search > Calibrate from Training Log: a Megatron-LM log of a run of the selected plan
// calibrates the project's profile (or the analytic defaults), as `hapmoe calibrate --log LOG
// --plan PROJECT` does (core megatron/LogCalibration.h, docs/profiling.md). The log is read and the fit made
// off the GUI thread; the dialog shows the comparison before and after (iteration time, device
// efficiency, memory per stage, rho), the notes and warnings, or why the log was refused
// (naming the file and its line). The calibrated profile can then become the project's (one
// undo step, through useProfile) or be saved as a hapmoe.profile file (atomically).

#include "hardware/DeviceCatalog.h"
#include "io/Documents.h"
#include "megatron/LogCalibration.h"
#include "profile/Profile.h"

#include <QDialog>
#include <QFutureWatcher>
#include <QString>

#include <optional>
#include <string>
#include <vector>

class QLabel;
class QProgressBar;
class QPushButton;
class QTextBrowser;

namespace hapmoe::ui {

class CalibrateDialog : public QDialog {
    Q_OBJECT
public:
    // doc: the plan the run used, with the prediction whose switches the run is costed with;
    // catalog: the device types the plan was costed on; base: the project's profile, which the
    // calibration keeps and extends and "Use as Project Profile" replaces; none for the
    // analytic defaults.
    CalibrateDialog(const PlanDocument& doc, const DeviceCatalog& catalog, const std::optional<Profile>& base,
                    QWidget* parent = nullptr);
    ~CalibrateDialog() override;

    // Reads the log and calibrates off the GUI thread; finished() follows. A read already
    // running is abandoned (its result is dropped).
    void calibrate(const QString& logFile);
    bool isRunning() const { return m_running; }
    // Tests and the command line: returns when the running read has finished and is shown.
    void waitForFinished();

    QString logFile() const { return m_logFile; }
    // The last calibration (none before one ends, and after a refused log).
    const std::optional<CalibrationResult>& result() const { return m_result; }
    // A calibration that reproduces the logged time: its profile can be used or saved.
    bool hasProfile() const { return m_result && m_result->fit_failure.empty(); }
    // Why the log was refused (InputError's text: file, line, what was expected); empty when it was not.
    QString errorText() const { return m_error; }
    QTextBrowser* report() const { return m_report; }
    QPushButton* useButton() const { return m_use; }
    QPushButton* saveButton() const { return m_save; }
    QPushButton* chooseButton() const { return m_choose; }

    // Writes the calibrated profile to path, atomically; empty on success, else the reason.
    QString saveProfile(const QString& path);

signals:
    void finished();
    // "Use as Project Profile": the project takes the calibrated profile.
    void useProfile(const hapmoe::Profile& profile, const QString& logFile);

private:
    struct Outcome {
        std::optional<CalibrationResult> result;
        std::vector<std::string> logWarnings;   // of the log's own lines (cut last line, several runs)
        int intervals = 0, memoryReports = 0, timerCount = 0, routerLayers = 0;
        std::vector<std::pair<std::string, std::pair<double, double>>> timers;
        std::string error;
    };
    static Outcome run(const std::string& logFile, const std::string& shownName, const PlanDocument& doc,
                       const DeviceCatalog& catalog, const std::optional<Profile>& base);
    void showOutcome(const Outcome& outcome);
    void chooseLog();
    void saveWithDialog();

    PlanDocument m_doc;
    DeviceCatalog m_catalog;
    std::optional<Profile> m_base;
    QString m_logFile;
    std::optional<CalibrationResult> m_result;
    QString m_error;
    bool m_running = false;
    QFutureWatcher<Outcome>* m_watcher = nullptr;
    QLabel* m_planLabel;
    QLabel* m_logLabel;
    QProgressBar* m_busy;
    QTextBrowser* m_report;
    QPushButton* m_choose;
    QPushButton* m_use;
    QPushButton* m_save;
};

} // namespace hapmoe::ui
