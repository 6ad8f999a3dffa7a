#pragma once
// Light and dark palettes (Fusion style), device-type colours shared by every view, and
// the icons drawn for the studio (resources/icons/*.svg).

#include <QColor>
#include <QIcon>
#include <QPalette>
#include <QProxyStyle>
#include <QString>
#include <QStringList>

namespace hapmoe::ui {

enum class ThemeKind { Light, Dark };

// The studio's style: Fusion with the light or dark palette. Fusion outlines a check box
// with the window colour darkened, which on the dark palette is the colour of the list or
// field behind it, so an unchecked box vanished. This style outlines check boxes (those of
// item views too) with the palette's Mid colour: on the dark palette it stands at 3:1 or
// more from Window and Base (WCAG 2.1 success criterion 1.4.11, non-text contrast); on the
// light palette it is about Fusion's own outline.
class StudioStyle : public QProxyStyle {
    Q_OBJECT
public:
    explicit StudioStyle(ThemeKind kind);

    ThemeKind kind() const { return m_kind; }
    QPalette standardPalette() const override;
    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                       const QWidget* widget = nullptr) const override;

private:
    ThemeKind m_kind;
};

void initStudioResources();
QPalette themePalette(ThemeKind kind);
void applyTheme(ThemeKind kind);
ThemeKind currentTheme();
// Whether the palette writes light text on a dark ground: its Text colour has a higher
// relative luminance (WCAG 2.1) than its Base colour, the ground of views, fields, charts and
// the canvas. The one rule for every colour picked per theme, in the explorer too; the
// studio's palettes and toolTipPalette() keep Window on the same side as Base.
bool isDark(const QPalette& palette);

// Contrast ratio of two colours, 1 (same luminance) to 21 (black on white), by the relative
// luminance of WCAG 2.1 (definitions "contrast ratio" and "relative luminance").
double contrastRatio(const QColor& a, const QColor& b);

enum class Status { Ok, Problem };
// Text colour of a status message: green when all is well, red for a problem. Darker on the
// light palette and lighter on the dark one, so that it reads at 4.5:1 or more on Window and
// Base (WCAG 2.1 success criterion 1.4.3).
QColor statusColor(Status status, const QPalette& palette);
// The same as a rich-text span: <span style='color:#rrggbb'>html</span>.
QString statusHtml(Status status, const QPalette& palette, const QString& html);
// Plain-text items (escaped here) as a rich-text bulleted list one indent deep with no left
// margin, the notes of a finished search and of a prediction; empty for no items.
QString noteListHtml(const QStringList& items);
// A form field holding a value that is not taken: a pale red (light palette) or a dark red
// (dark palette) behind text that reads at 4.5:1 or more on it. Set through the field's
// palette (ModelPanel), which a theme switch re-applies: a style sheet set and cleared on a
// field not yet polished pinned the palette it had then.
QColor problemFieldBackground(const QPalette& palette);
QColor problemFieldText(const QPalette& palette);
// Quieter text (a note under figures): the text colour toward the window's, as far as it
// still reads at 4.5:1 on Window and Base (WCAG 2.1 success criterion 1.4.3).
QColor quietTextColor(const QPalette& palette);
// The application's palette with the tooltip colours as Window and Base: tooltips draw on
// ToolTipBase, so a status in a tooltip takes its colour from this (statusHtml).
QPalette toolTipPalette();

// A stable colour per device type, legible on both palettes: the explorer's
// style::deviceColor, so that palette, canvas and plans agree.
QColor deviceColor(const QString& deviceType);
// The chip icon tinted with the device type's colour.
QIcon deviceIcon(const QString& deviceType);
QIcon studioIcon(const QString& name);

} // namespace hapmoe::ui
