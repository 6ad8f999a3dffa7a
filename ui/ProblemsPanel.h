#pragma once
// The list of problems of the project: cluster topology (islands, unknown devices, nodes
// without a link, bad links), what else the files refuse in a cluster (validateCluster) and
// the model's consistency. Activating a row selects the
// items concerned on the canvas.

#include "util/InputError.h"

#include <QList>
#include <QWidget>

#include <optional>

class QTreeWidget;

namespace hapmoe::ui {

class ProjectDocument;

class ProblemsPanel : public QWidget {
    Q_OBJECT
public:
    explicit ProblemsPanel(ProjectDocument* document, QWidget* parent = nullptr);
    int problemCount() const;
    QStringList messages() const;
    // What the reader said of the file last opened or loaded (a plan left out, an unknown key),
    // listed as warnings until the next file, New, or another project.
    void setFileNotes(const QStringList& notes);

signals:
    void problemActivated(const QList<int>& ids);
    void problemCountChanged(int count);

private:
    void refresh();
    // validateCluster's first error that no topology row names already; none when it passes.
    std::optional<InputError> clusterError() const;

    ProjectDocument* m_document;
    QTreeWidget* m_tree;
    QStringList m_fileNotes;
};

} // namespace hapmoe::ui
