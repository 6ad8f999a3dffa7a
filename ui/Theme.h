#pragma once
// Light and dark palettes (Fusion style), device-type colours shared by every view, and
// the icons drawn for the studio (resources/icons/*.svg).

#include <QColor>
#include <QIcon>
#include <QPalette>
#include <QString>

namespace hapmoe::ui {

enum class ThemeKind { Light, Dark };

void initStudioResources();
QPalette themePalette(ThemeKind kind);
void applyTheme(ThemeKind kind);
ThemeKind currentTheme();
bool isDark(const QPalette& palette);

// A stable colour per device type (by catalog order), legible on both palettes.
QColor deviceColor(const QString& deviceType);
// The chip icon tinted with the device type's colour.
QIcon deviceIcon(const QString& deviceType);
QIcon studioIcon(const QString& name);

} // namespace hapmoe::ui
