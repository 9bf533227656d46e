"""The pure rules of `/close`, `/reopen`, `/duplicate` and the welcome (handlers/triage/closing.py,
welcome.py): what the arguments name, who may reopen as the forge would let them, what may be a duplicate of
what, and who may be new here."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.config.repo_file import parse
from bot.config.settings import HandlerSettings
from bot.forge import Issue, RepoRef
from bot.records.neutralise import live_parts
from handlers.triage.closing import (
    Target,
    UsageError,
    closed_as_duplicate,
    closed_text,
    duplicate_refusal,
    may_reopen,
    parse_close,
    parse_target,
)
from handlers.triage.welcome import may_be_first_time, welcome_text

HERE = RepoRef("acme", "app")


def _issue(number: int, state: str = "open", **fields: object) -> Issue:
    return Issue(number, "t", "", state, "carol", **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("#12",), Target(12)),
        (("12",), Target(12)),
        (("acme/other#7",), Target(7, RepoRef("acme", "other"))),
    ],
)
def test_duplicate_names_an_issue_here_or_in_another_repository(
    args: tuple[str, ...], expected: Target
) -> None:
    assert parse_target(args, "steward") == expected


@pytest.mark.parametrize("args", [(), ("#0",), ("#1", "#2"), ("twelve",), ("acme/#3",), ("#12abc",)])
def test_anything_else_is_answered_with_the_forms_to_write(args: tuple[str, ...]) -> None:
    with pytest.raises(UsageError, match=r"/steward duplicate #123"):
        parse_target(args, "steward")


@given(st.text(max_size=80))
def test_no_text_crashes_the_parser_or_acts_in_its_answer(text: str) -> None:
    try:
        parse_target((text,), "steward")
    except UsageError as exc:
        assert not any(live_parts(str(exc)).values())


def test_close_reads_prows_not_planned_and_keeps_the_rest_as_the_reason() -> None:
    assert parse_close(("not-planned", "out", "of", "scope")).reason == "not_planned"
    request = parse_close(("fixed", "by", "#3", "@alice"))
    assert request.reason == "completed"
    text = closed_text("bob", request, "steward")
    assert "fixed by" in text and "`/steward reopen`" in text
    assert not live_parts(text)["mention"]  # the reason's mention is inert


def test_a_duplicate_may_not_be_itself_a_closed_duplicate_or_of_a_closed_issue() -> None:
    issue = _issue(5)
    assert "itself" in (duplicate_refusal(HERE, issue, HERE, _issue(5), "duplicate") or "")
    dup = _issue(3, "closed", state_reason="duplicate")
    assert "itself closed as a duplicate" in (duplicate_refusal(HERE, issue, HERE, dup, "duplicate") or "")
    named = duplicate_refusal(HERE, issue, HERE, dup, "duplicate", canonical=2) or ""
    assert "of #2: mark this one a duplicate of #2 instead" in named
    by_label = _issue(3, "closed", labels=("Duplicate",))
    assert closed_as_duplicate(by_label, "duplicate")
    assert duplicate_refusal(HERE, issue, HERE, by_label, "duplicate") is not None
    assert duplicate_refusal(HERE, _issue(5, "closed"), HERE, _issue(3), "duplicate") is not None
    assert duplicate_refusal(HERE, issue, HERE, _issue(3, "closed"), "duplicate") is None  # fixed: fine
    # the same number in another repository is another issue
    assert duplicate_refusal(HERE, issue, RepoRef("acme", "other"), _issue(5), "duplicate") is None


@pytest.mark.parametrize(
    ("forge", "actor", "level", "closed_by", "closed_for", "allowed"),
    [
        ("github", "carol", "none", "carol", "", True),  # she closed it herself
        ("github", "carol", "read", "alice", "", False),  # a maintainer closed it
        ("github", "carol", "none", "steward-bot", "", True),  # Steward closed it of its own accord
        ("github", "carol", "none", "steward-bot", "alice", False),  # ... at a maintainer's request
        ("github", "carol", "none", "steward-bot", "Carol", True),  # ... at her own
        ("github", "carol", "none", "", "", False),  # unknown closer: as GitHub, no
        ("github", "bob", "triage", "alice", "", True),
        ("github", "dave", "read", "dave", "", False),  # not the author
        ("gitea", "carol", "none", "alice", "", True),  # Gitea: the poster may, whoever closed it
        ("gitea", "dave", "read", "", "", False),
    ],
)
def test_who_may_reopen_follows_the_forge(
    forge: str, actor: str, level: str, closed_by: str, closed_for: str, allowed: bool
) -> None:
    assert (
        may_reopen(
            forge,  # type: ignore[arg-type]
            actor=actor,
            author="carol",
            actor_level=level,  # type: ignore[arg-type]
            closed_by=closed_by,
            bot_login="steward-bot",
            closed_for=closed_for,
        )
        is allowed
    )


@pytest.mark.parametrize(
    ("author", "association", "maybe"),
    [
        ("newbie", "NONE", True),
        ("newbie", "FIRST_TIME_CONTRIBUTOR", True),
        ("newbie", "", True),  # Gitea: the listing decides
        ("regular", "CONTRIBUTOR", False),
        ("colleague", "COLLABORATOR", False),
        ("acme", "", False),  # the owner
        ("steward-bot", "NONE", False),
        ("dependabot[bot]", "NONE", False),
    ],
)
def test_who_may_be_new_here(author: str, association: str, maybe: bool) -> None:
    assert may_be_first_time(author, association, owner="acme", bot_login="steward-bot") is maybe


def test_the_welcome_mentions_only_the_newcomer() -> None:
    text = welcome_text("newbie", "Thanks! Ping @acme/maintainers if stuck. Fixes #3 <img src=x>")
    parts = live_parts(text)
    assert text.startswith("@newbie: Thanks!")
    assert parts["mention"] == ["@newbie"] and not parts["closing"] and not parts["html"]


@pytest.mark.parametrize("command", ["close", "reopen", "duplicate"])
def test_closing_cannot_be_opened_below_what_the_forge_allows_but_may_be_narrowed(command: str) -> None:
    """Nobody closes or reopens through Steward what the forge would not let them: `anyone` is below the
    floor (an error, and the floor is used); more than the floor is the repository's choice."""
    parsed = parse(f"commands:\n  {command}:\n    permission: anyone\n")
    assert not parsed.valid
    [error] = parsed.errors
    assert "at least `author`" in error.message and "`anyone` is below" in error.message
    lowered = HandlerSettings.model_validate({"commands": {command: {"permission": "anyone"}}})
    assert lowered.permission(command, "author") == "author"
    assert parse(f"commands:\n  {command}:\n    permission: write\n").valid
