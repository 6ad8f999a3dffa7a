#pragma once
// One enum of undo ids, so that QUndoCommand::mergeWith never confuses two kinds of edit.

namespace hapmoe::ui {

enum UndoCommandId {
    MoveItemsCommandId = 1,
    ChangeModelCommandId,
    ChangeSearchSettingsCommandId,
};

} // namespace hapmoe::ui
