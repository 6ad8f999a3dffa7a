#include "ScriptInputsDialog.h"

#include "Theme.h"

#include "util/InputError.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFontMetrics>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QStringList>
#include <QVBoxLayout>

#include <algorithm>

namespace hapmoe::ui {

ScriptInputsDialog::ScriptInputsDialog(const QString& scriptPath, const ScriptInputs& inputs, Apply apply, QWidget* parent)
    : QDialog(parent), m_apply(std::move(apply)), m_arguments(new QLineEdit(this)), m_environment(new QPlainTextEdit(this)),
      m_error(new QLabel(this))
{
    setObjectName(QStringLiteral("scriptInputsDialog"));
    setWindowTitle(tr("Script Arguments and Environment"));
    const QString name = QFileInfo(scriptPath).fileName();

    auto* explanation = new QLabel(this);
    explanation->setWordWrap(true);
    explanation->setTextFormat(Qt::RichText);
    explanation->setText(tr("%1 is read as <code>NAME=VALUE bash %1 ARGUMENTS</code> would run it: its tests on "
                            "<code>$1</code>, <code>$2</code>, \u2026 or on these variables take these values. "
                            "Without arguments the script's own are unknown; a variable neither the script nor "
                            "this environment sets is unset.")
                             .arg(name.toHtmlEscaped()));

    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    m_arguments->setObjectName(QStringLiteral("scriptArguments"));
    m_arguments->setFont(mono);
    m_arguments->setPlaceholderText(tr("e.g. 70B \"two words\""));
    m_arguments->setToolTip(tr("Words as the shell splits them: quote a word that holds blanks"));
    m_arguments->setText(argumentsLine(inputs));
    m_environment->setObjectName(QStringLiteral("scriptEnvironment"));
    m_environment->setFont(mono);
    m_environment->setTabChangesFocus(true);
    m_environment->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_environment->setPlaceholderText(tr("NNODES=4\nGPUS_PER_NODE=8"));
    m_environment->setToolTip(tr("One NAME=VALUE a line, the value as written (no quotes needed); blank lines are ignored"));
    m_environment->setPlainText(environmentLines(inputs));
    // Room for a few variables without scrolling.
    m_environment->setMinimumHeight(QFontMetrics(mono).lineSpacing() * 6 + 2 * m_environment->frameWidth() + 8);

    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("&Arguments:"), m_arguments);
    form->addRow(tr("&Environment:"), m_environment);
    auto* hint = new QLabel(tr("Arguments: words as the shell splits them; quote a word that holds blanks. "
                               "Environment: one NAME=VALUE a line, the value as written."),
                            this);
    hint->setWordWrap(true);
    hint->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    form->addRow(QString(), hint);

    m_error->setObjectName(QStringLiteral("scriptInputsError"));
    m_error->setWordWrap(true);
    m_error->setTextFormat(Qt::RichText);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->hide();

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(explanation);
    layout->addLayout(form, 1);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
    resize(std::max(sizeHint().width(), 560), sizeHint().height());
}

void ScriptInputsDialog::accept()
{
    const QString error = m_apply ? m_apply(m_arguments->text(), m_environment->toPlainText()) : QString();
    if (!error.isEmpty()) {
        showError(error);   // the fields keep what was typed, to be corrected
        return;
    }
    showError(QString());
    QDialog::accept();
}

void ScriptInputsDialog::showError(const QString& message)
{
    m_errorText = message;
    m_error->setText(message.isEmpty() ? QString()
                                       : statusHtml(Status::Problem, palette(), QStringLiteral("\u26a0 ") + message.toHtmlEscaped()));
    m_error->setVisible(!message.isEmpty());
}

ScriptInputs ScriptInputsDialog::parse(const QString& arguments, const QString& environment)
{
    ScriptInputs inputs;
    inputs.arguments = splitShellWords(arguments.toStdString(), tr("Arguments").toStdString());
    const QStringList lines = environment.split(QLatin1Char('\n'));
    for (int i = 0; i < lines.size(); ++i) {
        // Blanks around a line are the text box's, not the value's (as in `NAME=VALUE bash`).
        const QString line = lines[i].trimmed();
        if (!line.isEmpty())
            addScriptEnvironment(inputs, line.toStdString(), tr("Environment, line %1").arg(i + 1).toStdString());
    }
    return inputs;
}

QString ScriptInputsDialog::argumentsLine(const ScriptInputs& inputs)
{
    return QString::fromStdString(joinShellWords(inputs.arguments));
}

QString ScriptInputsDialog::environmentLines(const ScriptInputs& inputs)
{
    QStringList lines;
    for (const auto& [name, value] : inputs.environment)
        lines << QString::fromStdString(name + "=" + value);
    return lines.join(QLatin1Char('\n'));
}

QString ScriptInputsDialog::summary(const ScriptInputs& inputs)
{
    return QString::fromStdString(describeScriptInputs(inputs));
}

} // namespace hapmoe::ui
