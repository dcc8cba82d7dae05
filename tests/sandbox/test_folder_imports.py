"""The grading kernel's imports from the notebook's folder (``sandbox.folder_imports``),
in an interpreter of their own: what the folder held when the snapshot was taken is
importable (modules, packages with relative imports), byte for byte; what is written
later never is; a standard library module's name is never the folder's; tracebacks and
``inspect`` show what runs."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PROBE = textwrap.dedent("""
    import inspect, os, sys
    from pathlib import Path
    from autograder.sandbox import folder_imports
    sys.path.insert(0, os.getcwd())
    folder_imports.install(Path.cwd())
    Path("helpers.py").write_text("SCALE = 100\\ndef f():\\n    return 'rewritten'\\n")
    Path("written.py").write_text("X = 1\\n")
    import helpers, pkg, csv
    print(helpers.SCALE, helpers.f(), pkg.sub.VALUE, csv.__file__.endswith("csv.py") and "lib" in csv.__file__)
    print(inspect.getsource(helpers.f).strip().splitlines()[-1].strip())
    try:
        import written
    except ModuleNotFoundError:
        print("not importable")
""")


def test_the_folder_is_imported_as_it_was_and_nothing_written_later(tmp_path):
    (tmp_path / "helpers.py").write_text("SCALE = 2\ndef f():\n    return 'original'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from . import sub\n")
    (tmp_path / "pkg" / "sub.py").write_text("VALUE = 'sub'\n")
    (tmp_path / "csv.py").write_text("raise SystemExit('the folder shadowed the standard library')\n")
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout.splitlines() == ["2 original sub True", "return 'original'", "not importable"], done.stderr
