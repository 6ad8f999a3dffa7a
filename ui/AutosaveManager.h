#pragma once
// Autosave that survives a crash: while a session runs it holds a lock file beside its
// autosave; a later session finds autosaves whose lock is stale (the owner died) and offers
// them for recovery. A clean save or close removes the session's autosave.

#include <QDateTime>
#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>

class QLockFile;

namespace hapmoe::ui {

class ProjectDocument;

class AutosaveManager : public QObject {
    Q_OBJECT
public:
    explicit AutosaveManager(ProjectDocument* document, QObject* parent = nullptr);
    ~AutosaveManager() override;

    struct Recovery {
        QString id;
        QString autosavePath;
        QString originalPath;   // empty for a project never saved
        QString name;
        QDateTime savedAt;
    };

    static QString directory();   // <AppDataLocation>/autosave
    // Autosaves left by sessions that ended without cleaning up (a crash).
    static QList<Recovery> orphans();
    static void remove(const Recovery& recovery);

    void setInterval(int milliseconds);
    QString autosavePath() const;
    // Writes the autosave now when the project has unsaved changes; returns true if written.
    bool saveNow();
    // Removes this session's autosave (after a save, or when changes are discarded).
    void discard();

private:
    QString path(const QString& suffix) const;

    ProjectDocument* m_document;
    QString m_id;
    std::unique_ptr<QLockFile> m_lock;
    QTimer m_timer;
};

} // namespace hapmoe::ui
