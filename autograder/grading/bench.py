"""Benchmark: plain ``nbgrader autograde`` against ``python -m autograder grade``, same run.

    python -m autograder.grading.bench [--n 40] [--workers N]

Builds N synthetic submissions (a mix of right, partly wrong, unanswered and broken ones
across every assignment, taken from the demo class), grades one copy with nbgrader's own
commands, one assignment after another as a TA would, another copy with ours on the local
pool and a third with ours on a Dask ``LocalCluster`` of as many workers (the ``dask``
scheduler, jobs as values, bundles shipped to its workers); checks that every score
agrees; and prints the wall times, the speed-ups, and our cost per
notebook against the floor: starting a kernel and importing torch, measured here too,
beside what a forked grading kernel costs instead (``autograder.sandbox.zygote``).
Ours renders each notebook's feedback page as it grades it, so the speed-up is given
twice: against ``nbgrader autograde`` alone, and against it followed by
``nbgrader generate_feedback``, which gives the TA the same files.
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from traitlets.config import Config

from autograder.course import DEMO_CLASS, Course, scratch_course
from autograder.gradebook import cell_scores, register_assignments
from autograder.grading.pipeline import SECOND_WITNESS, Options, grade_course
from autograder.settings import GradingSettings
from autograder.nbgrader_api import quiet_nbgrader_internals, run_nbgrader
from autograder.preprocessors.guarded_execute import GuardedExecute

TEMPLATES = ("all-right", "partial", "unanswered", "all-right", "partial")
BROKEN = ("invalid-json", "infinite-loop", "kernel-dies", "missing-notebook")


def build_class(course: Path, repo: Path, count: int) -> None:
    """A course with ``count`` submissions: mostly real answers, one in eight broken."""
    scratch = scratch_course(Course(repo), course)
    names = scratch.assignments()
    plain = itertools.cycle(itertools.product(TEMPLATES, names))
    broken = itertools.cycle(BROKEN)
    for index in range(count):
        template, assignment = ((next(broken), "01-inplace-basics") if index % 8 == 7 else next(plain))
        shutil.copytree(DEMO_CLASS / template / assignment,
                        scratch.folder("submitted", f"student-{index:03d}", assignment))
    register_assignments(scratch)


def kernel_start(run_notebook: Callable[[nbformat.NotebookNode], object], repeats: int = 3) -> float:
    """Median seconds for ``run_notebook`` to run a notebook whose one cell imports torch."""
    times = []
    for _ in range(repeats):
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import torch")])
        started = time.perf_counter()
        run_notebook(notebook)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def fresh_kernel(notebook: nbformat.NotebookNode) -> None:
    """A new kernel, as plain nbgrader starts one for every notebook."""
    NotebookClient(notebook, kernel_name="python3").execute()


def forked_kernel(notebook: nbformat.NotebookNode) -> None:
    """Our grading kernel: forked by this process's zygote, sandboxed, limited, guarded."""
    with tempfile.TemporaryDirectory(prefix="bench-assignment-") as folder:
        GuardedExecute(config=Config({"GradingSettings": {"sandbox": True}})).preprocess(
            notebook, {"metadata": {"path": folder}})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="number of submissions (default 40)")
    parser.add_argument("--workers", type=int, default=0, help="grading workers (default: the grader's own)")
    parser.add_argument("--cell-timeout", type=int, default=10)
    args = parser.parse_args(argv)
    quiet_nbgrader_internals()
    repo = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="grading-bench-") as scratch:
        plain_course, our_course, dask_course = (Path(scratch) / name for name in ("plain", "ours", "dask"))
        for course in (plain_course, our_course, dask_course):
            build_class(course, repo, args.n)
        timeout = f"--Execute.timeout={args.cell_timeout}"

        started = time.perf_counter()
        for assignment in Course(plain_course).assignments():
            run_nbgrader(["autograde", assignment, "--create", "--log-level=CRITICAL", timeout],
                         plain_course, capture_output=True)
        plain_seconds = time.perf_counter() - started
        for assignment in Course(plain_course).assignments():
            run_nbgrader(["generate_feedback", assignment, "--log-level=CRITICAL"], plain_course,
                         capture_output=True)
        plain_with_feedback = time.perf_counter() - started

        started = time.perf_counter()
        run = grade_course(our_course, Options(quiet=True, overrides={
            "GradingSettings": {"workers": args.workers}, "Execute": {"timeout": args.cell_timeout}}))
        workers = GradingSettings(workers=args.workers).worker_count()
        our_seconds = time.perf_counter() - started

        started = time.perf_counter()
        grade_course(dask_course, Options(quiet=True, overrides={
            "GradingSettings": {"workers": workers, "scheduler": f"dask-local:{workers}"},
            "Execute": {"timeout": args.cell_timeout}}))
        dask_seconds = time.perf_counter() - started

        plain_scores, our_scores = cell_scores(Course(plain_course)), cell_scores(Course(our_course))
        dask_scores = cell_scores(Course(dask_course))
        shared = plain_scores.keys() & our_scores.keys()
        disagree = sorted(key for key in shared if plain_scores[key] != our_scores[key])
        disagree += sorted(key for key in shared if dask_scores.get(key) != our_scores[key])
        floor = kernel_start(fresh_kernel)
        fork = None
        if run.unsandboxed_because is None:
            forked_kernel(nbformat.v4.new_notebook())  # this process's zygote starts: once per worker
            fork = kernel_start(forked_kernel)

    ran = [r for r in run.records.all() if r.seconds]
    job_seconds = statistics.mean(r.seconds for r in ran)
    print(f"submissions:                {args.n} ({len(shared)} test-cell scores from both graders)")
    print(f"plain nbgrader autograde:   {plain_seconds:7.1f} s")
    print(f"  ... then generate_feedback: {plain_with_feedback:5.1f} s in all")
    sandbox = "sandboxed" if run.unsandboxed_because is None else f"UNSANDBOXED: {run.unsandboxed_because}"
    print(f"ours, {workers} workers:           {our_seconds:7.1f} s ({sandbox}, guarded, feedback included)")
    print(f"speed-up:                   {plain_seconds / our_seconds:7.2f}x against autograde alone, "
          f"{plain_with_feedback / our_seconds:.2f}x against autograde and generate_feedback")
    print(f"ours on Dask, {workers} workers:   {dask_seconds:7.1f} s (dask-local:{workers}); "
          f"{our_seconds / dask_seconds:.0%} of the local pool's throughput, "
          f"{plain_seconds / dask_seconds:.2f}x against autograde alone, "
          f"{plain_with_feedback / dask_seconds:.2f}x against autograde and generate_feedback")
    forked = f"{fork:.2f} s a forked, sandboxed one ({floor / fork:.1f}x less)" if fork else "no forks unsandboxed"
    print(f"floor (kernel + torch):     {floor:7.2f} s a fresh kernel; {forked}")
    print(f"our seconds per notebook:   {job_seconds:7.2f} s in a worker = {job_seconds / floor:.2f} x floor; "
          f"{our_seconds / args.n:.2f} s of wall time each")
    witnessed = [r.witness_seconds for r in ran if r.witness_seconds]
    if witnessed:
        print(f"second witness:             {statistics.mean(witnessed):7.2f} s per notebook it confirmed "
              f"({len(witnessed)} notebooks; {statistics.mean(witnessed) / job_seconds:.0%} of a notebook's time), "
              f"within the times above; {run.settings.get(SECOND_WITNESS)}")
    print(f"scores that disagree:       {len(disagree)} {disagree[:5] if disagree else ''}")
    if disagree or not shared:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
