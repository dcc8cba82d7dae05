"""The student edition (``make student``): it holds what students need and nothing of the
instructor's (no line of a solution, a hidden test or the answer suite, in any file or in
the zip, and the check that says so catches a planted line); it is the same bytes every
time; installed alone in a fresh environment, its visible tests pass a solved notebook and
fail an unsolved one; and its JupyterLab hides nbgrader's instructor tools."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import urllib.error
import zipfile
from pathlib import Path

import nbformat
import nbgrader
import pytest
import yaml
from jupyter_core.paths import jupyter_config_path, jupyter_path
from jupyter_server.extension.config import ExtensionConfigManager
from jupyterlab_server.config import get_page_config
from nbgrader import utils
from nbgrader.utils import compute_checksum
from traitlets.config import Config

from autograder import self_check
from autograder.edition import build as edition
from autograder.edition import environment as edition_environment
from autograder.edition.withheld import file_lines, informative, leaks, secret_lines
from autograder.message_language import text_language
from autograder.translation.catalogues import LANGUAGES
from tests.helpers import lab_server as lab_server
from tests.helpers.assignments import COURSE, LECTURES, RELEASE, REPO, graded_functions
from tests.fixtures.build_demo_class import RIGHT
from tests.helpers.submissions import answer_source

ANSWERS = REPO / "tests" / "answers"
ZIP_TOP = COURSE.directory.course_id  # the folder the zip holds, as `make student` names it
# The notebooks a fresh environment solves: the first assignment and one with a model.
FRESH_RUN = ("01-inplace-basics", "05-residuals")
NBGRADER_SERVER = {f"nbgrader.server_extensions.{name}"
                   for name in ("formgrader", "assignment_list", "course_list", "validate_assignment")}
NBGRADER_LAB = {f"@jupyter/nbgrader:{name}"
                for name in ("formgrader", "assignment-list", "course-list", "create-assignment", "menu",
                             "validate-assignment")}
INSTRUCTOR_ONLY_SERVER = {"nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"}
INSTRUCTOR_ONLY_LAB = {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
                       "@jupyter/nbgrader:create-assignment"}
# Without an exchange there are no assignments to list, and nbgrader's menu would hold nothing.
EXCHANGE_ONLY_SERVER = {"nbgrader.server_extensions.assignment_list"}
EXCHANGE_ONLY_LAB = {"@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:menu"}


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return edition.edition_files(COURSE)


@pytest.fixture(scope="module")
def written(files, tmp_path_factory) -> Path:
    """The edition as ``make student`` writes it, folder and zip, in a folder of its own."""
    into = tmp_path_factory.mktemp("dist")
    edition.write_folder(files, into / "student")
    edition.write_zip(files, into / "student.zip", ZIP_TOP)
    return into


@pytest.fixture(scope="module")
def secrets() -> frozenset[str]:
    """The course's secret lines, the answer suite's (right and wrong answers) among them."""
    answers = [line for path in sorted(ANSWERS.glob("*.py")) for line in path.read_text().splitlines()]
    return secret_lines(COURSE, edition.public_material(COURSE), also=answers)


def test_the_edition_holds_the_lectures_the_assignments_and_the_checks(files):
    lectures = {f"notebooks/{path.name}": path.read_bytes() for path in LECTURES.glob("*.ipynb")}
    released = {f"release/{path.relative_to(RELEASE).as_posix()}": path.read_bytes()
                for path in RELEASE.glob("*/*.ipynb")}
    assert {name: data for name, data in files.items() if name.startswith("notebooks/")} == lectures
    assert {name: data for name, data in files.items() if name.startswith("release/")} == released
    for module in ("checks.py", "memory.py"):  # what the visible tests and the lectures import
        assert files[f"autograder/{module}"] == (REPO / "autograder" / module).read_bytes()
    for name in ("README.md", "Makefile", "pyproject.toml", "environment.yml", "nbgrader_config.py", ".gitignore",
                 "LICENSE"):
        assert name in files


def test_the_edition_holds_nothing_of_the_instructor_or_the_grader(files):
    """No solution, answer or demo file, no grader module (``cases`` only hidden tests
    import; ``memory`` is the lectures' measuring tool, ``figures`` their drawings,
    ``message_language`` which language the checks speak;
    ``progress`` is 00-start-here's progress board, ``self_check`` what ``make check``
    runs), and of nbgrader's settings only how a notebook runs."""
    assert not [name for name in files if name.split("/")[0] in {"source", "tests", "examples", "grading", "dist"}]
    assert sorted(name for name in files if name.startswith("autograder/")) == [
        "autograder/__init__.py", "autograder/checks.py", "autograder/figures.py", "autograder/memory.py",
        "autograder/message_language.py", "autograder/progress.py", "autograder/self_check.py"]
    instructor_files = [path for folder in ("source", "tests/answers") for path in (REPO / folder).rglob("*")
                        if path.is_file()]
    contents = set(files.values())
    assert not [path for path in instructor_files if path.read_bytes() in contents]
    settings = Config()
    exec(files["nbgrader_config.py"].decode(), {"get_config": lambda: settings})
    assert set(settings) == {"Execute"}
    assert settings.Execute.extra_arguments == COURSE.config.Execute.extra_arguments


def test_no_file_of_the_edition_or_its_zip_shows_a_solution_hidden_test_or_answer(files, written, secrets):
    solution_lines = {line.strip() for function in graded_functions() for line in
                      function.solution_code.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0].splitlines()}
    # Every solution line the edition does not show anyway is secret (a lecture may teach a
    # line an answer uses, a visible test may hold one; those are no secret).
    shown = {line for name, data in files.items() for line in file_lines(name, data)}
    unshown = {line for line in solution_lines - shown if informative(line)}
    assert unshown and unshown <= secrets, "the secret lines must hold the solutions"
    assert leaks(files, secrets) == {}
    on_disk = {path.relative_to(written / "student").as_posix(): path.read_bytes()
               for path in (written / "student").rglob("*") if path.is_file()}
    assert leaks(on_disk, secrets) == {}
    with zipfile.ZipFile(written / "student.zip") as archive:
        assert leaks({name: archive.read(name) for name in archive.namelist()}, secrets) == {}


@pytest.mark.parametrize("where", ["a notebook's code cell", "a notebook's output", "the README", "the checks"])
def test_the_leak_check_finds_a_solution_line_planted_anywhere(files, secrets, where):
    """The check above can fail: one line of an instructor's solution, planted in a copy of
    the edition, is found and named; and the build refuses such an edition."""
    planted = _a_solution_line()
    assert planted in secrets
    copy = dict(files)
    notebook_name = "release/01-inplace-basics/01-inplace-basics.ipynb"
    if where == "the README":
        copy["README.md"] += f"\n    {planted}\n".encode()
    elif where == "the checks":
        copy["autograder/checks.py"] += f"\n    {planted}\n".encode()
    else:
        notebook = nbformat.reads(copy[notebook_name].decode(), as_version=4)
        cell = next(cell for cell in notebook.cells if cell.cell_type == "code")
        if where == "a notebook's output":
            cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=f"{planted}\n"))
        else:
            cell.source += f"\n    {planted}"
        copy[notebook_name] = nbformat.writes(notebook).encode()
    found = leaks(copy, secrets)
    assert list(found) == [{"the README": "README.md", "the checks": "autograder/checks.py"}.get(where, notebook_name)]
    assert planted in next(iter(found.values()))


def test_the_build_refuses_an_edition_that_would_show_a_solution(monkeypatch):
    planted = _a_solution_line()
    templates = edition.template_files(COURSE)
    monkeypatch.setattr(edition, "template_files", lambda course: {**templates, "NOTES.md": planted.encode()})
    with pytest.raises(ValueError, match="NOTES.md"):
        edition.edition_files(COURSE)


def test_the_zip_is_the_folder_and_the_same_bytes_every_time(files, written, tmp_path):
    edition.write_zip(files, tmp_path / "again.zip", ZIP_TOP)
    assert (tmp_path / "again.zip").read_bytes() == (written / "student.zip").read_bytes()
    with zipfile.ZipFile(written / "student.zip") as archive:
        assert archive.namelist() == [f"{ZIP_TOP}/{name}" for name in sorted(files)]
        assert {name.removeprefix(f"{ZIP_TOP}/"): archive.read(name) for name in archive.namelist()} == files
        assert {entry.date_time for entry in archive.infolist()} == {edition.ZIP_TIME}


def test_the_edition_pins_what_the_course_pins(files):
    course_pins = set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"])
    project = tomllib.loads(files["pyproject.toml"].decode())
    pins = project["project"]["dependencies"]
    assert {pin.split("==")[0] for pin in pins} == set(edition_environment.STUDENT_PACKAGES)
    assert set(pins) <= course_pins
    conda = yaml.safe_load(io.BytesIO(files["environment.yml"]))
    pip_section = next(item["pip"] for item in conda["dependencies"] if isinstance(item, dict))
    assert {line for line in pip_section if not line.startswith("-")} == set(pins)
    assert "python=3.11" in conda["dependencies"]
    assert project["tool"]["setuptools"]["packages"] == ["autograder"]


@pytest.mark.parametrize("exchange", [False, True], ids=["no exchange", "exchange"])
def test_the_student_lab_hides_the_instructor_tools_and_keeps_validate(written, monkeypatch, exchange):
    """The settings ``make lab`` gives JupyterLab, read the way the server and the lab page
    read them: the formgrader, course list and assignment creation are off, the Validate
    button is on, and the assignment list only with an exchange."""
    make = subprocess.run(["make", "-n", "lab", *(["EXCHANGE=1"] if exchange else [])], cwd=written / "student",
                          check=True, capture_output=True, text=True).stdout
    command = shlex.split(next(line for line in make.splitlines() if "-m jupyterlab" in line))
    settings = dict(word.split("=", 1) for word in command if word.startswith("JUPYTER_CONFIG_PATH="))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", settings["JUPYTER_CONFIG_PATH"])
    enabled, disabled = _nbgrader_extensions()
    off_server = INSTRUCTOR_ONLY_SERVER | (set() if exchange else EXCHANGE_ONLY_SERVER)
    off_lab = INSTRUCTOR_ONLY_LAB | (set() if exchange else EXCHANGE_ONLY_LAB)
    assert enabled == NBGRADER_SERVER - off_server
    assert disabled == off_lab
    assert "nbgrader.server_extensions.validate_assignment" in enabled
    assert "@jupyter/nbgrader:validate-assignment" not in disabled


def test_without_the_edition_settings_every_nbgrader_tool_is_on(monkeypatch):
    """What the test above would see if ``make lab`` lost its settings: it can fail."""
    monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
    enabled, disabled = _nbgrader_extensions()
    assert "nbgrader.server_extensions.formgrader" in enabled
    assert "@jupyter/nbgrader:formgrader" not in disabled


@pytest.fixture(scope="module")
def fresh(written, tmp_path_factory) -> tuple[Path, Path]:
    """A copy of the edition with a new environment in its ``.venv/``, as ``make lab`` would
    make it, holding the edition's package installed by pip from the copy and nothing of
    this repository: (its python, the edition). Its third-party packages are this
    environment's, through a ``.pth`` file, not downloaded again; its install stamp is
    made, so that make installs nothing."""
    student = tmp_path_factory.mktemp("fresh") / "edition"
    shutil.copytree(written / "student", student)
    venv = student / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "course-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "."],
                   check=True, capture_output=True, cwd=student, env=_without_repo())
    (venv / ".installed").touch()
    return python, student


@pytest.mark.slow
def test_the_fresh_environment_imports_the_editions_checks_and_no_grader(fresh, tmp_path):
    python, _ = fresh
    probe = "import autograder.checks; print(autograder.checks.__file__); import autograder.grading"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                          env=_without_repo())
    installed = Path(done.stdout.splitlines()[0])
    assert installed.is_relative_to(python.parent.parent) and not installed.is_relative_to(REPO)
    assert "No module named 'autograder.grading'" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("assignment", FRESH_RUN)
def test_the_fresh_environment_passes_a_solved_notebooks_visible_tests(fresh, tmp_path, assignment):
    """Right answers typed into the edition's notebook: every cell runs, each visible test
    cell with no error, in a kernel of the fresh environment that imports its checks."""
    python, student = fresh
    notebook = _solved(student / "release" / assignment / f"{assignment}.ipynb")
    executed = _execute_in(python, notebook, tmp_path)
    kernel_python, checks_file = executed.cells[-1].outputs[0].text.split()
    assert Path(kernel_python) == python and Path(checks_file).is_relative_to(python.parent.parent)
    assert {_test_name(cell): _errors(cell) for cell in executed.cells if utils.is_grade(cell)} == {
        f"test_{function.name}": [] for function in graded_functions() if function.assignment == assignment}
    assert not [cell.source for cell in executed.cells if _errors(cell)]


@pytest.mark.slow
def test_the_fresh_environment_fails_an_unsolved_notebooks_visible_tests(fresh, tmp_path):
    python, student = fresh
    assignment = FRESH_RUN[-1]
    executed = _execute_in(python, nbformat.read(student / "release" / assignment / f"{assignment}.ipynb", 4),
                           tmp_path)
    failures = {_test_name(cell): _errors(cell) for cell in executed.cells if utils.is_grade(cell)}
    assert failures and all(errors == ["NotImplementedError"] for errors in failures.values())


@pytest.mark.slow
def test_make_check_in_the_fresh_environment_validates_a_solved_notebook(fresh):
    """The student's own self-check, ``make check`` (nbgrader's validation): status 0 and
    a pass for a solved notebook; status 1, a summary and no kernel's warning when one
    notebook is not solved."""
    _, student = fresh
    release = student / "release" / FRESH_RUN[0]
    solved = release / "solved.ipynb"
    nbformat.write(_solved(release / f"{FRESH_RUN[0]}.ipynb", probe=False), solved)
    def make_check(*notebooks: Path) -> subprocess.CompletedProcess:
        named = " ".join(str(notebook.relative_to(student)) for notebook in notebooks)
        return subprocess.run(["make", "--no-print-directory", "check", f"NOTEBOOKS={named}"], cwd=student,
                              capture_output=True, text=True, env=_without_repo())
    done = make_check(solved)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-2:] == [f"{solved.relative_to(student)}: every visible test passes (3)",
                                             "1 of 1 notebook(s) pass every visible test"], done.stdout[-2000:]
    done = make_check(solved, release / f"{FRESH_RUN[0]}.ipynb")
    # make's own status for a command that failed (the check exits 1)
    assert done.returncode == 2 and "without encryption" not in done.stdout + done.stderr, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "1 of 2 notebook(s) pass every visible test; 1 do not"


@pytest.mark.slow
def test_make_lab_in_the_fresh_environment_serves_validate_and_no_instructor_tool(fresh, monkeypatch):
    """The student's ``make lab``, started for real: nbgrader's Validate answers, its
    formgrader, course list and assignment list are not there, and the lab page disables
    their plugins."""
    _, student = fresh
    monkeypatch.setattr(lab_server, "REPO", student)  # running_lab runs `make lab` in this folder
    with lab_server.running_lab() as url:
        assert lab_server.get(f"{url}/nbgrader_version?version={nbgrader.__version__}")[0] == 200
        for page in ("formgrader", "courses", "assignments"):
            with pytest.raises(urllib.error.HTTPError, match="404"):
                lab_server.get(f"{url}/{page}")
        lab_page = lab_server.get(f"{url}/lab")[1].decode()
    page_config = json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                       lab_page, re.DOTALL)[1])
    assert set(page_config["disabledExtensions"]) & NBGRADER_LAB == INSTRUCTOR_ONLY_LAB | EXCHANGE_ONLY_LAB


@pytest.mark.slow
def test_make_student_writes_the_edition_from_the_course(tmp_path, files):
    """The command itself (``make student`` runs it): it checks that release/ is fresh,
    then writes the same files as above, and the same zip."""
    subprocess.run([sys.executable, "-m", "autograder.edition", "--course", str(REPO), "--into", str(tmp_path)],
                   check=True, capture_output=True, cwd=tmp_path)
    written = {path.relative_to(tmp_path / "student").as_posix(): path.read_bytes()
               for path in (tmp_path / "student").rglob("*") if path.is_file()}
    assert written == files
    edition.write_zip(files, tmp_path / "expected.zip", ZIP_TOP)
    assert (tmp_path / "student.zip").read_bytes() == (tmp_path / "expected.zip").read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_make_check_validates_a_solved_notebook_of_each_translated_edition(fresh, language):
    """A solved notebook of the edition in ``language``, checked in the fresh environment
    (the student's self check): every visible test passes."""
    _, student = fresh
    solved = _solved_translation(student, language)
    assert text_language("".join(cell.source for cell in solved.cells if cell.cell_type == "markdown")) == language
    nbformat.write(solved, student / "release" / FRESH_RUN[0] / f"solved-{language}.ipynb")
    done = _make_check(student, f"solved-{language}.ipynb")
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "1 of 1 notebook(s) pass every visible test", (
        done.stdout[-2000:] + done.stderr[-2000:])


@pytest.mark.slow
def test_make_check_refuses_a_translation_with_the_english_checksums(fresh):
    """With the English checksums left on its translated instructions, the solved Korean
    notebook is refused: nbgrader's validation says read-only cells changed (which is why
    the build gives them the translation's)."""
    _, student = fresh
    stale = _solved_translation(student, "ko")
    english = nbformat.read(student / "release" / FRESH_RUN[0] / f"{FRESH_RUN[0]}.ipynb", as_version=4)
    for cell, original in zip(stale.cells, english.cells):
        if cell.cell_type == "markdown" and "checksum" in cell.metadata.get("nbgrader", {}):
            assert cell.metadata.nbgrader.checksum == compute_checksum(cell) != original.metadata.nbgrader.checksum
            cell.metadata.nbgrader.checksum = original.metadata.nbgrader.checksum
    nbformat.write(stale, student / "release" / FRESH_RUN[0] / "stale-ko.ipynb")
    done = _make_check(student, "stale-ko.ipynb")
    assert done.returncode == 2 and "were edited" in done.stdout, done.stdout[-2000:]


def _solved_translation(student: Path, language: str) -> nbformat.NotebookNode:
    """The first fresh-run assignment as the edition in ``language`` holds it, solved."""
    assignment = FRESH_RUN[0]
    folder = student / "release" / assignment
    notebook = edition.edition_files(COURSE, language)[f"release/{assignment}/{assignment}.ipynb"]
    (folder / f"{language}.ipynb").write_bytes(notebook)
    return _solved(folder / f"{language}.ipynb", probe=False)


def _make_check(student: Path, name: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", "check", f"NOTEBOOKS=release/{FRESH_RUN[0]}/{name}"],
                          cwd=student, capture_output=True, text=True, env=_without_repo())


@pytest.mark.slow
def test_make_lab_of_the_korean_edition_serves_jupyterlab_in_korean(fresh, monkeypatch):
    """The Korean edition's JupyterLab setting, in the fresh environment's edition: `make
    lab` serves the locale ko_KR as the interface language (fails if `make lab` does not
    point JupyterLab at the setting), and the installed language pack's Korean strings."""
    _, student = fresh
    monkeypatch.setattr(lab_server, "REPO", student)
    setting = edition.LAB_LANGUAGE_SETTING
    (student / setting).parent.mkdir(parents=True, exist_ok=True)
    (student / setting).write_bytes(edition.edition_files(COURSE, "ko")[setting])
    try:
        with lab_server.running_lab() as url:
            chosen = json.loads(lab_server.get(f"{url}/lab/api/settings/@jupyterlab/translation-extension:plugin")[1])
            strings = json.loads(lab_server.get(f"{url}/lab/api/translations/ko_KR")[1])
    finally:
        shutil.rmtree(student / "jupyter" / "settings")
    assert chosen["settings"]["locale"] == "ko_KR"
    assert "커널" in json.dumps(strings["data"]["jupyterlab"], ensure_ascii=False)

def _a_solution_line() -> str:
    """A line of the first graded function's solution, as the instructor wrote it."""
    function = graded_functions()[0]
    body = function.solution_code.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
    return next(line.strip() for line in body.splitlines() if line.strip())


def _solved(path: Path, probe: bool = True) -> nbformat.NotebookNode:
    """The notebook with a right answer from the answer suite in every solution cell, and
    (``probe``) a last cell printing the kernel's Python and where its checks come from."""
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if utils.is_solution(cell):
            name = cell.metadata.nbgrader.grade_id
            cell.source = answer_source(name, RIGHT[name])
    if probe:
        notebook.cells.append(nbformat.v4.new_code_cell(
            "import sys\nfrom autograder import checks\nprint(sys.executable, checks.__file__)"))
    return notebook


def _execute_in(python: Path, notebook: nbformat.NotebookNode, folder: Path) -> nbformat.NotebookNode:
    """The notebook run by nbclient in ``python``'s environment (its kernel is that Python),
    from a folder outside the repository; errors are kept in the outputs."""
    source, target = folder / "in.ipynb", folder / "out.ipynb"
    nbformat.write(notebook, source)
    script = ("import sys, nbformat; from nbclient import NotebookClient; "
              "nb = nbformat.read(sys.argv[1], 4); "
              "NotebookClient(nb, timeout=60, allow_errors=True, kernel_name='python3', "
              "resources={'metadata': {'path': sys.argv[3]}}).execute(); nbformat.write(nb, sys.argv[2])")
    subprocess.run([str(python), "-c", script, str(source), str(target), str(folder)], check=True,
                   capture_output=True, cwd=folder, env=_without_repo(), timeout=240)
    return nbformat.read(target, as_version=4)


def _errors(cell) -> list[str]:
    return [output.ename for output in cell.get("outputs", []) if output.output_type == "error"]


def _test_name(cell) -> str:
    return cell.metadata.nbgrader.grade_id


def _nbgrader_extensions() -> tuple[set[str], set[str]]:
    """nbgrader's enabled server extensions and disabled lab plugins, as the server
    (``ServerApp``) and the lab page (``get_page_config``) read them now."""
    server = ExtensionConfigManager(read_config_path=jupyter_config_path()).get_jpserver_extensions()
    page = get_page_config(jupyter_path("labextensions"))
    disabled = page.get("disabledExtensions", {})
    disabled = set(disabled) if isinstance(disabled, list) else {name for name, off in disabled.items() if off}
    return {name for name in NBGRADER_SERVER if server.get(name)}, disabled & NBGRADER_LAB


def _without_repo() -> dict[str, str]:
    """This process's environment without anything that would put the repository on
    ``sys.path``."""
    return {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "VIRTUAL_ENV"}}


def test_the_self_check_says_each_notebooks_failing_tests_in_a_line_and_sums_up():
    """``make check``'s report, from nbgrader's validation results: a line per notebook, a
    line per failing test (its name and its error's last line), a summary."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        source, metadata={"nbgrader": {"grade": True, "grade_id": name, "points": 1}})
        for name, source in (("test_a", "assert f(1) == 2"), ("test_b", "assert g()"))])
    error = "Traceback\n\x1b[31mAssertionError\x1b[0m: f(1) is 3\n"
    failed = {"failed": [{"source": "assert f(1) == 2", "raw_error": error}]}
    results = [self_check.checked("a.ipynb", failed, notebook), self_check.checked("b.ipynb", {}, notebook),
               self_check.checked("c.ipynb", {"changed": [{"source": "x"}]}, notebook)]
    assert self_check.report(results).splitlines() == [
        "a.ipynb: 1 of 2 tests fail", "    test_a: AssertionError: f(1) is 3",
        "b.ipynb: every visible test passes (2)",
        "c.ipynb: 1 test cell(s) were edited: restore them from the release",
        "1 of 3 notebook(s) pass every visible test; 2 do not"]
    assert [result.passes for result in results] == [False, True, False]
