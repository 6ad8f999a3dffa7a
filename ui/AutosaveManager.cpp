#include "AutosaveManager.h"

#include "ProjectDocument.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QStandardPaths>
#include <QUuid>

namespace hapmoe::ui {

AutosaveManager::AutosaveManager(ProjectDocument* document, QObject* parent)
    : QObject(parent), m_document(document), m_id(QUuid::createUuid().toString(QUuid::WithoutBraces))
{
    QDir().mkpath(directory());
    m_lock = std::make_unique<QLockFile>(path(QStringLiteral(".lock")));
    m_lock->setStaleLockTime(0);   // stale only when the owning process is gone
    m_lock->tryLock(0);
    m_timer.setInterval(30000);
    connect(&m_timer, &QTimer::timeout, this, &AutosaveManager::saveNow);
    m_timer.start();
    connect(document, &ProjectDocument::modifiedChanged, this, [this](bool modified) {
        if (!modified)
            discard();
    });
}

AutosaveManager::~AutosaveManager()
{
    // A session that ends normally leaves nothing to recover only if nothing was unsaved;
    // the main window discards after the user chose Save or Discard.
    if (m_lock)
        m_lock->unlock();
    QFile::remove(path(QStringLiteral(".lock")));
}

QString AutosaveManager::directory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/autosave");
}

QString AutosaveManager::path(const QString& suffix) const { return directory() + QLatin1Char('/') + m_id + suffix; }

QString AutosaveManager::autosavePath() const { return path(QStringLiteral(".hapmoe")); }

void AutosaveManager::setInterval(int milliseconds) { m_timer.setInterval(milliseconds); }

bool AutosaveManager::saveNow()
{
    if (!m_document->isModified())
        return false;
    try {
        saveFileAtomically(autosavePath().toStdString(), m_document->serialize());
        const QJsonObject meta{{"original", m_document->fileName()},
                               {"name", m_document->displayName()},
                               {"saved_at", QDateTime::currentDateTimeUtc().toString(Qt::ISODate)}};
        saveFileAtomically(path(QStringLiteral(".json")).toStdString(),
                           QJsonDocument(meta).toJson().toStdString());
        return true;
    } catch (const std::exception&) {
        return false;   // a failed autosave must never interrupt the user
    }
}

void AutosaveManager::discard()
{
    QFile::remove(autosavePath());
    QFile::remove(path(QStringLiteral(".json")));
}

QList<AutosaveManager::Recovery> AutosaveManager::orphans()
{
    QList<Recovery> list;
    const QDir dir(directory());
    for (const QString& meta : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Time)) {
        const QString id = meta.chopped(5);
        QLockFile lock(dir.filePath(id + QStringLiteral(".lock")));
        lock.setStaleLockTime(0);
        if (!lock.tryLock(0))
            continue;   // a running session owns it
        lock.unlock();
        QFile file(dir.filePath(meta));
        if (!file.open(QIODevice::ReadOnly))
            continue;
        const QJsonObject o = QJsonDocument::fromJson(file.readAll()).object();
        Recovery r;
        r.id = id;
        r.autosavePath = dir.filePath(id + QStringLiteral(".hapmoe"));
        r.originalPath = o.value("original").toString();
        r.name = o.value("name").toString();
        r.savedAt = QDateTime::fromString(o.value("saved_at").toString(), Qt::ISODate);
        if (QFile::exists(r.autosavePath))
            list.append(r);
    }
    return list;
}

void AutosaveManager::remove(const Recovery& recovery)
{
    const QDir dir(directory());
    QFile::remove(recovery.autosavePath);
    QFile::remove(dir.filePath(recovery.id + QStringLiteral(".json")));
    QFile::remove(dir.filePath(recovery.id + QStringLiteral(".lock")));
}

} // namespace hapmoe::ui
