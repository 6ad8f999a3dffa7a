#pragma once
// Adds nodes, switches and links as one undo step (a drop that adds a node and its link,
// a paste, a new link).

#include "ClusterItems.h"

#include <QUndoCommand>

namespace hapmoe::ui {

class ProjectDocument;

class AddItemsCommand : public QUndoCommand {
public:
    AddItemsCommand(ProjectDocument* document, ClusterItems items, const QString& text,
                    QUndoCommand* parent = nullptr);
    void redo() override;
    void undo() override;

private:
    ProjectDocument* m_document;
    ClusterItems m_items;
};

} // namespace hapmoe::ui
