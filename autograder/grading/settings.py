"""Every setting of a grading run, in one place: nbgrader's configuration.

A course sets them in its ``nbgrader_config.py`` (``c.GradingSettings.memory_limit = ...``);
``python -m autograder grade`` flags override the file for one run, and only the flags
given. The per-cell time limit is nbgrader's own ``Execute.timeout``. The limits' defaults
live in ``sandbox.limits.Limits``; every job reads the same resolved settings (the scratch
course of a job carries the course's file and the run's overrides), and the report prints
the settings in force.
"""

from __future__ import annotations

import os

from traitlets import Bool, Float, Integer
from traitlets.config import Configurable

from autograder.outputs import PER_NOTEBOOK, PER_OUTPUT
from autograder.sandbox.limits import Limits

# The traits that make up a kernel's ``Limits``, and the field each one fills.
LIMIT_FIELDS = {"memory_limit": "memory_bytes", "disk_limit": "disk_bytes", "file_count_limit": "files",
                "cpu_limit": "cpu_seconds", "process_limit": "processes", "file_size_limit": "file_bytes"}


class GradingSettings(Configurable):
    workers = Integer(0, help="Notebooks graded at once; 0 for one per core.").tag(config=True)
    notebook_timeout = Float(600.0, help="Seconds one notebook may run in all (per cell: Execute.timeout).").tag(
        config=True)
    sandbox = Bool(True, help="Run kernels in bubblewrap; off only when asked for (--no-sandbox).").tag(config=True)
    memory_limit = Integer(Limits.memory_bytes, help="Bytes of memory per kernel, its /tmp included.").tag(
        config=True)
    disk_limit = Integer(Limits.disk_bytes, help="Bytes the kernel may write (its /tmp).").tag(config=True)
    file_count_limit = Integer(Limits.files, help="Files and folders the kernel may create.").tag(config=True)
    cpu_limit = Integer(Limits.cpu_seconds, help="CPU seconds per kernel.").tag(config=True)
    process_limit = Integer(Limits.processes, help="Processes and threads per sandbox.").tag(config=True)
    file_size_limit = Integer(Limits.file_bytes, help="Bytes per file the kernel writes.").tag(config=True)
    output_limit = Integer(PER_OUTPUT, help="Bytes one output may hold before it is cut.").tag(config=True)
    notebook_output_limit = Integer(PER_NOTEBOOK, help="Bytes all outputs of a notebook may hold.").tag(config=True)

    def worker_count(self) -> int:
        return self.workers or os.cpu_count() or 1

    def limits(self) -> Limits:
        return Limits(**{field: getattr(self, trait) for trait, field in LIMIT_FIELDS.items()})

    def in_force(self) -> dict[str, object]:
        """Each setting's name and value, for the report, the per-cell limit included."""
        cell = self.config.Execute.get("timeout", "nbgrader's default")
        return {**{name: getattr(self, name) for name in self.trait_names(config=True)}, "Execute.timeout": cell}
