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

from traitlets import Bool, Float, Integer, Unicode
from nbgrader.preprocessors import Execute
from traitlets.config import Configurable

from autograder.sandbox.outputs import PER_NOTEBOOK
from autograder.sandbox.limits import Limits

# The traits that make up a kernel's ``Limits``, and the field each one fills.
LIMIT_FIELDS = {"memory_limit": "memory_bytes", "disk_limit": "disk_bytes", "file_count_limit": "files",
                "cpu_limit": "cpu_seconds", "cpu_cores": "cpu_cores", "process_limit": "processes",
                "file_size_limit": "file_bytes", "output_limit": "output_bytes"}

# The line of the settings in force that says what bounds each kernel as a whole
# (``sandbox.cgroups.Support.describe``): the run finds it out, no course sets it.
KERNEL_BOUNDS = "kernel bounds"
# How a ``scheduler`` address asks for a Dask cluster on this machine (``dask-local:N``).
LOCAL_CLUSTER = "dask-local:"


class GradingSettings(Configurable):
    """Sizes are in bytes here (``8 * 2**30``); the command's flags take GiB or MiB."""

    workers = Integer(0, min=0, help="Notebooks graded at once; 0 for one per core.").tag(config=True)
    notebook_timeout = Float(600.0, min=1.0, help="Seconds one notebook may run in all (per cell: "
                                                  "Execute.timeout).").tag(config=True)
    sandbox = Bool(True, help="Run kernels in bubblewrap. Off (here or by --no-sandbox), student code runs with "
                              "the grader's permissions; every run then says so.").tag(config=True)
    memory_limit = Integer(Limits.memory_bytes, min=1, help="Bytes of memory per kernel, its /tmp included.").tag(
        config=True)
    disk_limit = Integer(Limits.disk_bytes, min=1, help="Bytes the kernel may write (its /tmp).").tag(config=True)
    file_count_limit = Integer(Limits.files, min=1, help="Files and folders the kernel may create.").tag(config=True)
    cpu_limit = Integer(Limits.cpu_seconds, min=1, help="CPU seconds per kernel.").tag(config=True)
    cpu_cores = Float(Limits.cpu_cores, min=0.01, help="Cores a kernel and its processes may use at once (its "
                                                       "control group's CPU quota).").tag(config=True)
    process_limit = Integer(Limits.processes, min=1, help="Processes and threads per sandbox.").tag(config=True)
    file_size_limit = Integer(Limits.file_bytes, min=1, help="Bytes per file the kernel writes.").tag(config=True)
    output_limit = Integer(Limits.output_bytes, min=1, help="Bytes one output may hold before it is cut (in the "
                                                            "kernel and again in the grader).").tag(config=True)
    notebook_output_limit = Integer(PER_NOTEBOOK, min=1, help="Bytes all outputs of a notebook may hold.").tag(
        config=True)

    scheduler = Unicode("local", help="Where jobs are graded: local (worker processes here), dask-local:N (a "
                                      "Dask LocalCluster of N workers here), or a Dask scheduler's tcp:// or "
                                      "tls:// address.").tag(config=True)
    insecure = Bool(False, help="Let jobs (which carry the hidden tests) travel unencrypted to a tcp:// scheduler "
                               "off this machine.").tag(config=True)
    tls_ca_file = Unicode("", help="For a tls:// scheduler: the certificate authority's certificate (PEM).").tag(
        config=True)
    tls_cert_file = Unicode("", help="For a tls:// scheduler: this client's certificate (PEM).").tag(config=True)
    tls_key_file = Unicode("", help="For a tls:// scheduler: this client's private key (PEM).").tag(config=True)

    def worker_count(self) -> int:
        # One per core: measured with make bench on 2 cores, a third worker no longer
        # grades faster once a kernel starts in a fifth of a second (it filled the waits
        # of slower starts), and costs a zygote's memory and imports.
        return self.workers or os.cpu_count() or 1

    def limits(self) -> Limits:
        return Limits(**{field: getattr(self, trait) for trait, field in LIMIT_FIELDS.items()})

    def in_force(self) -> dict[str, object]:
        """Each setting's name and value, for the report, with the per-cell limit nbgrader's
        executor will use (however the configuration sets it)."""
        settings = {f"GradingSettings.{name}": getattr(self, name) for name in self.trait_names(config=True)}
        return {**settings, "Execute.timeout": Execute(config=self.config).timeout}
