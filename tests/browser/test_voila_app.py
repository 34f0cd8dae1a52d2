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


MARKS = "[...document.querySelectorAll('button.widget-button')].slice(1).filter(b => b.innerText.trim() !== '').length"
"""The marks on the board as the page shows them (the first button is New game)."""

SETTLED = f"""([marks, exact, before]) => {{
    const status = document.querySelector('.ttt-status').innerText.trim();
    return status.includes('Your move') && (exact === null || status === exact) && status !== before
        && {MARKS} === marks;
}}"""
"""True once the page shows a game in progress with ``marks`` marks, the person to move, and a status line that is
``exact`` (when given) and not ``before``."""

MOVED = f"""([before, marks]) => {{
    const status = document.querySelector('.ttt-status').innerText.trim();
    return status !== before && (!status.includes('Your move') || {MARKS} === marks);
}}"""
"""True once the status line is no longer ``before`` and, if the game goes on, the board shows ``marks`` marks."""


def settled(page, marks: int, exact: str | None = None, before: str | None = None) -> None:
    """Wait until the page shows the new game an action started: ``marks`` marks, the person to move, the status
    line ``exact`` (when given) and not ``before``. ipywidgets applies each widget's messages in order but not the
    messages of different widgets (the squares, the status line) in the order the kernel sent them, so the test
    waits for both the board and the status line of the state it expects, and each wait follows an action from a
    state that does not match it: the test never reads a board the kernel has yet to replace."""
    page.wait_for_function(SETTLED, arg=[marks, exact, before], timeout=60000)


def play_out(page, squares, marks: int) -> str:
    """Play the first empty square until the game ends (``marks`` marks on the board to start), waiting after each
    click until the status line has changed (the opponent names its square in it, or the game is over: a legal move
    always changes it) and, if the game goes on, the board shows both new marks; returns the last status line."""
    for _ in range(9):
        text = status_text(page)
        if "again" in text:
            return text
        assert "Your move" in text, text  # the opponent has answered
        empty = [k for k in range(1, 10) if squares.nth(k).inner_text().strip() == ""]
        assert len(empty) == 9 - marks, (text, empty)
        squares.nth(empty[0]).click()
        marks += 2
        page.wait_for_function(MOVED, arg=[text.strip(), marks], timeout=60000)
    return status_text(page)


def test_every_opponent_answers_and_games_end_with_a_verdict(page, app_url):
    """Every opponent from both sides, a game each; New game after each game as X. Every wait is for a state the
    last action must produce (no fixed pauses), so that a slow kernel on a loaded machine delays the test without
    making it read a stale board."""
    page.goto(app_url, timeout=120000)
    page.wait_for_selector("button.widget-button", timeout=120000)
    squares = page.locator("button.widget-button")
    assert squares.count() == 10  # New game, then the nine squares
    opponent, side = page.locator("select").nth(0), page.locator("select").nth(1)
    for player in catalogue():
        # The app opens with the person playing O; after the last game as O the board holds a finished game.
        side.select_option(label="X (first)")
        settled(page, 0, exact="Your move.")
        opponent.select_option(label=player.name)  # a new game as X: the same empty board and status line
        text = play_out(page, squares, 0)
        assert text.endswith("Press New game to play again."), text
        assert "Something went wrong" not in text
        squares.nth(0).click()  # New game
        settled(page, 0, exact="Your move.")
        side.select_option(label="O (second)")  # a new game as O: the opponent opens
        settled(page, 1, before="Your move.")
        text = play_out(page, squares, 1)
        assert text.endswith("Press New game to play again."), text
        assert "Something went wrong" not in text
    # JupyterLab's page asks a CDN for its icon font, which this closed machine cannot reach; nothing else may fail.
    assert [e for e in page.errors if "ERR_NAME_NOT_RESOLVED" not in e] == []
    tally = page.locator(".ttt-tally").inner_text()
    assert all(player.name in tally for player in catalogue())
