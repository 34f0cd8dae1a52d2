"""The shape of the code: one import for the chapters, a package whose imports run one way, no giant modules."""

import ast
import json
import re
from pathlib import Path

import pytest

import ttt_helpers

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evolving_ttt"
MODULES = sorted(PACKAGE.rglob("*.py"))

# Each module's layer; a module may import only from lower layers or from its own system's subpackage. No system
# imports another: what they share (seeds, argument checks, Fogel's rule base as a yardstick) lives below them.
LAYERS = {
    "evolving_ttt.archives": -1,  # reading .npz archives, below the file layer that re-exports it
    "evolving_ttt.game": 0,
    "evolving_ttt.numerics": 0,
    "evolving_ttt.seeds": 0.1,  # a run's seed and one generator per trial, for every system
    "evolving_ttt.records": 0,  # writing files whole
    "evolving_ttt.reading": 0,  # reading files with checks
    "evolving_ttt.benchmarks": 0.2,  # the benchmarks' figures files, read and written through the two above
    "evolving_ttt.program": 0,
    "evolving_ttt.run_cache": 0.5,
    "evolving_ttt.arguments": 0,
    "evolving_ttt.store": 0.5,
    "evolving_ttt.parallel": 1,
    "evolving_ttt.drawing": 1,
    "evolving_ttt.statistics": 1,
    "evolving_ttt.verdicts": 1.2,  # the one verdict rule: below the systems, which state their claims with it
    "evolving_ttt.tables": 1.5,
    "evolving_ttt.perfect": 1,
    "evolving_ttt.outcomes": 2,
    "evolving_ttt.rule_base": 0.3,  # Fogel's rule base: his opponent, and every system's yardstick
    "evolving_ttt.fogel_score": 2.2,  # the rule base as a policy table and the exact 32-game score of any player
    "evolving_ttt.players": 2.5,
    "evolving_ttt.kit": 2.7,  # the system kit: below the systems, which may build on it
    "evolving_ttt.mcts_players": 3.2,  # the MCTS players' file: above evolving_ttt.mcts (a system-layer module)
    "evolving_ttt.systems": 3.5,  # the registry: above the systems, which it loads by name (never imports)
    "evolving_ttt.arena": 4,
    "evolving_ttt.sweeps": 4.5,
    "evolving_ttt.studies": 4.6,
    "evolving_ttt.curves": 4.6,  # learning curves by games played: reads curve studies through sweeps
    "evolving_ttt.conformance": 4.7,  # the behavioural check of a system: runs it through the tools above
    "evolving_ttt.play": 5,
    "evolving_ttt.static_board": 5,
    "evolving_ttt.plots": 5,
    "evolving_ttt.cli": 6,
}
SYSTEM_LAYER = 3  # fogel, al_khateeb, ling_lam, mohammadi, q_learning (a module or a subpackage each)


def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(name):
    return LAYERS.get(name, 0 if name == "evolving_ttt" else SYSTEM_LAYER)


def system_of(name):
    return name.split(".")[1] if name.count(".") >= 1 else ""


def package_imports(path):
    """The evolving_ttt modules that ``path`` imports (at any depth of its code)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evolving_ttt"):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if (PACKAGE.parent / (candidate.replace(".", "/") + ".py")).exists()
                          or (PACKAGE.parent / candidate.replace(".", "/")).is_dir() else node.module)  # fmt: skip
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("evolving_ttt")}
    return found


def test_ttt_helpers_defines_nothing_and_only_re_exports_the_package():
    tree = ast.parse((ROOT / "ttt_helpers.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.If):  # if __name__ == "__main__": sys.exit(main())
            assert ast.unparse(node.test) == "__name__ == '__main__'"
            continue
        assert isinstance(node, (ast.Import, ast.ImportFrom, ast.Expr)), ast.unparse(node)[:80]
        if isinstance(node, ast.ImportFrom):
            assert node.module.startswith("evolving_ttt"), node.module


def test_every_name_the_chapters_use_is_exported_by_ttt_helpers():
    used = set()
    for notebook in sorted((ROOT / "book").glob("*.ipynb")):
        for cell in json.loads(notebook.read_text())["cells"]:
            if cell["cell_type"] == "code":
                used |= set(re.findall(r"\bth\.([A-Za-z_]\w*)", "".join(cell["source"])))
    assert len(used) > 100
    assert sorted(name for name in used if not hasattr(ttt_helpers, name)) == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_module_opens_with_a_docstring_and_stays_readable_in_size(path):
    tree = ast.parse(path.read_text())
    assert ast.get_docstring(tree), f"{path.name} has no module docstring"
    assert len(path.read_text().splitlines()) <= 900


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_run_one_way(path):
    here = module_name(path)
    for imported in package_imports(path):
        systems = layer(here) == layer(imported) == SYSTEM_LAYER
        allowed = systems and system_of(here) == system_of(imported)
        assert allowed or layer(imported) < layer(here), f"{here} imports {imported}, which is not below it"


def test_the_package_has_no_import_cycle():
    graph = {module_name(p): {m for m in package_imports(p) if m != module_name(p)} for p in MODULES}
    state = {}

    def visit(name, trail):
        if state.get(name) == "done":
            return
        assert state.get(name) != "open", "import cycle: " + " -> ".join(trail + [name])
        state[name] = "open"
        for other in graph.get(name, ()):
            visit(other, trail + [name])
        state[name] = "done"

    for name in graph:
        visit(name, [])


def test_no_name_is_exported_twice_by_ttt_helpers():
    # Two systems exporting the same name would silently shadow one of them in every chapter.
    tree = ast.parse((ROOT / "ttt_helpers.py").read_text())
    names = [a.asname or a.name for node in tree.body if isinstance(node, ast.ImportFrom) for a in node.names]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_the_settings_classes_old_names_are_kept_as_aliases():
    # Renamed to one vocabulary (issue 36); the old names stay for one release.
    for new, old in (("FogelSettings", "ExperimentConfig"), ("AlKhateebSettings", "AlKhateebConfig"),
                     ("LingLamSettings", "LingLamConfig"), ("MohammadiSettings", "MohammadiConfig")):  # fmt: skip
        assert getattr(ttt_helpers, old) is getattr(ttt_helpers, new)
