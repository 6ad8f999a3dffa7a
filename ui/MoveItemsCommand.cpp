#include "MoveItemsCommand.h"

#include "ProjectDocument.h"
#include "UndoCommandIds.h"

namespace hapmoe::ui {

MoveItemsCommand::MoveItemsCommand(ProjectDocument* document, QHash<int, QPointF> from, QHash<int, QPointF> to, bool nudge)
    : m_document(document), m_from(std::move(from)), m_to(std::move(to)), m_nudge(nudge)
{
    setText(m_to.size() == 1 ? QObject::tr("Move item") : QObject::tr("Move %1 items").arg(m_to.size()));
}

void MoveItemsCommand::redo() { m_document->applyPositions(m_to); }
void MoveItemsCommand::undo() { m_document->applyPositions(m_from); }
// QUndoStack merges only commands of one id other than -1: nudges merge, drags never do.
int MoveItemsCommand::id() const { return m_nudge ? MoveItemsCommandId : -1; }

bool MoveItemsCommand::mergeWith(const QUndoCommand* other)
{
    const auto* move = static_cast<const MoveItemsCommand*>(other);
    if (move->m_to.size() != m_to.size())
        return false;
    for (auto it = move->m_to.cbegin(); it != move->m_to.cend(); ++it)
        if (!m_to.contains(it.key()))
            return false;
    m_to = move->m_to;   // keep our m_from: the position before the first nudge
    return true;
}

} // namespace hapmoe::ui
