"""`/label`'s pure rules: what a command asks for, who may set a label (`triage.labels`), nearest names."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.config.repo_file import merge
from bot.config.settings import HandlerSettings
from handlers.triage.rules import LabelChange, label_role, nearest, parse_label_args


def test_names_to_add_and_to_remove_the_last_word_about_a_name_winning() -> None:
    assert parse_label_args(["bug", "+docs", "-wontfix", "good first issue"]) == LabelChange(
        ("bug", "docs", "good first issue"), ("wontfix",), ()
    )
    assert parse_label_args(["bug", "-BUG"]) == LabelChange((), ("BUG",), ())
    assert parse_label_args(["-", "+"]) == LabelChange((), (), ("-", "+"))


@given(st.lists(st.text(max_size=20), max_size=15))
def test_every_word_is_an_addition_a_removal_or_named_bad(words: list[str]) -> None:
    change = parse_label_args(words)
    names = [n.casefold() for n in (*change.add, *change.remove)]
    assert len(names) == len(set(names))
    assert all(n.strip() for n in names)


def test_by_default_triage_may_set_any_label_as_the_forge_lets() -> None:
    assert label_role(HandlerSettings(), "anything at all") == "triage"


def test_the_least_role_that_lists_a_label_is_who_may() -> None:
    settings = merge(
        HandlerSettings(),
        {
            "triage": {
                "labels": {"anyone": ["good first issue", "*"], "author": ["area/*"], "maintain": ["P0"]}
            }
        },
    )
    assert label_role(settings, "Good First Issue") == "anyone"
    assert label_role(settings, "area/ui") == "anyone", "the least role whose pattern matches"
    assert label_role(settings, "p0") == "maintain", "a name counts before a pattern"
    narrow = merge(HandlerSettings(), {"triage": {"labels": {"author": ["area/*"], "maintain": ["P0"]}}})
    assert label_role(narrow, "area/ui") == "author" and label_role(narrow, "P0") == "maintain"
    assert label_role(narrow, "bug") == "triage", "a label no entry names needs triage, as on the forge"


def test_the_nearest_existing_names() -> None:
    existing = ["bug", "documentation", "good first issue", "help wanted"]
    assert nearest("bgu", existing) == ["bug"]
    assert nearest("docs", existing) == ["documentation"]
    assert nearest("zzzz", existing) == []


def test_refusals_quote_peoples_words_inert() -> None:
    """A label name is someone's text: a backtick in it cannot close the code span and ping a team."""
    from bot.records.neutralise import live_parts
    from handlers.triage.render import label_refusals

    text = label_refusals([("x` @org/team `y", [])], [], [], ["`@everyone`"], "steward")
    assert "``" in text, "a longer backtick run delimits the name"
    assert not any(live_parts(text).values()), live_parts(text)
