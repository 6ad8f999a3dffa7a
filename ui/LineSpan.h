#pragma once
// Where a line meets a rectangle or a circle: the range of its parameter t, the point
// p1 + t (p2 - p1), inside the shape. The canvas's links use it to end on their items'
// outlines and to leave gaps where they pass under other items.

#include <QLineF>
#include <QPointF>
#include <QRectF>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace hapmoe::ui {

struct LineSpan {
    double from;
    double to;
};

// Liang and Barsky's clipping: the parameter range inside each of the rectangle's four
// half-planes, intersected. A line of no length inside the rectangle spans every t.
inline std::optional<LineSpan> lineSpanInRect(const QLineF& line, const QRectF& r)
{
    double from = -std::numeric_limits<double>::infinity(), to = std::numeric_limits<double>::infinity();
    const double p[] = {-line.dx(), line.dx(), -line.dy(), line.dy()};
    const double q[] = {line.x1() - r.left(), r.right() - line.x1(), line.y1() - r.top(), r.bottom() - line.y1()};
    for (int i = 0; i < 4; ++i) {
        if (p[i] == 0) {
            if (q[i] < 0)
                return std::nullopt;   // parallel to that side and outside it
            continue;
        }
        const double t = q[i] / p[i];
        if (p[i] < 0)
            from = std::max(from, t);
        else
            to = std::min(to, t);
        if (from > to)
            return std::nullopt;
    }
    return LineSpan{from, to};
}

// The roots of |p1 + t d - centre|^2 = radius^2.
inline std::optional<LineSpan> lineSpanInCircle(const QLineF& line, const QPointF& centre, double radius)
{
    const QPointF d(line.dx(), line.dy()), m = line.p1() - centre;
    const double a = QPointF::dotProduct(d, d), b = QPointF::dotProduct(m, d);
    const double c = QPointF::dotProduct(m, m) - radius * radius;
    if (a == 0)
        return c <= 0 ? std::optional<LineSpan>(LineSpan{-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()})
                      : std::nullopt;
    const double disc = b * b - a * c;
    if (disc < 0)
        return std::nullopt;
    const double root = std::sqrt(disc);
    return LineSpan{(-b - root) / a, (-b + root) / a};
}

} // namespace hapmoe::ui
