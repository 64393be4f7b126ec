"""The documentation site: `mkdocs build --strict` of mkdocs.yml and docs/ succeeds, gives every
page of docs/ its HTML page with its images, lists every page in the navigation once, and fails,
naming the culprit, on a broken link, a missing anchor, a link out of docs/ or a page left out of
the navigation (checked on a copy of the tree)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

pytestmark = pytest.mark.slow  # each build takes a few seconds

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "mkdocs.yml"
DOCS = REPO / "docs"
PAGES = sorted(path.relative_to(DOCS).as_posix() for path in DOCS.glob("*.md"))


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        # Material's notice about MkDocs 2.0 is not a warning of the build; keep the output short.
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def html_page(site: Path, page: str) -> Path:
    """Where MkDocs (directory URLs) writes the page docs/<page>."""
    stem = page.removesuffix(".md")
    return site / "index.html" if stem == "index" else site / stem / "index.html"


class _References(HTMLParser):
    """The image sources and link targets of the article of a built page."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.links: list[str] = []
        self._depth = 0  # inside <article> when > 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "article":
            self._depth += 1
        values = dict(attrs)
        if self._depth and tag == "img" and values.get("src"):
            self.images.append(values["src"] or "")
        if self._depth and tag == "a" and values.get("href"):
            self.links.append(values["href"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self._depth -= 1


def references(page: Path) -> _References:
    parser = _References()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def nav_pages(entries: list[object]) -> list[str]:
    found: list[str] = []
    for entry in entries:
        values = entry.values() if isinstance(entry, dict) else [entry]
        for value in values:
            if isinstance(value, list):
                found += nav_pages(value)
            else:
                found.append(str(value))
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    result = build(CONFIG, target)
    assert result.returncode == 0, result.stdout + result.stderr
    return target


def test_every_page_of_docs_is_built(site):
    assert {"index.md", "install.md"} <= set(PAGES)
    missing = [page for page in PAGES if not html_page(site, page).is_file()]
    assert missing == []


def test_the_navigation_lists_every_page_once():
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    listed = nav_pages(config["nav"])
    assert sorted(listed) == PAGES  # each page once, and no page that does not exist
    assert listed[:2] == ["index.md", "install.md"]


def test_images_are_published_and_shown(site):
    shown: set[Path] = set()
    for page in PAGES:
        built = html_page(site, page)
        for source in references(built).images:
            target = (built.parent / unquote(urlsplit(source).path)).resolve()
            assert target.is_file(), f"{page}: image {source} is not in the site"
            shown.add(target)
    images = {(site / path.relative_to(DOCS)).resolve() for path in (DOCS / "images").iterdir()}
    assert images <= shown  # every image of docs/images is shown by some page


def test_the_home_page_links_to_every_other_page(site):
    home = html_page(site, "index.md")
    linked = {
        (home.parent / unquote(urlsplit(href).path) / "index.html").resolve()
        for href in references(home).links
        if not urlsplit(href).scheme and urlsplit(href).path
    }
    unlinked = [p for p in PAGES if p != "index.md" and html_page(site, p).resolve() not in linked]
    assert unlinked == []


@pytest.fixture
def copied_tree(tmp_path: Path) -> Path:
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(CONFIG, tmp_path / "mkdocs.yml")
    return tmp_path


@pytest.mark.parametrize(
    ("link", "reported"),
    [
        ("no-such-page.md", "the target is not found among documentation files"),
        ("cache.md#no-such-part", "the doc 'cache.md' does not contain an anchor '#no-such-part'"),
        ("#nowhere-on-this-page", "there is no such anchor on this page"),
        ("../README.md", "the target is not found among documentation files"),
    ],
)
def test_a_broken_link_fails_the_build_and_is_named(copied_tree, link, reported):
    page = copied_tree / "docs" / "engines.md"
    page.write_text(page.read_text(encoding="utf-8") + f"\nSee [this]({link}).\n", "utf-8")
    result = build(copied_tree / "mkdocs.yml", copied_tree / "site")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert f"Doc file 'engines.md' contains a link '{link}', but {reported}" in output, output


def test_a_page_left_out_of_the_navigation_fails_the_build(copied_tree):
    (copied_tree / "docs" / "orphan.md").write_text("# Not in the navigation\n", "utf-8")
    result = build(copied_tree / "mkdocs.yml", copied_tree / "site")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert 'included in the "nav" configuration:\n  - orphan.md\n' in output, output
