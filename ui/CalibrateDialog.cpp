#include "CalibrateDialog.h"

#include "Theme.h"

#include "hardware/DeviceType.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrent>

#include <exception>

namespace hapmoe::ui {

namespace {

QString ms(double seconds) { return QString::number(seconds * 1000, 'f', 1) + QStringLiteral(" ms"); }

// Signed ("+1.20 %"), rounded as calibrate rounds it: never "-0.00 %".
QString percent(double predicted, double measured, int digits)
{
    const double p = roundedPercentOff(predicted, measured, digits);
    return (p > 0 ? QStringLiteral("+") : QString()) + QString::number(p, 'f', digits) + QStringLiteral(" %");
}

QString cell(const QString& text, bool right = true)
{
    return QStringLiteral("<td style='padding:1px 10px 1px 0' align='%1'>%2</td>")
        .arg(right ? QStringLiteral("right") : QStringLiteral("left"), text);
}

QString headerCell(const QString& text, bool right = true)
{
    return QStringLiteral("<th style='padding:1px 10px 1px 0' align='%1'>%2</th>")
        .arg(right ? QStringLiteral("right") : QStringLiteral("left"), text);
}

QStringList toList(const std::vector<std::string>& items)
{
    QStringList list;
    for (const std::string& s : items)
        list << QString::fromStdString(s);
    return list;
}

} // namespace

CalibrateDialog::CalibrateDialog(const PlanDocument& doc, const DeviceCatalog& catalog, const std::optional<Profile>& base,
                                 QWidget* parent)
    : QDialog(parent)
    , m_doc(doc)
    , m_catalog(catalog)
    , m_base(base)
{
    setObjectName(QStringLiteral("calibrateDialog"));
    setWindowTitle(tr("Calibrate from a Training Log"));
    auto* layout = new QVBoxLayout(this);

    m_planLabel = new QLabel(this);
    m_planLabel->setWordWrap(true);
    m_planLabel->setTextFormat(Qt::RichText);
    const QString baseText = base ? tr("the project's profile \"%1\" (its tables kept, scaled with the fit)")
                                        .arg(QString::fromStdString(base->name.empty() ? std::string("unnamed") : base->name)
                                                 .toHtmlEscaped())
                                  : tr("the analytic defaults (the project has no profile)");
    // One arg() for all four: a plan named "a %2 b" is written as it is.
    m_planLabel->setText(tr("Plan <b>%1</b>: %2 stages, %3 devices. A log of a run of this plan calibrates %4.")
                             .arg(QString::fromStdString(doc.plan.name).toHtmlEscaped(), QString::number(doc.plan.stages.size()),
                                  QString::number(doc.plan.numDevices()), baseText));
    layout->addWidget(m_planLabel);

    auto* logRow = new QHBoxLayout;
    m_logLabel = new QLabel(tr("No log read yet."), this);
    m_logLabel->setObjectName(QStringLiteral("calibrateLogLabel"));
    m_logLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_choose = new QPushButton(tr("Choose Log\u2026"), this);
    m_choose->setObjectName(QStringLiteral("calibrateChooseLog"));
    m_choose->setToolTip(tr("A Megatron-LM training log of this plan's run: its \"elapsed time per iteration (ms)\" lines, "
                            "memory reports and router token counts"));
    connect(m_choose, &QPushButton::clicked, this, &CalibrateDialog::chooseLog);
    logRow->addWidget(m_logLabel, 1);
    logRow->addWidget(m_choose);
    layout->addLayout(logRow);

    m_busy = new QProgressBar(this);
    m_busy->setRange(0, 0);   // busy: reading and fitting have no steps to count
    m_busy->setTextVisible(false);
    m_busy->setMaximumHeight(8);
    m_busy->hide();
    layout->addWidget(m_busy);

    m_report = new QTextBrowser(this);
    m_report->setObjectName(QStringLiteral("calibrateReport"));
    m_report->setOpenLinks(false);
    layout->addWidget(m_report, 1);

    auto* buttons = new QDialogButtonBox(this);
    m_use = buttons->addButton(tr("Use as Project Profile"), QDialogButtonBox::AcceptRole);
    m_use->setToolTip(tr("The project takes the calibrated profile (Edit > Undo gives the previous one back); "
                         "the next search costs its plans with it"));
    m_save = buttons->addButton(tr("Save Profile\u2026"), QDialogButtonBox::ActionRole);
    m_save->setToolTip(tr("Write the calibrated profile as a hapmoe.profile file (hapmoe estimate --profile reads it)"));
    QPushButton* close = buttons->addButton(QDialogButtonBox::Close);
    close->setToolTip(tr("Close; a log still being read is abandoned and nothing changes"));
    m_use->setEnabled(false);
    m_save->setEnabled(false);
    connect(m_use, &QPushButton::clicked, this, [this] {
        if (!hasProfile())
            return;
        emit useProfile(m_result->profile, m_logFile);
        accept();
    });
    connect(m_save, &QPushButton::clicked, this, &CalibrateDialog::saveWithDialog);
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
    layout->addWidget(buttons);

    m_watcher = new QFutureWatcher<Outcome>(this);
    connect(m_watcher, &QFutureWatcher<Outcome>::finished, this, [this] {
        m_running = false;
        m_busy->hide();
        showOutcome(m_watcher->result());
        emit finished();
    });
    resize(760, 620);
}

CalibrateDialog::~CalibrateDialog() = default;   // a read still running owns copies of its inputs

void CalibrateDialog::calibrate(const QString& logFile)
{
    m_logFile = logFile;
    m_result.reset();
    m_error.clear();
    m_use->setEnabled(false);
    m_save->setEnabled(false);
    m_logLabel->setText(tr("Log: %1").arg(QDir::toNativeSeparators(logFile)));
    m_logLabel->setToolTip(QFileInfo(logFile).absoluteFilePath());
    m_report->setHtml(tr("Reading %1\u2026").arg(QFileInfo(logFile).fileName().toHtmlEscaped()));
    m_busy->show();
    m_running = true;
    // The file's name as the CLI names a file given on its command line; its folder is on the label.
    m_watcher->setFuture(QtConcurrent::run(&CalibrateDialog::run, logFile.toStdString(),
                                           QFileInfo(logFile).fileName().toStdString(), m_doc, m_catalog, m_base));
}

void CalibrateDialog::waitForFinished()
{
    if (!m_running)
        return;
    m_watcher->waitForFinished();
    QCoreApplication::processEvents();   // the watcher's finished() shows the outcome
}

CalibrateDialog::Outcome CalibrateDialog::run(const std::string& logFile, const std::string& shownName, const PlanDocument& doc,
                                              const DeviceCatalog& catalog, const std::optional<Profile>& base)
{
    Outcome o;
    try {
        std::string text;
        try {
            text = readTextFile(logFile);
        } catch (const InputError& e) {
            // readTextFile names the path it was given; the report names the file as shown.
            throw InputError(shownName, e.where(), e.detail());
        }
        const MegatronLog log = parseMegatronLog(text, shownName);
        o.logWarnings = log.warnings;
        o.intervals = static_cast<int>(log.intervals.size());
        o.memoryReports = static_cast<int>(log.memory.size());
        o.routerLayers = static_cast<int>(log.router_tokens.size());
        for (const auto& [name, t] : log.timers)
            o.timers.emplace_back(name, t);
        o.result = calibrateFromLog(log, doc, catalog, shownName, base ? &*base : nullptr);
    } catch (const std::exception& e) {
        o.result.reset();
        o.error = e.what();
    }
    return o;
}

void CalibrateDialog::showOutcome(const Outcome& o)
{
    const QPalette pal = palette();
    auto problem = [&](const QString& html) { return statusHtml(Status::Problem, pal, html); };
    if (!o.result) {
        m_error = QString::fromStdString(o.error);
        m_report->setHtml(QStringLiteral("<p>%1</p><p>%2</p>")
                              .arg(problem(tr("<b>The log cannot calibrate this plan.</b>")),
                                   problem(m_error.toHtmlEscaped()))
                          + tr("<p>Nothing was changed. hapmoe calibrate refuses the same log with the same reason.</p>"));
        return;
    }
    m_result = o.result;
    const CalibrationResult& r = *m_result;
    const bool failed = !r.fit_failure.empty();
    auto count = [](int n, const QString& one, const QString& many) { return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many); };
    QString html;
    // What went wrong first: a failed fit, then the warnings, so that neither is below the fold.
    if (failed)
        html += QStringLiteral("<p>%1</p>")
                    .arg(problem(tr("<b>No profile: %1.</b> The figures below are the fit's bound, not a calibration.")
                                     .arg(QString::fromStdString(r.fit_failure).toHtmlEscaped())));
    QStringList warnings = toList(o.logWarnings);
    warnings << toList(r.warnings);
    if (!warnings.isEmpty())
        html += QStringLiteral("<h4>%1</h4>").arg(problem(warnings.size() == 1 ? tr("Warning") : tr("Warnings")))
                + noteListHtml(warnings);
    html += tr("<p>%1 (%2 used), %3, %4, %5.</p>")
                .arg(count(o.intervals, tr("iteration line"), tr("iteration lines")))
                .arg(r.intervals_used)
                .arg(count(o.memoryReports, tr("memory report"), tr("memory reports")))
                .arg(count(static_cast<int>(o.timers.size()), tr("timer"), tr("timers")))
                .arg(count(o.routerLayers, tr("layer with router counts"), tr("layers with router counts")));

    const QString afterName = failed ? tr("at the bound") : tr("after");
    html += tr("<h4>Iteration time</h4>");
    html += QStringLiteral("<table>");
    html += QStringLiteral("<tr>") + cell(tr("measured"), false) + cell(ms(r.measured_iteration_s)) + cell(QString())
            + QStringLiteral("</tr>");
    html += QStringLiteral("<tr>") + cell(tr("predicted before"), false) + cell(ms(r.predicted_before_s))
            + cell(percent(r.predicted_before_s, r.measured_iteration_s, 1)) + QStringLiteral("</tr>");
    html += QStringLiteral("<tr>") + cell(tr("predicted %1").arg(afterName), false) + cell(ms(r.predicted_after_s))
            + cell(percent(r.predicted_after_s, r.measured_iteration_s, 2)) + QStringLiteral("</tr>");
    html += QStringLiteral("</table>");
    if (r.intervals_ramp_up > 0)
        html += tr("<p>%1 of a batch-size ramp-up skipped.</p>").arg(count(r.intervals_ramp_up, tr("interval"), tr("intervals")));

    html += tr("<h4>Device efficiency (large-GEMM fraction of BF16 peak)</h4><table><tr>%1%2%3%4</tr>")
                .arg(headerCell(tr("device"), false), headerCell(tr("before")), headerCell(failed ? tr("at the bound") : tr("calibrated")),
                     headerCell(tr("the figure before"), false));
    for (const auto& [type, e] : r.profile.device_efficiency) {
        const auto before = r.efficiency_before.find(type);
        if (before == r.efficiency_before.end())
            continue;   // a type of the base profile the plan does not use: unchanged
        // Where the figure before came from: 0.935 x the catalog's MAMF figure, or the base profile.
        const DeviceType* t = m_catalog.find(type);
        const QString source = r.efficiency_before_from_base.count(type) || !t
                                   ? tr("the base profile's")
                                   : tr("0.935 \u00d7 the catalog's %1").arg(t->default_efficiency, 0, 'f', 3);
        html += QStringLiteral("<tr>") + cell(QString::fromStdString(type).toHtmlEscaped(), false)
                + cell(QString::number(before->second, 'f', 3)) + cell(QString::number(e, 'f', 3)) + cell(source, false)
                + QStringLiteral("</tr>");
    }
    html += QStringLiteral("</table>");
    if (r.table_scale != 1)
        html += tr("<p>One scale s = \u00d7%1 fitted for the plan's device types (one iteration time cannot tell them apart): "
                   "each efficiency is s \u00d7 its catalog figure (at most 1), and the base profile's compute table times of "
                   "these types are divided by s (\u00d7%2).</p>")
                    .arg(r.efficiency_scale, 0, 'f', 4)
                    .arg(r.table_scale, 0, 'f', 4);
    else
        html += tr("<p>One scale s = \u00d7%1 fitted for the plan's device types (one iteration time cannot tell them apart): "
                   "each efficiency is s \u00d7 its catalog figure, the maximum achievable GEMM rate measured (MAMF).</p>")
                    .arg(r.efficiency_scale, 0, 'f', 3);
    if (r.rho) {
        const double rhoBefore = m_base && m_base->router_imbalance ? *m_base->router_imbalance : m_doc.model.training.router_imbalance;
        html += tr("<p>Router imbalance \u03c1 %1, from the router token counts (before: %2, %3).</p>")
                    .arg(*r.rho, 0, 'f', 3)
                    .arg(rhoBefore, 0, 'f', 3)
                    .arg(m_base && m_base->router_imbalance ? tr("the base profile's") : tr("the model's"));
    }

    if (!r.memory.empty()) {
        html += tr("<h4>Memory per stage (GiB)</h4><table><tr>%1%2%3%4%5%6</tr>")
                    .arg(headerCell(tr("stage"), false), headerCell(tr("device"), false), headerCell(tr("measured")),
                         headerCell(tr("before")), headerCell(afterName), headerCell(tr("capacity")));
        for (const StageMemoryCheck& m : r.memory) {
            const QString after = QString::number(m.predicted_after_gib, 'f', 2);
            html += QStringLiteral("<tr>") + cell(QString::number(m.stage), false)
                    + cell(QString::fromStdString(m.device_type).toHtmlEscaped(), false)
                    + cell(QString::number(m.measured_gib, 'f', 2)) + cell(QString::number(m.predicted_before_gib, 'f', 2))
                    + cell(m.capacity_gib > 0 && m.predicted_after_gib > m.capacity_gib ? problem(after) : after)
                    + cell(m.capacity_gib > 0 ? QString::number(m.capacity_gib, 'f', 2) : QString()) + QStringLiteral("</tr>");
        }
        html += QStringLiteral("</table>");
        QStringList overheads;
        for (const MemoryCalibration& mc : r.profile.memory)
            overheads << tr("%1 %2 GiB").arg(QString::fromStdString(mc.device_type)).arg(mc.fixed_overhead_gib, 0, 'f', 2);
        if (!overheads.isEmpty())
            html += tr("<p>Fixed overhead per device: %1.</p>").arg(overheads.join(QStringLiteral(", ")).toHtmlEscaped());
    }
    if (!o.timers.empty()) {
        QStringList timers;
        for (const auto& [name, t] : o.timers)
            timers << tr("%1 %2 \u2013 %3 ms").arg(QString::fromStdString(name)).arg(t.first, 0, 'f', 1).arg(t.second, 0, 'f', 1);
        html += tr("<p>Timers (min \u2013 max over the ranks, shown, not fitted): %1.</p>")
                    .arg(timers.join(QStringLiteral("; ")).toHtmlEscaped());
    }
    if (!r.notes.empty())
        html += tr("<h4>Notes</h4>") + noteListHtml(toList(r.notes));
    if (!failed)
        html += (warnings.isEmpty() ? tr("<p>The calibrated profile reproduces the logged time.</p>")
                                    : tr("<p>The calibrated profile reproduces the logged time; read the warnings above "
                                         "before using it.</p>"))
                + tr("<p>Use as Project Profile replaces %1 with it; the plans shown were costed without it and stay "
                     "as they are until the next search.</p>")
                      .arg(m_base ? tr("the project's profile \"%1\"").arg(QString::fromStdString(m_base->name).toHtmlEscaped())
                                  : tr("the analytic defaults"));
    m_report->setHtml(html);
    m_use->setEnabled(hasProfile());
    m_save->setEnabled(hasProfile());
    if (hasProfile())
        m_use->setDefault(true);
}

void CalibrateDialog::chooseLog()
{
    const QString start = m_logFile.isEmpty() ? QString() : QFileInfo(m_logFile).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Megatron-LM training log"), start,
                                                      tr("Training logs (*.log *.txt *.out);;All files (*)"));
    if (!path.isEmpty())
        calibrate(path);
}

QString CalibrateDialog::saveProfile(const QString& path)
{
    if (!hasProfile())
        return tr("no calibrated profile to save");
    try {
        saveFileAtomically(path.toStdString(), writeProfile(m_result->profile));
        return {};
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
}

void CalibrateDialog::saveWithDialog()
{
    const QString start = QFileInfo(m_logFile).absoluteDir().filePath(QFileInfo(m_logFile).completeBaseName()
                                                                       + QStringLiteral("-profile.json"));
    QString path = QFileDialog::getSaveFileName(this, tr("Save the calibrated profile"), start,
                                                tr("HAPMoE profiles (*.json);;All files (*)"));
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".json");
    const QString error = saveProfile(path);
    const QPalette pal = palette();
    if (error.isEmpty())
        m_report->append(tr("<p>Saved %1. With the plan saved as a file (Export > Save plan JSON), "
                            "<code>hapmoe estimate --plan PLAN.json --profile %2</code> gives the logged time.</p>")
                             .arg(QDir::toNativeSeparators(path).toHtmlEscaped(), QFileInfo(path).fileName().toHtmlEscaped()));
    else
        m_report->append(QStringLiteral("<p>%1</p>")
                             .arg(statusHtml(Status::Problem, pal, tr("Not saved: %1").arg(error.toHtmlEscaped()))));
}

} // namespace hapmoe::ui
