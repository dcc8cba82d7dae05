"""Inside a grading kernel: put back whatever a student cell hijacked before a test runs.

A test cell scores full marks when it raises nothing, so a notebook that can stop test
code from running, or stop its errors from surfacing, or change what the checks see,
can fake its score. Every way of doing that from Python goes through a hook or a shared
object that this module snapshots when the kernel starts, before any student code: the
list is docs/threat-model.md's ("What decides a score"; ``GUARDED_MODULES`` is checked against it),
and the constants below.

The grader calls ``restore(True)`` (as a user expression, which IPython evaluates
without any input or AST transformer) before each graded cell, and ``restore()`` after
it; it answers with JSON naming what it put back. In between, the test cell runs in a
namespace the student did not shape (``_TestNamespace``): no name hides a built-in, what
earlier test cells defined is theirs again, and so are the modules, functions and classes
the instructor's locked set-up cells bound (``set_up`` around each of them), and
afterwards the notebook's namespace is put back as it was, without the test's own names.

Some things cannot be put back: an audit hook added after ours, raw memory access through
ctypes, or the guard's own functions and classes rewritten. An audit hook installed here
records those, and the grader scores the notebook as tampered.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import json
import os
import re
import sys
import threading
import types
from pathlib import Path

BASE_MODULES = ("builtins", "math")
# Guarded only where the assignment's notebooks use torch or this package (whose checks use
# torch): importing torch is most of a kernel's start, and nothing else needs it.
TORCH_MODULES = ("torch", "torch.testing", "torch.autograd", "torch.autograd.graph", "torch.nn", "torch.nn.init",
                 "torch.nn.functional", "autograder", "autograder.checks", "autograder.cases")
GUARDED_MODULES = BASE_MODULES + TORCH_MODULES
# How the grader tells the kernel whether to guard torch ("0": not).
GUARD_TORCH_VARIABLE = "AUTOGRADER_GUARD_TORCH"
# (namespace, name) of the functions torch itself replaces by wrappers after the snapshot.
TORCH_REWRAPS = {("torch", "manual_seed")}
NOTEBOOK_NAMES = {"torch": "torch", "checks": "autograder.checks", "cases": "autograder.cases"}
SHELL_ATTRIBUTES = ("input_transformers_cleanup", "input_transformers_post", "ast_transformers",
                    "custom_exceptions", "CustomTB", "compile", "displayhook", "display_pub",
                    "input_transformer_manager", "events")
SYS_ATTRIBUTES = ("excepthook", "displayhook", "stdout", "stderr", "meta_path", "path_hooks")
# The shell's event callbacks, as a restore names them; those matplotlib registers (after
# each cell: redraw, then show its figures) once a cell plots, by module and name.
CALLBACKS = "shell.events.callbacks"
FIGURE_CALLBACKS = (("matplotlib.pyplot", "_draw_all_if_interactive"),
                    ("matplotlib_inline.backend_inline", "flush_figures"))
# Audit events no honest notebook raises once the kernel is up, and whose effects cannot
# be undone from Python.
UNDOABLE_EVENTS = ("sys.addaudithook", "ctypes.")

_MISSING = object()
TORCH_FOLDER = str(Path(importlib.util.find_spec("torch").origin).parent) + os.sep
_guard: _Guard | None = None


def install(shell, torch: bool = True) -> None:
    """Snapshot everything the tests rely on (torch too, unless ``torch`` is False); call
    once, before any student code runs."""
    global _guard
    _guard = _Guard(shell, torch)
    sys.addaudithook(_guard.audit)


def restore(test: bool = False) -> str:
    """Put back every hijacked hook; JSON ``{"restored": [...], "tampered": [...]}``. With
    ``test``, make the notebook's namespace clean for the test cell that runs next; without,
    put back what it was before the last test cell, if one ran."""
    if _guard is None:
        return json.dumps({"restored": [], "tampered": ["the guard was never installed"]})
    report = _guard.restore(test_next=test)
    _guard.tests.leave()
    if test:
        _guard.tests.enter()
    return json.dumps(report)


def set_up(names: list[str] | None = None) -> str:
    """Around a locked set-up cell (the instructor's). Before it (no ``names``), put back
    everything ``restore`` puts back, so that its imports get the real modules. After it,
    keep for the tests the modules, functions and classes bound to ``names`` (what its
    code binds): a student's later cell may rebind ``copy`` or a helper, and a test still
    gets the instructor's. Data it bound stays the notebook's (a student's cell may be
    meant to rebind it), and so do the names the guard itself puts back before every
    test (``NOTEBOOK_NAMES``). JSON in ``restore``'s form."""
    if _guard is None:
        return json.dumps({"restored": [], "tampered": ["the guard was never installed"]})
    if names is None:
        return json.dumps(_guard.restore())
    _guard.tests.set_up_ran(names)
    return json.dumps({"restored": [], "tampered": []})


class _Guard:
    def __init__(self, shell, torch: bool = True):
        self.shell = shell
        self.undoable: list[str] = []
        self.restoring = False
        kernel = getattr(shell, "kernel", None)
        self.instances = [("shell", shell), ("shell.compile", shell.compile),
                          ("shell.input_transformer_manager", shell.input_transformer_manager)]
        if kernel is not None:
            self.instances += [("kernel", kernel), ("kernel.session", kernel.session)]
        self.instance_names = {label: set(vars(instance)) for label, instance in self.instances}
        self.modules = {name: importlib.import_module(name) for name in (GUARDED_MODULES if torch else BASE_MODULES)}
        self.namespaces = [_Namespace(name, vars(module)) for name, module in self.modules.items()]
        self.namespaces += [_Namespace(f"{cls.__module__}.{cls.__qualname__}", cls.__dict__, owner=cls)
                            for cls in self._guarded_classes()]
        self.tests = _TestNamespace(shell)
        self.callbacks_at_start = self._callbacks()
        self.held_figures: list = []  # matplotlib's callbacks, kept out while a test cell runs
        self.in_test = False  # a test cell ran since the last restore
        self.objects = [_Attributes("shell", shell, SHELL_ATTRIBUTES), _Attributes("sys", sys, SYS_ATTRIBUTES),
                        _Attributes("shell.events", shell.events, ("callbacks",)),
                        _Attributes("shell.input_transformer_manager", shell.input_transformer_manager,
                                    ("cleanup_transforms", "line_transforms", "token_transformers"))]
        if kernel is not None:
            self.objects.append(_Attributes("kernel", kernel, ("shell_handlers", "control_handlers", "session")))

    def _guarded_classes(self) -> list[type]:
        """torch's tensor and module classes, the classes of ``autograder.checks`` and
        ``autograder.cases``, and every Python class the shell and kernel are made of."""
        classes = []
        if "torch" in self.modules:
            torch = self.modules["torch"]
            classes += [torch.Tensor, torch.nn.Parameter, torch.UntypedStorage, *_subclasses(torch.nn.Module)]
            for module in ("autograder.checks", "autograder.cases"):
                classes += [value for value in vars(self.modules[module]).values()
                            if isinstance(value, type) and value.__module__ == module]
        for _, instance in self.instances:
            classes += [cls for cls in type(instance).__mro__ if cls.__module__ != "builtins"]
        return list(dict.fromkeys(classes))

    def audit(self, event: str, args: tuple) -> None:
        if self.restoring:
            return
        if event.startswith(UNDOABLE_EVENTS):
            self._undoable(event)
        elif event in ("object.__setattr__", "object.__delattr__") and getattr(args[0], "__module__", None) == __name__:
            self._undoable(f"{event} on the guard's own {getattr(args[0], '__qualname__', '')}")

    def _undoable(self, what: str) -> None:
        if what not in self.undoable:
            self.undoable.append(what)

    def restore(self, test_next: bool = False) -> dict:
        """Put everything back; what was put back, and what cannot be. Matplotlib registers
        callbacks that show each cell's figures at its end, once a cell plots: registered by
        the notebook's own cells, they are taken out without a word while a test cell runs
        (``test_next``), and the cells after the test get them back. Registered during a test
        they are put back as any hook is (the test's result cannot be trusted: code that
        runs after a test's last line could hide its error)."""
        self.restoring = True
        try:
            after_test, self.in_test = self.in_test, test_next
            figures = self._figure_callbacks()
            alone = bool(figures) and not after_test and _same_callbacks(self._callbacks(without=figures),
                                                                        self.callbacks_at_start)
            back = self.held_figures if after_test else figures
            restored = self._restore_tracing()
            for namespace in self.namespaces:
                restored += namespace.restore()
            for attributes in self.objects:
                restored += [name for name in attributes.restore() if not (alone and name == CALLBACKS)]
            restored += self._restore_instances()
            restored += self._restore_modes()
            restored += self._restore_sys_modules()
            restored += self._restore_notebook_names()
            self.held_figures = figures if test_next else []
            if not test_next:
                self.shell.events.callbacks["post_execute"].extend(back)
        finally:
            self.restoring = False
        return {"restored": restored, "tampered": [f"audit event {what}" for what in self.undoable]}

    def _callbacks(self, without: tuple | list = ()) -> dict[str, list]:
        """The shell's event callbacks by event (their items, not IPython's lists), but ``without``."""
        return {event: [callback for callback in callbacks if not any(callback is other for other in without)]
                for event, callbacks in self.shell.events.callbacks.items()}

    def _figure_callbacks(self) -> list:
        """Matplotlib's callbacks after each cell (``FIGURE_CALLBACKS``) that a cell
        registered, in order: functions of those modules, read without running any code of
        what a cell may have put in their place (no attribute lookup on an object of its)."""
        ours = []
        for module, name in FIGURE_CALLBACKS:
            found = sys.modules.get(module)
            if type(found) is types.ModuleType and type(vars(found).get(name)) is types.FunctionType:
                ours.append(vars(found)[name])
        post_execute = self.shell.events.callbacks.get("post_execute")
        return [callback for callback in post_execute if any(callback is found for found in ours)] \
            if type(post_execute) is list else []

    def _restore_tracing(self) -> list[str]:
        restored = []
        for name, get, set_ in (("sys.settrace", sys.gettrace, sys.settrace),
                                ("sys.setprofile", sys.getprofile, sys.setprofile),
                                ("threading.settrace", threading.gettrace, threading.settrace),
                                ("threading.setprofile", threading.getprofile, threading.setprofile)):
            if get() is not None:
                set_(None)
                restored.append(name)
        return restored

    def _restore_instances(self) -> list[str]:
        """Instance attributes that shadow a method (``shell.showtraceback = ...``) go."""
        restored = []
        for label, instance in self.instances:
            for name in set(vars(instance)) - self.instance_names[label]:
                if callable(getattr(type(instance), name, None)):
                    delattr(instance, name)
                    restored.append(f"{label}.{name}")
        return restored

    def _restore_modes(self) -> list[str]:
        """Torch function and dispatch modes intercept every torch call the tests make;
        autograd's anomaly mode records the source of the running cells in the graph."""
        if "torch" not in self.modules:
            return []
        torch = self.modules["torch"]
        restored = []
        if torch.is_anomaly_enabled():
            torch.set_anomaly_enabled(False)
            restored.append("autograd anomaly mode")
        while torch._C._len_torch_function_stack():
            torch._C._pop_torch_function_stack()
            restored.append("torch function mode")
        while torch._C._len_torch_dispatch_stack():
            torch._C._pop_torch_dispatch_stack()
            restored.append("torch dispatch mode")
        return restored

    def _restore_sys_modules(self) -> list[str]:
        restored = []
        for name, module in self.modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
                restored.append(f"sys.modules[{name!r}]")
        return restored

    def _restore_notebook_names(self) -> list[str]:
        namespace = self.shell.user_ns
        restored = []
        if namespace.get("__builtins__", builtins) not in (builtins, vars(builtins)):
            namespace["__builtins__"] = builtins
            restored.append("__builtins__")
        for name, module in NOTEBOOK_NAMES.items():
            if module in self.modules and name in namespace and namespace[name] is not self.modules[module]:
                namespace[name] = self.modules[module]
                restored.append(f"the notebook's name {name!r}")
        return restored


class _TestNamespace:
    """A test cell runs in the notebook's namespace as nbgrader has it (a test may delete or
    replace a student's function to see what another one does), made clean first and put
    back after: every name that hides a built-in goes (``[(zip := fake) for _ in (0,)]``
    rebinds ``zip`` in the notebook), every name an earlier test cell defined is the test's
    again (kept here, out of the student's reach), and so is every module, function and
    class a locked set-up cell bound, and ``__builtins__`` is the built-ins module.
    Afterwards the notebook's namespace is exactly what it was before: what the test
    defined (its hidden part's cases, helpers and recorders) is kept here for the next
    tests, never left for the student's later cells to print."""

    def __init__(self, shell):
        self.shell = shell
        self.defined: dict[str, object] = {}
        self.before: dict[str, object] | None = None
        self.entered: dict[str, object] = {}

    def set_up_ran(self, names: list[str]) -> None:
        namespace = self.shell.user_ns
        self.defined.update({name: namespace[name] for name in names
                             if name in namespace and name not in NOTEBOOK_NAMES
                             and isinstance(namespace[name], _DEFINITIONS)})

    def enter(self) -> None:
        namespace = self.shell.user_ns
        self.before = dict(namespace)
        for name in [name for name in namespace if name in vars(builtins) and name not in self.shell.user_ns_hidden]:
            del namespace[name]
        namespace.update(self.defined)
        namespace["__builtins__"] = builtins
        self.entered = dict(namespace)

    def leave(self) -> None:
        if self.before is None:
            return
        namespace = self.shell.user_ns
        self.defined.update({name: value for name, value in namespace.items()
                             if name not in ("__name__", "__builtins__") and name not in self.shell.user_ns_hidden
                             and not _HISTORY.fullmatch(name) and self.entered.get(name, _MISSING) is not value})
        namespace.clear()
        namespace.update(self.before)
        self.before = None


# What a locked set-up cell binds that its tests may rely on.
_DEFINITIONS = (types.ModuleType, types.FunctionType, type)
# IPython's numbered inputs and outputs (_i3, _3) and its last results (_, __, ___).
_HISTORY = re.compile(r"_i{0,3}\d*|_{1,3}")


class _Namespace:
    """A module's or class's dictionary: entries replaced since the snapshot are put back,
    and so are the code, defaults and property accessors of every Python function in it.
    Deleted entries are left deleted (a test that misses one fails, it cannot pass).
    A class also loses callables added since (they shadow what its bases define); a
    module keeps them, since importing a submodule adds one."""

    def __init__(self, label: str, namespace, owner: type | None = None):
        self.label = label
        self.owner = owner
        self.namespace = namespace
        self.entries = {name: value for name, value in namespace.items() if name != "_"}
        self.functions = [(function, function.__code__, function.__defaults__, function.__kwdefaults__)
                          for value in self.entries.values() for function in _functions_in(value)]

    def restore(self) -> list[str]:
        restored = []
        for name, value in list(self.entries.items()):
            current = self.namespace.get(name, value)
            if current is value:
                continue
            if (self.label, name) in TORCH_REWRAPS and _torch_wrapper_of(current, value):
                self.entries[name] = current
                self.functions.append((current, current.__code__, current.__defaults__, current.__kwdefaults__))
            else:
                self._set(name, value)
                restored.append(f"{self.label}.{name}")
        if self.owner is not None:
            for name in set(self.namespace) - set(self.entries):
                if callable(self.namespace[name]) or hasattr(self.namespace[name], "__get__"):
                    delattr(self.owner, name)
                    restored.append(f"{self.label}.{name} (added)")
        for function, code, defaults, kwdefaults in self.functions:
            if (function.__code__, function.__defaults__, function.__kwdefaults__) != (code, defaults, kwdefaults):
                function.__code__, function.__defaults__, function.__kwdefaults__ = code, defaults, kwdefaults
                restored.append(f"{self.label}: code of {function.__qualname__}")
        return restored

    def _set(self, name: str, value) -> None:
        if self.owner is not None:
            setattr(self.owner, name, value)
        else:
            self.namespace[name] = value


def _same_callbacks(found: dict[str, list], expected: dict[str, list]) -> bool:
    """The same callbacks by identity (never a callback's own ``==``)."""
    return found.keys() == expected.keys() and all(
        len(found[event]) == len(expected[event]) and all(a is b for a, b in zip(found[event], expected[event]))
        for event in expected)


def _subclasses(cls: type) -> list[type]:
    """``cls`` and every class derived from it so far (torch's own layers, in particular)."""
    found, stack = [cls], [cls]
    while stack:
        for subclass in stack.pop().__subclasses__():
            if subclass not in found:
                found.append(subclass)
                stack.append(subclass)
    return found


def _torch_wrapper_of(new, old) -> bool:
    """torch wraps some of its own functions when a part of it is first imported (importing
    ``torch._dynamo`` wraps ``torch.manual_seed``): for those (``TORCH_REWRAPS``), and only
    those, a wrapper of the snapshot's function whose code is torch's own is accepted as the
    new original. (Any function can be made to look like that: ``functools.update_wrapper``
    around a torch decorator; so nothing else is.)"""
    return (isinstance(new, types.FunctionType) and getattr(new, "__wrapped__", None) is old
            and new.__code__.co_filename.startswith(TORCH_FOLDER))


def _functions_in(value) -> list[types.FunctionType]:
    """The Python functions behind a namespace entry: itself, a property's accessors, a
    static or class method's function."""
    if isinstance(value, property):
        candidates = [value.fget, value.fset, value.fdel]
    elif isinstance(value, (staticmethod, classmethod)):
        candidates = [value.__func__]
    else:
        candidates = [value]
    return [candidate for candidate in candidates if isinstance(candidate, types.FunctionType)]


class _Attributes:
    """Named attributes of one object; a list or dict is compared item by item, so one
    appended to or changed in place is caught as well as one reassigned."""

    def __init__(self, label: str, owner, names: tuple[str, ...]):
        self.label = label
        self.owner = owner
        self.saved = {name: _copy(getattr(owner, name)) for name in names if hasattr(owner, name)}

    def restore(self) -> list[str]:
        restored = []
        for name, saved in self.saved.items():
            current = getattr(self.owner, name, _MISSING)
            if not _same(current, saved):
                original = _restored(saved)
                if current is not original:  # some are read-only properties over the list
                    setattr(self.owner, name, original)
                restored.append(f"{self.label}.{name}")
        return restored


def _copy(value) -> tuple:
    """(kind, the object, a copy of its items): what ``_same`` compares against."""
    if isinstance(value, list):
        return ("list", value, [_copy(item) for item in value])
    if isinstance(value, dict):
        return ("dict", value, {key: _copy(item) for key, item in value.items()})
    return ("value", value, None)


def _same(current, saved: tuple) -> bool:
    kind, original, items = saved
    if current is not original:
        return False
    if kind == "list":
        return len(current) == len(items) and all(_same(a, b) for a, b in zip(current, items))
    if kind == "dict":
        return current.keys() == items.keys() and all(_same(current[key], items[key]) for key in items)
    return True


def _restored(saved: tuple):
    """The original object with its original items back in place, so that every other
    reference to it (IPython keeps some) sees the restored contents too."""
    kind, original, items = saved
    if kind == "list":
        original[:] = [_restored(item) for item in items]
    elif kind == "dict":
        original.clear()
        original.update({key: _restored(item) for key, item in items.items()})
    return original
