#include "Theme.h"

#include "explorer/ExplorerStyle.h"

#include <QApplication>
#include <QFile>
#include <QHash>
#include <QPainter>
#include <QPixmap>
#include <QStyleOption>
#include <QSvgRenderer>

#include <algorithm>
#include <cmath>

static void initStudioQrc() { Q_INIT_RESOURCE(studio); }

namespace hapmoe::ui {

namespace {

ThemeKind g_theme = ThemeKind::Light;

// sRGB channel (0..1) to linear light, as in WCAG 2.1's definition of relative luminance.
double linear(double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); }

double relativeLuminance(const QColor& c)
{
    return 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF());
}

} // namespace

StudioStyle::StudioStyle(ThemeKind kind) : QProxyStyle(QStringLiteral("Fusion")), m_kind(kind)
{
    setObjectName(QStringLiteral("hapmoe-theme"));
}

QPalette StudioStyle::standardPalette() const { return themePalette(m_kind); }

void StudioStyle::drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                          const QWidget* widget) const
{
    QProxyStyle::drawPrimitive(element, option, painter, widget);
    // Fusion draws item-view checks through PE_IndicatorCheckBox as well (via proxy()).
    if (element != PE_IndicatorCheckBox)
        return;
    // Keyboard focus: keep Fusion's highlighted outline.
    if ((option->state & State_HasFocus) && (option->state & State_KeyboardFocusChange))
        return;
    // The same rectangle as Fusion's outline (half-pixel offset, antialiased), drawn over it.
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, true);
    painter->translate(0.5, 0.5);
    painter->setBrush(Qt::NoBrush);
    painter->setPen(QPen(option->palette.color(QPalette::Mid), 1));
    painter->drawRect(option->rect.adjusted(0, 0, -1, -1));
    painter->restore();
}

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
        // Check box outlines (StudioStyle::drawPrimitive): 3.2:1 on Window, 3.8:1 on Base.
        p.setColor(QPalette::Mid, QColor(0x76, 0x7b, 0x83));
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
    auto* theme = new StudioStyle(kind);   // owned by the application from here on
    QApplication::setStyle(theme);
    QApplication::setPalette(theme->standardPalette());
}

ThemeKind currentTheme() { return g_theme; }

bool isDark(const QPalette& palette)
{
    return relativeLuminance(palette.color(QPalette::Text)) > relativeLuminance(palette.color(QPalette::Base));
}

double contrastRatio(const QColor& a, const QColor& b)
{
    const double la = relativeLuminance(a), lb = relativeLuminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor statusColor(Status status, const QPalette& palette)
{
    // 4.6:1 and more on Window and Base (contrastRatio): darker shades on the light palette,
    // lighter ones on the dark palette, where the red is that of the timeline's idle time.
    // The first shade that reads at 4.5:1 on both; a lighter background (a tooltip on the
    // dark palette) takes a lighter shade.
    const bool dark = isDark(palette);
    static const QColor okDark[] = {QColor(0x81, 0xc7, 0x84), QColor(0xa5, 0xd6, 0xa7), QColor(0xc8, 0xe6, 0xc9)};
    static const QColor okLight[] = {QColor(0x2e, 0x7d, 0x32), QColor(0x1b, 0x5e, 0x20)};
    static const QColor badDark[] = {QColor(0xef, 0x73, 0x73), QColor(0xff, 0x8a, 0x80), QColor(0xff, 0xab, 0x91)};
    static const QColor badLight[] = {QColor(0xc6, 0x28, 0x28), QColor(0xb7, 0x1c, 0x1c)};
    const auto pick = [&](const auto& shades) {
        for (const QColor& c : shades)
            if (contrastRatio(c, palette.color(QPalette::Window)) >= 4.5 && contrastRatio(c, palette.color(QPalette::Base)) >= 4.5)
                return c;
        return std::end(shades)[-1];
    };
    if (status == Status::Ok)
        return dark ? pick(okDark) : pick(okLight);
    return dark ? pick(badDark) : pick(badLight);
}

QString statusHtml(Status status, const QPalette& palette, const QString& html)
{
    return QStringLiteral("<span style='color:%1'>%2</span>").arg(statusColor(status, palette).name(), html);
}

QString noteListHtml(const QStringList& items)
{
    if (items.isEmpty())
        return {};
    QString list = QStringLiteral("<ul style=\"margin-left: 0px; -qt-list-indent: 1\">");
    for (const QString& item : items)
        list += QStringLiteral("<li>") + item.toHtmlEscaped() + QStringLiteral("</li>");
    return list + QStringLiteral("</ul>");
}

QColor problemFieldBackground(const QPalette& palette)
{
    // Light: the pale red fields always had (#f8d0cc); dark: red 900 at a third over Base.
    if (!isDark(palette))
        return QColor(0xf8, 0xd0, 0xcc);
    return QColor(style::mix(palette.color(QPalette::Base), QColor(0xb7, 0x1c, 0x1c), 0.35).rgb());
}

QColor problemFieldText(const QPalette& palette)
{
    return isDark(palette) ? palette.color(QPalette::Text) : QColor(0x5a, 0x0d, 0x07);
}

QColor quietTextColor(const QPalette& palette)
{
    const QColor text = palette.color(QPalette::WindowText), window = palette.color(QPalette::Window);
    // From half way to the window's colour towards the text's: the first that reads at 4.6:1
    // (a margin over 4.5 for the 8-bit rounding) on both backgrounds.
    for (int share = 50; share < 100; share += 5) {
        const QColor c(style::mix(window, text, share / 100.0).rgb());
        if (contrastRatio(c, window) >= 4.6 && contrastRatio(c, palette.color(QPalette::Base)) >= 4.6)
            return c;
    }
    return text;
}

QPalette toolTipPalette()
{
    QPalette p = QApplication::palette();
    for (QPalette::ColorRole role : {QPalette::Window, QPalette::Base})
        p.setColor(role, p.color(QPalette::ToolTipBase));
    p.setColor(QPalette::WindowText, p.color(QPalette::ToolTipText));
    return p;
}

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
