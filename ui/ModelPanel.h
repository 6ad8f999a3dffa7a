#pragma once
// The model and training spec: presets, every field editable with validation as you type
// (the core's validateModel names the field at fault), derived figures updated live
// (total and active parameters, FLOPs per token), and import from a Megatron script, which
// can be read again with arguments and environment variables (ScriptInputsDialog).
// The four groups stand in two columns where the panel is wide enough for them and in one
// column otherwise (derived figures first), so that nothing needs horizontal scrolling.

#include "megatron/ScriptInputs.h"

#include <QHash>
#include <QList>
#include <QPair>
#include <QString>
#include <QWidget>

#include <functional>
#include <string>

class QComboBox;
class QGridLayout;
class QGroupBox;
class QLabel;
class QPushButton;
class QScrollArea;

namespace hapmoe {
class InputError;
struct ImportedScript;
struct ModelSpec;
}

namespace hapmoe::ui {

class ProjectDocument;

class ModelPanel : public QWidget {
    Q_OBJECT
public:
    explicit ModelPanel(ProjectDocument* document, QWidget* parent = nullptr);

    // The editor of a field, by its JSON name ("hidden_size", "training.global_batch_size").
    QWidget* fieldEditor(const QString& key) const;
    // The label of a field as the form shows it, without its colon ("Layers").
    QString fieldLabel(const QString& key) const;
    QString validationMessage() const;
    QString derivedText() const;
    // A count as the derived figures write it, in the unit that keeps it below 1000 once
    // rounded: "35.09 B", "4.2 M", "786.4 K", "999".
    static QString countText(double count);
    // Reads a Megatron-LM launch script as `NAME=VALUE bash path ARG...` would run it (the
    // inputs' environment and arguments; none: the script's own $1 ... are unknown) and makes
    // its model the project's, one undo step; returns an empty string or the error message,
    // and changes nothing then.
    QString importScript(const QString& path, const ScriptInputs& inputs = {});
    // Reads the project's script again with the arguments (a shell line) and the environment
    // (one NAME=VALUE a line), as the Arguments and environment dialog's OK does; returns an
    // empty string or why not (a bad name, an unterminated quote, an import error), and
    // changes nothing then.
    QString applyScriptInputs(const QString& arguments, const QString& environment);
    // Opens that dialog (window-modal) on the project's script.
    void editScriptInputs();
    void loadPreset(const QString& name);
    // The preset the model equals, field for field; empty when it equals none ("Custom").
    QString matchingPreset() const;
    // 2 while the groups stand side by side, 1 while they are stacked.
    int columnCount() const { return m_columns; }
    // The narrowest panel in which the groups stand in two columns at their preferred widths.
    int twoColumnWidth() const;
    // A field shows a value the model did not take (typed, marked red, not committed): says
    // which and what ("Layers on the Model tab shows 0, ..."); empty when the fields show
    // the document's model.
    QString pendingEdit() const { return m_pendingEdit; }
    // The field `editor` shows a value the model did not take (its own undo has the typing).
    bool holdsPendingEdit(const QWidget* editor) const
    {
        return !m_pendingEdit.isEmpty() && editor && (editor == fieldEditor(m_pendingKey) || editor == fieldEditor(m_invalidKey));
    }

    // The field is drawn as holding a value the model does not take (red).
    bool isMarkedInvalid(const QWidget* editor) const;

signals:
    void pendingEditChanged(const QString& problem);

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    // Where the imported script's configuration lands on the project's cluster, as the
    // import's message says it (kept current while that message shows).
    QString placementNote(const ImportedScript& script) const;
    void showImportMessage(const ImportedScript& script);
    void updatePlacementNote();
    struct Field {
        QWidget* editor = nullptr;
        std::function<void(const ModelSpec&)> read;
        std::function<void(ModelSpec&)> write;
    };
    void addField(const QString& key, QWidget* editor, std::function<void(const ModelSpec&)> read,
                  std::function<void(ModelSpec&)> write);
    void refresh();
    // Fields that apply only with another: the MoE settings with experts, FP8 weights with FP8 GEMMs.
    void enableDependentFields(const ModelSpec& m);
    void edited(const QString& key);
    void updateDerived(const ModelSpec& model);
    // Draws the field red, or as the others, through its palette (no style sheet: see
    // problemFieldBackground in Theme.h).
    void markField(QWidget* editor, bool invalid);
    // Marks the field the error names (else fallbackKey's) and says why below the fields.
    void markInvalid(const InputError& error, const QString& fallbackKey);
    void setPendingEdit(const QString& problem);
    // The field's text as it shows it ("0", "\"flex\"").
    QString shownValue(const QString& key) const;
    // Shows in the preset combo the preset the model equals, or the neutral first entry.
    void showMatchingPreset();
    void arrangeGroups(int columns);
    // The Tab order of the fields: down each column as arrangeGroups() placed the groups.
    void orderTabs();
    // The narrowest panel in which the import button stands beside the presets.
    int presetRowWidth() const;

    ProjectDocument* m_document;
    QHash<QString, Field> m_fields;
    QStringList m_order;
    // Preset name -> its model as written to a file: one canonical text to compare with.
    QList<QPair<QString, std::string>> m_presetTexts;
    QScrollArea* m_scroll;
    QGridLayout* m_grid;
    QGroupBox* m_archBox;
    QGroupBox* m_moeBox;
    QGroupBox* m_trainBox;
    QGroupBox* m_derivedBox;
    int m_columns = 0;
    QComboBox* m_presets;
    QGridLayout* m_top;
    QLabel* m_presetLabel;
    QPushButton* m_import;
    QLabel* m_source;
    QLabel* m_message;
    QString m_importWarnings;   // the last import's warnings, HTML
    QString m_importMessage;    // the text the import put in m_message
    bool m_placementPending = false;   // an update of the placement note is queued
    QLabel* m_derived = nullptr;
    QLabel* m_script;
    QLabel* m_scriptInputs;   // the link to the dialog, beside m_script
    QString m_invalidKey;
    QString m_pendingEdit;   // pendingEdit()
    QString m_pendingKey;    // the field typed into last while the model did not take it
    bool m_updating = false;
    bool m_committing = false;
};

} // namespace hapmoe::ui
