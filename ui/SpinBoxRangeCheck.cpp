#include "SpinBoxRangeCheck.h"

#include "Theme.h"

#include <QDoubleSpinBox>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>
#include <QToolTip>

#include <cmath>
#include <optional>

namespace hapmoe::ui {

namespace {

struct Range {
    double minimum = 0, maximum = 0, value = 0;
    int decimals = 0;
};

std::optional<Range> rangeOf(const QAbstractSpinBox* box)
{
    if (const auto* spin = qobject_cast<const QSpinBox*>(box))
        return Range{double(spin->minimum()), double(spin->maximum()), double(spin->value()), 0};
    if (const auto* spin = qobject_cast<const QDoubleSpinBox*>(box))
        return Range{spin->minimum(), spin->maximum(), spin->value(), spin->decimals()};
    return std::nullopt;
}

QString suffixOf(const QAbstractSpinBox* box)
{
    if (const auto* spin = qobject_cast<const QSpinBox*>(box))
        return spin->suffix();
    if (const auto* spin = qobject_cast<const QDoubleSpinBox*>(box))
        return spin->suffix();
    return {};
}

QString cleanTextOf(const QAbstractSpinBox* box)
{
    if (const auto* spin = qobject_cast<const QSpinBox*>(box))
        return spin->cleanText();
    if (const auto* spin = qobject_cast<const QDoubleSpinBox*>(box))
        return spin->cleanText();
    return box->text();
}

// The number the box's text reads as in its locale (prefix and suffix left out), or nothing.
std::optional<double> typedNumber(const QAbstractSpinBox* box)
{
    bool isNumber = false;
    const double v = box->locale().toDouble(cleanTextOf(box), &isNumber);
    return isNumber ? std::optional<double>(v) : std::nullopt;
}

// The box's numbers as it writes them: its decimals and suffix, group separators only if shown.
QString formatted(const QAbstractSpinBox* box, const Range& range, double v)
{
    QLocale locale = box->locale();
    if (!box->isGroupSeparatorShown())
        locale.setNumberOptions(locale.numberOptions() | QLocale::OmitGroupSeparator);
    return locale.toString(v, 'f', range.decimals) + suffixOf(box);
}

} // namespace

SpinBoxRangeCheck::SpinBoxRangeCheck(QWidget* owner, const QString& labelName)
    : QObject(owner)
    , m_label(new QLabel(owner))
{
    m_label->setObjectName(labelName);
    m_label->setWordWrap(true);
    m_label->setTextFormat(Qt::RichText);
    m_label->hide();
}

void SpinBoxRangeCheck::watch(QAbstractSpinBox* box, const QString& field)
{
    m_fields.insert(box, field);
    box->installEventFilter(this);
    connect(box, &QObject::destroyed, this, [this](QObject* gone) { m_fields.remove(gone); });
}

QString SpinBoxRangeCheck::toolTipText(const QAbstractSpinBox* box)
{
    const std::optional<Range> range = rangeOf(box);
    if (!range)
        return box->toolTip();
    const QString line = tr("From %1 to %2.").arg(formatted(box, *range, range->minimum), formatted(box, *range, range->maximum));
    return box->toolTip().isEmpty() ? line : box->toolTip() + QLatin1Char('\n') + line;
}

QString SpinBoxRangeCheck::message(const QAbstractSpinBox* box, const QString& field)
{
    const std::optional<Range> range = rangeOf(box);
    if (!range || box->hasAcceptableInput())
        return {};
    const auto format = [&](double v) { return formatted(box, *range, v); };
    const QString kept = range->value == range->minimum && !box->specialValueText().isEmpty()
        ? box->specialValueText()
        : format(range->value);
    const QString typed = cleanTextOf(box);
    const std::optional<double> v = typedNumber(box);
    QString allowed;
    if (v && *v < range->minimum)
        allowed = tr("at least %1, not %2").arg(format(range->minimum), typed);
    else if (v && *v > range->maximum)
        allowed = tr("at most %1, not %2").arg(format(range->maximum), typed);
    else
        allowed = tr("a number from %1 to %2").arg(format(range->minimum), format(range->maximum));
    return tr("%1: %2; it stays %3.").arg(field, allowed, kept);
}

bool SpinBoxRangeCheck::showsItsValue(const QAbstractSpinBox* box)
{
    if (!box->specialValueText().isEmpty() && box->text() == box->specialValueText())
        return true;
    const std::optional<Range> range = rangeOf(box);
    if (!range)
        return true;
    const std::optional<double> typed = typedNumber(box);
    return typed && std::abs(*typed - range->value) < 0.5 * std::pow(10.0, -range->decimals);
}

bool SpinBoxRangeCheck::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::ToolTip && m_fields.contains(watched)) {
        auto* box = static_cast<QAbstractSpinBox*>(watched);
        QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(), toolTipText(box), box);
        return true;
    }
    // Before the box sees the event: it is then that it puts its last value back.
    bool ends = event->type() == QEvent::FocusOut;
    if (event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent*>(event)->key();
        ends = key == Qt::Key_Return || key == Qt::Key_Enter;
    }
    if (ends && m_fields.contains(watched)) {
        auto* box = static_cast<QAbstractSpinBox*>(watched);
        if (const QString text = message(box, m_fields.value(watched)); !text.isEmpty()) {
            showMessage(text);
            emit rejected(box, text);
        }
    }
    return QObject::eventFilter(watched, event);
}

void SpinBoxRangeCheck::showMessage(const QString& message)
{
    m_message = message;
    m_label->setText(message.isEmpty() ? QString()
                                       : statusHtml(Status::Problem, m_label->palette(), QStringLiteral("\u26a0 ") + message.toHtmlEscaped()));
    m_label->setVisible(!message.isEmpty());
}

} // namespace hapmoe::ui
