"""Placeholders stay on the page (issue 37 §3): text in angle brackets outside code is an HTML tag to GitHub
and Gitea, so "add a hypothesis H<n>" read "add a hypothesis H" in `/steward help`, the onboarding pull
request and the README. Every template, help text and document Steward ships is rendered here with cmark-gfm
(GitHub's own renderer) and read back as a browser would: it may hold no tag but those Steward writes on
purpose, and the visible text keeps every placeholder the source meant to show."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from bot.records.neutralise import OWN_TAGS, placeholders
from tests.unit.test_inert_renderers import RENDERERS
from tests.unit.test_wording import shipped_texts

ROOT = Path(__file__).resolve().parents[2]
# What cmark-gfm itself writes for Markdown (tables, lists, code, task lists, links, emphasis, headings).
MARKDOWN_TAGS = frozenset(
    {"p", "a", "em", "strong", "code", "pre", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td"}
    | {"blockquote", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "del", "input", "img"}
)


class _Page(HTMLParser):
    """The page as a reader sees it: the tags that are not Markdown's or Steward's, and the visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.foreign: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in MARKDOWN_TAGS | OWN_TAGS:
            self.foreign.append(f"<{tag}>")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def rendered(markdown: str) -> _Page:
    """GitHub's rendering (raw HTML passed through, as GitHub then drops the tags it does not allow)."""
    page = _Page()
    page.feed(cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE))
    return page


def _markdown_texts() -> dict[str, str]:
    texts = {
        name: text
        for name, text in shipped_texts().items()
        if "/steward help" in name or "onboarding pull request" in name or name.endswith(".md")
    }
    texts.update({f"template: {name}": render("x") for name, render in RENDERERS.items()})
    for document in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        texts[str(document.relative_to(ROOT))] = document.read_text()
    return texts


TEXTS = _markdown_texts()


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_no_placeholder_is_swallowed_as_a_tag(name: str) -> None:
    assert rendered(TEXTS[name]).foreign == []


@pytest.mark.parametrize("name", sorted(n for n in TEXTS if "/steward help" in n or n == "README.md"))
def test_the_help_shows_every_placeholder_of_every_command(name: str) -> None:
    from handlers import build_registry

    visible = "".join(rendered(TEXTS[name]).text)
    for spec in build_registry().commands.values():
        for placeholder in re.findall(r"<[A-Za-z][^<>]*>", spec.help):
            assert placeholder in visible, f"/steward {spec.name}: {placeholder}"
    assert "add a hypothesis H<n> to the root-cause board" in visible


def test_the_check_sees_a_swallowed_placeholder_and_the_escape_keeps_code_as_written() -> None:
    assert rendered("add a hypothesis H<n>").foreign == ["<n>"]
    assert "".join(rendered("add a hypothesis H<n>").text).strip() == "add a hypothesis H"
    escaped = placeholders("add H<n> with `/steward hypothesis <title>` <details><summary>more</summary>")
    assert escaped == "add H\\<n> with `/steward hypothesis <title>` <details><summary>more</summary>"
    assert rendered(escaped).foreign == []
    assert "".join(rendered(escaped).text).strip() == "add H<n> with /steward hypothesis <title> more"
    assert placeholders(escaped) == escaped
