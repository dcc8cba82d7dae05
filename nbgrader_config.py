"""nbgrader settings for the course; nbgrader reads this file from the course root."""

c = get_config()  # noqa: F821 (injected by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "pytorch-inplace"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"

# A cell that runs longer than this is stopped and scores zero; the slowest hidden test
# cell takes well under a second, so a minute only ever catches runaway student code.
c.Execute.timeout = 60

# What a student sees where the instructor's solution was.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

# nbgrader scores a test cell zero when it writes anything to stderr, both when grading
# and behind the student's Validate button. Python warnings (torch's deprecation notices,
# for one) are noise, not failures: the grading kernel starts with them switched off, so a
# correct answer that triggers a warning keeps its points.
c.Execute.extra_arguments = [
    "--InteractiveShellApp.exec_lines=import warnings; warnings.simplefilter('ignore')",
]

# What students' code may import, which names of those modules it may use, and which
# private attributes it may read; a notebook that reaches for anything else is held for
# review (autograder/policy/scan.py). The names are denied by default: the scan's own
# list (autograder/policy/names.py: torch's tensor and model API, the standard
# library function by function, built-ins) and what this course adds to it: the profiler
# of 06-diagnose-and-measure and torch's _foreach_ kernels (04-ema). Patterns are dotted
# globs, '*' for one part (never a submodule), '!' to take one back.
c.PolicyScan.allowed_imports = [
    "torch", "math", "copy", "random", "itertools", "functools", "collections", "dataclasses", "typing",
    "numbers", "statistics", "time", "re", "json", "enum",
]
c.PolicyScan.allowed_names.extend([
    "torch.profiler.profile", "torch.profiler.ProfilerActivity", "torch.profiler.record_function",
    "torch.autograd.profiler.profile", "torch.autograd.DeviceType", "torch._foreach_*",
])
c.PolicyScan.allowed_private = ["_version", "_base", "_cdata", "_foreach_*"]
# This course keeps to these lists: nothing is added from what its own notebooks use (a
# course without such lists gets that by default, autograder/policy/course_use.py).
c.PolicyScan.from_course = False

# Files students may hand in beside a notebook, by assignment (none in this course): only
# these, and the instructor's own files in source/, reach the grading kernel.
# c.Autograde.exclude_overwriting = {"05-residuals": ["helpers.py"]}
