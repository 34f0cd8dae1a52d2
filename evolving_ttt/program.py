"""``python -m ttt_helpers`` as a program: quiet on Ctrl-C and SIGTERM before its command starts and after it ends.

:func:`evolving_ttt.cli.main` turns a signal that comes while it runs into one line ``interrupted: ...`` and the
exit status 130 (SIGINT) or 143 (SIGTERM). Before it runs, Python spends a second or so loading the package, and
after it returns, a fraction of a second closing down; a signal then would print a traceback or end the process
with a negative status. :func:`guard` covers the loading (nothing has been written yet), :func:`release` hands
the signals to the command, and :func:`finish` covers the closing (the command's files are in place: its status
stands). This module imports nothing of the package, so that it can be loaded first.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import NoReturn

EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
"""The exit status of a program stopped by each signal (128 + the signal's number)."""


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _stop_quietly(signum: int, frame: object) -> None:
    try:
        sys.stderr.write("interrupted: nothing was written\n")
        sys.stderr.flush()
    finally:
        os._exit(EXIT_STATUS.get(signum, 128 + signum))


def guard() -> None:
    """Until :func:`release`: Ctrl-C or SIGTERM ends the program at once, with one line and status 130 or 143.

    The program also takes SIGINT and SIGTERM out of the signal mask it inherited: a process started by a parent
    that held them blocked (a thread of a test runner, say) would otherwise keep every Ctrl-C pending and run on
    to the end."""
    if _in_main_thread():
        for signum in EXIT_STATUS:
            signal.signal(signum, _stop_quietly)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, set(EXIT_STATUS))


def release() -> None:
    """Give the signals back their usual handlers (Ctrl-C raises ``KeyboardInterrupt``), for the command."""
    if _in_main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def finish(status: int) -> NoReturn:
    """End the program with the command's ``status``; a signal while Python closes down changes nothing."""
    def keep_status(signum: int, frame: object) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)

    if _in_main_thread():
        for signum in EXIT_STATUS:
            signal.signal(signum, keep_status)
    if status in EXIT_STATUS.values():
        # An interrupted command has said so in one line. An object the signal caught half-built (numba's compiler
        # midway through a kernel, say) can fail in its finalizer as Python closes down; that is not news.
        sys.unraisablehook = _ignore
    sys.exit(status)


def _ignore(unraisable: object) -> None:
    """An ``unraisablehook`` that shows nothing (see :func:`finish`)."""
