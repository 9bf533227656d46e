"""The one neutraliser (bot/records/neutralise.py): whatever people write, what Steward quotes of it does not
act."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.records import neutralise
from bot.records.neutralise import JOINER, cell, fence, inert, line, live_parts, quote

# Text that leans towards what acts: keywords, references, mentions, tags, entities, images, invisibles.
_PIECES = st.sampled_from(
    [
        "@",
        "@alice",
        "@acme/everyone",
        "Closes",
        "fixes",
        "RESOLVED",
        "reopen",
        "close",
        "fix:",
        "#1",
        "!2",
        "GH-3",
        "o/r#4",
        "https://forge/o/r/issues/5",
        "<",
        "<img src=https://x/p.png>",
        "<!--",
        "</details>",
        "&",
        "&#64;",
        "&amp;",
        "![",
        "![a](u)",
        "]",
        "(",
        ")",
        "*",
        "_",
        "~",
        ":",
        " ",
        "\n",
        "`",
        "```",
        "\u200b",
        "\u2060",
        "\u202e",
        "\u00ad",
        "|",
        "x",
        "é",
    ]
)
PEOPLES_TEXT = st.one_of(st.text(max_size=300), st.lists(_PIECES, max_size=40).map("".join))


def acts(text: str) -> dict[str, list[str]]:
    return {kind: found for kind, found in live_parts(text).items() if found}


@given(PEOPLES_TEXT)
@settings(max_examples=400)
def test_nothing_in_quoted_text_acts(text: str) -> None:
    assert acts(inert(text)) == {}
    assert acts(line(text)) == {}
    assert acts(cell(text)) == {}
    assert acts(quote(text)) == {}


@given(PEOPLES_TEXT)
def test_the_neutraliser_only_adds_invisible_joiners(text: str) -> None:
    """Readers see what the person wrote: removing the joiners gives back the text minus hidden characters."""
    visible = neutralise._HIDDEN.sub("", text)
    assert inert(text).replace(JOINER, "") == visible
    assert inert(inert(text)) == inert(text)


@given(PEOPLES_TEXT, st.integers(min_value=1, max_value=120))
def test_a_cell_is_one_bounded_line_whose_pipes_cannot_split_the_table(text: str, limit: int) -> None:
    got = cell(text, limit)
    assert "\n" not in got and "\r" not in got
    assert "|" not in got.replace("\\|", "")
    assert len(got) <= limit and len(line(text, limit)) <= limit


@given(st.text(max_size=200), st.text(max_size=20))
def test_a_fence_is_longer_than_any_backtick_run_so_the_code_cannot_close_it(code: str, info: str) -> None:
    shown = fence(code, info)
    opening = shown.split("\n", 1)[0]
    ticks = len(opening) - len(opening.lstrip("`"))
    assert ticks >= 3
    assert all(len(run) < ticks for run in re.findall(r"`+", code))
    assert shown.endswith("`" * ticks) and "\n" not in opening[ticks:]


def test_the_reproduced_fork_text() -> None:
    text = "ask @maint2 @acme/everyone — Closes #2 <img src=https://tracker.example/p.png>"
    got = inert(text)
    assert acts(text).keys() == {"mention", "closing", "html"}
    assert acts(got) == {}
    assert "@\u2060maint2" in got and "@\u2060acme/everyone" in got and "<\u2060img" in got


def test_every_closing_keyword_of_both_forges_and_every_reference_form() -> None:
    words = ["close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves", "resolved"]
    words += ["reopen", "reopens", "reopened"]
    refs = ["#12", "acme/app#12", "https://forge.example/acme/app/issues/12", "GH-12", "!12"]
    for word in words:
        for ref in refs:
            for text in (f"{word} {ref}", f"{word.upper()}: {ref}", f"**{word.title()}** {ref}"):
                assert acts(text), text
                assert acts(inert(text)) == {}, text


def test_images_become_links_and_entities_stay_text() -> None:
    assert inert("![pixel](https://t.example/p.png)") == "!\u2060[pixel](https://t.example/p.png)"
    assert inert("&#64;alice &lt;b&gt; a&b=2") == "&\u2060#64;alice &\u2060lt;b&\u2060gt; a&b=2"


def test_hidden_characters_cannot_rejoin_a_keyword_or_a_mention() -> None:
    assert acts("Clo\u200bses #1") == {}  # the detector sees no keyword, but a forge that strips it would
    assert inert("Clo\u200bses #1") == "C\u2060loses #\u20601"
    assert inert("@\u2060alice") == "@\u2060alice"


def test_a_quote_contains_an_unclosed_fence() -> None:
    assert quote("```\nopen fence") == "> ```\n> open fence"


def test_keywords_not_followed_by_a_reference_stay_as_written() -> None:
    assert inert("Fixed the parser; close it, then resolve the rest.") == (
        "Fixed the parser; close it, then resolve the rest."
    )


STEWARDS_NEXT = ["alice", "acme/team", "img src=x>", "#64;", "[a](u)", " #12", ": o/r#3"]


@given(PEOPLES_TEXT, st.sampled_from(STEWARDS_NEXT))
def test_what_steward_writes_next_cannot_complete_peoples_text(text: str, steward: str) -> None:
    assert acts(inert(text) + steward).keys() <= acts(steward).keys()
