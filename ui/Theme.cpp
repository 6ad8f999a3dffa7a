#include "Theme.h"

#include "explorer/ExplorerStyle.h"

#include <QApplication>
#include <QFile>
#include <QHash>
#include <QPainter>
#include <QPixmap>
#include <QStyleFactory>
#include <QSvgRenderer>

static void initStudioQrc() { Q_INIT_RESOURCE(studio); }

namespace hapmoe::ui {

namespace {

ThemeKind g_theme = ThemeKind::Light;

} // namespace

void initStudioResources()
{
    static bool done = false;
    if (!done) {
        initStudioQrc();
        done = true;
    }
}

QPalette themePalette(ThemeKind kind)
{
    QPalette p;
    if (kind == ThemeKind::Dark) {
        const QColor window(0x2b, 0x2d, 0x31), base(0x1f, 0x21, 0x24), text(0xe6, 0xe8, 0xeb);
        p.setColor(QPalette::Window, window);
        p.setColor(QPalette::WindowText, text);
        p.setColor(QPalette::Base, base);
        p.setColor(QPalette::AlternateBase, QColor(0x27, 0x29, 0x2d));
        p.setColor(QPalette::ToolTipBase, QColor(0x3a, 0x3d, 0x42));
        p.setColor(QPalette::ToolTipText, text);
        p.setColor(QPalette::PlaceholderText, QColor(0x8a, 0x8f, 0x96));
        p.setColor(QPalette::Text, text);
        p.setColor(QPalette::Button, QColor(0x35, 0x38, 0x3d));
        p.setColor(QPalette::ButtonText, text);
        p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
        p.setColor(QPalette::Light, QColor(0x45, 0x48, 0x4e));
        p.setColor(QPalette::Midlight, QColor(0x3c, 0x3f, 0x44));
        p.setColor(QPalette::Mid, QColor(0x55, 0x59, 0x60));
        p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1c));
        p.setColor(QPalette::Shadow, QColor(0x0e, 0x0f, 0x10));
        p.setColor(QPalette::Highlight, QColor(0x3d, 0x8e, 0xe0));
        p.setColor(QPalette::HighlightedText, QColor(0xff, 0xff, 0xff));
        p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
        p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x80, 0x84, 0x8a));
        p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x80, 0x84, 0x8a));
        p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x80, 0x84, 0x8a));
    } else {
        const QColor window(0xf3, 0xf4, 0xf6), text(0x1d, 0x21, 0x26);
        p.setColor(QPalette::Window, window);
        p.setColor(QPalette::WindowText, text);
        p.setColor(QPalette::Base, QColor(0xff, 0xff, 0xff));
        p.setColor(QPalette::AlternateBase, QColor(0xf0, 0xf3, 0xf7));
        p.setColor(QPalette::ToolTipBase, QColor(0xff, 0xfc, 0xe8));
        p.setColor(QPalette::ToolTipText, text);
        p.setColor(QPalette::PlaceholderText, QColor(0x80, 0x86, 0x8e));
        p.setColor(QPalette::Text, text);
        p.setColor(QPalette::Button, QColor(0xe9, 0xeb, 0xee));
        p.setColor(QPalette::ButtonText, text);
        p.setColor(QPalette::BrightText, QColor(0xc6, 0x28, 0x28));
        p.setColor(QPalette::Light, QColor(0xff, 0xff, 0xff));
        p.setColor(QPalette::Midlight, QColor(0xe3, 0xe5, 0xe8));
        p.setColor(QPalette::Mid, QColor(0xb4, 0xb9, 0xc0));
        p.setColor(QPalette::Dark, QColor(0x8a, 0x90, 0x98));
        p.setColor(QPalette::Shadow, QColor(0x50, 0x55, 0x5c));
        p.setColor(QPalette::Highlight, QColor(0x2a, 0x78, 0xd6));
        p.setColor(QPalette::HighlightedText, QColor(0xff, 0xff, 0xff));
        p.setColor(QPalette::Link, QColor(0x1a, 0x5f, 0xb4));
        p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x9a, 0x9f, 0xa6));
        p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x9a, 0x9f, 0xa6));
        p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x9a, 0x9f, 0xa6));
    }
    return p;
}

void applyTheme(ThemeKind kind)
{
    g_theme = kind;
    if (auto* style = QStyleFactory::create(QStringLiteral("Fusion")))
        QApplication::setStyle(style);
    QApplication::setPalette(themePalette(kind));
}

ThemeKind currentTheme() { return g_theme; }

bool isDark(const QPalette& palette) { return palette.color(QPalette::Window).lightness() < 128; }

QColor deviceColor(const QString& deviceType)
{
    // One colour per device type everywhere: palette, canvas and plan explorer.
    return style::deviceColor(deviceType);
}

QIcon deviceIcon(const QString& deviceType)
{
    initStudioResources();
    static QHash<QString, QIcon> cache;
    const QColor color = deviceColor(deviceType);
    const QString key = color.name();
    if (auto it = cache.constFind(key); it != cache.constEnd())
        return *it;
    QFile file(QStringLiteral(":/resources/icons/chip.svg"));
    QByteArray svg;
    if (file.open(QIODevice::ReadOnly))
        svg = file.readAll();
    svg.replace("#@COLOR@", color.name().toLatin1());
    QSvgRenderer renderer(svg);
    QIcon icon;
    for (int size : {16, 24, 32, 48, 64}) {
        QPixmap pixmap(size, size);
        pixmap.fill(Qt::transparent);
        QPainter painter(&pixmap);
        renderer.render(&painter);
        painter.end();
        icon.addPixmap(pixmap);
    }
    cache.insert(key, icon);
    return icon;
}

QIcon studioIcon(const QString& name)
{
    initStudioResources();
    return QIcon(QStringLiteral(":/resources/icons/%1.svg").arg(name));
}

} // namespace hapmoe::ui
