"""Same seed, same bits: the battery of tests/same_bits_battery.py under emulated processors (chapter 9).

What it proves. The battery (the portable numerics on fixed grids, a short run of each of the four systems
through the registry, one sweep task of each, the arena's exact yardsticks of every saved player, and the table
at a glance) runs in a fresh process under each of:

1. as is;
2. numpy's baseline SIMD only (``NPY_DISABLE_CPU_FEATURES`` naming every target numpy dispatches to beyond its
   baseline: ``X86_V3 X86_V4 AVX512_ICL AVX512_SPR`` for numpy 2.4, since ``X86_V3 X86_V4`` alone leaves the
   ``AVX512_ICL`` loops on);
3. glibc's libm without FMA (``GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA``);
4. OpenBLAS's SSE3 kernel (``OPENBLAS_CORETYPE=Prescott``);
5. numba compiling for a generic x86-64 processor without AVX (``NUMBA_CPU_NAME=generic``, with a fresh
   ``NUMBA_CACHE_DIR`` so that nothing compiled for this processor is reused);
6. all four together: an old x86-64 processor, on which every library takes its oldest path at once;

each with a fresh ``TTT_RUN_CACHE``. The test runs 1 and 6 (`make test` runs 1 before the tests, beside the strict
build, and the test takes that run's hashes: :data:`WARM_UP`); only when 6 differs from the committed hashes (or
fails) are 2 to 5 run, one emulation each, to say which of the four is to blame (four more runs of the battery that a
pass does not need: 6 differing from the committed hashes fails the test either way). Every part's sha256 must be the
same in every environment run and equal to the committed ``tests/same_bits_hashes.json``. Each process also reports
what it sees of the processor, and the test checks that every emulation took effect (numpy dispatches to no target
beyond its baseline, glibc reports AVX2 and FMA inactive, OpenBLAS runs its Prescott kernel, numba targets
``generic`` without features), so that a variable that silently did nothing cannot make the test pass.

What it cannot prove. Only x86-64, with the pinned packages of requirements.txt and this machine's glibc: an ARM
processor, another glibc, another numpy, OpenBLAS, numba or LLVM may compute other bits, and only a run there
shows it. An emulation works by switching features off: it cannot add a feature the machine lacks, so a machine
without AVX-512 cannot show what a machine with AVX-512 computes. That is why the committed hashes matter: every
machine compares itself with the same values, so a machine with AVX-512 and one without check each other through
the file. On a processor that is not x86-64 the test runs the as-is and numba-generic environments (the others
emulate x86-64 processors and mean nothing there), compares them with the committed hashes, and then reports
itself skipped with the reason, so that the partial check is not mistaken for the whole one.

Refresh the committed hashes (only when a change is meant to change a part's bits) with
``python tests/same_bits_battery.py tests/same_bits_hashes.json --refresh``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BATTERY = HERE / "same_bits_battery.py"
COMMITTED = HERE / "same_bits_hashes.json"
REFRESH = f"python tests/{BATTERY.name} tests/{COMMITTED.name} --refresh"
# A minute or more: the battery under imitations of other processors (make test, not make test-fast).
pytestmark = pytest.mark.slow
X86_64 = platform.machine().lower() in ("x86_64", "amd64")


def _battery():
    """The battery's module, loaded once and registered under its name (so that its functions pickle by name)."""
    spec = importlib.util.spec_from_file_location("same_bits_battery", BATTERY)
    if spec.name not in sys.modules:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules[spec.name]


def numpy_dispatch_targets() -> list[str]:
    """Every SIMD target this numpy dispatches to beyond its baseline (``X86_V3 X86_V4 AVX512_ICL AVX512_SPR``)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__

    return list(__cpu_dispatch__)


NUMPY_BASELINE = {"NPY_DISABLE_CPU_FEATURES": " ".join(numpy_dispatch_targets())}
GLIBC_NO_FMA = {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA"}
OPENBLAS_SSE3 = {"OPENBLAS_CORETYPE": "Prescott"}
NUMBA_GENERIC = {"NUMBA_CPU_NAME": "generic"}
ENVIRONMENTS: dict[str, dict[str, str]] = {
    "as-is": {},
    "numpy-baseline": NUMPY_BASELINE,
    "glibc-no-fma": GLIBC_NO_FMA,
    "openblas-sse3": OPENBLAS_SSE3,
    "numba-generic": NUMBA_GENERIC,  # and a fresh NUMBA_CACHE_DIR, made per run
    "all-four": NUMPY_BASELINE | GLIBC_NO_FMA | OPENBLAS_SSE3 | NUMBA_GENERIC,
}
"""The six environments, by name: the variables each sets on top of this process's environment."""
COMBINED = "all-four"
"""The environment of every emulation at once, run every time on x86-64."""
SINGLES = ("numpy-baseline", "glibc-no-fma", "openblas-sse3", "numba-generic")
"""The emulations one at a time: run only to say which one a difference of :data:`COMBINED`'s comes from."""
FIRST = ("as-is", COMBINED)
"""The environments every run of the test uses on x86-64."""
X86_ONLY = ("numpy-baseline", "glibc-no-fma", "openblas-sse3", COMBINED)
"""The environments that emulate x86-64 processors: they mean nothing on another processor."""
ELSEWHERE = tuple(name for name in ENVIRONMENTS if name not in X86_ONLY)
"""The environments the test runs on a processor that is not x86-64: as-is and numba-generic."""
CLEARED = (*_battery().EMULATION_VARIABLES, "TTT_RUN_CACHE")
"""Variables removed from every run's environment before its own are set, so that "as is" is as is."""


def run_battery(name: str, folder: Path) -> dict:
    """The battery in a fresh process under environment ``name``: ``{"hashes", "probe", "seconds"}``."""
    work = folder / name
    work.mkdir()
    env = {key: value for key, value in os.environ.items() if key not in CLEARED}
    env |= ENVIRONMENTS[name] | {"TTT_RUN_CACHE": str(work / "run-cache")}
    if "NUMBA_CPU_NAME" in ENVIRONMENTS[name]:
        env["NUMBA_CACHE_DIR"] = str(work / "numba-cache")
    out, probe = work / "hashes.json", work / "probe.json"
    start = time.perf_counter()
    done = subprocess.run([sys.executable, str(BATTERY), str(out), "--probe", str(probe)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=1800)  # fmt: skip
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        return {"error": f"exit status {done.returncode}:\n{done.stderr[-3000:]}", "seconds": seconds}
    return {"hashes": json.loads(out.read_text()), "probe": json.loads(probe.read_text()), "seconds": seconds,
            "log": done.stderr}  # fmt: skip


WARM_UP = "TTT_SAME_BITS_WARM_UP"
"""An environment variable naming the folder where `make test` ran the battery as is before the tests, beside the
strict build (``hashes.json`` and ``probe.json``, written by this very code minutes earlier, in a fresh process with
a fresh run cache): the test takes that run as its as-is run instead of repeating it."""


def warm_up_run() -> dict | None:
    """The as-is run `make test` made before the tests (:data:`WARM_UP`), or None when there is none, or when its
    environment set an emulation variable (then it was not as is, and the test runs its own)."""
    folder = os.environ.get(WARM_UP)
    if not folder:
        return None
    try:
        hashes = json.loads((Path(folder) / "hashes.json").read_text())
        probe = json.loads((Path(folder) / "probe.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(probe, dict) or probe.get("emulation_variables") != {}:
        return None
    return {"hashes": hashes, "probe": probe, "seconds": 0.0, "warm_up": True}


PRESCOTT_NAMES = ("prescott", "katmai")
"""What OpenBLAS calls its Prescott kernel: a build for a list of processors (numpy's) makes every older core an alias
of Prescott's kernel, and ``openblas_get_corename`` names the first alias it checks, Katmai."""


def emulation_problems(name: str, seen: dict) -> tuple[list[str], list[str]]:
    """What shows that environment ``name`` did not emulate what it should (problems), and what could not be
    checked on this machine (notes), from its process's ``probe``."""
    problems, notes = [], []
    variables = ENVIRONMENTS[name]
    if "NPY_DISABLE_CPU_FEATURES" in variables and seen["numpy_dispatch"]:
        problems.append(f"{name}: numpy still dispatches to {seen['numpy_dispatch']}")
    if "GLIBC_TUNABLES" in variables:
        if seen["glibc_active"] is None:
            notes.append(f"{name}: glibc does not say whether AVX2 and FMA are active (glibc before 2.33?)")
        elif any(seen["glibc_active"].values()):
            problems.append(f"{name}: glibc still uses {[k for k, v in seen['glibc_active'].items() if v]}")
    if "OPENBLAS_CORETYPE" in variables:
        if seen["openblas_core"] is None:
            notes.append(f"{name}: numpy's BLAS is not its bundled OpenBLAS; its kernel is not known")
        elif seen["openblas_core"].lower() not in PRESCOTT_NAMES:
            problems.append(f"{name}: OpenBLAS runs its {seen['openblas_core']} kernel, not Prescott")
    if "NUMBA_CPU_NAME" in variables and seen["numba_cpu"] != {"name": "generic", "features": ""}:
        problems.append(f"{name}: numba targets {seen['numba_cpu']}, not a generic processor without features")
    return problems, notes


def differences(results: dict[str, dict[str, str]], committed: dict[str, str]) -> list[str]:
    """One entry per part whose hash differs anywhere: where it differs, the committed hash, and the environments
    grouped by the hash they computed. ``results`` maps environment -> {part: hash}; ``committed`` is {part: hash}."""
    lines = []
    for part in sorted(committed.keys() | {p for hashes in results.values() for p in hashes}, key=str):
        expected = committed.get(part, "missing")
        groups: dict[str, list[str]] = {}
        for name, hashes in results.items():
            groups.setdefault(hashes.get(part, "missing"), []).append(name)
        if set(groups) == {expected}:
            continue
        differing = [name for value, names in groups.items() if value != expected for name in names]
        where = "every environment" if len(differing) == len(results) else ", ".join(differing)
        entry = [f"{part}: differs under {where}; committed {expected}"]
        entry += [f"    {', '.join(names)}: {'the committed hash' if value == expected else value}"
                  for value, names in groups.items()]  # fmt: skip
        lines.append("\n".join(entry))
    return lines


def committed_hashes() -> dict[str, str]:
    data = json.loads(COMMITTED.read_text())
    return {key: value for key, value in data.items() if key != _battery().NOTE_KEY}


def test_same_bits_under_emulated_processors():
    """The battery gives the committed hashes under every environment (see the module's docstring)."""
    committed = committed_hashes()
    names = list(FIRST if X86_64 else ELSEWHERE)
    warm_up = warm_up_run()
    with tempfile.TemporaryDirectory(prefix="same-bits-") as folder, ThreadPoolExecutor(max_workers=2) as pool:
        # Two at a time: as-is compiles the kernels into numba's cache (unless make test's warm-up did), the
        # environments with numba's generic target each into a cache of their own.
        runs = {"as-is": warm_up} if warm_up is not None else {}
        names = [name for name in names if name not in runs]
        runs |= dict(zip(names, pool.map(lambda name: run_battery(name, Path(folder)), names), strict=True))
        combined = runs.get(COMBINED, {})
        if X86_64 and ("error" in combined or differences({COMBINED: combined["hashes"]}, committed)):
            runs |= dict(zip(SINGLES, pool.map(lambda name: run_battery(name, Path(folder)), SINGLES), strict=True))
    runs = {name: runs[name] for name in ENVIRONMENTS if name in runs}
    timing = ", ".join(f"{name} " + ("run by make test before the tests" if run.get("warm_up") else
                                      f"{run['seconds']:.0f} s") for name, run in runs.items())  # fmt: skip
    print(f"same-bits battery wall time per environment: {timing}")
    failed = [f"{name}: the battery failed, {run['error']}" for name, run in runs.items() if "error" in run]
    assert not failed, "\n".join(failed)

    problems, notes = [], []
    for name, run in runs.items():
        found, unchecked = emulation_problems(name, run["probe"])
        problems += found
        notes += unchecked
    assert not problems, "an emulation did not take effect, so its run proves nothing:\n" + "\n".join(problems)
    for note in notes:
        warnings.warn(f"same bits: not checked on this machine: {note}", stacklevel=1)

    lines = differences({name: run["hashes"] for name, run in runs.items()}, committed)
    advice = (f"\nIf every environment agrees and the change was meant to change those bits, refresh the committed "
              f"hashes: {REFRESH}. If environments disagree, the part uses a processor-dependent function: "
              f"`python tests/{BATTERY.name} OUT --parts PART --dump DIR` under two environments shows the "
              "bytes.")  # fmt: skip
    assert not lines, (f"same seed, other bits in {len(lines)} part(s) (as is: {runs['as-is']['probe']}; "
                       f"{timing}):\n" + "\n".join(lines) + advice)  # fmt: skip
    if not X86_64:
        pytest.skip(f"{' and '.join(ELSEWHERE)} give the committed hashes; {', '.join(X86_ONLY)} were not run: they "
                    f"emulate x86-64 processors and this machine is {platform.machine()}")  # fmt: skip


def test_same_bits_committed_hashes_cover_exactly_the_batterys_parts():
    """A part added to the battery needs its committed hash, and a committed hash needs its part."""
    battery = _battery()
    data = json.loads(COMMITTED.read_text())
    assert isinstance(data.get(battery.NOTE_KEY), str) and REFRESH.split(" ", 1)[1] in data[battery.NOTE_KEY]
    committed = committed_hashes()
    missing, extra = set(battery.PARTS) - set(committed), set(committed) - set(battery.PARTS)
    assert not missing and not extra, (f"parts without a committed hash: {sorted(missing)}; committed hashes of no "
                                       f"part: {sorted(extra)}; refresh with {REFRESH}")  # fmt: skip
    assert all(isinstance(value, str) and len(value) == 64 and set(value) <= set("0123456789abcdef")
               for value in committed.values())  # fmt: skip


def test_a_difference_under_all_four_runs_the_single_emulations_to_name_the_one_to_blame(monkeypatch):
    """The four single emulations run only when all-four differs, and the failure then names the one that differs."""
    committed = committed_hashes()
    part = sorted(committed)[0]
    probe = {"numpy_dispatch": [], "glibc_active": {"AVX2": False, "FMA": False}, "openblas_core": "Prescott",
             "numba_cpu": {"name": "generic", "features": ""}}  # fmt: skip
    ran = []

    def fake_battery(name, folder):
        ran.append(name)
        wrong = name in ("glibc-no-fma", COMBINED) and differs
        return {"hashes": committed | ({part: "0" * 64} if wrong else {}), "probe": probe, "seconds": 0.0}

    monkeypatch.setattr(sys.modules[__name__], "run_battery", fake_battery)
    monkeypatch.setattr(sys.modules[__name__], "X86_64", True)
    monkeypatch.delenv(WARM_UP, raising=False)  # make test's warm-up run would stand for as-is
    differs = False
    test_same_bits_under_emulated_processors()
    assert sorted(ran) == sorted(FIRST)
    ran.clear()
    differs = True
    with pytest.raises(AssertionError, match=rf"{part}: differs under glibc-no-fma, all-four;"):
        test_same_bits_under_emulated_processors()
    assert sorted(ran) == sorted(ENVIRONMENTS)


def test_make_tests_warm_up_run_stands_for_the_as_is_run_only_if_it_was_as_is(monkeypatch, tmp_path):
    """With the warm-up's files named, as-is is not run again and its hashes are checked like any run's; a warm-up
    whose environment set an emulation variable (or a missing one) is not taken for as is."""
    committed = committed_hashes()
    part = sorted(committed)[0]
    probe = {"numpy_dispatch": [], "glibc_active": {"AVX2": False, "FMA": False}, "openblas_core": "Prescott",
             "numba_cpu": {"name": "generic", "features": ""}, "emulation_variables": {}}  # fmt: skip
    ran = []

    def fake_battery(name, folder):
        ran.append(name)
        return {"hashes": committed, "probe": probe, "seconds": 0.0}

    monkeypatch.setattr(sys.modules[__name__], "run_battery", fake_battery)
    monkeypatch.setattr(sys.modules[__name__], "X86_64", True)
    monkeypatch.setenv(WARM_UP, str(tmp_path))
    (tmp_path / "probe.json").write_text(json.dumps(probe))
    (tmp_path / "hashes.json").write_text(json.dumps(committed))
    test_same_bits_under_emulated_processors()
    assert ran == [COMBINED]
    (tmp_path / "hashes.json").write_text(json.dumps(committed | {part: "0" * 64}))
    with pytest.raises(AssertionError, match=rf"{part}: differs under as-is;"):
        test_same_bits_under_emulated_processors()
    for emulated in ({**probe, "emulation_variables": {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2"}}, None):
        ran.clear()
        if emulated is None:
            (tmp_path / "probe.json").unlink()
        else:
            (tmp_path / "probe.json").write_text(json.dumps(emulated))
        test_same_bits_under_emulated_processors()
        assert sorted(ran) == sorted(FIRST)


def test_the_battery_on_two_processes_gives_each_part_its_committed_hash_in_order():
    """`make test`'s run before the tests computes the parts two at a time (``--processes 2``)."""
    names = ["al_khateeb_sweep_task", "fogel_sweep_task", "mohammadi_sweep_task"]
    hashes = _battery().run_battery(names, processes=2)
    assert list(hashes) == names and hashes == {name: committed_hashes()[name] for name in names}
