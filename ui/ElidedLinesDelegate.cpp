#include "ElidedLinesDelegate.h"

#include <QAbstractScrollArea>
#include <QApplication>
#include <QStyle>

#include <algorithm>

namespace hapmoe::ui {

QString ElidedLinesDelegate::elideLines(const QString& text, const QFontMetrics& metrics, int width)
{
    // The delegate's display text has QChar::LineSeparator where the item's text has '\n'.
    const QChar separator = text.contains(QChar::LineSeparator) ? QChar(QChar::LineSeparator) : QChar(QLatin1Char('\n'));
    QStringList lines = text.split(separator);
    for (QString& line : lines)
        line = metrics.elidedText(line, Qt::ElideRight, width);
    return lines.join(separator);
}

void ElidedLinesDelegate::initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const
{
    QStyledItemDelegate::initStyleOption(option, index);
    // One line: the view elides it. No rect: a size hint, which is of the whole text.
    if (!(option->text.contains(QLatin1Char('\n')) || option->text.contains(QChar::LineSeparator)) || option->rect.width() <= 0)
        return;
    const QStyle* style = option->widget ? option->widget->style() : QApplication::style();
    // The item's text margin on each side (QCommonStyle's item view text rectangle).
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, option, option->widget) + 1;
    // A last column stretched a little beyond the viewport would hide the "…": elide to the
    // part in view.
    int right = option->rect.right();
    if (const auto* view = qobject_cast<const QAbstractScrollArea*>(option->widget))
        right = std::min(right, view->viewport()->width() - 1);
    option->text = elideLines(option->text, option->fontMetrics, right - option->rect.left() + 1 - 2 * margin);
}

} // namespace hapmoe::ui
