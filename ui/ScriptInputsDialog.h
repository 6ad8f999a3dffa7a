#pragma once
// What the project's launch script is read with: its arguments, written as a shell line, and
// variables of its environment, one NAME=VALUE a line. OK hands the fields' text to an apply
// function (the model panel reads the script again with them); an error in the fields (a name
// the shell takes for no variable, an unterminated quote) or of the import is shown in the
// dialog, which stays open with nothing applied.

#include "megatron/ScriptInputs.h"

#include <QDialog>
#include <QString>

#include <functional>

class QLabel;
class QLineEdit;
class QPlainTextEdit;

namespace hapmoe::ui {

class ScriptInputsDialog : public QDialog {
    Q_OBJECT
public:
    // Applies the fields' text; returns an empty string when it did, else why not.
    using Apply = std::function<QString(const QString& arguments, const QString& environment)>;

    ScriptInputsDialog(const QString& scriptPath, const ScriptInputs& inputs, Apply apply, QWidget* parent = nullptr);

    QLineEdit* argumentsEdit() const { return m_arguments; }
    QPlainTextEdit* environmentEdit() const { return m_environment; }
    // The last refusal shown (plain text); empty when none.
    QString errorText() const { return m_errorText; }

    // The fields' text as inputs: the arguments split as bash splits a command line (quotes
    // kept together, no expansion), the environment one NAME=VALUE a line, the value as
    // written, blank lines ignored. Throws InputError naming the field and the line.
    static ScriptInputs parse(const QString& arguments, const QString& environment);
    // The inputs as the fields show them (parse reads them back as the same inputs).
    static QString argumentsLine(const ScriptInputs& inputs);
    static QString environmentLines(const ScriptInputs& inputs);
    // One line for a label, as the model's source names the inputs ("70B with NNODES=4",
    // describeScriptInputs); empty for no inputs.
    static QString summary(const ScriptInputs& inputs);

    void accept() override;

private:
    void showError(const QString& message);

    Apply m_apply;
    QLineEdit* m_arguments;
    QPlainTextEdit* m_environment;
    QLabel* m_error;
    QString m_errorText;
};

} // namespace hapmoe::ui
