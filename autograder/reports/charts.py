"""The report's two figures, as SVG images to embed in the page (it must work offline).

Drawn here as a few rectangles and labels, in 10 ms: matplotlib took 1.4 s of CPU for the
two (its imports, then the drawing) in every grading command. Every label (an assignment's
or a test's name) is escaped, so that a name is text in the image, never markup.
"""

from __future__ import annotations

import base64
import math
from html import escape

# matplotlib's default colours (tab10), one per assignment, in turn.
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
WIDTH = 700
FONT_ATTRIBUTE = "font-family='DejaVu Sans, Arial, sans-serif'"


def score_histogram(percentages: dict[str, list[float]]) -> str:
    """Base64 SVG: how many submissions of each assignment scored what share of its points,
    stacked per assignment, in bins of ten percent: 100 % counts in the last one, as a score
    above it (extra credit) does; a score below 0 % (a late penalty) counts in the first."""
    counts = {name: [0] * 10 for name in percentages}
    for name, values in percentages.items():
        for value in values:
            counts[name][min(9, max(0, int(value // 10)))] += 1
    tallest = max([sum(column) for column in zip(*counts.values())] + [1])
    top, step = _count_axis(tallest)
    height, left, right, upper, lower = 300, 55, 195, 35, 50
    plot_width, plot_height = WIDTH - left - right, height - upper - lower
    parts = _titles(height, "Scores per assignment", "score (% of the assignment's points)", "submissions")
    for tick in range(0, top + 1, step):
        y = upper + plot_height * (1 - tick / top)
        parts += [_line(left - 4, y, left, y), _text(left - 7, y + 4, str(tick), anchor="end")]
    parts += _percent_ticks(left, plot_width, upper + plot_height, 10)
    stacked = [0] * 10
    for index, (name, column) in enumerate(counts.items()):
        colour = COLOURS[index % len(COLOURS)]
        for bin_index, count in enumerate(column):
            if count:
                y = upper + plot_height * (1 - (stacked[bin_index] + count) / top)
                parts.append(_rect(left + plot_width * bin_index / 10, y, plot_width / 10, plot_height * count / top,
                                   colour))
                stacked[bin_index] += count
        legend_y = upper + 8 + 16 * index
        parts += [_rect(WIDTH - right + 12, legend_y - 9, 10, 10, colour, role="key"),
                  _text(WIDTH - right + 27, legend_y, _shortened(name, 26), anchor="start")]
    parts.append(_plot_box(left, upper, plot_width, plot_height))
    return _svg(height, parts)


def pass_rate_chart(passed: dict[str, list[bool]]) -> str:
    """Base64 SVG: the share of submissions passing each test, one bar per test."""
    names = sorted(passed)
    row, left, right, upper, lower = 18, 290, 25, 35, 50
    height = max(300, upper + lower + row * len(names))
    plot_width, plot_height = WIDTH - left - right, height - upper - lower
    parts = _titles(height, "Pass rate per test", "% of submissions passing", None)
    parts += _percent_ticks(left, plot_width, upper + plot_height, 20)
    step = plot_height / max(1, len(names))
    for index, name in enumerate(names):
        rate = 100 * sum(passed[name]) / len(passed[name])
        y = upper + step * index
        parts += [_rect(left, y + step * 0.1, plot_width * rate / 100, step * 0.8, COLOURS[0]),
                  _text(left - 6, y + step / 2 + 4, _shortened(name, 48), anchor="end", size=10)]
    parts.append(_plot_box(left, upper, plot_width, plot_height))
    return _svg(height, parts)


def _count_axis(tallest: int) -> tuple[int, int]:
    """The count axis's top and its step between ticks: a round step (1, 2 or 5 times a
    power of ten) that reaches the tallest bar in at most five steps."""
    step = next(factor * 10 ** power for power in range(12) for factor in (1, 2, 5)
                if math.ceil(tallest / (factor * 10 ** power)) <= 5)
    return step * math.ceil(tallest / step), step


def _percent_ticks(left: float, width: float, baseline: float, step: int) -> list[str]:
    """The percent axis under a plot: a tick and its label every ``step`` from 0 to 100."""
    parts = []
    for tick in range(0, 101, step):
        x = left + width * tick / 100
        parts += [_line(x, baseline, x, baseline + 4), _text(x, baseline + 17, str(tick))]
    return parts


def _titles(height: int, title: str, x_label: str, y_label: str | None) -> list[str]:
    parts = [f"<rect width='{WIDTH}' height='{height}' fill='white'/>",
             _text(WIDTH / 2, 20, title, size=14),
             _text(WIDTH / 2, height - 10, x_label)]
    if y_label:
        parts.append(f"<text x='16' y='{height / 2:.1f}' transform='rotate(-90 16 {height / 2:.1f})' "
                     f"text-anchor='middle' font-size='12' {FONT_ATTRIBUTE}>{escape(y_label)}</text>")
    return parts


def _plot_box(left: float, upper: float, width: float, height: float) -> str:
    return (f"<rect x='{left:.1f}' y='{upper:.1f}' width='{width:.1f}' height='{height:.1f}' "
            "fill='none' stroke='black'/>")


def _rect(x: float, y: float, width: float, height: float, colour: str, role: str = "bar") -> str:
    return f"<rect class='{role}' x='{x:.1f}' y='{y:.1f}' width='{width:.1f}' height='{height:.1f}' fill='{colour}'/>"


def _line(x1: float, y1: float, x2: float, y2: float) -> str:
    return f"<line x1='{x1:.1f}' y1='{y1:.1f}' x2='{x2:.1f}' y2='{y2:.1f}' stroke='black'/>"


def _text(x: float, y: float, text: str, anchor: str = "middle", size: int = 11) -> str:
    return (f"<text x='{x:.1f}' y='{y:.1f}' text-anchor='{anchor}' font-size='{size}' {FONT_ATTRIBUTE}>"
            f"{escape(text)}</text>")


def _shortened(name: str, most: int) -> str:
    """``name`` in at most ``most`` characters, cut in the middle: the start names the
    assignment, the end the test (two tests of one assignment stay apart)."""
    if len(name) <= most:
        return name
    head = (most - 1) // 3
    return name[:head] + "…" + name[len(name) - (most - 1 - head):]


def _svg(height: int, parts: list[str]) -> str:
    svg = (f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{height}' "
           f"viewBox='0 0 {WIDTH} {height}'>{''.join(parts)}</svg>")
    return base64.b64encode(svg.encode()).decode()
