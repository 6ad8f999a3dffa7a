#pragma once
// Helpers shared by the GUI tests: drive the real widgets through viewport coordinates.

#include "ClusterScene.h"
#include "ClusterView.h"
#include "DevicePalette.h"
#include "EndpointItem.h"
#include "MainWindow.h"
#include "Theme.h"

#include <QApplication>
#include <QDropEvent>
#include <QFile>
#include <QMimeData>
#include <QStandardPaths>
#include <QTest>

#include <memory>

namespace hapmoe::ui::test {

inline void initGuiTest()
{
    // Settings, recent files and autosaves go to throw-away test locations.
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName(QStringLiteral("HAPMoE-test"));
    QApplication::setApplicationName(QStringLiteral("HAPMoE Studio test"));
    applyTheme(ThemeKind::Light);
}

// Writes a text file (a launch script to import); false when it cannot.
inline bool writeTextFile(const QString& path, const QByteArray& text)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
}

inline std::unique_ptr<MainWindow> makeWindow()
{
    auto w = std::make_unique<MainWindow>();
    w->setBatchMode(true);
    w->resize(1600, 1000);
    w->show();
    if (!QTest::qWaitForWindowExposed(w.get()))
        qWarning("window not exposed");
    return w;
}

// Sends a palette drag of deviceType to viewportPos as the platform would: enter, move, drop.
inline bool dropDevice(MainWindow& w, const QString& deviceType, QPoint viewportPos,
                       Qt::KeyboardModifiers modifiers = Qt::NoModifier)
{
    DevicePalette* palette = w.devicePalette();
    const int row = palette->rowOf(deviceType);
    if (row < 0)
        return false;
    std::unique_ptr<QMimeData> mime(palette->mimeDataForRow(row));
    QWidget* viewport = w.clusterView()->viewport();
    QDragEnterEvent enter(viewportPos, Qt::CopyAction, mime.get(), Qt::LeftButton, modifiers);
    QApplication::sendEvent(viewport, &enter);
    if (!enter.isAccepted())
        return false;
    QDragMoveEvent move(viewportPos, Qt::CopyAction, mime.get(), Qt::LeftButton, modifiers);
    QApplication::sendEvent(viewport, &move);
    QDropEvent drop(QPointF(viewportPos), Qt::CopyAction, mime.get(), Qt::LeftButton, modifiers);
    QApplication::sendEvent(viewport, &drop);
    return drop.isAccepted();
}

// The plans a project keeps of a search's result: its ranked plans, its current configuration
// and, when it found plans, the baselines it compared them with.
inline std::size_t savedRows(const SearchResult& r)
{
    const std::size_t baselines = r.plans.empty() ? 0 : (r.uniform_baseline ? 1 : 0) + (r.metis_baseline ? 1 : 0);
    return r.plans.size() + (r.current ? 1 : 0) + baselines;
}

// Where an item of the canvas appears in the viewport.
inline QPoint viewportPosOf(MainWindow& w, int id)
{
    EndpointItem* item = w.clusterScene()->endpoint(id);
    return item ? w.clusterView()->mapFromScene(item->pos()) : QPoint(-1, -1);
}

} // namespace hapmoe::ui::test
