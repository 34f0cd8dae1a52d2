"""Every long command, interrupted part way by SIGINT (Ctrl-C: to the whole process group) or SIGTERM (``kill PID``:
to the command alone), stops at once with exit 130 or 143 and one line, no traceback; it leaves no output file and
no partial file (outputs or run cache), no process of its own (a worker blocked on a pipe, say); and the same
command run again (after SIGINT) succeeds."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from processes import living

REPO = Path(__file__).resolve().parents[1]
# Each case runs a command for seconds before the signal (make test, not make test-fast).
pytestmark = pytest.mark.slow

# Sizes that run for a few seconds on two workers, so that the signal comes while the run is going.
COMMANDS = {
    "evolve": ["evolve", "--trials", "2", "--generations", "1500", "--parents", "50", "--out", "{tmp}/run.npz",
               "--champion", "{tmp}/champion.json", "--workers", "2"],
    "al-khateeb": ["al-khateeb", "--runs", "2", "--generations", "1500", "--out", "{tmp}/run.npz",
                   "--champion", "{tmp}/champion.json", "--workers", "2"],
    "ling-lam": ["ling-lam", "--seeds", "2", "--iterations", "200000", "--out", "{tmp}/run.npz", "--workers", "2"],
    "mohammadi": ["mohammadi", "--runs", "2", "--generations", "40", "--out", "{tmp}/run.json",
                  "--champion", "{tmp}/champion.json", "--workers", "2"],
    "sweep run": ["sweep", "run", "fogel", "--set", "generations=500", "--set", "trials=1", "--seeds", "2",
                  "--db", "{tmp}/sweep.db", "--workers", "2"],
}  # fmt: skip
# The run again after an interrupt only has to finish and write its outputs where the interrupted one left nothing:
# the same command at a length of a second or two (the sweep's stays the same: it resumes its database, whose
# definition must not change).
SHORTER = {"--generations": "4", "--iterations": "2000"}
"""The value each of these options takes in the shorter run, whatever it is in COMMANDS."""
OUTPUTS = {"run.npz", "run.json", "champion.json"}  # the sweep's --db is made before the run, to resume from
WORKERS = {"evolve", "fogel", "al-khateeb", "ling-lam", "sweep run"}  # the commands that fork workers here
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


def command_line(name: str, tmp: Path, shorter: bool = False) -> list[str]:
    """The command ``name`` writing into ``tmp``; with ``shorter``, its run cut to a second or two (SHORTER)."""
    arguments = COMMANDS[name]
    if shorter:
        arguments = [SHORTER.get(option, a) for option, a in zip(["", *arguments], arguments, strict=False)]
    return [sys.executable, "-m", "ttt_helpers", *(a.format(tmp=tmp) for a in arguments), "--quiet"]


def environment(tmp: Path) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "TTT_RUN_CACHE": str(tmp / "cache"), "PYTHONPATH": path}


def strays(group: int, tmp: Path) -> list[psutil.Process]:
    """Living processes of the command's process group, or whose command line names its folder."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        if process.pid == os.getpid():
            continue
        try:
            if os.getpgid(process.pid) == group or str(tmp) in " ".join(process.info["cmdline"] or []):
                found.append(process)
        except (ProcessLookupError, PermissionError, psutil.Error):
            pass
    return living(found)


def wait_for_none(find, seconds: float = 5.0) -> list:
    deadline = time.monotonic() + seconds
    while (left := find()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def left_files(tmp: Path) -> list[str]:
    """Outputs and partial files (of outputs or of the run cache) anywhere in the command's folder."""
    return sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.name in OUTPUTS or ".partial" in p.name)


def block_both() -> None:
    """In the child before it runs the command: SIGINT and SIGTERM blocked, as a parent's thread may leave them."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def start_and_interrupt(
    name: str, tmp: Path, sig: signal.Signals, inherit_blocked: bool = False
) -> tuple[subprocess.Popen, list, str]:
    """Start the command in a session of its own; once its run is going, send ``sig``: SIGINT to the whole group
    (as Ctrl-C in a terminal does), SIGTERM to the command alone (as ``kill PID`` does). With ``inherit_blocked``
    the command starts with both signals blocked in the mask it inherits."""
    stderr = tmp / "stderr.txt"
    with open(stderr, "wb") as errors:
        process = subprocess.Popen(command_line(name, tmp), cwd=tmp, env=environment(tmp), start_new_session=True,
                                   stdout=subprocess.DEVNULL, stderr=errors,
                                   preexec_fn=block_both if inherit_blocked else None)  # fmt: skip
    parent = psutil.Process(process.pid)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        if parent.children() if name in WORKERS else stderr.read_bytes().count(b"\n"):  # workers, or the first line
            break
        time.sleep(0.05)
    time.sleep(0.4)
    assert process.poll() is None, f"{name} ended before it could be interrupted; give it a longer run"
    children = parent.children(recursive=True)
    if name in WORKERS:
        assert children, f"{name} --workers 2 started no worker process"
    started = time.monotonic()
    if sig == signal.SIGINT:
        os.killpg(process.pid, sig)
    else:
        process.send_signal(sig)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise AssertionError(f"{name} did not stop within 20 s of {sig.name}") from None
    took = time.monotonic() - started
    text = stderr.read_text(errors="replace")
    # What a failure below needs to be understood: how the command ended, and how long after the signal.
    text_with_timing = f"{text}\n[exit status {process.returncode}, {took:.2f} s after {sig.name}]"
    return process, children, text_with_timing if process.returncode != EXIT_CODES[sig] else text


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("name", list(COMMANDS))
def test_an_interrupted_command_leaves_nothing_behind_and_runs_again(tmp_path, name, sig):
    process, children, stderr = start_and_interrupt(name, tmp_path, sig)
    try:
        assert wait_for_none(lambda: living(children)) == [], f"{name}: workers outlived the command after {sig.name}"
        assert wait_for_none(lambda: strays(process.pid, tmp_path)) == []
    finally:
        for stray in strays(process.pid, tmp_path):  # never leave them to the next test
            stray.kill()
    assert left_files(tmp_path) == [], stderr
    # last, what the command prints and returns when interrupted: one line, and 128 + the signal's number
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert lines and "interrupted" in lines[-1].lower(), stderr
    assert process.returncode == EXIT_CODES[sig], stderr
    if sig == signal.SIGTERM:  # both signals leave the same nothing behind: one run again per command is enough
        return
    again = subprocess.run(command_line(name, tmp_path, shorter=True), cwd=tmp_path, env=environment(tmp_path),
                           capture_output=True, text=True, timeout=120, start_new_session=True)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    written = sorted(p.name for p in tmp_path.iterdir() if p.name in OUTPUTS)
    expected = {"sweep run": [], "ling-lam": ["run.npz"], "mohammadi": ["champion.json", "run.json"]}
    assert written == expected.get(name, ["champion.json", "run.npz"])
    assert not [p for p in tmp_path.rglob("*") if ".partial" in p.name]
    if name == "sweep run":
        assert "2 of 2 tasks done" in again.stdout


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_command_started_with_the_signals_blocked_still_stops(tmp_path, sig):
    """A parent may start the command with SIGINT and SIGTERM blocked (its thread's mask is inherited through
    fork and exec); the command unblocks them, so that Ctrl-C still stops it at once."""
    process, children, stderr = start_and_interrupt("al-khateeb", tmp_path, sig, inherit_blocked=True)
    try:
        assert wait_for_none(lambda: living(children)) == []
    finally:
        for stray in strays(process.pid, tmp_path):
            stray.kill()
    assert process.returncode == EXIT_CODES[sig], stderr
    assert left_files(tmp_path) == []
    assert "interrupted" in stderr.strip().splitlines()[-1].lower(), stderr


FINALIZER_FAILS = """
import sys
from evolving_ttt import program
class HalfBuilt:  # as an object of numba's compiler that a signal caught in its constructor
    def __del__(self):
        raise AttributeError("no attribute '_as_parameter_'")
kept = HalfBuilt()
program.finish(int(sys.argv[1]))
"""


@pytest.mark.parametrize("status", [130, 143])
def test_an_interrupted_command_closes_down_without_a_finalizers_traceback(status):
    ended = subprocess.run([sys.executable, "-c", FINALIZER_FAILS, str(status)], capture_output=True, text=True)
    assert ended.returncode == status and "Traceback" not in ended.stderr and ended.stderr == ""


def test_a_command_that_ran_to_its_end_still_shows_a_failing_finalizer():
    ended = subprocess.run([sys.executable, "-c", FINALIZER_FAILS, "0"], capture_output=True, text=True)
    assert ended.returncode == 0 and "Exception ignored" in ended.stderr and "_as_parameter_" in ended.stderr


LOST_INTERRUPT = """
import ctypes, os, signal, sys
from evolving_ttt import cli

command = cli._command


def lossy(args, outputs):
    # Ctrl-C while code runs inside a ctypes callback (as numba's compiler does): the KeyboardInterrupt raised there
    # is only reported, and the command would run on to its end.
    ctypes.CFUNCTYPE(None)(lambda: os.kill(os.getpid(), signal.SIGINT))()
    return command(args, outputs)


cli._command = lossy
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("generations", [3, 20_000])
def test_an_interrupt_a_library_lost_still_stops_the_command_before_it_writes(tmp_path, generations):
    # 3 generations end before the stop is raised again (the outputs must not be put in place); 20,000 would take
    # about a minute, and the stop raised again a second later must end the run
    out, champion = str(tmp_path / "run.npz"), str(tmp_path / "champion.json")
    arguments = ["evolve", "--trials", "1", "--generations", str(generations), "--parents", "8", "--out", out,
                 "--champion", champion, "--workers", "1", "--quiet"]  # fmt: skip
    start = time.monotonic()
    ended = subprocess.run([sys.executable, "-c", LOST_INTERRUPT, *arguments], capture_output=True, text=True,
                           env=environment(tmp_path), cwd=tmp_path, timeout=120)  # fmt: skip
    assert time.monotonic() - start < 20
    assert ended.returncode == 130, ended.stderr
    assert ended.stderr.strip().splitlines()[-1] == "interrupted: nothing was written"
    assert "Traceback" not in ended.stderr
    assert left_files(tmp_path) == []


STOP_TURNED_INTO_SYSTEM_ERROR = """
import os, signal, sys, time
from evolving_ttt import cli

command = cli._command


def converted(args, outputs):
    # SIGTERM while numba's dispatcher loads a kernel from its cache: the handler's Terminated is raised inside the
    # unpickling callback, and the dispatcher raises SystemError with it as the cause
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    except KeyboardInterrupt as stop:
        raise SystemError("CPUDispatcher(<function f>) returned a result with an exception set") from stop
    return command(args, outputs)


cli._command = converted
sys.exit(cli.main(sys.argv[1:]))
"""


def test_a_stop_a_library_turned_into_another_exception_ends_the_command_as_the_stop(tmp_path):
    out = str(tmp_path / "run.npz")
    arguments = ["evolve", "--trials", "1", "--generations", "3", "--parents", "8", "--out", out, "--quiet"]
    ended = subprocess.run([sys.executable, "-c", STOP_TURNED_INTO_SYSTEM_ERROR, *arguments], capture_output=True,
                           text=True, env=environment(tmp_path), cwd=tmp_path, timeout=120)  # fmt: skip
    assert ended.returncode == 143, ended.stderr
    assert ended.stderr.strip().splitlines() == ["interrupted: nothing was written"], ended.stderr
    assert left_files(tmp_path) == []
