#include "SearchRunner.h"

#include "hardware/DeviceCatalog.h"

#include <QtConcurrent/QtConcurrent>

#include <atomic>
#include <mutex>

#ifdef Q_OS_LINUX
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace hapmoe::ui {

struct SearchRunner::Shared {
    std::atomic<bool> cancel{false};
    std::mutex mutex;   // guards progress and error only; held for a copy
    SearchProgress progress;
    bool fresh = false;
    QString error;
};

SearchRunner::SearchRunner(QObject* parent) : QObject(parent)
{
    m_pool.setMaxThreadCount(1);
    m_poll.setInterval(50);
    connect(&m_poll, &QTimer::timeout, this, &SearchRunner::poll);
    connect(&m_watcher, &QFutureWatcher<SearchResult>::finished, this, &SearchRunner::onFinished);
}

SearchRunner::~SearchRunner()
{
    // Never leave a worker writing into a destroyed object: cancel, then wait.
    cancel();
    m_watcher.disconnect(this);
    m_watcher.waitForFinished();
}

void SearchRunner::start(const ModelSpec& model, const Cluster& cluster, const SearchOptions& options,
                         const CostOptions& costOptions, const std::optional<Profile>& profile, const DeviceCatalog& catalog)
{
    if (m_running)
        return;
    m_model = model;
    m_cluster = cluster;
    m_profile = profile;
    m_catalog = catalog;
    m_hasResult = false;
    m_result = SearchResult{};
    m_last = SearchProgress{};
    m_shared = std::make_shared<Shared>();
    m_running = true;
    m_clock.start();

    auto shared = m_shared;
    QFuture<SearchResult> future = QtConcurrent::run(&m_pool,
        [shared, model, cluster, options, costOptions, profile, catalog](QPromise<SearchResult>& promise) {
#ifdef Q_OS_LINUX
            // Linux keeps a nice value per thread, and the threads it starts inherit it: the
            // search's workers (one per core) give way to the GUI thread. Only this pool's
            // thread runs searches, so the value it keeps harms nothing else.
            setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
#endif
            try {
                // The cost model keeps pointers to the profile and the catalog: the task's own
                // copies outlive it.
                CostModel cost(model, cluster, catalog, profile ? &*profile : nullptr, costOptions);
                auto progress = [&shared](const SearchProgress& p) {
                    std::lock_guard<std::mutex> lock(shared->mutex);
                    shared->progress = p;
                    shared->fresh = true;
                };
                promise.addResult(runSearch(cost, options, &shared->cancel, progress));
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> lock(shared->mutex);
                shared->error = QString::fromUtf8(e.what());
            }
        });
    m_watcher.setFuture(future);
    m_poll.start();
    emit started();
}

void SearchRunner::cancel()
{
    if (!m_running || !m_shared)
        return;
    // Only the flag: a cancelled QFuture would drop the best-so-far result the search returns.
    m_shared->cancel.store(true);
}

void SearchRunner::waitForFinished() { m_watcher.waitForFinished(); }

double SearchRunner::elapsedSeconds() const { return m_clock.isValid() ? m_clock.elapsed() / 1000.0 : 0.0; }

void SearchRunner::poll()
{
    if (!m_shared)
        return;
    SearchProgress p;
    {
        std::lock_guard<std::mutex> lock(m_shared->mutex);
        if (!m_shared->fresh)
            return;
        p = m_shared->progress;
        m_shared->fresh = false;
    }
    m_last = p;
    emit progressChanged(p);
}

void SearchRunner::onFinished()
{
    m_poll.stop();
    poll();
    m_running = false;
    QString error;
    {
        std::lock_guard<std::mutex> lock(m_shared->mutex);
        error = m_shared->error;
    }
    const QFuture<SearchResult> future = m_watcher.future();
    if (error.isEmpty() && future.resultCount() > 0) {
        m_result = future.resultAt(0);
        m_hasResult = true;
        emit finished(m_result);
    } else if (!error.isEmpty()) {
        emit failed(error);
    } else {
        // No result reported (the task never ran): an empty, cancelled result.
        m_result = SearchResult{};
        m_result.cancelled = true;
        m_result.no_plan_reason = "cancelled before the search started";
        m_hasResult = true;
        emit finished(m_result);
    }
}

} // namespace hapmoe::ui
