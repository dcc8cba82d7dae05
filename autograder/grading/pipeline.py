"""Grade every submission folder of a course: plan, run in parallel, collect.

    submitted/STUDENT/ASSIGNMENT/  ->  gradebook.db, autograded/, feedback/, grading/records.json

Every folder ends with a record: graded, or a named reason it could not be (but the
folders of students the course excludes, ``CourseDirectory.student_id_exclude``, which
are left alone as nbgrader leaves them). Folders whose files, and whose assignment's
instructor files, are unchanged since their last grading are skipped unless ``force`` is
set: a test fixed in ``source/`` reaches the gradebook first (``gradebook.register_assignments``),
then every submission of that assignment, and no other. One
folder never stops the others: whatever goes wrong with it is its record's reason.
``plan`` decides what each folder needs before any student code runs, ``trial`` checks
that the grading kernel works at all, ``pool`` runs the jobs, ``collect`` brings each
outcome into the course.
"""

from __future__ import annotations

import shutil
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm
from traitlets import TraitError

from autograder import gradebook
from autograder.course import Course
from autograder.grading import collect
from autograder.grading.bundle import Bundles
from autograder.grading.trial import trial_job, trial_problem
from autograder.intake.folders import submission_folders
from autograder.grading.jobs import GradingJob, JobResult, JobSettings, ReferenceJob
from autograder.grading.plan import CourseFacts, Plan, plan_folder, reference_jobs
from autograder.grading.pool import start_fork_server
from autograder.grading.schedulers import open_early, open_scheduler
from autograder.results.records import Record, Records
from autograder.settings import KERNEL_BOUNDS, GradingSettings
from autograder.status import Status
from autograder.nbgrader_api import import_from
from autograder.sandbox import bwrap, cgroups

# The report's line on what the second witness covered.
SECOND_WITNESS = "second witness"


@dataclass(frozen=True)
class Run:
    """What one call did: every folder's record, which ones it graded just now, and why
    kernels ran unsandboxed (None when they were sandboxed)."""

    records: Records
    graded_now: list[str]
    settings: dict[str, object]  # every grading setting in force (``GradingSettings.in_force``)
    unsandboxed_because: str | None = None


@dataclass(frozen=True)
class Options:
    """What one call grades, and the settings given for this call only ({Class: {trait:
    value}}, e.g. ``{"GradingSettings": {"workers": 2}, "Execute": {"timeout": 5}}``), over
    the course's ``nbgrader_config.py``."""

    force: bool = False
    students: tuple[str, ...] = ()
    assignments: tuple[str, ...] = ()
    quiet: bool = False
    overrides: dict = field(default_factory=dict)


def grade_course(root: Path, options: Options) -> Run:
    """Grade what needs grading in the course in ``root``; return the records of every folder."""
    course = Course(root, options.overrides)
    layout_problem = course.layout_problem()
    if layout_problem:
        raise SystemExit(f"cannot grade this course: {layout_problem}")
    try:
        settings = GradingSettings(config=course.config)
        settings.limits()
    except (TraitError, ValueError) as problem:
        raise SystemExit(f"the grading settings cannot be used: {problem}") from None
    import_from(course.root)
    unsandboxed_because = sandbox_problem(settings)
    if unsandboxed_because:
        warnings.warn(f"grading UNSANDBOXED: {unsandboxed_because}. Student code will run with your "
                      f"permissions (still limited and guarded; see docs/threat-model.md).", stacklevel=2)
    bounds = cgroups.prepare()  # before the workers start: they find its groups' parent in their environment
    if bounds.version is None:
        warnings.warn(f"kernels are not bounded as a whole ({bounds.why}): only each process's own limits "
                      "apply (see docs/threat-model.md).", stacklevel=2)
    in_force = {**settings.in_force(), KERNEL_BOUNDS: bounds.describe()}
    logs = course.grader_folder.scratch / "logs"
    shutil.rmtree(logs, ignore_errors=True)  # one run's logs: the last run's are gone
    start_fork_server()  # the workers' parent (a LocalCluster's too) imports the grading code while the run plans
    early = open_early(settings, logs, sandbox=not unsandboxed_because)  # a cluster starts while the run plans
    try:
        gradebook.register_assignments(course)
    except gradebook.SourceUpdateRefused as refused:
        if early is not None:
            early.discard()
        raise SystemExit(f"cannot grade this course: {refused}") from None
    records = Records(course.grader_folder.records)
    try:
        job_settings = JobSettings(settings.notebook_timeout, options.overrides)
        bundles = Bundles(course, course.grader_folder.scratch / "bundles")
        plans, facts = _plan(course, records, options, bundles, job_settings)
        jobs = [plan.job for plan in plans if plan.job]
    except BaseException:
        if early is not None:
            early.discard()
        raise
    if not jobs:
        if early is not None:
            early.discard()
        _save_finals(course, records, plans)
        return Run(records, [], in_force, unsandboxed_because)
    # The workers start (and their kernels' zygotes warm up) at once; the trial is the
    # first job, and the class's jobs run beside it.
    with early.pool() if early is not None else open_scheduler(
            settings, min(settings.worker_count(), len(jobs)), logs, sandbox=not unsandboxed_because) as pool:
        in_force.update(pool.describe())
        trial = trial_job(course, jobs[0])
        references = reference_jobs(facts, {job.assignment for job in jobs}, bundles, job_settings)
        gate = _Gate(course, pool.log_folder, trial, references)
        graded_now = _run_and_collect(course, records, plans, options, pool, gate, bundles)
        in_force[SECOND_WITNESS] = gate.coverage()
    return Run(records, graded_now, in_force, unsandboxed_because)


class _Gate:
    """The jobs whose results come before any student's is saved: the trial (a working
    grading kernel) and the second witness's references (one job per assignment, all
    recorded at once, beside the class's jobs, which run meanwhile). If the trial fails,
    or a reference cannot be recorded, the run stops with the course as it was: every test
    of that assignment would go unconfirmed. A recorder that fails on the instructor's own
    solution is left out, named."""

    def __init__(self, course: Course, log_folder: Path, trial: GradingJob | None, references: list[ReferenceJob]):
        self.course, self.log_folder, self.trial = course, log_folder, trial
        self.jobs = [*([trial] if trial else []), *references]
        self._waiting = {id(job) for job in self.jobs}
        self._before_the_trial: list[tuple[ReferenceJob, JobResult]] = []  # its verdict comes first
        self.references: dict[str, dict] = {}  # assignment -> notebook -> test cell id -> record

    @property
    def open(self) -> bool:
        return not self._waiting

    def take(self, job, result: JobResult) -> bool:
        """Whether ``job`` was one of the gate's (its result taken in); stops the run if it failed."""
        if id(job) not in self._waiting:
            return False
        self._waiting.discard(id(job))
        if job is self.trial:
            problem = trial_problem(self.course, job, result, self.log_folder)
            if problem:
                raise SystemExit(f"the grading kernel does not work, so nothing was graded or changed: {problem}")
            for reference, recorded in self._before_the_trial:
                self._reference(reference, recorded)
        elif self.trial is not None and id(self.trial) in self._waiting:
            self._before_the_trial.append((job, result))
        else:
            self._reference(job, result)
        return True

    def _reference(self, job: ReferenceJob, result: JobResult) -> None:
        missing = [f"{notebook}: {test}" for notebook, recorders in job.recorders.items()
                   for test in recorders if test not in result.records.get(notebook, {})]
        if result.status is not Status.GRADED or missing:
            raise SystemExit(f"the second witness's reference for {job.assignment} could not be recorded "
                             f"({result.status.value}: {result.detail or ', '.join(missing)}): nothing was graded")
        kept = {}
        for notebook, records in result.records.items():
            failed = {test for test, data in records.items() if data.get("failure")}
            for test in sorted(failed):
                warnings.warn(f"no second witness for {job.assignment} {test}: its recorder failed on the "
                              f"instructor's solution ({records[test]['failure']})", stacklevel=3)
            kept[notebook] = {test: data for test, data in records.items() if test not in failed}
        self.references[job.assignment] = kept

    def coverage(self) -> str:
        """What the witness covers, for the report."""
        tests = sum(len(records) for kept in self.references.values() for records in kept.values())
        return (f"{tests} test cells with a recorder, confirmed in a second kernel where they pass"
                if tests else "no recorders declared")


def sandbox_problem(settings: GradingSettings) -> str | None:
    """Why kernels will run unsandboxed (only ever when asked for), or None."""
    if not settings.sandbox:
        return "the sandbox was switched off (GradingSettings.sandbox, --no-sandbox)"
    reason = bwrap.unavailable_reason()
    if reason:
        raise SystemExit(f"cannot grade in a sandbox here: {reason}. Install bubblewrap (apt-get install "
                         "bubblewrap), or pass --no-sandbox to run students' code with your own permissions.")
    return None


def _plan(course: Course, records: Records, options: Options, bundles: Bundles,
          settings: JobSettings) -> tuple[list[Plan], CourseFacts]:
    """A plan for every folder that needs one; a folder that cannot even be planned gets a
    final record saying why."""
    submitted = course.folder("submitted")
    if not submitted.is_dir():
        raise SystemExit(f"no submissions: {submitted} does not exist")
    known = None if course.creates_students else gradebook.students(course)
    facts = CourseFacts.read(course, known)
    excluded = set(course.directory.student_id_exclude.split(",")) if course.directory.student_id_exclude else set()
    shutil.rmtree(bundles.scratch, ignore_errors=True)  # the last run's
    plans = []
    for folder in submission_folders(submitted, options.students, options.assignments):
        if folder.student in excluded:
            continue  # CourseDirectory.student_id_exclude: as if the folder were not there
        try:
            plan = plan_folder(facts, folder, records, options.force, bundles, settings)
        except Exception as failure:  # noqa: BLE001 (one folder never stops a class)
            plan = Plan(Record(folder.student, folder.assignment, Status.FAILED,
                               f"could not be prepared: {type(failure).__name__}: {failure}"[:300]))
        if plan is not None:
            plans.append(plan)
    return plans, facts


def _save_finals(course: Course, records: Records, plans: list[Plan]) -> None:
    """The final records of the folders that need no job."""
    for plan in plans:
        if plan.job is None:
            _save_final(course, records, plan.record)


def _save_final(course: Course, records: Records, record: Record) -> None:
    """A folder's final record, or, if even that cannot be saved, a record saying why."""
    try:
        collect.save(course, records, record)
    except Exception as failure:  # noqa: BLE001 (one folder never stops a class)
        why = f"its record could not be saved: {type(failure).__name__}: {failure}"[:300]
        records.save(Record(record.student, record.assignment, Status.FAILED, why))


def _run_and_collect(course: Course, records: Records, plans: list[Plan], options: Options, pool,
                     gate: _Gate, bundles: Bundles) -> list[str]:
    """Run the planned jobs beside the gate's, and collect each result as it comes; return
    who was graded. Until the gate is open, results are held and nothing is saved."""
    by_job = {id(plan.job): plan for plan in plans if plan.job}
    held: list[tuple[GradingJob, JobResult]] = []
    if gate.open:
        _save_finals(course, records, plans)
    failures = 0
    graded_now = []
    with tqdm(total=len(by_job), unit="notebook", disable=options.quiet or not by_job,
              desc="grading", dynamic_ncols=True) as bar:
        for job, result in pool.run([*gate.jobs, *(plan.job for plan in plans if plan.job)], bundles.content):
            if gate.take(job, result):
                if not gate.open:
                    continue
                _save_finals(course, records, plans)
                ready, held = held, []
            elif not gate.open:
                held.append((job, result))
                continue
            else:
                ready = [(job, result)]
            for job, result in ready:
                status = _collect(course, records, by_job[id(job)], result, gate.references.get(job.assignment, {}),
                                  bundles)
                graded_now.append(f"{result.student}/{result.assignment}")
                failures += status is not Status.GRADED
                bar.set_postfix(problems=failures)
                bar.update()
    return graded_now


def _collect(course: Course, records: Records, plan: Plan, result: JobResult, references: dict,
             bundles: Bundles) -> Status:
    """A job's result into the course; a result that cannot be saved is recorded as failed."""
    try:
        return collect.finish(course, records, plan.record, plan.job, result, references,
                              bundles.template(plan.job.bundle))
    except Exception as failure:  # noqa: BLE001 (one folder never stops a class)
        why = f"its result could not be saved: {type(failure).__name__}: {failure}"[:300]
        collect.save(course, records, Record(result.student, result.assignment, Status.FAILED, why))
        return Status.FAILED
