"""Browser tests of the built book: headless Chromium driven by Playwright.

They need the HTML that `make test` builds just before running them (``_build/html``) and Debian's
Chromium (``/usr/bin/chromium``; `.ci/run` installs it). Where Chromium or Playwright is missing they
are skipped with the reason, which pytest's summary (``-rs``) prints; they never pass silently.
"""

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# The flags the machine's notes give for a closed network: no background connections, no sandbox as root.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (apt-get install chromium); the browser tests did not run")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed; the browser tests did not run")
    if not (HTML / "index.html").exists():
        pytest.fail(f"the book is not built: {HTML / 'index.html'} is missing (run the build before these tests)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(f"page error: {error}"))
    page.on("console", lambda message: page.errors.append(f"console {message.type}: {message.text}")
            if message.type == "error" else None)  # fmt: skip
    yield page
    context.close()
