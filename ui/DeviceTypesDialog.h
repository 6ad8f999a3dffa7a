#pragma once
// The project's device types (Cluster > Device Types): the built-in catalog's types and the
// project's own beside them. A built-in type's figures can be changed for the project (the
// project then keeps the type with its figures, and Restore Built-in takes them back); New
// Type starts a type of the project's own from the one selected; Import reads a
// hapmoe.devices file (or the types a plan or project carries), Export writes the project's
// types as one, for `hapmoe ... --devices`. OK checks the types as `hapmoe validate` checks a
// devices file and applies them in one undo step, nodes of a renamed type following it; an
// error is shown in the dialog, which stays open with nothing applied.

#include "hardware/Cluster.h"
#include "hardware/DeviceType.h"

#include <QDialog>
#include <QString>

#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTreeWidget;

namespace hapmoe::ui {

class ProjectDocument;

class DeviceTypesDialog : public QDialog {
    Q_OBJECT
public:
    explicit DeviceTypesDialog(ProjectDocument* document, QWidget* parent = nullptr);

    // The project's types as edited so far (what OK applies).
    const std::vector<DeviceType>& projectTypes() const { return m_types; }
    QTreeWidget* typeList() const { return m_list; }
    // Selects the type of that name or alias; false when there is none.
    bool selectType(const QString& name);
    QString selectedType() const;
    // New Type: a type of the project's own, a copy of the selected one's figures under a name
    // no type has ("H800 (2)"), selected for editing.
    void addType();
    // Remove (a type of the project's own) or Restore Built-in (a built-in type with the
    // project's figures). Returns why not, when nodes use a type that would be gone.
    QString removeSelected();
    // Adds the types of a hapmoe.devices file, or those a plan or project carries, replacing
    // those of the same name. Returns the error (naming the file and the field), or empty.
    QString importFile(const QString& path);
    // Writes the project's types as a hapmoe.devices file. Returns the error, or empty.
    QString exportFile(const QString& path) const;
    // The last error shown (plain text); empty when the types are valid.
    QString errorText() const { return m_errorText; }

    void accept() override;

private:
    void fillList();
    void showSelected();
    void commitField();
    // The project's entry for the selected type, made from the built-in one when the
    // project has none yet (an edit of a built-in type's figures).
    DeviceType* editableSelected();
    QString check() const;   // why the types cannot be applied; empty when they can
    // The list's types: the built-in ones, the project's figures in place of those it
    // changes, then the project's own.
    std::vector<DeviceType> shownTypes() const;
    // Renames the selected type of the project's own, its nodes with it; returns why not
    // (the name of another type or one of its aliases) and changes nothing then.
    QString rename(const QString& text);
    void showCheck();
    // Shows an error of a button (Remove, Import, Export, OK) under the lists; none: nothing.
    void report(const QString& error);

    ProjectDocument* m_document;
    std::vector<DeviceType> m_types;   // the project's own, as edited
    std::vector<DeviceType> m_initial; // the same as the dialog opened them
    Cluster m_cluster;                 // the project's, with nodes following renamed types
    QString m_selected;                // canonical name of the selected type
    QString m_errorText;
    bool m_updating = false;

    QTreeWidget* m_list;
    QLabel* m_origin;
    QLineEdit* m_name;
    QLineEdit* m_aliases;
    QLineEdit* m_vendor;
    QComboBox* m_library;
    QDoubleSpinBox* m_bf16;
    QDoubleSpinBox* m_fp8;
    QDoubleSpinBox* m_efficiency;
    QDoubleSpinBox* m_memory;
    QDoubleSpinBox* m_hbm;
    QDoubleSpinBox* m_hbmEfficiency;
    QDoubleSpinBox* m_capability;
    QLineEdit* m_linkKind;
    QDoubleSpinBox* m_intra;
    QDoubleSpinBox* m_inter;
    QSpinBox* m_perNode;
    QLineEdit* m_notes;
    QPushButton* m_remove;
    QLabel* m_error;
};

} // namespace hapmoe::ui
