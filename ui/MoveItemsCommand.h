#pragma once
// Moves canvas items. Consecutive moves of the same items merge into one step (a drag,
// or arrow-key nudges).

#include <QHash>
#include <QPointF>
#include <QUndoCommand>

namespace hapmoe::ui {

class ProjectDocument;

class MoveItemsCommand : public QUndoCommand {
public:
    MoveItemsCommand(ProjectDocument* document, QHash<int, QPointF> from, QHash<int, QPointF> to);
    void redo() override;
    void undo() override;
    int id() const override;
    bool mergeWith(const QUndoCommand* other) override;

private:
    ProjectDocument* m_document;
    QHash<int, QPointF> m_from;
    QHash<int, QPointF> m_to;
};

} // namespace hapmoe::ui
