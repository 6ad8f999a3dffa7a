#pragma once
// Draws a cell of several lines ("910B-376T 2x8" over "MI300X 2x8") with each line elided to
// the column's width ("910B-376T 2…"): an item view elides a single line, and cuts the lines
// of a cell of several. The text in full belongs in the item's tooltip.

#include <QStyledItemDelegate>

namespace hapmoe::ui {

class ElidedLinesDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    // Each line of `text` elided on the right to at most `width` pixels of `metrics`.
    static QString elideLines(const QString& text, const QFontMetrics& metrics, int width);

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override;
};

} // namespace hapmoe::ui
