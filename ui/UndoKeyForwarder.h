#pragma once
// The Undo and Redo keys (Ctrl+Z, Ctrl+Shift+Z, Ctrl+Y) in a line edit or spin box of a
// window: a field takes them for its own undo history, even an empty one, so that with the
// focus in a field Edit > Undo would be enabled and its key would do nothing. The keys go
// to the field while it has typing of its own to undo (a spin box: text that is not its
// value yet, or a value the project did not take), and to the window's Undo and Redo
// actions otherwise.

#include <QObject>

#include <functional>

class QAction;
class QWidget;

namespace hapmoe::ui {

class UndoKeyForwarder : public QObject {
    Q_OBJECT
public:
    // Watches the fields of `window` (an application event filter; install it on qApp).
    UndoKeyForwarder(QWidget* window, QAction* undo, QAction* redo);

    // Fields that show a value the project did not take (the Model tab's field marked red):
    // the keys undo their typing.
    void setPendingCheck(std::function<bool(const QWidget*)> holdsPendingEdit);

    // Whether the Undo key (the Redo key when `redo`) pressed in `field` goes to the actions
    // rather than to the field's own history.
    bool forwards(const QWidget* field, bool redo) const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* m_window;
    QAction* m_undo;
    QAction* m_redo;
    std::function<bool(const QWidget*)> m_pending;
};

} // namespace hapmoe::ui
