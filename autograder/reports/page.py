"""``grading/report.html``: the page a TA reads after a grading run, from the template
``templates/report.html.j2``.

Everything on it that came from a submission (student ids, file names, details, flagged
lines) is text a student chose: Jinja2 escapes every value (autoescape), links come
URL-quoted (``table``), and the one script, our own sorting of the tables, holds no
data. The page's Content-Security-Policy lets only that script run (by its hash) and loads
nothing from anywhere: it works offline, and markup that escaped escaping still could not run.
"""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from autograder.reports.outcomes import GRADED, outcome, tallies, this_run
from autograder.results.records import Record
from autograder.settings import KERNEL_BOUNDS
from autograder.reports.charts import pass_rate_chart, score_histogram
from autograder.reports.class_table import ClassTable

TEMPLATES = Path(__file__).with_name("templates")
SORT_SCRIPT = (TEMPLATES / "sort_table.js").read_text()
SLOWEST = 10


def _environment() -> Environment:
    environment = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True)
    environment.filters["points"] = lambda value: f"{value:g}"
    return environment


def script_hash(script: str) -> str:
    """The script's CSP source expression: a script whose text differs is not run."""
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()


def render_report(records: list[Record], table: ClassTable, scores: dict[str, list[float]],
                  passed: dict[str, list[bool]], settings: dict[str, object],
                  graded_now: list[str] | None = None, import_left_out: dict[str, list[str]] | None = None) -> str:
    """The page: ``scores`` are each assignment's graded submissions in % of its points,
    ``passed`` each test's results, ``settings`` the run's (``GradingSettings.in_force``),
    ``graded_now`` the folders (``STUDENT/ASSIGNMENT``) this run graded, when known,
    ``import_left_out`` what each assignment's last zip import left out of its archive."""
    return _environment().get_template("report.html.j2").render(
        sandboxed=settings.get("GradingSettings.sandbox"),
        kernel_bounds=settings.get(KERNEL_BOUNDS),
        total=len(records),
        tallies=tallies(records),
        this_run=this_run(records, graded_now) if graded_now is not None else None,
        table=table,
        any_elsewhere=any(row.elsewhere for row in table.rows),
        problems=[(record, outcome(record)) for record in records if outcome(record) != GRADED],
        histogram=score_histogram(scores) if any(scores.values()) else "",
        pass_rates=pass_rate_chart(passed) if passed else "",
        flags=[(record, flag) for record in records for flag in record.flags],
        import_left_out=[(assignment, line) for assignment, lines in sorted((import_left_out or {}).items())
                         for line in lines],
        slowest=sorted((record for record in records if record.seconds), key=lambda record: -record.seconds)[:SLOWEST],
        workers=sorted(Counter(record.worker for record in records if record.worker).items()),
        settings=sorted(settings.items()),
        script=Markup(SORT_SCRIPT),  # our own file, no data: written as it is, so that its hash holds
        script_hash=script_hash(SORT_SCRIPT),
    )
