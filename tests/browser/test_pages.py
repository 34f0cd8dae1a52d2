"""Every page of the built book loads without a JavaScript error, fetches nothing from the network, and shows
every figure."""

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, NavigableString

HTML = Path(__file__).resolve().parents[2] / "_build" / "html"
CHAPTERS = len(re.findall(r"file: book/\d\d_", (HTML.parents[1] / "_toc.yml").read_text()))
"""The numbered chapters, 01 to this, as the table of contents lists them."""
PAGES = sorted(p.relative_to(HTML).as_posix() for p in [HTML / "index.html", *HTML.glob("book/*.html")])


def test_the_built_book_has_its_chapters():
    assert len(PAGES) >= 16, PAGES  # the index and at least the fifteen chapters of Fogel's part


TYPESET = """() => new Promise(done => {
  if (!window.MathJax || !window.MathJax.Hub) { done(true); return; }  // a page without mathematics
  MathJax.Hub.Register.StartupHook("End", () => done(true));  // at once if MathJax has already typeset the page
  setTimeout(() => done(false), 60000);
})"""
"""True once MathJax 2 has typeset the page (its "End" hook), or at once on a page without it; false after a minute.
The page's figures and code are measured after the mathematics has its final size, however slow the machine."""

REDIRECT = re.compile(r'<meta http-equiv="Refresh" content="0; url=([^"]+)"', re.IGNORECASE)
"""A page that only sends the browser on (Sphinx writes the book's index so): the address it sends it to."""

OVERFLOWING = """() => Array.from(document.querySelectorAll('main pre, main table, main .highlight, main .output'))
  .filter(el => el.scrollWidth > el.clientWidth + 1)
  .map(el => el.tagName + ' ' + el.scrollWidth + ' > ' + el.clientWidth + ': ' + (el.innerText || '').slice(0, 60))"""


@pytest.mark.parametrize("name", PAGES)
def test_page_loads_cleanly_shows_every_figure_and_cuts_nothing_off_at_1280_pixels(page, name):
    page.set_viewport_size({"width": 1280, "height": 800})
    outside = []
    page.on("request", lambda request: outside.append(request.url)
            if not request.url.startswith(("file:", "data:", "about:")) else None)  # fmt: skip
    page.goto((HTML / name).as_uri())
    redirect = REDIRECT.search((HTML / name).read_text(encoding="utf-8"))
    if redirect:  # a page that only redirects (the index): the test waits for the page it lands on, and checks that
        page.wait_for_url((HTML / name).parent.joinpath(redirect.group(1)).resolve().as_uri())
    page.wait_for_load_state("load")
    assert page.evaluate(TYPESET), "MathJax did not finish typesetting within a minute"
    images = page.eval_on_selector_all(
        "img", "imgs => imgs.map(i => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0}))"
    )
    assert [i["src"] for i in images if not i["ok"]] == [], "figures that did not load"
    assert page.errors == []
    assert outside == [], "requests that left the machine"
    if name.startswith("book/"):  # a chapter: its code and tables fit the text column of a 1280-pixel window
        assert page.evaluate("() => document.querySelectorAll('main pre').length") > 0 or name.endswith(
            ("glossary.html", "findings.html")
        )
        assert page.evaluate(OVERFLOWING) == [], "code or tables wider than the text column"
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def chapter_links(html: str) -> list[str]:
    """The texts of the links to a chapter that the prose introduces with the word "chapter" ("in chapter 6")."""
    main = BeautifulSoup(html, "html.parser").find("main")
    return [a.get_text().strip() for a in (main.select("a.reference.internal") if main else [])
            if isinstance(a.previous_sibling, NavigableString) and re.search(r"[Cc]hapters?\s?$", a.previous_sibling)]


def test_a_chapter_named_in_the_prose_reads_as_its_number():
    # The numbers are in the pages as Sphinx writes them (no script changes them), so the HTML is read as written.
    seen = []
    for name in [name for name in PAGES if name.startswith("book/")]:
        seen += chapter_links((HTML / name).read_text(encoding="utf-8"))
    assert len(seen) > 40 and all(text.isdigit() and 1 <= int(text) <= CHAPTERS for text in seen), [
        text for text in seen if not text.isdigit()
    ][:10]


FIRST_SCREEN = """() => Array.from(document.querySelectorAll('main p, main li'))
  .filter(el => el.getBoundingClientRect().bottom <= window.innerHeight)
  .map(el => el.innerText).join(' ')"""


def test_the_introductions_first_screen_states_the_findings(page):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto((HTML / "book" / "00_introduction.html").as_uri())
    page.wait_for_load_state("load")
    shown = page.evaluate(FIRST_SCREEN)
    for verdict in ("reproduces", "not under any setting tried", "impossible as stated"):
        assert verdict in shown, (verdict, shown[:300])
    assert page.evaluate("() => document.querySelector('main a[href$=\"findings.html\"]') !== null")


def test_the_findings_page_shows_no_code_and_fits_1280_pixels(page):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto((HTML / "book" / "findings.html").as_uri())
    page.wait_for_load_state("load")
    assert page.evaluate("() => document.querySelectorAll('main .cell_input, main pre').length") == 0
    text = page.evaluate("() => document.querySelector('main').innerText")
    assert text.count("Shown in:") >= 9 and "Ling and Lam (2011)" in text
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
