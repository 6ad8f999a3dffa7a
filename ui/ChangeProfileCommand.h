#pragma once
// Loads or clears the project's measured profile (the tables its searches and estimates use).

#include "profile/Profile.h"

#include <QUndoCommand>

#include <optional>
#include <string>

namespace hapmoe::ui {

class ProjectDocument;

class ChangeProfileCommand : public QUndoCommand {
public:
    // profile: none clears it (analytic defaults); file: where it was loaded from.
    ChangeProfileCommand(ProjectDocument* document, std::optional<Profile> profile, std::string file);
    void redo() override;
    void undo() override;

private:
    ProjectDocument* m_document;
    std::optional<Profile> m_before, m_after;
    std::string m_beforeFile, m_afterFile;
};

} // namespace hapmoe::ui
