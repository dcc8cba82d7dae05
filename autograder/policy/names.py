"""What a student's code may name: the allowlists of the policy scan (``scan``), and how a
dotted name such as ``F.relu`` or ``torch.utils.model_zoo.load_url`` is read against them.

A name is a module's attribute read through the module: an attribute chain rooted at a
name an import bound (``torch.nn.functional.relu``, ``F.relu`` after ``import
torch.nn.functional as F``), or a name ``from m import name`` binds. It is allowed when a
pattern of ``c.PolicyScan.allowed_names`` matches it and no later ``!pattern`` takes it back
(as in ``.gitignore``). A pattern is a dotted name whose parts are globs of one part each:
``torch.nn.*`` matches ``torch.nn.Linear`` but never ``torch.nn.utils.parametrize``,
whatever its name, because a submodule is never a name of its own: the chain goes on into
it, and the names under it need patterns of their own. Only a last part ``**`` reaches
every depth (``numpy.**``: what a course that imports numpy gets, ``course``). A module that only re-exports
another (``torch.nn.functional.torch``, ``typing.sys``) is read as the module it is. A
module is never a value: naming one without going on to a name in it (``u = torch.utils``,
``f(torch)``) would let ``u.model_zoo.load_url`` through as a plain attribute read.

What follows a name (``x.add_``, ``torch.Tensor.register_hook``, ``prof.profiler``) is
read on a value, and the attribute rules of ``rules`` govern it.
"""

from __future__ import annotations

import builtins
import fnmatch
import importlib
import importlib.util
import sys
import types
from functools import cache

# torch's public API for tensors and models: its functions, dtypes and grad modes (lower
# case; a submodule is never matched, see above), the tensor classes, and of its
# submodules the ones a model is written with. Taken back: what loads, saves or compiles
# code or data, what imports a module by its name, what changes how every later
# operation (the tests' among them) runs, and TorchScript's machinery.
TORCH_NAMES = (
    "torch.[a-z]*", "torch.Tensor", "torch.*Tensor", "torch.Size", "torch.Generator",
    "!torch.load", "!torch.save", "!torch.from_file", "!torch.compile", "!torch.cond", "!torch.while_loop",
    "!torch.fork", "!torch.wait", "!torch.import_ir_module*", "!torch.parse_*", "!torch.merge_type_from_type_comment",
    "!torch.unify_type_list", "!torch.set_default_*", "!torch.get_device_module", "!torch.get_file_path",
    "!torch.prepare_multiprocessing_environment", "!torch.profiler_allow_*", "!torch.classproperty",
    "!torch.set_anomaly_enabled", "!torch.autocast_*", "!torch.set_autocast_*", "!torch.clear_autocast_cache",
    "!torch.set_flush_denormal",
    "torch.nn.*", "torch.nn.parameter.*", "torch.nn.init.*",
    "torch.nn.functional.*", "!torch.nn.functional.handle_torch_function", "!torch.nn.functional.has_torch_function*",
    "!torch.nn.functional.boolean_dispatch",
    "torch.autograd.Function", "torch.autograd.grad", "torch.autograd.backward", "torch.autograd.gradcheck",
    "torch.autograd.gradgradcheck", "torch.autograd.no_grad", "torch.autograd.enable_grad",
    "torch.autograd.set_grad_enabled", "torch.autograd.inference_mode",
    "torch.optim.*", "torch.optim.lr_scheduler.*", "torch.optim.swa_utils.*",
    "torch.linalg.*", "torch.special.*", "torch.fft.*",
    "torch.testing.assert_close", "torch.testing.make_tensor",
)
# The standard library, function by function, for the modules a course may let students
# import. Left out: what turns text into code or attributes (functools.singledispatch
# evaluates annotations, collections.namedtuple and typing.NamedTuple build classes from
# strings, typing.get_type_hints and ForwardRef evaluate them, dataclasses.make_dataclass),
# what copies attributes by name (functools.wraps, update_wrapper), and files (json.load).
STANDARD_LIBRARY_NAMES = (
    "math.*",
    "copy.copy", "copy.deepcopy",
    "random.*",
    "itertools.*",
    "functools.reduce", "functools.partial", "functools.partialmethod", "functools.lru_cache", "functools.cache",
    "functools.cached_property", "functools.total_ordering", "functools.cmp_to_key",
    "collections.OrderedDict", "collections.defaultdict", "collections.Counter", "collections.deque",
    "collections.ChainMap",
    "dataclasses.dataclass", "dataclasses.field", "dataclasses.fields", "dataclasses.asdict", "dataclasses.astuple",
    "dataclasses.replace", "dataclasses.is_dataclass", "dataclasses.FrozenInstanceError",
    *(f"typing.{name}" for name in (
        "Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "FrozenSet", "Type", "Callable", "Sequence",
        "MutableSequence", "Iterable", "Iterator", "Generator", "Mapping", "MutableMapping", "Collection", "Container",
        "Hashable", "Sized", "Reversible", "Final", "ClassVar", "Literal", "NoReturn", "Never", "Self", "Protocol",
        "Generic", "TypedDict", "SupportsFloat", "SupportsInt", "SupportsIndex", "SupportsAbs", "overload", "final")),
    "numbers.Number", "numbers.Complex", "numbers.Real", "numbers.Rational", "numbers.Integral",
    *(f"statistics.{name}" for name in (
        "mean", "fmean", "geometric_mean", "harmonic_mean", "median", "median_low", "median_high", "median_grouped",
        "mode", "multimode", "quantiles", "pstdev", "pvariance", "stdev", "variance", "covariance", "correlation",
        "linear_regression", "NormalDist", "StatisticsError")),
    "time.time", "time.time_ns", "time.perf_counter", "time.perf_counter_ns", "time.monotonic", "time.monotonic_ns",
    "time.process_time", "time.process_time_ns", "time.sleep",
    *(f"re.{name}" for name in (
        "compile", "match", "search", "fullmatch", "sub", "subn", "findall", "finditer", "split", "escape", "error",
        "Pattern", "Match", "IGNORECASE", "I", "MULTILINE", "M", "DOTALL", "S", "VERBOSE", "X", "ASCII", "A")),
    "json.dumps", "json.loads", "json.JSONDecodeError",
    "enum.Enum", "enum.IntEnum", "enum.Flag", "enum.IntFlag", "enum.auto", "enum.unique",
    "warnings.filterwarnings", "warnings.simplefilter", "warnings.catch_warnings", "warnings.warn",
    "datetime.date", "datetime.datetime", "datetime.time", "datetime.timedelta", "datetime.timezone",
)
# This package's checks, cases and memory tool, which a notebook's visible tests call (a
# student copies them into a cell of their own): their functions, not their tables.
AUTOGRADER_NAMES = ("autograder.checks.[a-z]*", "autograder.checks.CheckFailed", "autograder.cases.[a-z]*",
                    "autograder.memory.[a-z]*")
# The modules a student may import by default: torch and the standard library's above.
CURATED_MODULES = ("torch", "math", "copy", "random", "itertools", "functools", "collections", "dataclasses", "typing",
                   "numbers", "statistics", "time", "re", "json", "enum", "warnings", "datetime")
# IPython's display functions, for a course that imports them (its HTML and Javascript
# would run in the browser of the TA who reads the feedback).
IPYTHON_NAMES = tuple(f"IPython.display.{name}" for name in ("display", "Markdown", "Math", "Latex", "Image",
                                                               "clear_output"))
ALLOWED_NAMES = (*TORCH_NAMES, *STANDARD_LIBRARY_NAMES, *AUTOGRADER_NAMES, *IPYTHON_NAMES)
# What a course that uses a common library gets of it besides the names its notebooks
# reach (``course``): what an honest answer uses, its everyday submodules and the
# assertions its visible tests call.
LIBRARY_NAMES = {
    "numpy": (*(f"numpy.{sub}.*" for sub in ("random", "linalg", "fft", "polynomial", "ma")),
              "numpy.testing.assert_*", "numpy.lib.stride_tricks.sliding_window_view"),
    "matplotlib": tuple(f"matplotlib.{sub}.*" for sub in ("pyplot", "colors", "cm", "patches", "ticker", "gridspec",
                                                           "lines", "collections", "dates")),
    "pandas": ("pandas.plotting.*", "pandas.testing.assert_*"),
    "scipy": tuple(f"scipy.{sub}.*" for sub in ("stats", "optimize", "integrate", "interpolate", "linalg", "special",
                                                "signal", "sparse", "spatial", "fft", "ndimage", "cluster")),
    "sklearn": tuple(f"sklearn.{sub}.*" for sub in (
        "datasets", "model_selection", "metrics", "linear_model", "preprocessing", "tree", "ensemble", "neighbors",
        "svm", "cluster", "decomposition", "pipeline", "naive_bayes", "impute")),
}
# What a course that uses numpy, matplotlib or pandas never gets from its notebooks' use
# (``course``): functions that run text as code, import a module by its name,
# unpickle, read the caller's variables by name, or change a setting every later cell
# (the tests' too) runs with. A course that wants one names it in its own list.
LIBRARY_TAKE_BACKS = (
    "!numpy.bmat", "!numpy.info", "!numpy.lookfor", "!numpy.load", "!numpy.add_newdoc*", "!numpy.lib.add_newdoc*",
    "!numpy.lib.npyio.*", "!numpy.lib.format.*", "!numpy.lib.utils.*", "!numpy.testing.measure",
    "!numpy.testing.runstring", "!numpy.testing.rundocs", "!numpy.ctypeslib.*", "!numpy.f2py.*",
    "!numpy.DataSource", "!numpy.lib.DataSource",
    "!matplotlib.use", "!matplotlib.rc*", "!matplotlib.testing.*", "!matplotlib.pyplot.switch_backend",
    "!matplotlib.pyplot.rc*", "!matplotlib.pyplot.install_repl_displayhook",
    "!matplotlib.pyplot.uninstall_repl_displayhook", "!matplotlib.pyplot.new_figure_manager",
    "!pandas.eval", "!pandas.read_pickle", "!pandas.read_parquet", "!pandas.read_feather", "!pandas.read_orc",
    "!pandas.set_option", "!pandas.reset_option", "!pandas.option_context", "!pandas.options",
    "!pandas.set_eng_float_format", "!pandas.api.*",
    # a library's test runner starts pytest in the kernel, whose -p imports a module by name
    "!numpy.test", "!numpy.*.test", "!scipy.test", "!scipy.*.test", "!pandas.test", "!matplotlib.test",
    "!matplotlib.pyplot.backend_registry", "!matplotlib.backends.*", "!sklearn.datasets.fetch_*",
    "!seaborn.set", "!seaborn.set_theme",
)

# Built-ins a student may call; IPython's display too. Not: open, input, help, dir,
# hasattr, memoryview, exit and quit, nor what reaches names or runs text (getattr, vars,
# eval, ...: ``vocabulary.FORBIDDEN_NAMES``).
ALLOWED_BUILTINS = (
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr", "classmethod", "complex",
    "dict", "divmod", "enumerate", "filter", "float", "format", "frozenset", "hash", "hex", "id", "int", "isinstance",
    "issubclass", "iter", "len", "list", "map", "max", "min", "next", "object", "oct", "ord", "pow", "print",
    "property", "range", "repr", "reversed", "round", "set", "slice", "sorted", "staticmethod", "str", "sum", "super",
    "tuple", "type", "zip", "NotImplemented", "Ellipsis", "display",
    *sorted(name for name, value in vars(builtins).items()
            if isinstance(value, type) and issubclass(value, BaseException)),
)
# What a bare name may be, beyond a student's own: Python's built-ins and IPython's.
BUILTIN_NAMES = frozenset({*vars(builtins), "display", "get_ipython"})


@cache
def _verdict(patterns: tuple[str, ...], name: str) -> bool:
    """Whether the last pattern that matches ``name`` allows it (none: it is not allowed)."""
    verdict = False
    for pattern in patterns:
        if _matches(name, pattern.removeprefix("!")):
            verdict = not pattern.startswith("!")
    return verdict


def _matches(name: str, pattern: str) -> bool:
    parts, wanted = name.split("."), pattern.split(".")
    if wanted[-1] == "**":  # any name at any depth under the module
        return len(parts) >= len(wanted) and all(map(fnmatch.fnmatchcase, parts, wanted[:-1]))
    return len(parts) == len(wanted) and all(map(fnmatch.fnmatchcase, parts, wanted))


class Names:
    """The course's allowlist of names, and how a dotted name is read against the modules
    the grader's own interpreter has (the same environment as the grading kernel's)."""

    def __init__(self, allowed: tuple[str, ...], importable: frozenset[str], own_modules: frozenset[str]):
        self.patterns = tuple(allowed)
        self.importable = importable  # top-level modules whose names may be used at all
        self.own_modules = own_modules

    def allowed(self, name: str) -> bool:
        return name.split(".")[0] in self.importable and _verdict(self.patterns, name)

    def named(self, name: str) -> bool:
        """Allowed by a pattern that names it outright, not by a glob: the course vouches
        for it even where an attribute rule would refuse its name (``json.loads``)."""
        return name in self.patterns and self.allowed(name)

    def under(self, module: str) -> bool:
        """Whether any name in ``module`` (at any depth) is allowed: whether it may be imported."""
        parts = module.split(".")
        if parts[0] not in self.importable:
            return False
        return any((len(wanted) > len(parts) or wanted[-1] == "**") and all(map(fnmatch.fnmatchcase, parts, wanted))
                   for wanted in (pattern.split(".") for pattern in self.patterns if not pattern.startswith("!")))

    def own(self, name: str) -> bool:
        return name.split(".")[0] in self.own_modules

    def resolve(self, parts: list[str]) -> tuple[str, bool, int]:
        """(the name, whether it is a module, how many of ``parts`` it takes) for a dotted
        chain that starts at a module: the chain is followed through modules only; the
        first part that is not a module ends the name. A module re-exported by another is
        named as itself (``torch.nn.functional.torch`` is ``torch``)."""
        name = parts[0]
        module = self._module(name)
        for taken in range(1, len(parts)):
            part = parts[taken]
            if module is None:  # a module the grader never imported: only its name is known
                return f"{name}.{part}", False, taken + 1
            value = _namespace(module).get(part, _MISSING)
            if isinstance(value, types.ModuleType):
                module, name = value, value.__name__
                continue
            if value is _MISSING and _submodule(module, part):
                name = f"{module.__name__}.{part}"
                module = sys.modules.get(name) or (self._module(name) if self.under(name) else None)
                continue
            home, top = _home(value), module.__name__.split(".")[0]
            if home and home.split(".")[0] != top and top not in sys.stdlib_module_names:  # a library re-exports it
                return f"{home}.{getattr(value, '__qualname__', part)}", False, taken + 1
            return f"{module.__name__}.{part}", False, taken + 1
        return name, True, len(parts)

    def _module(self, name: str) -> types.ModuleType | None:
        """The module, imported here if the course allows it (its code is the course's choice)."""
        if name in sys.modules:
            return sys.modules[name]
        if name.split(".")[0] not in self.importable:
            return None
        return _imported(name)


_MISSING = object()


def _namespace(module: types.ModuleType) -> dict:
    """A module's own names, read without running its ``__getattr__``."""
    try:
        namespace = object.__getattribute__(module, "__dict__")
    except AttributeError:
        return {}
    return namespace if isinstance(namespace, dict) else {}


def _home(value: object) -> str | None:
    """The module a class or function was defined in (``matplotlib.Path`` is
    ``pathlib``'s), read without running code of the value's; None for anything else."""
    if not isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
        return None
    try:
        home = object.__getattribute__(value, "__module__") if not isinstance(value, type) else vars(value).get(
            "__module__")
    except AttributeError:
        return None
    return home if isinstance(home, str) else None


def _submodule(module: types.ModuleType, part: str) -> bool:
    """Whether ``module.part`` is a submodule not imported yet (a package's lazy
    ``__getattr__``, as torch's for ``torch.onnx``, would import it on first use)."""
    if not hasattr(module, "__path__"):
        return False
    try:
        return importlib.util.find_spec(f"{module.__name__}.{part}") is not None
    except Exception:  # noqa: BLE001 (torch.classes and torch.ops fake their __path__: no submodule to find)
        return False


@cache
def _imported(name: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 (a module that fails to import is no module a student can use either)
        return None
