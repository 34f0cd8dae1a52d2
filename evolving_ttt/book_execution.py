"""Execute the book's chapters into jupyter-cache's cache on every core, the longest first (``make book-fresh``).

jupyter-cache's own parallel executor hands the notebooks to its processes in the order they were added, four at
a time: one process can be left running the last heavy chapters while the other has nothing to do. Here each
chapter goes out alone, in the order of the running time its committed outputs record (nbclient's timestamps on
every code cell), the longest first. That is the longest-processing-time rule: at the end, the processes wait
for each other at most about as long as the shortest chapters take.

    python -m evolving_ttt.book_execution CACHE NOTEBOOK...

executes the notebooks that the cache at ``CACHE`` (``jcache project``) holds no current outputs of, prints one line
per chapter and a summary, and exits with the number of chapters that failed (the build then executes a failed one
again and stops at its error).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import time
from datetime import datetime
from pathlib import Path


def recorded_seconds(path: str | Path) -> float:
    """The running time recorded in a notebook's committed outputs: the sum over its code cells of the time from
    ``iopub.execute_input`` to ``shell.execute_reply``; 0 for a notebook with no timestamps or an unreadable one."""
    try:
        cells = json.loads(Path(path).read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return 0.0
    total = 0.0
    for cell in cells if isinstance(cells, list) else []:
        stamps = cell.get("metadata", {}).get("execution", {}) if isinstance(cell, dict) else {}
        try:
            start = datetime.fromisoformat(stamps["iopub.execute_input"].replace("Z", "+00:00"))
            end = datetime.fromisoformat(stamps["shell.execute_reply"].replace("Z", "+00:00"))
        except (KeyError, TypeError, AttributeError, ValueError):
            continue
        total += max((end - start).total_seconds(), 0.0)
    return total


def longest_first(paths: list[str]) -> list[str]:
    """``paths`` in the order of :func:`recorded_seconds`, longest first (ties in the order given)."""
    return sorted(paths, key=lambda path: -recorded_seconds(path))


def execute_chapters(cache_path: str | Path, notebooks: list[str], timeout: int = 600,
                     processes: int | None = None) -> int:  # fmt: skip
    """Execute the ``notebooks`` the cache has no current outputs of, ``processes`` at a time (default: one per
    core), the longest first; the number that failed."""
    from jupyter_cache import get_cache
    from jupyter_cache.executors.basic import ExecutionWorkerLocalMProc, ProcessData

    cache = get_cache(str(cache_path))
    wanted = {str(Path(path).resolve()) for path in notebooks}
    records = {record.uri: record for record in cache.list_unexecuted() if record.uri in wanted}
    order = longest_first(list(records))
    jobs = [ProcessData(records[uri].pk, uri, cache, timeout, False) for uri in order]
    print(f"executing {len(jobs)} of {len(wanted)} chapters on {processes or os.cpu_count()} processes, "
          "the longest first", flush=True)  # fmt: skip
    failed, start = [], time.perf_counter()
    with multiprocessing.Pool(processes) as pool:  # forked, as jupyter-cache's own executor does
        for status, uri in pool.imap_unordered(ExecutionWorkerLocalMProc(), jobs, chunksize=1):
            print(f"{time.perf_counter() - start:6.0f} s  {'done' if status == 0 else 'FAILED'}  {Path(uri).name}",
                  flush=True)  # fmt: skip
            if status != 0:
                failed.append(uri)
    print(f"{len(jobs) - len(failed)} executed, {len(failed)} failed"
          + (f": {', '.join(Path(uri).name for uri in failed)}" if failed else ""), flush=True)  # fmt: skip
    return len(failed)


def main(argv: list[str] | None = None) -> int:
    """``python -m evolving_ttt.book_execution CACHE NOTEBOOK...``: the number of chapters that failed."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        print("usage: python -m evolving_ttt.book_execution CACHE NOTEBOOK...", file=sys.stderr)
        return 2
    return execute_chapters(args[0], args[1:])


if __name__ == "__main__":
    sys.exit(main())
