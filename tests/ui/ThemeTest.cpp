// The studio's theme: check boxes (widgets and item views) show an outline on both palettes,
// status colours read on both, and the contrast ratio follows WCAG 2.1.

#include "GuiTestSupport.h"

#include "Theme.h"

#include <QCheckBox>
#include <QImage>
#include <QListWidget>
#include <QStyleOptionButton>
#include <QStyleOptionViewItem>
#include <QVBoxLayout>

using namespace hapmoe::ui;
using namespace hapmoe::ui::test;

namespace {

// The strongest contrast of an indicator's left edge (the outline's column) against a colour,
// along the middle half of the edge: the outline is drawn there whatever the fill.
double edgeContrast(const QImage& image, const QRect& indicator, const QColor& against)
{
    double best = 1.0;
    for (int y = indicator.top() + indicator.height() / 4; y <= indicator.bottom() - indicator.height() / 4; ++y)
        best = std::max(best, contrastRatio(image.pixelColor(indicator.left(), y), against));
    return best;
}

} // namespace

class ThemeTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { initGuiTest(); }
    void cleanupTestCase() { applyTheme(ThemeKind::Light); }

    void contrastRatioFollowsWcag()
    {
        // WCAG 2.1: black on white is 21:1, a colour on itself 1:1; #767676 on white is the
        // lightest grey that passes 4.5:1 (4.54:1, the figure the WebAIM contrast checker gives).
        QCOMPARE(contrastRatio(Qt::black, Qt::white), 21.0);
        QCOMPARE(contrastRatio(QColor(0x2b, 0x2d, 0x31), QColor(0x2b, 0x2d, 0x31)), 1.0);
        QVERIFY(std::abs(contrastRatio(QColor(0x76, 0x76, 0x76), Qt::white) - 4.54) < 0.01);
        QCOMPARE(contrastRatio(Qt::white, QColor(0x76, 0x76, 0x76)), contrastRatio(QColor(0x76, 0x76, 0x76), Qt::white));
    }

    void isDarkReadsTheTextOnTheBase()
    {
        // One rule for every colour picked per theme: light text on a dark Base. The studio's
        // palettes and the tooltip palette under each theme.
        QVERIFY(!isDark(themePalette(ThemeKind::Light)));
        QVERIFY(isDark(themePalette(ThemeKind::Dark)));
        for (ThemeKind kind : {ThemeKind::Light, ThemeKind::Dark}) {
            applyTheme(kind);
            QCOMPARE(isDark(toolTipPalette()), kind == ThemeKind::Dark);
        }
        applyTheme(ThemeKind::Light);
        // Where Window and Base disagree, the Base (the ground of views, fields and the
        // canvas) and the text written on it decide: a dark frame around white fields with
        // black text is a light palette, a light frame around dark fields with light text a
        // dark one.
        QPalette framed = themePalette(ThemeKind::Light);
        framed.setColor(QPalette::Window, QColor(0x2b, 0x2d, 0x31));
        QVERIFY(!isDark(framed));
        QPalette inset = themePalette(ThemeKind::Dark);
        inset.setColor(QPalette::Window, QColor(0xf3, 0xf4, 0xf6));
        QVERIFY(isDark(inset));
    }

    void darkPaletteKeepsCheckOutlinesApartFromTheBackground()
    {
        // The outline colour (Mid) at 3:1 or more from every background a check box sits on
        // (WCAG 2.1 criterion 1.4.11 asks 3:1 of the parts that identify a control).
        const QPalette dark = themePalette(ThemeKind::Dark);
        const QColor mid = dark.color(QPalette::Mid);
        for (QPalette::ColorRole role : {QPalette::Window, QPalette::Base, QPalette::AlternateBase})
            QVERIFY2(contrastRatio(mid, dark.color(role)) >= 3.0,
                     qPrintable(QStringLiteral("role %1: %2").arg(int(role)).arg(contrastRatio(mid, dark.color(role)))));
        // Fusion's own outline, the window colour darker(140) then lighter(110), is what vanished.
        const QColor fusionOutline = dark.color(QPalette::Window).darker(140).lighter(110);
        QVERIFY(contrastRatio(fusionOutline, dark.color(QPalette::Base)) < 1.2);
    }

    void checkBoxOutlineIsDrawnOnTheDarkPalette()
    {
        applyTheme(ThemeKind::Dark);
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        auto* check = new QCheckBox(QStringLiteral("Bias in linear layers"));
        layout->addWidget(check);
        window.resize(300, 80);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(!check->isChecked());

        QStyleOptionButton option;
        option.initFrom(check);
        option.rect = check->rect();
        option.state |= QStyle::State_Off;
        const QRect indicator = check->style()->subElementRect(QStyle::SE_CheckBoxIndicator, &option, check);
        QVERIFY(indicator.width() >= 8);
        const QImage image = check->grab().toImage();
        const QPalette pal = check->palette();
        // The outline against the window behind the box and against the box's own fill (Base).
        QVERIFY2(edgeContrast(image, indicator, pal.color(QPalette::Window)) >= 3.0,
                 qPrintable(QString::number(edgeContrast(image, indicator, pal.color(QPalette::Window)))));
        QVERIFY2(edgeContrast(image, indicator, pal.color(QPalette::Base)) >= 3.0,
                 qPrintable(QString::number(edgeContrast(image, indicator, pal.color(QPalette::Base)))));
        applyTheme(ThemeKind::Light);
    }

    void itemViewCheckOutlineIsDrawnOnTheDarkPalette()
    {
        // A list of checkable items, as the Compare view's "Plans to compare".
        applyTheme(ThemeKind::Dark);
        QListWidget list;
        for (const char* name : {"HS-DP #1", "HS-DP #2", "uniform baseline"}) {
            auto* item = new QListWidgetItem(QString::fromLatin1(name), &list);
            item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
            item->setCheckState(Qt::Unchecked);
        }
        list.resize(240, 120);
        list.show();
        QVERIFY(QTest::qWaitForWindowExposed(&list));

        QListWidgetItem* item = list.item(1);
        QStyleOptionViewItem option;
        option.initFrom(list.viewport());
        option.rect = list.visualItemRect(item);
        option.features = QStyleOptionViewItem::HasCheckIndicator | QStyleOptionViewItem::HasDisplay;
        option.checkState = Qt::Unchecked;
        option.text = item->text();
        option.widget = &list;
        const QRect indicator = list.style()->subElementRect(QStyle::SE_ItemViewItemCheckIndicator, &option, &list);
        QVERIFY(indicator.width() >= 8);
        const QImage image = list.viewport()->grab().toImage();
        const QColor base = list.palette().color(QPalette::Base);
        QVERIFY2(edgeContrast(image, indicator, base) >= 3.0, qPrintable(QString::number(edgeContrast(image, indicator, base))));
        applyTheme(ThemeKind::Light);
    }

    void statusColoursReadOnBothPalettes()
    {
        // 4.5:1 for text (WCAG 2.1 criterion 1.4.3) on the window and in lists and fields.
        for (ThemeKind kind : {ThemeKind::Light, ThemeKind::Dark}) {
            const QPalette pal = themePalette(kind);
            for (Status status : {Status::Ok, Status::Problem}) {
                for (QPalette::ColorRole role : {QPalette::Window, QPalette::Base}) {
                    const double ratio = contrastRatio(statusColor(status, pal), pal.color(role));
                    QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("theme %1 status %2 role %3: %4")
                                                          .arg(int(kind))
                                                          .arg(int(status))
                                                          .arg(int(role))
                                                          .arg(ratio)));
                }
            }
        }
        // Tooltips draw on ToolTipBase: a status there reads at 4.5:1 too.
        for (ThemeKind kind : {ThemeKind::Light, ThemeKind::Dark}) {
            applyTheme(kind);
            const QPalette tip = toolTipPalette();
            QCOMPARE(tip.color(QPalette::Window), QApplication::palette().color(QPalette::ToolTipBase));
            const double ratio = contrastRatio(statusColor(Status::Problem, tip), QApplication::palette().color(QPalette::ToolTipBase));
            QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("theme %1 tooltip: %2").arg(int(kind)).arg(ratio)));
        }
        applyTheme(ThemeKind::Light);
        // Green and red stay apart: a pass never looks like a refusal.
        const QPalette dark = themePalette(ThemeKind::Dark);
        QVERIFY(statusColor(Status::Ok, dark).hue() > 90 && statusColor(Status::Ok, dark).hue() < 150);
        const int red = statusColor(Status::Problem, dark).hue();
        QVERIFY(red < 15 || red > 345);
        QCOMPARE(statusHtml(Status::Ok, dark, QStringLiteral("ok")),
                 QStringLiteral("<span style='color:%1'>ok</span>").arg(statusColor(Status::Ok, dark).name()));
    }

    void themeStyleServesItsPalette()
    {
        applyTheme(ThemeKind::Dark);
        auto* theme = qobject_cast<StudioStyle*>(QApplication::style());
        QVERIFY(theme);
        QCOMPARE(theme->kind(), ThemeKind::Dark);
        QCOMPARE(QApplication::palette().color(QPalette::Mid), themePalette(ThemeKind::Dark).color(QPalette::Mid));
        QCOMPARE(theme->standardPalette().color(QPalette::Window), themePalette(ThemeKind::Dark).color(QPalette::Window));
        applyTheme(ThemeKind::Light);
        QCOMPARE(qobject_cast<StudioStyle*>(QApplication::style())->kind(), ThemeKind::Light);
    }
};

QTEST_MAIN(ThemeTest)
#include "ThemeTest.moc"
