"""The student edition (``make student``): what students get instead of this repository.

The repository holds the solutions and hidden tests (``source/``), the answer suite, a demo
class and the grader. Students need the lectures (``notebooks/``, with their outputs), the
student versions of the assignments (``release/``, as committed: the command stops while
they are stale), the checks their visible tests import and only those (a package
``autograder`` of its own), an environment at the course's pins, and JupyterLab without
nbgrader's instructor tools: the hand-written part of that (README, Makefile, lab settings)
is the course's ``student-edition/`` folder.

The edition goes to ``dist/student/`` and ``dist/student.zip``. No file of it may hold a
secret line (``withheld``), and the same course always gives the same bytes (files
in sorted order, no time in the zip), so that a git repository made from it changes only
where the course did.

An edition in another language (``--edition ko``, ``zh``, ``ja``; ``make student
EDITION=ko``) goes to ``dist/student-ko/``: the same files, its lectures, assignments and
README translated from the course's catalogues (``autograder.translation``: the Markdown
only, so its notebooks grade as the English ones), and JupyterLab's language pack
installed and selected.

    python -m autograder.edition [--course DIR] [--into DIR] [--edition LANGUAGE]
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import nbformat
from IPython.core.inputtransformer2 import TransformerManager

from autograder.course import Course
from autograder.edition import environment
from autograder.edition.withheld import leaks, secret_lines
from autograder.message_language import DOMAIN
from autograder.release import generate
from autograder.translation.build import Untranslated, translate_file
from autograder.translation.catalogues import CHECKS, LANGUAGES, catalogue_path, compiled, read, unfinished

TEMPLATES = "student-edition"  # the edition's hand-written files, in the course folder
LECTURES = "notebooks"
PACKAGE = __name__.partition(".")[0]  # "autograder"
# The package's modules the edition's Makefile runs (``make check``).
EDITION_TOOLS = (f"{PACKAGE}.self_check",)
PACKAGE_FOLDER = Path(__file__).resolve().parents[1]
# The earliest time a zip can record: the build's own time would change the bytes.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
ENGLISH = "en"  # the course's own language, whose edition is dist/student/
# Where an edition in another language tells JupyterLab which language pack to show (the
# folder ``make lab`` gives JupyterLab as its user settings, JUPYTERLAB_SETTINGS_DIR).
LAB_LANGUAGE_SETTING = "jupyter/settings/@jupyterlab/translation-extension/plugin.jupyterlab-settings"


def edition_files(course: Course, language: str = ENGLISH) -> dict[str, bytes]:
    """Every file of the edition, by its path in it, in sorted order. Refuses (ValueError)
    an edition with a file that holds a secret line, or one whose translation is not
    finished (a paragraph without a translation, or a fuzzy one)."""
    public = public_material(course)
    try:
        parts = [public, assignment_files(course), template_files(course), generated_files(course, language)]
        if language != ENGLISH:
            parts = [_translated(course, language, part) for part in parts]
    except Untranslated as unfinished:
        raise ValueError(str(unfinished)) from None
    files: dict[str, bytes] = {}
    for part in parts:
        clash = files.keys() & part.keys()
        if clash:
            raise ValueError(f"two sources for {sorted(clash)} in the student edition")
        files.update(part)
    found = leaks(files, secret_lines(course, public))
    if found:
        listed = "; ".join(f"{name}: {lines[:3]}" for name, lines in found.items())
        raise ValueError(f"the student edition would show solutions or hidden tests: {listed}")
    return dict(sorted(files.items()))


def public_material(course: Course) -> dict[str, bytes]:
    """The student material the edition ships as it is: whatever its lines are, students see
    them (the lectures and the helpers: apart, in folders of their own)."""
    return lecture_files(course) | helper_files(course)


def lecture_files(course: Course) -> dict[str, bytes]:
    """The lecture notebooks, outputs and all."""
    return {f"{LECTURES}/{path.name}": path.read_bytes() for path in sorted((course.root / LECTURES).glob("*.ipynb"))}


def assignment_files(course: Course) -> dict[str, bytes]:
    """Each assignment's student version, as committed in the course's release folder."""
    release = course.folder("release")
    prefix = release.relative_to(course.root).as_posix()
    return {f"{prefix}/{name}": data for assignment in course.assignments()
            for name, data in _folder_files(release / assignment, assignment).items()}


def helper_files(course: Course) -> dict[str, bytes]:
    """The modules of this package that the lectures and the assignments' visible tests import,
    and those they import in turn (the package's own ``__init__`` is the edition's, a template)."""
    wanted = {name for notebook in _student_notebooks(course) for name in _imports(_notebook_code(notebook))}
    wanted |= set(EDITION_TOOLS)
    found: dict[str, Path] = {}
    while wanted - found.keys():
        name = min(wanted - found.keys())
        found[name] = _module_file(name)
        wanted |= _imports(found[name].read_text())
    return {path.relative_to(PACKAGE_FOLDER.parent).as_posix(): path.read_bytes()
            for path in sorted(found.values())}


def template_files(course: Course) -> dict[str, bytes]:
    """The edition's hand-written files: README, Makefile, lab settings."""
    return _folder_files(course.root / TEMPLATES)


def generated_files(course: Course, language: str = ENGLISH) -> dict[str, bytes]:
    """The files written from the course's own: the environment at its pins, the nbgrader
    settings the Validate button needs, and the license; in another language, JupyterLab's
    setting that selects its language pack (``make lab`` points JupyterLab at it), and the
    checks' messages in that language."""
    locale = LANGUAGES[language][1] if language != ENGLISH else None
    files = {
        "pyproject.toml": environment.pyproject(course.root, locale),
        "environment.yml": environment.environment_yml(course.root, locale),
        "nbgrader_config.py": environment.nbgrader_config(course),
    }
    if locale:
        files[LAB_LANGUAGE_SETTING] = json.dumps({"locale": locale}, indent=2) + "\n"
        # the checks speak the edition's language (``message_language``)
        files[f"{PACKAGE}/locale/EDITION"] = language + "\n"
    encoded = {name: text.encode() for name, text in files.items()}
    if locale:
        encoded[f"{PACKAGE}/locale/{language}/LC_MESSAGES/{DOMAIN}.mo"] = _checks_messages(course, language)
    if (course.root / "LICENSE").is_file():
        encoded["LICENSE"] = (course.root / "LICENSE").read_bytes()
    return encoded


def _checks_messages(course: Course, language: str) -> bytes:
    """The checks' messages in ``language``, compiled from the course's catalogue as it is
    now; refused (``Untranslated``) while one is missing or fuzzy."""
    path = catalogue_path(course.root, language, CHECKS)
    catalog = read(path)
    if missing := unfinished(catalog):
        raise Untranslated(path, missing)
    return compiled(catalog)


def _translated(course: Course, language: str, files: dict[str, bytes]) -> dict[str, bytes]:
    """``files`` with each lecture, released notebook and the README in ``language``."""
    translated = dict(files)
    release = course.folder("release").relative_to(course.root).as_posix()
    source = course.folder("source").relative_to(course.root)
    for name in files:
        folder, _, rest = name.partition("/")
        if name.endswith(".ipynb") and folder in (LECTURES, release):
            # a released notebook takes its source notebook's catalogue
            document = Path(name) if folder == LECTURES else source / rest
            notebook = translate_file(course.root / name, language, course.root, document)
            translated[name] = nbformat.writes(notebook).encode()
        elif name == "README.md" and folder == name:
            text = translate_file(course.root / TEMPLATES / name, language, course.root)
            translated[name] = text.encode()
    return translated


def stale_release(course: Course) -> list[str]:
    """The files of the course's release folder that differ from what nbgrader generates
    from ``source/`` today (missing, changed or extra): the edition must not ship them."""
    release = course.folder("release")
    committed = {name: data for assignment in course.assignments()
                 for name, data in _folder_files(release / assignment, assignment).items()}
    with tempfile.TemporaryDirectory(prefix="edition-release-") as scratch:
        generate(course.root, Path(scratch))
        fresh = {name: data for assignment in course.assignments()
                 for name, data in _folder_files(Path(scratch) / assignment, assignment).items()}
    return sorted(name for name in committed.keys() | fresh.keys() if committed.get(name) != fresh.get(name))


def write_folder(files: Mapping[str, bytes], into: Path) -> None:
    """The edition as a folder, replacing whatever ``into`` held."""
    if into.exists():
        shutil.rmtree(into)
    for name, data in files.items():
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        (into / name).write_bytes(data)


def write_zip(files: Mapping[str, bytes], path: Path, top: str) -> None:
    """The edition as a zip of one folder ``top``, the same bytes for the same files."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name in sorted(files):
            entry = zipfile.ZipInfo(f"{top}/{name}", date_time=ZIP_TIME)
            entry.create_system = 3  # Unix, wherever it is built: the permissions below mean the same
            entry.external_attr = 0o100644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, files[name], compresslevel=9)


def _folder_files(folder: Path, prefix: str = "") -> dict[str, bytes]:
    """A folder's files by their path in it (under ``prefix``), leaving out hidden ones (but
    a ``.gitignore``) and what Python and Jupyter leave behind (``__pycache__``,
    ``.ipynb_checkpoints``)."""
    files = {}
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        left_out = any(part == "__pycache__" or (part.startswith(".") and part != ".gitignore") for part in parts)
        if path.is_file() and not left_out:
            files["/".join(filter(None, [prefix, *parts]))] = path.read_bytes()
    return files


def _student_notebooks(course: Course) -> Iterator[nbformat.NotebookNode]:
    """The lectures and the student version of every assignment notebook."""
    for path in sorted((course.root / LECTURES).glob("*.ipynb")):
        yield nbformat.read(path, as_version=4)
    for assignment in course.assignments():
        for name in course.notebook_names(assignment):
            yield course.read("release", assignment, name=name)


def _notebook_code(notebook: nbformat.NotebookNode) -> str:
    """A notebook's code cells as plain Python (IPython's magics turned into calls)."""
    transform = TransformerManager().transform_cell
    return "\n".join(transform(cell.source) for cell in notebook.cells if cell.cell_type == "code")


def _imports(code: str) -> set[str]:
    """The modules of this package (not the package itself) that ``code`` imports."""
    named = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module if node.level == 0 else ".".join(filter(None, [PACKAGE, node.module]))
            named |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return {name for name in named if name.startswith(f"{PACKAGE}.") and _is_module(name)}


def _is_module(name: str) -> bool:
    parts = name.split(".")[1:]
    folder = PACKAGE_FOLDER.joinpath(*parts)
    return folder.with_suffix(".py").is_file() or (folder / "__init__.py").is_file()


def _module_file(name: str) -> Path:
    folder = PACKAGE_FOLDER.joinpath(*name.split(".")[1:])
    return folder.with_suffix(".py") if folder.with_suffix(".py").is_file() else folder / "__init__.py"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--course", type=Path, default=Path.cwd(), help="course root")
    parser.add_argument("--into", type=Path, help="where to write student/ and student.zip (default: COURSE/dist)")
    parser.add_argument("--edition", default=ENGLISH, choices=[ENGLISH, *sorted(LANGUAGES)],
                        help="the edition's language (default: en; another goes to student-LANGUAGE/)")
    args = parser.parse_args(argv)
    course = Course(args.course)
    stale = stale_release(course)
    if stale:
        raise SystemExit(f"release/ is not what nbgrader makes of source/ ({', '.join(stale)}): "
                         "run `make release`, commit, then `make student`")
    try:
        files = edition_files(course, args.edition)
    except ValueError as refused:
        raise SystemExit(str(refused)) from None
    into = (args.into or course.root / "dist").resolve()
    suffix = "" if args.edition == ENGLISH else f"-{args.edition}"
    write_folder(files, into / f"student{suffix}")
    write_zip(files, into / f"student{suffix}.zip", f"{course.directory.course_id or 'student'}{suffix}")
    print(f"wrote {into / f'student{suffix}'} ({len(files)} files) and {into / f'student{suffix}.zip'}")

