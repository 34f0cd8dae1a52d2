"""make book-fresh's executor (evolving_ttt.book_execution): chapters go out the longest first, by the running time
their committed outputs record, and are executed into jupyter-cache's cache, where the build finds them."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evolving_ttt.book_execution import execute_chapters, longest_first, main, recorded_seconds


def notebook_with_cells(path, seconds_per_cell):
    cells = []
    for k, seconds in enumerate(seconds_per_cell):
        start, end = f"2026-11-28T04:00:{k:02d}.000000Z", f"2026-11-28T04:00:{k:02d}.{int(seconds * 1e6):06d}Z"
        stamps = {"iopub.execute_input": start, "shell.execute_reply": end} if seconds else {}
        cells.append({"cell_type": "code", "metadata": {"execution": stamps} if stamps else {}, "source": "1",
                      "outputs": [], "execution_count": None})  # fmt: skip
    cells.append({"cell_type": "markdown", "metadata": {}, "source": "text"})
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return str(path)


def test_the_recorded_time_is_the_sum_over_timed_code_cells(tmp_path):
    assert recorded_seconds(notebook_with_cells(tmp_path / "a.ipynb", [0.25, 0, 0.5])) == pytest.approx(0.75)
    (tmp_path / "broken.ipynb").write_text("{not json")
    assert recorded_seconds(tmp_path / "broken.ipynb") == 0 == recorded_seconds(tmp_path / "missing.ipynb")


def test_chapters_go_out_the_longest_first(tmp_path):
    short = notebook_with_cells(tmp_path / "short.ipynb", [0.1])
    long = notebook_with_cells(tmp_path / "long.ipynb", [0.5, 0.4])
    untimed = notebook_with_cells(tmp_path / "untimed.ipynb", [0])
    middle = notebook_with_cells(tmp_path / "middle.ipynb", [0.3])
    assert longest_first([short, untimed, long, middle]) == [long, middle, short, untimed]


@pytest.mark.slow  # starts a Jupyter kernel
def test_a_chapter_is_executed_into_the_cache_once(tmp_path, capsys):
    book = tmp_path / "book"
    book.mkdir()
    chapter = book / "chapter.ipynb"
    chapter.write_text(json.dumps({
        "cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": "print(6 * 7)", "outputs": [],
                   "execution_count": None}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5}))  # fmt: skip
    cache = tmp_path / "cache"
    jcache = str(Path(sys.executable).parent / "jcache")
    subprocess.run([jcache, "notebook", "-p", str(cache), "add", str(chapter)], input="y\n", text=True, check=True,
                   capture_output=True)  # fmt: skip
    assert execute_chapters(cache, [str(chapter)], timeout=120) == 0
    assert "1 executed, 0 failed" in capsys.readouterr().out
    from jupyter_cache import get_cache

    store = get_cache(str(cache))
    bundle = store.get_cache_bundle(store.get_cached_project_nb(store.list_project_records()[0].pk).pk)
    assert bundle.nb.cells[0].outputs[0]["text"] == "42\n"
    assert execute_chapters(cache, [str(chapter)]) == 0  # cached: nothing to execute
    assert "executing 0 of 1 chapters" in capsys.readouterr().out


def test_the_command_without_notebooks_prints_its_usage(capsys):
    assert main(["cache-only"]) == 2
    assert "usage: python -m evolving_ttt.book_execution CACHE NOTEBOOK..." in capsys.readouterr().err
