"""Browser tests of the built book: headless Chromium driven by Playwright.

They need the HTML that `make test` builds just before running them (``_build/html``) and Debian's
Chromium (``/usr/bin/chromium``; `.ci/run` installs it). Where Chromium or Playwright is missing they
are skipped with the reason, which pytest's summary (``-rs``) prints; they never pass silently. Where the
HTML is missing (``pytest tests`` in a fresh clone), it is built first from the committed outputs, as
`make book` builds it, before the test modules read the list of pages.
"""

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
HTML = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# The flags the machine's notes give for a closed network: no background connections, no sandbox as root.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
# The Makefile's rule writes the configuration without notebook execution; the build is `make book`'s.
NO_EXECUTE = ".config-no-execute.yml"
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"


def missing_browser() -> str | None:
    """Why the browser tests cannot run here (Chromium or Playwright missing), or None if they can."""
    if not Path(CHROMIUM).exists():
        return "Chromium is not installed (apt-get install chromium); the browser tests did not run"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed; the browser tests did not run"
    return None


def build_book_if_missing() -> None:
    """Build ``_build/html`` from the committed outputs (as `make book` does) unless its index is there.

    pytest-xdist's workers each collect the tests: a lock on a file in ``_build`` lets the first build the book
    while the others wait for it, and then find it built.
    """
    if (HTML / "index.html").exists():
        return
    HTML.parent.mkdir(parents=True, exist_ok=True)
    with open(HTML.parent / ".browser-tests-build.lock", "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        if (HTML / "index.html").exists():  # built by another worker while this one waited
            return
        configure = ["make", "--no-print-directory", NO_EXECUTE]  # the Makefile's rule, from _config.yml
        for step in (configure, [str(JUPYTER_BOOK), "build", ".", "--config", NO_EXECUTE]):
            done = subprocess.run(step, cwd=ROOT, capture_output=True, text=True)
            if done.returncode != 0:
                tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
                raise RuntimeError(f"the book is not built ({HTML / 'index.html'} is missing) and building it "
                                   f"failed: `{' '.join(step)}` exited with {done.returncode}:\n{tail}")  # fmt: skip
        if not (HTML / "index.html").exists():
            raise RuntimeError(f"the book was built but {HTML / 'index.html'} is still missing")


def pytest_collect_file(file_path, parent):
    """Before the first test module here is imported (test_pages lists the built pages when it is), build the
    book if it is missing, where the tests can run; a failed build is a collection error with the build's output."""
    if file_path.suffix == ".py" and file_path.name.startswith("test_") and missing_browser() is None:
        build_book_if_missing()


def pytest_collection_modifyitems(config, items):
    """Without Chromium or Playwright every test here is skipped with the reason, the ones without a page too."""
    reason = missing_browser()
    if reason:
        for item in items:
            if HERE in Path(item.path).resolve().parents:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def browser():
    reason = missing_browser()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    if not (HTML / "index.html").exists():
        pytest.fail(f"the book is not built: {HTML / 'index.html'} is missing (run the build before these tests)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


def watched_page(context):
    """A new page of ``context`` whose ``errors`` list collects its JavaScript errors and console errors."""
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(f"page error: {error}"))
    page.on("console", lambda message: page.errors.append(f"console {message.type}: {message.text}")
            if message.type == "error" else None)  # fmt: skip
    return page


@pytest.fixture()
def page(browser):
    context = browser.new_context()
    yield watched_page(context)
    context.close()


@pytest.fixture(scope="module")
def module_page(browser):
    """One page shared by the tests of a module that go on where the last left off (in each test process)."""
    context = browser.new_context()
    yield watched_page(context)
    context.close()
