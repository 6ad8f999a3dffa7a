#pragma once
// Runs the core search off the GUI thread (QtConcurrent::run with a QPromise, watched by a
// QFutureWatcher). The core reports progress from its worker threads into a shared slot
// that a GUI-thread timer reads, so that the GUI never waits on a lock held for long and
// never pumps events. The destructor cancels and waits.

#include "cost/CostModel.h"
#include "hardware/DeviceCatalog.h"
#include "hardware/Cluster.h"
#include "model/ModelSpec.h"
#include "profile/Profile.h"
#include "search/Search.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include <memory>
#include <optional>

namespace hapmoe::ui {

class SearchRunner : public QObject {
    Q_OBJECT
public:
    explicit SearchRunner(QObject* parent = nullptr);
    ~SearchRunner() override;

    bool isRunning() const { return m_running; }
    // Copies its inputs: the project may change while the search runs. costOptions: the
    // switches the plans are costed with (exportCostOptions of the project's script); profile:
    // the measured tables the cost model uses (none: analytic defaults), as `hapmoe plan --profile`;
    // catalog: the device types (the project's over the built-in ones), as `--devices`.
    void start(const ModelSpec& model, const Cluster& cluster, const SearchOptions& options,
               const CostOptions& costOptions = {}, const std::optional<Profile>& profile = std::nullopt,
               const DeviceCatalog& catalog = DeviceCatalog::builtin());
    // Asks the search to stop; returns at once. finished() follows with what it had.
    void cancel();
    void waitForFinished();

    SearchProgress lastProgress() const { return m_last; }
    double elapsedSeconds() const;
    bool hasResult() const { return m_hasResult; }
    const SearchResult& result() const { return m_result; }
    const ModelSpec& model() const { return m_model; }
    const Cluster& cluster() const { return m_cluster; }
    const std::optional<Profile>& profile() const { return m_profile; }   // the last search's
    const DeviceCatalog& catalog() const { return m_catalog; }            // the last search's

signals:
    void started();
    void progressChanged(const hapmoe::SearchProgress& progress);
    void finished(const hapmoe::SearchResult& result);
    void failed(const QString& message);

private:
    struct Shared;
    void poll();
    void onFinished();

    std::shared_ptr<Shared> m_shared;
    // The searches' own thread (one at a time), whose worker threads run below the GUI's
    // priority; declared before the watcher, so that it outlives the wait in the destructor.
    QThreadPool m_pool;
    QFutureWatcher<SearchResult> m_watcher;
    QTimer m_poll;
    QElapsedTimer m_clock;
    SearchProgress m_last;
    SearchResult m_result;
    ModelSpec m_model;
    Cluster m_cluster;
    std::optional<Profile> m_profile;
    DeviceCatalog m_catalog = DeviceCatalog::builtin();
    bool m_running = false;
    bool m_hasResult = false;
};

} // namespace hapmoe::ui
