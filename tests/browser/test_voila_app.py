"""`make play`: the play board served as an app by Voila and played in Chromium, against every opponent."""

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from evolving_ttt.arena import catalogue

ROOT = Path(__file__).resolve().parents[2]
VOILA = Path(sys.executable).parent / "voila"


@pytest.fixture(scope="module")
def app_url():
    if not VOILA.exists():
        pytest.skip("voila is not installed in this environment; the app test did not run")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [str(VOILA), "book/play_app.ipynb", "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(url, timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("Voila did not start within a minute")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=20)


def status_text(page):
    return page.locator(".ttt-status").inner_text()


def test_every_opponent_answers_and_games_end_with_a_verdict(page, app_url):
    page.goto(app_url, timeout=120000)
    page.wait_for_selector("button.widget-button", timeout=120000)
    squares = page.locator("button.widget-button")
    assert squares.count() == 10  # New game, then the nine squares
    opponent, side = page.locator("select").nth(0), page.locator("select").nth(1)
    for player in catalogue():
        opponent.select_option(label=player.name)
        for label in ("X (first)", "O (second)"):
            side.select_option(label=label)
            squares.nth(0).click()  # New game
            for _ in range(9):
                page.wait_for_timeout(150)
                text = status_text(page)
                if "again" in text:
                    break
                assert "Your move" in text, text  # the opponent has answered
                empty = [k for k in range(1, 10) if squares.nth(k).inner_text().strip() == ""]
                squares.nth(empty[0]).click()
                page.wait_for_function(
                    "([n, before]) => document.querySelectorAll('button.widget-button')[n].innerText.trim() !== before",
                    arg=[empty[0], ""], timeout=60000,
                )
            page.wait_for_timeout(300)
            text = status_text(page)
            assert text.endswith("Press New game to play again."), text
            assert "Something went wrong" not in text
    # JupyterLab's page asks a CDN for its icon font, which this closed machine cannot reach; nothing else may fail.
    assert [e for e in page.errors if "ERR_NAME_NOT_RESOLVED" not in e] == []
    tally = page.locator(".ttt-tally").inner_text()
    assert all(player.name in tally for player in catalogue())
