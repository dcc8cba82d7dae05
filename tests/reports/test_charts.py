"""The report's charts: SVG whose bars are the counts and rates they stand for, and whose
labels are text, whatever a name holds."""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ElementTree

import pytest

from autograder.reports.charts import COLOURS, pass_rate_chart, score_histogram

SVG = "{http://www.w3.org/2000/svg}"


def drawn(chart: str) -> ElementTree.Element:
    return ElementTree.fromstring(base64.b64decode(chart))


def bars(svg: ElementTree.Element, colour: str) -> list[dict[str, float]]:
    return [{key: float(rect.get(key)) for key in ("x", "y", "width", "height")}
            for rect in svg.iter(f"{SVG}rect") if rect.get("class") == "bar" and rect.get("fill") == colour]


def test_the_histogram_stacks_each_assignments_counts_in_bins_of_ten_percent():
    svg = drawn(score_histogram({"first": [100.0, 95.0, 0.0], "second": [99.0, 10.0]}))
    first, second = (sorted(bars(svg, colour), key=lambda bar: bar["x"]) for colour in COLOURS[:2])
    origin, width, unit = first[0]["x"], first[0]["width"], first[0]["height"]
    assert [round((bar["x"] - origin) / width) for bar in first] == [0, 9]
    assert [round((bar["x"] - origin) / width) for bar in second] == [1, 9]
    assert [bar["height"] / unit for bar in first + second] == pytest.approx([1, 2, 1, 1], abs=0.01)
    assert second[1]["y"] + second[1]["height"] == pytest.approx(first[1]["y"], abs=0.2), "stacked on the first's"


def test_the_pass_rates_are_bar_lengths_and_a_name_stays_text():
    name = "test_<script>alert(1)</script>"
    svg = drawn(pass_rate_chart({"test_all": [True, True], "test_half": [True, False], name: [False]}))
    assert name in [label.text for label in svg.iter(f"{SVG}text")], "the name is a label's text"
    assert not list(svg.iter(f"{SVG}script")) and not list(svg.iter("script"))
    lengths = sorted(bar["width"] for bar in bars(svg, COLOURS[0]))
    assert lengths[0] == 0 and lengths[2] == 2 * lengths[1] > 0


def test_long_names_are_cut_in_the_middle_and_stay_apart():
    long_name = "06-diagnose-and-measure: test_a_long_exercise_name_that_ends_with_{}"
    names = [long_name.format(kind) for kind in ("residual", "temperature")]
    labels = [label.text for label in drawn(pass_rate_chart({name: [True] for name in names})).iter(f"{SVG}text")]
    shown = [label for label in labels if label.startswith("06-")]
    assert len(shown) == 2 and len(set(shown)) == 2 and all("…" in label for label in shown)


def test_a_score_past_full_marks_counts_in_the_last_bin_and_one_below_zero_in_the_first():
    svg = drawn(score_histogram({"extra credit": [100.0, 105.0, -5.0]}))
    first = sorted(bars(svg, COLOURS[0]), key=lambda bar: bar["x"])
    assert len(first) == 2 and first[1]["height"] == pytest.approx(2 * first[0]["height"], abs=0.2)
