#include "ChangeProfileCommand.h"

#include "ProjectDocument.h"

namespace hapmoe::ui {

ChangeProfileCommand::ChangeProfileCommand(ProjectDocument* document, std::optional<Profile> profile, std::string file)
    : QUndoCommand(profile ? QObject::tr("Load profile") : QObject::tr("Clear profile")), m_document(document),
      m_before(document->project().profile), m_after(std::move(profile)), m_beforeFile(document->project().profile_file),
      m_afterFile(std::move(file))
{
}

void ChangeProfileCommand::redo() { m_document->applyProfile(m_after, m_afterFile); }
void ChangeProfileCommand::undo() { m_document->applyProfile(m_before, m_beforeFile); }

} // namespace hapmoe::ui
