"""The report's two figures, as PNG images to embed in the page (it must work offline).

Drawn with matplotlib's object-oriented ``Figure``, which holds no global state: a report
written in a process that draws other figures (a test run, a notebook) touches none of them.
matplotlib is imported when a figure is drawn (2 s of imports), not by every process that
imports the report's modules.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def score_histogram(percentages: dict[str, list[float]]) -> str:
    """Base64 PNG: how many submissions of each assignment scored what share of its points."""
    def draw(axes: Axes) -> None:
        axes.hist(list(percentages.values()), bins=range(0, 110, 10), label=list(percentages), stacked=True)
        axes.set_xlabel("score (% of the assignment's points)")
        axes.set_ylabel("submissions")
        axes.yaxis.get_major_locator().set_params(integer=True)
        axes.legend(fontsize=7)
        axes.set_title("Scores per assignment")
    return _png(draw)


def pass_rate_chart(passed: dict[str, list[bool]]) -> str:
    """Base64 PNG: the share of submissions passing each test, one bar per test."""
    names = sorted(passed)

    def draw(axes: Axes) -> None:
        axes.barh(names, [100 * sum(passed[name]) / len(passed[name]) for name in names], color="tab:blue")
        axes.set_xlim(0, 100)
        axes.invert_yaxis()
        axes.set_xlabel("% of submissions passing")
        axes.set_title("Pass rate per test")
        axes.tick_params(axis="y", labelsize=7)
    return _png(draw, height=max(3.0, 0.8 + 0.2 * len(names)))


def _png(draw: Callable[[Axes], None], height: float = 3.0) -> str:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, height), layout="tight")
    draw(figure.subplots())
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    return base64.b64encode(buffer.getvalue()).decode()
