#pragma once
// Moves canvas items. Arrow-key nudges of the same items in a row merge into one step; a
// drag (already one command for the whole gesture) never merges with another.

#include <QHash>
#include <QPointF>
#include <QUndoCommand>

namespace hapmoe::ui {

class ProjectDocument;

class MoveItemsCommand : public QUndoCommand {
public:
    MoveItemsCommand(ProjectDocument* document, QHash<int, QPointF> from, QHash<int, QPointF> to, bool nudge);
    void redo() override;
    void undo() override;
    int id() const override;
    bool mergeWith(const QUndoCommand* other) override;

private:
    ProjectDocument* m_document;
    QHash<int, QPointF> m_from;
    QHash<int, QPointF> m_to;
    bool m_nudge;
};

} // namespace hapmoe::ui
