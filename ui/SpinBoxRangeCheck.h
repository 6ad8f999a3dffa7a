#pragma once
// A spin box given a value outside its range (a link of 0 GB/s, a router imbalance of 0.5)
// puts its last value back without a word when the entry ends. SpinBoxRangeCheck names the
// field and what it allows at that moment, in a line under the editor's fields (its label),
// so that the editor says why the value stayed.

#include <QHash>
#include <QObject>
#include <QString>

class QAbstractSpinBox;
class QLabel;
class QWidget;

namespace hapmoe::ui {

class SpinBoxRangeCheck : public QObject {
    Q_OBJECT
public:
    // The message line is a hidden child of `owner` named `labelName`, for the owner's layout.
    SpinBoxRangeCheck(QWidget* owner, const QString& labelName);

    QLabel* messageLabel() const { return m_label; }
    // The message the line shows (plain text), empty while it is hidden.
    QString shownMessage() const { return m_message; }
    // Shows `message` in the line as a problem (hides it when empty).
    void showMessage(const QString& message);

    // Reports entries into `box` that it will not take; `field` names it in the message
    // ("Bandwidth").
    void watch(QAbstractSpinBox* box, const QString& field);

    // What `box` would say of the text in it now: "Bandwidth: at least 0.1 GB/s, not 0; it
    // stays 400.0 GB/s." Empty when the text is a value the box takes.
    static QString message(const QAbstractSpinBox* box, const QString& field);

    // Whether the box's text shows its value (or its special-value text): nothing typed since
    // the value was set or taken.
    static bool showsItsValue(const QAbstractSpinBox* box);

    // The box's tooltip with the range it takes on a line of its own ("From 1.00 to 16.00."),
    // which a watched box shows: a value above the maximum cannot even be typed (the box
    // drops the key), so the range is said before.
    static QString toolTipText(const QAbstractSpinBox* box);

signals:
    // The entry ended (Enter, or the box lost the focus) on a value the box will not take;
    // the line shows the message already.
    void rejected(QAbstractSpinBox* box, const QString& message);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QHash<QObject*, QString> m_fields;
    QLabel* m_label;
    QString m_message;
};

} // namespace hapmoe::ui
