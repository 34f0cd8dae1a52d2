"""The book's files: chapters numbered in reading order, and notebooks without saved widget state."""

import json
import re
from pathlib import Path

import pytest

import ttt_helpers

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


REFERENCE_PAGES = ("book/findings", "book/glossary")
"""Pages of the table of contents that are no chapters: no number, no reading time."""


def toc_files() -> list[str]:
    """The book's chapters in reading order, as _toc.yml lists them (root first), without the reference pages."""
    text = (ROOT / "_toc.yml").read_text()
    root = re.search(r"^root:\s*(\S+)", text, re.M).group(1)
    return [root, *(f for f in re.findall(r"^\s*- file:\s*(\S+)", text, re.M) if f not in REFERENCE_PAGES)]


@pytest.mark.slow
def test_the_glossary_is_listed_and_defines_every_term_the_chapters_link():
    text = (ROOT / "_toc.yml").read_text()
    assert all(re.search(rf"^\s*- file:\s*{page}$", text, re.M) for page in REFERENCE_PAGES)
    glossary = (ROOT / "book" / "glossary.md").read_text()
    block = glossary[glossary.index("```{glossary}") : glossary.rindex("```")]
    terms = {line.strip().lower() for line in block.splitlines() if line and not line[0].isspace()
             and not line.startswith(("```", ":"))}  # fmt: skip
    linked = set()
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "markdown":
                for found in re.finditer(r"\{term\}`([^`]*)`", "".join(cell["source"])):
                    inner = found.group(1)
                    linked.add((inner[inner.rindex("<") + 1 : -1] if inner.endswith(">") else inner).strip().lower())
    assert linked and linked <= terms, sorted(linked - terms)


def test_chapters_are_numbered_in_the_order_the_book_reads_them():
    files = toc_files()
    assert len(files) == len(set(files)) > 20
    numbers = [int(re.match(r"book/(\d\d)_", f).group(1)) for f in files]
    assert numbers == list(range(len(files))), dict(zip(files, numbers, strict=True))


def test_every_chapter_notebook_is_in_the_table_of_contents():
    chapters = {f"book/{p.stem}" for p in NOTEBOOKS if re.match(r"\d\d_", p.name)}
    assert chapters == set(toc_files())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_carry_no_saved_widget_state(path):
    # The page loads no widget scripts (nb_ipywidgets_js in _config.yml), so the state would be dead weight.
    assert "widgets" not in json.loads(path.read_text())["metadata"], f"{path.name}: strip metadata.widgets"


@pytest.mark.parametrize("name", ["benchmark", "al_khateeb", "ling_lam", "mohammadi"])
def test_the_wall_times_the_arena_quotes_are_recorded_by_their_benchmarks(name):
    figures = ttt_helpers.load_benchmark(name)
    assert 0 < figures["full_experiment_seconds"] < 3600
    assert (ROOT / "bench" / f"{name}.py").read_text().count(f"save_benchmark('{name}'") + (
        ROOT / "bench" / f"{name}.py").read_text().count(f'save_benchmark("{name}"') == 1


def test_benchmark_figures_round_trip_and_bad_files_are_refused(tmp_path):
    path = ttt_helpers.save_benchmark("demo", {"seconds": 1.25, "runs": [1.0, 1.5]}, tmp_path)
    assert path == tmp_path / "demo.json" and not list(tmp_path.glob("*.partial*"))
    assert ttt_helpers.load_benchmark("demo", tmp_path) == {"seconds": 1.25, "runs": [1.0, 1.5]}
    for bad in ({"seconds": float("nan")}, {"seconds": "fast"}, {}, {"runs": []}, {"ok": True}):
        with pytest.raises(ValueError, match="figure|figures"):
            ttt_helpers.save_benchmark("demo", bad, tmp_path)
    path.write_text(path.read_text().replace("1.25", "NaN"))
    with pytest.raises(ValueError, match="demo.json"):
        ttt_helpers.load_benchmark("demo", tmp_path)
    with pytest.raises(ValueError, match="could not be read"):
        ttt_helpers.load_benchmark("missing", tmp_path)
    with pytest.raises(ValueError, match="benchmark script"):
        ttt_helpers.save_benchmark("../x", {"seconds": 1}, tmp_path)


@pytest.mark.slow
def test_the_readme_shows_the_findings_the_studies_compute_once():
    text = (ROOT / "README.md").read_text()
    start, end = f"<!-- the findings: {README_FINDINGS} -->\n", "\n<!-- end of the findings -->"
    assert text.count(start) == 1 and text.count(end) == 1, "the README's findings have lost their markers"
    shown = text.split(start)[1].split(end)[0]
    table = ttt_helpers.at_a_glance()
    papers = {"Fogel (1993)", "Al-Khateeb (2012)", "Ling and Lam (2011)", "Mohammadi et al. (2013)"}
    assert set(table["paper"]) == papers
    found = ttt_helpers.findings_markdown(table, link=README_LINK)
    assert shown == found, f"update the README: print({README_FINDINGS})"
    assert "| paper |" not in text, "the README has one results table: the computed findings"


README_LINK = "[{chapter}](book/{chapter}.ipynb)"
README_FINDINGS = 'th.findings_markdown(link="[{chapter}](book/{chapter}.ipynb)")'


WORDS_PER_MINUTE = 200
"""The reading speed behind every chapter's reading time (myst's default), code and prose alike."""
ROLE = re.compile(r"\{(term|doc|ref|numref|cite)\}`([^`<]*?)(?:\s*<[^`]*>)?`")


def reading_minutes(notebook: dict) -> int:
    """A chapter's reading time: its words (a role such as {term}`text <target>` counts as its text, code counts
    too) at :data:`WORDS_PER_MINUTE`, rounded to the nearest 5 minutes, at least 5."""
    words = 0
    for cell in notebook["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            text = ROLE.sub(lambda found: found.group(2), text)
        words += len(re.findall(r"\S+", text))
    return max(5, 5 * round(words / WORDS_PER_MINUTE / 5))


@pytest.mark.parametrize("page", toc_files()[1:])
def test_every_chapter_states_its_reading_time_in_one_wording_from_its_length(page):
    notebook = json.loads((ROOT / f"{page}.ipynb").read_text())
    prose = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    stated = re.findall(r"[Rr]eading time:? [^.;,\n]*", prose)
    assert stated == [f"Reading time: about {reading_minutes(notebook)} minutes"], stated


def exercises(notebook: dict) -> dict[str, list[dict]]:
    """A chapter's exercises by label, each with the code cells of its solution (sphinx-exercise's gated form)."""
    found: dict[str, list[dict]] = {}
    solution = None
    for cell in notebook["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            for label in re.findall(r"```\{exercise\}[^`]*?:label: (\S+)", text):
                found.setdefault(label, [])
            started = re.search(r"\{solution-start\} (\S+)", text)
            if started:
                solution = started.group(1)
            if "{solution-end}" in text:
                solution = None
        elif solution is not None:
            found.setdefault(solution, []).append(cell)
    return found


def test_at_least_eight_chapters_have_exercises_with_executed_checked_solutions():
    with_exercises = []
    for page in toc_files()[1:]:
        found = exercises(json.loads((ROOT / f"{page}.ipynb").read_text()))
        if not found:
            continue
        assert 2 <= len(found) <= 3, (page, sorted(found))
        for label, cells in found.items():
            assert label.startswith("ex-") and cells, (page, label, "a solution with code")
            assert all(cell["execution_count"] is not None for cell in cells), (page, label, "executed")
            assert any("assert " in "".join(cell["source"]) for cell in cells), (page, label, "checked")
        with_exercises.append(page)
    assert len(with_exercises) >= 8, with_exercises
