#include "StagePartitionView.h"

#include "ExplorerStyle.h"
#include "Theme.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <limits>
#include <map>

namespace hapmoe::ui {

namespace {
constexpr int kMargin = 6;
constexpr int kLegendGap = 6;
// Box width less the room around its text (gap between boxes and text margins).
constexpr int kTextInset = 13;

// Where a box's upright text goes: inside the bottleneck's outline, which is thicker, and
// above the recompute mark.
QRect uprightArea(const QRect& box, bool bottleneck, int markHeight)
{
    return bottleneck ? box.adjusted(4, 5, -4, -6 - markHeight) : box.adjusted(2, 3, -2, -4 - markHeight);
}

// Pixels between a stage's slot and its box on either side: a gap of four between boxes,
// two where the boxes are narrower than two lines of text (many stages), so that a stage
// number still fits upright.
int boxInset(int slotWidth, const QFontMetrics& fm)
{
    return slotWidth < 2 * fm.height() ? 1 : 2;
}

bool recomputes(const StagePlan& stage)
{
    return stage.recompute != Recompute::None;
}

// A bold part and a regular one after it, from the baseline's start.
template <typename Run>
void drawRun(QPainter& p, const Run& run, const QPoint& baseline, const QFont& bold, const QFont& regular)
{
    p.setFont(bold);
    p.drawText(baseline, run.bold);
    p.setFont(regular);
    p.drawText(baseline + QPoint(QFontMetrics(bold).horizontalAdvance(run.bold), 0), run.regular);
}
}

StagePartitionView::StagePartitionView(QWidget* parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setObjectName(QStringLiteral("stagePartition"));
}

void StagePartitionView::setPlan(const Plan& plan, const Prediction& prediction, int bottleneckStage)
{
    m_plan = plan;
    m_prediction = prediction;
    m_bottleneck = bottleneckStage;
    m_hasPlan = true;
    m_hovered = -1;
    relayout();
}

void StagePartitionView::clear()
{
    m_plan = {};
    m_prediction = {};
    m_hasPlan = false;
    m_hovered = -1;
    relayout();
}

void StagePartitionView::setEmptyText(const QString& text)
{
    m_emptyText = text;
    update();
}

void StagePartitionView::setCompact(bool compact)
{
    m_compact = compact;
    relayout();
}

void StagePartitionView::setModelTraits(bool expertKnobs, int mtpLayers)
{
    if (expertKnobs == m_expertKnobs && mtpLayers == m_mtpLayers)
        return;
    m_expertKnobs = expertKnobs;
    m_mtpLayers = mtpLayers;
    relayout();
}

void StagePartitionView::setTotalLayers(int layers)
{
    m_totalLayers = layers;
    relayout();
}

int StagePartitionView::stageCount() const
{
    return m_hasPlan ? m_plan.pp() : 0;
}

const StagePlan* StagePartitionView::stage(int index) const
{
    if (index < 0 || index >= stageCount())
        return nullptr;
    return &m_plan.stages[static_cast<size_t>(index)];
}

int StagePartitionView::markHeight() const
{
    // A hatched band along the bottom of each box whose stage recomputes: it shows on boxes
    // too narrow for any text (the legend names it).
    return std::max(5, fontMetrics().height() / 2);
}

bool StagePartitionView::anyRecompute() const
{
    return m_hasPlan && std::any_of(m_plan.stages.begin(), m_plan.stages.end(), recomputes);
}

bool StagePartitionView::stageMarkedRecompute(int index) const
{
    const StagePlan* s = stage(index);
    return s && recomputes(*s);
}

int StagePartitionView::stripHeight() const
{
    const int mark = anyRecompute() ? markHeight() : 0;
    if (m_compact)
        return 2 * fontMetrics().height() + 10 + mark;
    // Six lines; seven when a line is split over two in every box (see layoutBoxes).
    size_t lines = 6;
    for (const BoxText& box : boxes()) {
        if (!box.upright)
            lines = std::max(lines, box.lines.size());
    }
    // 12 pixels of padding: 5 above the text, and below it room for the bottleneck's outline
    // (4 pixels) and a gap of 3 before it.
    return static_cast<int>(lines) * fontMetrics().height() + 12 + mark;
}

QSize StagePartitionView::sizeHint() const
{
    return {800, minimumSizeHint().height()};
}

QSize StagePartitionView::minimumSizeHint() const
{
    m_hintedHeight = kMargin * 2 + stripHeight() + kLegendGap + legendRows() * fontMetrics().height() + 4;
    return {200, m_hintedHeight};
}

int StagePartitionView::stageLeft(int index) const
{
    int layers = 0;
    for (const StagePlan& s : m_plan.stages)
        layers += s.num_layers;
    const int scale = std::max({m_totalLayers, layers, 1});
    const double w = width() - 2.0 * kMargin;
    int before = 0;
    for (int i = 0; i < index; ++i)
        before += m_plan.stages[static_cast<size_t>(i)].num_layers;
    return kMargin + static_cast<int>(w * before / scale);
}

int StagePartitionView::stageRight(int index) const
{
    return std::max(stageLeft(index) + 1, stageLeft(index + 1));
}

QRect StagePartitionView::stageRect(int index) const
{
    if (index < 0 || index >= stageCount())
        return {};
    return QRect(stageLeft(index), kMargin, stageRight(index) - stageLeft(index), stripHeight());
}

int StagePartitionView::stageAt(const QPoint& pos) const
{
    for (int i = 0; i < stageCount(); ++i) {
        if (stageRect(i).contains(pos))
            return i;
    }
    return -1;
}

QString StagePartitionView::stageToolTip(int index) const
{
    const StagePlan* s = stage(index);
    if (!s)
        return {};
    QString tip = QStringLiteral("<b>Stage %1</b> on %2 × %3%4<br>")
                      .arg(index)
                      .arg(s->numDevices())
                      .arg(QString::fromStdString(s->device_type).toHtmlEscaped())
                      .arg(index == m_bottleneck ? QStringLiteral(" <b>(bottleneck)</b>") : QString());
    tip += QStringLiteral("Layers %1 (%2)<br>").arg(style::layerRange(m_plan, index, m_mtpLayers).mid(1).replace(QLatin1Char(','), QStringLiteral(", "))).arg(s->num_layers);
    tip += QStringLiteral("%1<br>Recompute: %2 · micro-batch %3<br>Devices: %4<br>")
               .arg(style::knobsLabel(*s, m_expertKnobs), style::recomputeLabel(*s))
               .arg(s->micro_batch_size)
               .arg(style::devicesLabel(*s).toHtmlEscaped());
    if (index < static_cast<int>(m_prediction.stages.size())) {
        const StageEstimate& e = m_prediction.stages[static_cast<size_t>(index)];
        tip += QStringLiteral("Forward %1 · backward %2 per micro-batch<br>")
                   .arg(style::formatSeconds(e.t_fwd), style::formatSeconds(e.t_bwd));
        tip += QStringLiteral("Memory %1 of %2 per device")
                   .arg(style::formatGiB(e.memory.total()), style::formatGiB(e.memory.capacity));
        if (!e.memory.fits())
            tip += QStringLiteral(" ") + statusHtml(Status::Problem, toolTipPalette(), tr("(does not fit)"));
    }
    return tip;
}

std::vector<StagePartitionView::BoxText> StagePartitionView::layoutBoxes() const
{
    // Each line has shorter forms for narrow boxes. One form per line is chosen for the
    // whole strip (the longest that fits every box), so that all boxes read alike. Where
    // even the shortest is too wide, the name and the recompute line split over two lines
    // in every box ("S2" over "910B", "rc:" over "none"), and a box too narrow for that
    // writes its text upright. No line is cut short.
    const int n = stageCount();
    std::vector<BoxText> boxes(static_cast<size_t>(n));
    if (n == 0)
        return boxes;
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics fm(font());
    const QFontMetrics bfm(bold);
    bool anyCp = false;
    bool mixedMbs = false;   // stages of other micro-batch sizes (FlagScale's meshes): each box says its own
    bool mixedExperts = false;   // stages of other ETP or EDP: no form leaves them out
    const StagePlan& s0 = m_plan.stages.front();
    for (const StagePlan& s : m_plan.stages) {
        anyCp = anyCp || s.cp > 1;
        mixedMbs = mixedMbs || s.micro_batch_size != s0.micro_batch_size;
        mixedExperts = mixedExperts || s.etp != s0.etp || s.edp != s0.edp;
    }
    // Lines: the name, the layers, the grid, the experts (MoE), recompute, the devices.
    const size_t kRecomputeLine = m_expertKnobs ? 4 : 3;
    std::vector<std::vector<QStringList>> lines(static_cast<size_t>(n));
    std::vector<int> room(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
        const StagePlan& s = m_plan.stages[static_cast<size_t>(i)];
        const QString type = QString::fromStdString(s.device_type);
        const QString shortType = style::shortDeviceName(type);
        auto& l = lines[static_cast<size_t>(i)];
        // The bottleneck's text keeps clear of its thicker outline: two pixels more on each side.
        room[static_cast<size_t>(i)] = stageRight(i) - stageLeft(i) - kTextInset - (i == m_bottleneck ? 4 : 0);
        l.push_back({QStringLiteral("S%1 · %2").arg(i).arg(type), QStringLiteral("S%1 · %2").arg(i).arg(shortType),
                     QStringLiteral("S%1 %2").arg(i).arg(shortType)});
        if (m_compact) {
            if (m_expertKnobs)
                l.push_back({QStringLiteral("%1 L · TP%2 DP%3 EP%4").arg(s.num_layers).arg(s.tp).arg(s.dp).arg(s.ep),
                             QStringLiteral("%1 L · EP%2").arg(s.num_layers).arg(s.ep), QStringLiteral("%1 L").arg(s.num_layers)});
            else
                l.push_back({QStringLiteral("%1 L · TP%2 DP%3").arg(s.num_layers).arg(s.tp).arg(s.dp),
                             QStringLiteral("%1 L · DP%2").arg(s.num_layers).arg(s.dp), QStringLiteral("%1 L").arg(s.num_layers)});
            continue;
        }
        const QString rc = style::recomputeLabel(s);
        const QString layers = s.num_layers == 1 ? tr("1 layer") : tr("%1 layers").arg(s.num_layers);
        l.push_back({QStringLiteral("%1 (%2)").arg(layers, style::layerRange(m_plan, i, m_mtpLayers)), layers, QStringLiteral("%1 L").arg(s.num_layers)});
        QStringList grid = anyCp ? QStringList{QStringLiteral("TP%1 CP%2 DP%3").arg(s.tp).arg(s.cp).arg(s.dp),
                                               QStringLiteral("T%1 C%2 D%3").arg(s.tp).arg(s.cp).arg(s.dp)}
                                 : QStringList{QStringLiteral("TP%1 DP%2").arg(s.tp).arg(s.dp), QStringLiteral("T%1 D%2").arg(s.tp).arg(s.dp)};
        if (mixedMbs) {   // every form keeps it: a stage of MBS 2 runs half as many micro-batches
            grid << grid[1] + QStringLiteral(" m%1").arg(s.micro_batch_size);
            grid[0] += QStringLiteral(" MBS%1").arg(s.micro_batch_size);
            grid[1] += QStringLiteral(" mbs%1").arg(s.micro_batch_size);
        }
        l.push_back(grid);
        if (m_expertKnobs) {
            // Where the stages differ in ETP or EDP the shortest form keeps them (two stages
            // of EP 1 read alike otherwise); the box goes upright sooner.
            const QString experts = QStringLiteral("E%1 ET%2 ED%3").arg(s.ep).arg(s.etp).arg(s.edp);
            l.push_back({QStringLiteral("EP%1 ETP%2 EDP%3").arg(s.ep).arg(s.etp).arg(s.edp), experts,
                         mixedExperts ? experts : QStringLiteral("EP%1").arg(s.ep)});
        }
        l.push_back({QStringLiteral("recompute: %1").arg(rc), QStringLiteral("rc: %1").arg(rc), style::recomputeShortLabel(s)});
        l.push_back({QStringLiteral("%1 dev · %2").arg(s.numDevices()).arg(style::devicesLabel(s)),
                     QStringLiteral("%1 dev").arg(s.numDevices()), QString::number(s.numDevices())});
    }
    const size_t lineCount = lines.front().size();
    const auto fits = [](const QFontMetrics& m, const QString& text, int width) { return m.horizontalAdvance(text) <= width; };
    // "rc: none" -> "rc:", "none"; "S2 910B" -> "S2", "910B".
    const auto halves = [](const QString& text) {
        const qsizetype cut = text.indexOf(QLatin1Char(' '));
        return QStringList{text.left(cut), text.mid(cut + 1)};
    };
    // The comparison's boxes have two lines: none splits.
    const auto splittable = [&](size_t l) { return !m_compact && (l == 0 || l == kRecomputeLine); };

    // Upright: a box in which some line does not fit across even split in two. The
    // comparison's two-line boxes are too low for that; they leave out what does not fit.
    for (size_t i = 0; i < boxes.size(); ++i) {
        bool across = true;
        for (size_t l = 0; l < lineCount && across; ++l) {
            const QFontMetrics& m = l == 0 ? bfm : fm;
            QStringList parts{lines[i][l].back()};
            if (splittable(l))
                parts = halves(parts.front());
            for (const QString& part : parts)
                across = across && fits(m, part, room[i]);
        }
        boxes[i].upright = !m_compact && !across;
    }
    // Boxes of as many layers are as wide give or take a pixel, and their names differ in
    // length ("S9", "S10"): decided box by box, rounding would write one across and the next
    // upright. They are written alike: upright when the narrowest of them must be.
    std::map<int, bool> uprightFor;
    for (size_t i = 0; i < boxes.size(); ++i)
        uprightFor[m_plan.stages[i].num_layers] |= boxes[i].upright;
    for (size_t i = 0; i < boxes.size(); ++i)
        boxes[i].upright = uprightFor[m_plan.stages[i].num_layers];
    const auto fitsAll = [&](size_t l, int form) {
        const QFontMetrics& m = l == 0 ? bfm : fm;
        for (size_t i = 0; i < boxes.size(); ++i) {
            if (!boxes[i].upright && !fits(m, lines[i][l][form], room[i]))
                return false;
        }
        return true;
    };
    std::vector<int> form(lineCount, 0);
    std::vector<bool> split(lineCount, false);
    for (size_t l = 0; l < lineCount; ++l) {
        const int forms = static_cast<int>(lines.front()[l].size());
        while (form[l] < forms - 1 && !fitsAll(l, form[l]))
            ++form[l];
        split[l] = splittable(l) && !fitsAll(l, form[l]);
    }
    for (size_t i = 0; i < boxes.size(); ++i) {
        BoxText& box = boxes[i];
        if (box.upright)
            continue;
        for (size_t l = 0; l < lineCount; ++l) {
            const QFontMetrics& m = l == 0 ? bfm : fm;
            QStringList texts{lines[i][l][form[l]]};
            if (split[l]) {
                texts = halves(texts.front());
            } else if (!fits(m, texts.front(), room[i])) {
                // Only in the comparison's boxes: the longest form that fits, else nothing.
                QString fitting;
                for (const QString& f : lines[i][l]) {
                    if (fits(m, f, room[i])) {
                        fitting = f;
                        break;
                    }
                }
                if (l == 0 && fitting.isEmpty() && fits(m, QStringLiteral("S%1").arg(i), room[i]))
                    fitting = QStringLiteral("S%1").arg(i);
                texts = {fitting};
            }
            for (const QString& t : texts)
                box.lines.push_back(l == 0 ? TextRun{t, {}} : TextRun{{}, t});
        }
        // With both the name and the recompute line split, the devices (in the tooltip)
        // give way: the strip grows by one line at most.
        if (!m_compact && box.lines.size() > lineCount + 1)
            box.lines.pop_back();
    }

    // Upright boxes: columns of at most the box's height, the name in bold first and as
    // much of the rest as fits after it and in further columns.
    size_t stripLines = 6;
    for (const BoxText& box : boxes) {
        if (!box.upright)
            stripLines = std::max(stripLines, box.lines.size());
    }
    // The box as paintEvent draws it, less the room around its text.
    const int mark = anyRecompute() ? markHeight() : 0;
    const auto area = [&](size_t i) {
        const int slot = stageRight(static_cast<int>(i)) - stageLeft(static_cast<int>(i));
        const int inset = boxInset(slot, fm);
        const QRect r(stageLeft(static_cast<int>(i)) + inset, kMargin, slot - 2 * inset,
                      static_cast<int>(stripLines) * fm.height() + 10 + mark);
        return uprightArea(r, static_cast<int>(i) == m_bottleneck, recomputes(m_plan.stages[i]) ? mark : 0);
    };
    // As many columns as fit, the same in boxes of as many layers (which are as wide, give
    // or take a pixel).
    std::map<int, int> columnsFor;
    // Narrower than a capital letter: no text, which would be cut to unreadable bits (the
    // tooltip and the legend's colour tell the stage); decided alike for boxes of as many
    // layers, as the upright choice is, so that one box in three is not the only one named.
    std::map<int, bool> blankFor;
    for (size_t i = 0; i < boxes.size(); ++i) {
        if (!boxes[i].upright)
            continue;
        const int layers = m_plan.stages[i].num_layers;
        const int fit = std::max(1, area(i).width() / fm.height());
        columnsFor[layers] = columnsFor.count(layers) ? std::min(columnsFor[layers], fit) : fit;
        const int slot = stageRight(static_cast<int>(i)) - stageLeft(static_cast<int>(i));
        blankFor[layers] |= slot - 2 * boxInset(slot, fm) < fm.capHeight() + 1;
    }
    // Each upright box's name and parts, then, per number of layers, the room of the shortest
    // box and the widest name and part at each place: the boxes of a group break their
    // columns at the same places ("S9 H100" and "S10 H100", the bottleneck's thicker outline).
    struct Upright {
        QString fullName, shortName;
        QStringList rest;
        int length = 0;
    };
    struct Group {
        int length = std::numeric_limits<int>::max();
        bool fullNames = true;
        int name = 0;
        std::vector<int> joined, alone;   // a part after " · ", and alone in a column
    };
    std::vector<Upright> upright(boxes.size());
    std::map<int, Group> groups;
    for (size_t i = 0; i < boxes.size(); ++i) {
        const StagePlan& s = m_plan.stages[i];
        if (!boxes[i].upright || blankFor[s.num_layers])
            continue;
        Upright& u = upright[i];
        u.length = area(i).height();
        u.fullName = QStringLiteral("S%1 %2").arg(i).arg(style::shortDeviceName(QString::fromStdString(s.device_type)));
        u.shortName = QStringLiteral("S%1").arg(i);
        // The layers and the parallel sizes first, then "rc: none" and the devices, which a
        // narrow box leaves out before the expert grid (EP 8 on one type, 1 on another is what
        // tells its stages apart); a stage that recomputes says so first: in a short box it is
        // the line that stays.
        u.rest = QStringList{QStringLiteral("%1 L").arg(s.num_layers), lines[i][2].back()};
        if (m_expertKnobs)
            u.rest << lines[i][3].back();
        u.rest << style::recomputeShortLabel(s) << QStringLiteral("%1 dev").arg(s.numDevices());
        if (recomputes(s))
            u.rest.move(u.rest.size() - 2, 0);
        Group& g = groups[s.num_layers];
        g.length = std::min(g.length, u.length);
        g.joined.resize(u.rest.size(), 0);
        g.alone.resize(u.rest.size(), 0);
        for (qsizetype j = 0; j < u.rest.size(); ++j) {
            g.joined[static_cast<size_t>(j)] = std::max(g.joined[static_cast<size_t>(j)], fm.horizontalAdvance(QStringLiteral(" · ") + u.rest[j]));
            g.alone[static_cast<size_t>(j)] = std::max(g.alone[static_cast<size_t>(j)], fm.horizontalAdvance(u.rest[j]));
        }
    }
    for (size_t i = 0; i < boxes.size(); ++i)
        if (!upright[i].fullName.isEmpty())
            groups[m_plan.stages[i].num_layers].fullNames &= fits(bfm, upright[i].fullName, groups[m_plan.stages[i].num_layers].length);
    for (size_t i = 0; i < boxes.size(); ++i) {
        Group& g = groups[m_plan.stages[i].num_layers];
        if (!upright[i].fullName.isEmpty())
            g.name = std::max(g.name, bfm.horizontalAdvance(g.fullNames ? upright[i].fullName : upright[i].shortName));
    }
    for (size_t i = 0; i < boxes.size(); ++i) {
        const Upright& u = upright[i];
        if (u.fullName.isEmpty())
            continue;
        const StagePlan& s = m_plan.stages[i];
        const Group& g = groups[s.num_layers];
        const int columns = columnsFor[s.num_layers];
        BoxText& box = boxes[i];
        box.lines = {TextRun{g.fullNames ? u.fullName : u.shortName, {}}};
        int used = g.name;
        for (qsizetype j = 0; j < u.rest.size(); ++j) {
            const int joined = g.joined[static_cast<size_t>(j)], alone = g.alone[static_cast<size_t>(j)];
            if (used + joined <= g.length) {
                box.lines.back().regular += QStringLiteral(" · ") + u.rest[j];
                used += joined;
                continue;
            }
            if (static_cast<int>(box.lines.size()) >= columns || alone > g.length)
                break;
            box.lines.push_back(TextRun{{}, u.rest[j]});
            used = alone;
        }
    }
    return boxes;
}

const std::vector<StagePartitionView::BoxText>& StagePartitionView::boxes() const
{
    if (!m_boxes || m_boxesWidth != width()) {
        m_boxes = layoutBoxes();
        m_boxesWidth = width();
    }
    return *m_boxes;
}

void StagePartitionView::relayout()
{
    m_boxes.reset();
    updateGeometry();
    update();
}

QStringList StagePartitionView::stageLines(int index) const
{
    if (index < 0 || index >= stageCount())
        return {};
    QStringList out;
    for (const TextRun& run : boxes()[static_cast<size_t>(index)].lines)
        out << run.bold + run.regular;
    return out;
}

bool StagePartitionView::stageUpright(int index) const
{
    return index >= 0 && index < stageCount() && boxes()[static_cast<size_t>(index)].upright;
}

void StagePartitionView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, true);
    const QFontMetrics fm = fontMetrics();
    if (!m_hasPlan || m_plan.stages.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, m_emptyText);
        return;
    }
    QFont bold = font();
    bold.setBold(true);
    const QPen mark(style::bottleneckMarkColor(palette()), 3);

    const std::vector<BoxText>& text = boxes();
    for (int i = 0; i < stageCount(); ++i) {
        // A gap between boxes (rather than alternating shades, which would make one device
        // type look like another) separates neighbouring stages of one type.
        const int inset = boxInset(stageRect(i).width(), fm);
        const QRect r = stageRect(i).adjusted(inset, 0, -inset, 0);
        const bool marked = stageMarkedRecompute(i);
        QColor fill = style::deviceColor(QString::fromStdString(m_plan.stages[static_cast<size_t>(i)].device_type));
        if (i == m_hovered)
            fill = fill.lighter(125);
        p.setPen(Qt::NoPen);
        p.setBrush(fill);
        p.drawRoundedRect(r, 4, 4);
        if (i == m_bottleneck) {
            // A thick outline in the text colour with a thin line of the background inside,
            // which shows on every device colour in both themes.
            p.setBrush(Qt::NoBrush);
            p.setPen(mark);
            p.drawRoundedRect(QRectF(r).adjusted(1.5, 1.5, -1.5, -1.5), 4, 4);
            p.setPen(QPen(palette().color(QPalette::Base), 1));
            p.drawRoundedRect(QRectF(r).adjusted(3.5, 3.5, -3.5, -3.5), 3, 3);
        }
        if (i == m_hovered) {
            p.setPen(QPen(palette().color(QPalette::Highlight), 2));
            p.setBrush(Qt::NoBrush);
            p.drawRoundedRect(r, 4, 4);
        }

        if (marked) {
            // Recompute: a band hatched in the text colour along the bottom, inside the
            // bottleneck's outline.
            const int in = i == m_bottleneck ? 4 : 0;
            const QRect band(r.left() + in, r.bottom() - in - markHeight() + 1, r.width() - 2 * in, markHeight());
            p.save();
            p.setClipRect(band);
            p.setPen(Qt::NoPen);
            p.setBrush(QBrush(style::textOn(fill), Qt::BDiagPattern));
            p.drawRoundedRect(r.adjusted(in, in, -in, -in), 4, 4);
            p.restore();
        }

        p.setPen(style::textOn(fill));
        const BoxText& box = text[static_cast<size_t>(i)];
        if (box.upright) {
            // Columns from the bottom up, their capitals centred in equal slots of the box.
            const QRect area = uprightArea(r, i == m_bottleneck, marked ? markHeight() : 0);
            p.save();
            p.setClipRect(r);
            const double slot = double(area.width()) / std::max<size_t>(1, box.lines.size());
            for (size_t c = 0; c < box.lines.size(); ++c) {
                p.save();
                p.translate(area.left() + slot * (c + 0.5) - (fm.ascent() - fm.capHeight() / 2.0), area.bottom());
                p.rotate(-90);
                drawRun(p, box.lines[c], QPoint(0, fm.ascent()), bold, font());
                p.restore();
            }
            p.restore();
            continue;
        }
        const QRect textRect = i == m_bottleneck ? r.adjusted(7, 6, -6, -2) : r.adjusted(5, 5, -4, -2);
        int y = textRect.top();
        for (const TextRun& line : box.lines) {
            drawRun(p, line, QPoint(textRect.left(), y + fm.ascent()), bold, font());
            y += fm.height();
        }
    }

    // Legend: one swatch per device type, in order of first appearance.
    p.setFont(font());
    const int ly = kMargin + stripHeight() + kLegendGap;
    const int box = fm.height() - 4;
    for (const LegendEntry& e : legendEntries()) {
        const int y = ly + e.row * fm.height();
        if (e.bottleneck) {
            p.setPen(mark);
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(e.x + 1.5, y + 3.5, box - 3, box - 3));
        } else if (e.recompute) {
            p.setPen(QPen(palette().color(QPalette::WindowText), 1));
            p.setBrush(QBrush(palette().color(QPalette::WindowText), Qt::BDiagPattern));
            p.drawRect(QRectF(e.x + 0.5, y + 2.5, box - 1, box - 1));
        } else {
            p.setPen(Qt::NoPen);
            p.setBrush(e.color);
            p.drawRoundedRect(QRect(e.x, y + 2, box, box), 2, 2);
        }
        const int tx = e.x + box + 4;
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QPoint(tx, y + fm.ascent() + 1), fm.elidedText(e.text, Qt::ElideRight, std::max(0, width() - kMargin - tx)));
    }
}

std::vector<StagePartitionView::LegendEntry> StagePartitionView::legendEntries() const
{
    std::vector<QString> types;
    std::map<QString, int> devices;
    for (const StagePlan& s : m_plan.stages) {
        const QString t = QString::fromStdString(s.device_type);
        if (std::find(types.begin(), types.end(), t) == types.end())
            types.push_back(t);
        devices[t] += s.numDevices();
    }
    const QFontMetrics fm = fontMetrics();
    const int box = fm.height() - 4;
    const bool marked = m_bottleneck >= 0 && m_bottleneck < stageCount();
    // The stages that recompute, named when they are few ("S0", "S0, S3"), else counted.
    QStringList names;
    for (int i = 0; i < stageCount(); ++i) {
        if (recomputes(m_plan.stages[static_cast<size_t>(i)]))
            names << QStringLiteral("S%1").arg(i);
    }
    const QString recomputing = names.size() <= 3 ? names.join(QStringLiteral(", ")) : tr("%1 stages").arg(names.size());
    // Full labels when they fit on one line, else short ones ("MI300X (16)") on as many
    // lines as they need.
    const auto labels = [&](bool full) {
        std::vector<LegendEntry> out;
        for (const QString& t : types)
            out.push_back({(full ? tr("%1 (%2 devices)") : tr("%1 (%2)")).arg(t).arg(devices[t]), style::deviceColor(t)});
        if (marked)
            out.push_back({(full ? tr("bottleneck stage (S%1)") : tr("bottleneck S%1")).arg(m_bottleneck), {}, true});
        if (!recomputing.isEmpty()) {
            LegendEntry e{full ? tr("recompute (%1)").arg(recomputing) : tr("recompute"), {}, false};
            e.recompute = true;
            out.push_back(e);
        }
        return out;
    };
    const auto place = [&](std::vector<LegendEntry>& entries) {
        int x = kMargin, row = 0;
        for (LegendEntry& e : entries) {
            const int w = box + 4 + fm.horizontalAdvance(e.text);
            if (x > kMargin && x + w > width() - kMargin) {
                x = kMargin;
                ++row;
            }
            e.x = x;
            e.row = row;
            x += w + 16;
        }
        return row + 1;
    };
    std::vector<LegendEntry> entries = labels(true);
    if (place(entries) > 1) {
        entries = labels(false);
        place(entries);
    }
    return entries;
}

QStringList StagePartitionView::legendTexts() const
{
    QStringList out;
    for (const LegendEntry& e : legendEntries())
        out << e.text;
    return out;
}

bool StagePartitionView::legendFits() const
{
    const QFontMetrics fm = fontMetrics();
    for (const LegendEntry& e : legendEntries()) {
        if (e.x + fm.height() - 4 + 4 + fm.horizontalAdvance(e.text) > width() - kMargin)
            return false;
    }
    return true;
}

int StagePartitionView::legendRows() const
{
    int rows = 1;
    for (const LegendEntry& e : legendEntries())
        rows = std::max(rows, e.row + 1);
    return rows;
}

void StagePartitionView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    // Narrower boxes may split a line in two, and the strip takes one line more; the legend
    // may take more lines.
    const int hinted = m_hintedHeight;
    const int needed = minimumSizeHint().height();
    if (needed != hinted || height() != needed)
        updateGeometry();
}

void StagePartitionView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        relayout();
}

void StagePartitionView::setHovered(int stage)
{
    if (stage == m_hovered)
        return;
    m_hovered = stage;
    update();
    emit stageHovered(stage);
}

void StagePartitionView::mouseMoveEvent(QMouseEvent* event)
{
    setHovered(stageAt(event->position().toPoint()));
    QWidget::mouseMoveEvent(event);
}

void StagePartitionView::leaveEvent(QEvent* event)
{
    setHovered(-1);
    QWidget::leaveEvent(event);
}

bool StagePartitionView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int s = stageAt(help->pos());
        if (s >= 0)
            QToolTip::showText(help->globalPos(), stageToolTip(s), this, stageRect(s));
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

} // namespace hapmoe::ui
