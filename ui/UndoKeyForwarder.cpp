#include "UndoKeyForwarder.h"

#include <QAction>
#include <QDoubleSpinBox>
#include <QKeyEvent>
#include <QLineEdit>
#include <QSpinBox>

#include <cmath>

namespace hapmoe::ui {

namespace {

// The spin box shows its value: nothing typed since the value was set or taken. (Its line
// edit may still have an undo history: typing that became the value, which the project's
// undo stack now holds.)
bool showsItsValue(const QAbstractSpinBox* box)
{
    if (!box->specialValueText().isEmpty() && box->text() == box->specialValueText())
        return true;
    bool ok = false;
    if (const auto* spin = qobject_cast<const QSpinBox*>(box)) {
        const int v = spin->locale().toInt(spin->cleanText(), &ok);
        return ok && v == spin->value();
    }
    if (const auto* spin = qobject_cast<const QDoubleSpinBox*>(box)) {
        const double v = spin->locale().toDouble(spin->cleanText(), &ok);
        return ok && std::abs(v - spin->value()) < 0.5 * std::pow(10.0, -spin->decimals());
    }
    return true;
}

} // namespace

UndoKeyForwarder::UndoKeyForwarder(QWidget* window, QAction* undo, QAction* redo)
    : QObject(window), m_window(window), m_undo(undo), m_redo(redo)
{
}

void UndoKeyForwarder::setPendingCheck(std::function<bool(const QWidget*)> holdsPendingEdit)
{
    m_pending = std::move(holdsPendingEdit);
}

bool UndoKeyForwarder::forwards(const QWidget* field, bool redo) const
{
    if (m_pending && m_pending(field))
        return false;
    if (const auto* box = qobject_cast<const QAbstractSpinBox*>(field))
        return showsItsValue(box);
    if (const auto* line = qobject_cast<const QLineEdit*>(field))
        return redo ? !line->isRedoAvailable() : !line->isUndoAvailable();
    return false;
}

bool UndoKeyForwarder::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() != QEvent::KeyPress || !watched->isWidgetType())
        return QObject::eventFilter(watched, event);
    auto* field = static_cast<QWidget*>(watched);
    // A spin box's line edit is the box's: the box is the field.
    if (auto* box = qobject_cast<QAbstractSpinBox*>(field->parentWidget()); box && qobject_cast<QLineEdit*>(field))
        field = box;
    if (field->window() != m_window || !(qobject_cast<QLineEdit*>(field) || qobject_cast<QAbstractSpinBox*>(field)))
        return QObject::eventFilter(watched, event);
    const QKeySequence pressed(static_cast<QKeyEvent*>(event)->keyCombination());
    QAction* action = m_undo->shortcuts().contains(pressed) ? m_undo : m_redo->shortcuts().contains(pressed) ? m_redo : nullptr;
    if (!action || !action->isEnabled() || !forwards(field, action == m_redo))
        return QObject::eventFilter(watched, event);
    action->trigger();
    return true;
}

} // namespace hapmoe::ui
