#include "UndoKeyForwarder.h"

#include "SpinBoxRangeCheck.h"

#include <QAbstractSpinBox>
#include <QAction>
#include <QKeyEvent>
#include <QLineEdit>

namespace hapmoe::ui {

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
        return SpinBoxRangeCheck::showsItsValue(box);   // its line edit's history is typing the project holds
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
