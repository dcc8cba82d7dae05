"""The second witness: what a graded function computes on the hidden cases, recorded as
plain data, and compared outside the process that computed it.

A test cell's verdict comes from the student's own interpreter, and code that reaches
it can forge the verdict (answer the guard, swallow every error). What it cannot forge
without computing it is the right *values*. So for each graded function the instructor
writes, beside its hidden tests, a **recorder**: a function named ``witness_<name>``
whose parameters are the names it needs from the notebook (the student's function
first) and then ``record``. It builds the hidden cases, calls the function, and records
what a right answer must produce: results, inputs after the call, gradients, module
states. A recorder is run twice, each time in a fresh kernel holding nothing but a
notebook's definitions and this module (no hidden test, no verdict logic): once with
the instructor's solutions, once with the student's; the grader compares the two records
(``compare``). Records travel as data, never as pickles: a JSON structure, and the
tensors in one safetensors blob.

``record(label, value, rtol=None, atol=None)`` records a value: tensors (dtype, shape,
values), numbers, bools, strings, None, lists, tuples and dicts of them, and modules (as
their state dict and training flag). ``record.call(label, function, *args)`` calls
``function`` and records its result, or only that it raised (an answer that refuses a
case the reference refuses agrees with it, whatever it raises). A recorder that needs
randomness seeds its own generator, or records what a right answer makes the same
whatever its draws (a random initializer's bounds and spread, say).

What the witness cannot see is what only exists inside the process: whether a result is
the input object itself, shares its storage, bumped its version counter. The in-kernel
tests check those; the witness makes sure the values behind a passing test are right.
"""

from __future__ import annotations

import base64
import builtins
import inspect
import json
import math
from dataclasses import dataclass

import torch
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

from autograder.witness_format import MIME_TYPE, RECORDER_PREFIX

# What a recorded value may be nested to, and how many tensors one recorder may keep.
MAX_DEPTH = 8
MAX_TENSORS = 4096


class Recorder:
    """What one recorder recorded: (label, encoded value, tolerances), tensors apart."""

    def __init__(self):
        self.entries: list[dict] = []
        self.tensors: dict[str, torch.Tensor] = {}

    def __call__(self, label: str, value, rtol: float | None = None, atol: float | None = None) -> None:
        self.entries.append({"label": str(label), "value": self._encoded(value, 0), "rtol": rtol, "atol": atol})

    def call(self, label: str, function, *args, **kwargs):
        """``function(*args, **kwargs)``, its result recorded (or that it raised); the result, or None."""
        try:
            result = function(*args, **kwargs)
        except Exception:  # noqa: BLE001 (what it raised is the answer's business; that it raised is recorded)
            self(label, Raised())
            return None
        self(label, result)
        return result

    def _encoded(self, value, depth: int):
        if depth > MAX_DEPTH:
            return {"other": "nested too deep"}
        if isinstance(value, Raised):
            return {"raised": True}
        if isinstance(value, torch.nn.Module):
            state = {name: self._encoded(tensor, depth + 1) for name, tensor in value.state_dict().items()}
            return {"module": state, "training": bool(value.training)}
        if isinstance(value, torch.Tensor):
            if len(self.tensors) >= MAX_TENSORS:
                return {"other": "too many tensors"}
            key = str(len(self.tensors))
            self.tensors[key] = torch.Tensor.clone(torch.Tensor.detach(value)).contiguous()
            return {"tensor": key}
        if value is None or type(value) in (bool, int, str):
            return {"plain": value}
        if type(value) is float:
            return {"float": repr(value)}  # JSON has no nan or inf
        if type(value) in (list, tuple):
            return {type(value).__name__: [self._encoded(item, depth + 1) for item in value]}
        if type(value) is dict:
            return {"dict": [[str(key), self._encoded(item, depth + 1)] for key, item in value.items()]}
        if isinstance(value, (torch.dtype, torch.Size, torch.device)):
            return {"plain": str(value)}
        return {"other": type(value).__name__}

    def message(self, test: str, failure: str | None = None) -> dict:
        """The record as a display message's data (``MIME_TYPE``)."""
        blob = save_tensors(self.tensors) if self.tensors else b""
        return {"test": test, "entries": self.entries, "failure": failure,
                "tensors": base64.b64encode(blob).decode()}


@dataclass(frozen=True)
class Raised:
    """Stands for "the call raised" in a record."""


def run(namespace: dict, recorders: dict[str, str], secret: str = "") -> None:
    """In a witness kernel: run each recorder (test cell id -> its source) against
    ``namespace`` (the notebook's), and display each record, marked with the grader's
    ``secret`` for that cell (a display the student's code made has another)."""
    from IPython.display import display

    for test, source in recorders.items():
        display({MIME_TYPE: {**recorded(namespace, test, source), "secret": secret}}, raw=True)


def recorded(namespace: dict, test: str, source: str) -> dict:
    """The record (as message data) of the recorder in ``source`` run against ``namespace``."""
    record, failure = Recorder(), None
    try:
        recorder = _recorder(source)
        needs = list(inspect.signature(recorder).parameters)[:-1]
        missing = [name for name in needs if name not in namespace]
        if missing:
            failure = f"the notebook does not define {', '.join(missing)}"
        else:
            recorder(*(namespace[name] for name in needs), record)
    except BaseException as error:  # noqa: BLE001 (a recorder that fails or is interrupted: this record's failure)
        failure = f"the recorder stopped: {type(error).__name__}"
    return record.message(test, failure)


def _recorder(source: str):
    """The one ``witness_*`` function that ``source`` defines, in a namespace of its own."""
    namespace = {"__builtins__": builtins, "__name__": "witness"}
    exec(compile(source, "<recorder>", "exec"), namespace)
    found = [value for name, value in namespace.items() if name.startswith(RECORDER_PREFIX) and callable(value)]
    if len(found) != 1:
        raise ValueError(f"a recorder's source defines {len(found)} {RECORDER_PREFIX}* functions, not one")
    return found[0]


@dataclass(frozen=True)
class Record:
    """A record as the grader reads it back: entries and their tensors, or why there is none."""

    entries: list[dict]
    tensors: dict[str, torch.Tensor]
    failure: str | None = None


def decode(data) -> Record:
    """A record from a witness kernel's message (``Recorder.message``), read as data only;
    anything malformed is a record that failed, never an exception."""
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list) \
            or not all(isinstance(entry, dict) for entry in data["entries"]) \
            or not isinstance(data.get("tensors", ""), str):
        return Record([], {}, "the witness sent no readable record")
    try:
        blob = base64.b64decode(data.get("tensors") or "", validate=True)
        tensors = load_tensors(blob) if blob else {}
    except Exception as error:  # noqa: BLE001 (base64's and safetensors' own errors for a malformed blob)
        return Record([], {}, f"the witness's tensors could not be read ({type(error).__name__})")
    failure = data.get("failure")
    return Record(data["entries"], tensors, failure if isinstance(failure, str) else None)


def compare(expected: Record, actual: Record, most: int = 3) -> list[str]:
    """What differs between the reference's record and the student's, at most ``most`` lines
    (none: they agree). A record of any shape is compared without raising."""
    try:
        return _compare(expected, actual, most)
    except Exception as error:  # noqa: BLE001 (a malformed record differs; it never stops grading)
        return [f"the record could not be compared ({type(error).__name__})"]


def _compare(expected: Record, actual: Record, most: int) -> list[str]:
    if expected.failure:
        return [f"the reference's own record failed ({expected.failure}): fix the recorder"]
    if actual.failure:
        return [actual.failure]
    differences = []
    given = [entry for entry in actual.entries if isinstance(entry, dict)]
    for index, entry in enumerate(expected.entries):  # in order: a recorder records the same labels each run
        label = entry["label"]
        if index >= len(given) or given[index].get("label") != label:
            differences.append(f"{label}: not recorded (the record stops or goes astray here)")
            break
        found = _difference(entry["value"], given[index].get("value"), expected, actual,
                            entry.get("rtol"), entry.get("atol"))
        if found:
            differences.append(f"{label}: {found}")
        if len(differences) >= most:
            break
    if not differences and len(given) != len(expected.entries):
        differences.append(f"{len(given)} values recorded, the reference recorded {len(expected.entries)}")
    return differences


def _difference(expected, actual, reference: Record, answer: Record, rtol, atol) -> str | None:
    if not isinstance(actual, dict) or set(actual) != set(expected):
        return f"{_kind(actual)} where the reference has {_kind(expected)}"
    kind = next(iter(expected), None)
    if kind == "tensor":
        return _tensor_difference(reference.tensors.get(expected["tensor"]), answer.tensors.get(actual.get("tensor")),
                                  rtol, atol)
    if kind == "float":
        want, got = float(expected["float"]), _float(actual["float"])
        if got is None:
            return "not a number"
        same = (math.isnan(want) and math.isnan(got)) or math.isclose(
            got, want, rel_tol=1e-6 if rtol is None else rtol, abs_tol=1e-9 if atol is None else atol)
        return None if same else f"{got!r}, expected {want!r}"
    if kind in ("list", "tuple"):
        if len(actual[kind]) != len(expected[kind]):
            return f"{len(actual[kind])} items, expected {len(expected[kind])}"
        for index, (want, got) in enumerate(zip(expected[kind], actual[kind])):
            found = _difference(want, got, reference, answer, rtol, atol)
            if found:
                return f"item {index}: {found}"
        return None
    if kind == "dict":
        want_keys, got_keys = [key for key, _ in expected["dict"]], [key for key, _ in actual["dict"]]
        if want_keys != got_keys:
            return f"keys {got_keys[:5]}, expected {want_keys[:5]}"
        for (key, want), (_, got) in zip(expected["dict"], actual["dict"]):
            found = _difference(want, got, reference, answer, rtol, atol)
            if found:
                return f"{key!r}: {found}"
        return None
    if kind == "module":
        if actual.get("training") != expected.get("training"):
            return f"training mode {actual.get('training')}, expected {expected.get('training')}"
        return _difference({"dict": sorted(expected["module"].items())}, {"dict": sorted(actual["module"].items())},
                           reference, answer, rtol, atol) if isinstance(actual["module"], dict) else "not a state"
    same = actual == expected and type(actual.get(kind)) is type(expected.get(kind))  # True is not 1
    return None if same else f"{_shown(actual)}, expected {_shown(expected)}"


def _tensor_difference(expected: torch.Tensor | None, actual: torch.Tensor | None, rtol, atol) -> str | None:
    if expected is None or actual is None:
        return "a tensor that was not sent"
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype}, expected {expected.dtype}"
    if actual.shape != expected.shape:
        return f"shape {tuple(actual.shape)}, expected {tuple(expected.shape)}"
    if torch.equal(actual, expected):  # the usual case, and a thousand times cheaper than assert_close
        return None
    if (rtol is None) != (atol is None):  # torch.testing takes both or neither
        rtol, atol = rtol or 0.0, atol or 0.0
    try:
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True,
                                   check_dtype=False, check_device=False)
    except AssertionError as failure:
        detail = next((line.strip() for line in str(failure).splitlines() if line.strip().startswith("Mismatched")), "")
        return "values differ" + (f" ({detail})" if detail else "")
    return None


def _float(text) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _kind(value) -> str:
    if not isinstance(value, dict) or not value:
        return "nothing"
    kind = next(iter(value))
    return {"raised": "an exception", "plain": "a plain value", "float": "a float", "tensor": "a tensor",
            "module": "a module", "other": f"a {value[kind]}"}.get(kind, f"a {kind}")


def _shown(value) -> str:
    return json.dumps(value.get("plain", value) if isinstance(value, dict) else value)[:80]
