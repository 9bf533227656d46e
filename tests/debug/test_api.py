"""``root_cause`` without a forge where none is needed, and the thread rules the board re-derives with."""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

import handlers
from bot.commands.context import EventContext
from bot.config.settings import HandlerSettings
from bot.events.event import Event
from bot.forge import Comment, RepoRef, User
from handlers.debug.api import root_cause
from handlers.debug.board import Entry, digest
from handlers.debug.effects import held_commands, reconcile_log

REGISTRY = handlers.build_registry()

REPO = RepoRef("o", "r")


class NoForge:
    kind = "github"

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the forge was asked {name}")


def test_a_repository_that_switched_the_board_off_has_no_gate() -> None:
    ctx = EventContext(
        event=Event(forge="github", delivery_id="d", name="reconcile", action="", sender="", repo=REPO),
        forge=NoForge(),  # type: ignore[arg-type]
        me=User("steward-bot"),
        settings=HandlerSettings.model_validate({"debug": {"enabled": False}}),
        registry=REGISTRY,
        log=structlog.get_logger(),
    )
    answer = asyncio.run(root_cause(ctx, REPO, 1, None))
    assert (answer.allowed, answer.outcome, answer.code) == (True, "off", None)


KNOWN = sorted(REGISTRY.short_names())


def test_the_commands_a_comment_holds_are_counted_as_the_dispatcher_counts_them() -> None:
    body = "/evidence H1 for a\n\n```\n/evidence H1 for b\n```\n\n/steward evidence H1 for a\n\n/ping"
    assert held_commands(body, known=KNOWN, prefix="steward") == {
        (0, digest("evidence", "H1 for a")),
        (1, digest("evidence", "H1 for a")),
    }


def test_evidence_of_an_edited_or_deleted_comment_is_withdrawn_and_others_stay() -> None:
    def entry(seq: int, comment: int, kind: str, text: str) -> Entry:
        return Entry(seq, kind, "alice", "2026-11-30T12:00:00Z", comment, 0, digest(kind, text), hypothesis=1)  # type: ignore[arg-type]

    log = (
        entry(1, 10, "hypothesis", "A: a"),
        entry(2, 11, "evidence", "H1 for x"),
        entry(3, 12, "confirm", "H1 a.py:1 yes"),
        entry(4, 13, "refute", "H1 no"),
    )
    comments = [
        Comment(10, "alice", "/hypothesis A: b"),  # hypotheses are kept as recorded
        Comment(11, "alice", "/evidence H1 for x"),
        Comment(12, "alice", "/confirm H1 a.py:1 no, wait"),
        Comment(99, "steward-bot", "/refute H1 no"),  # the bot's comments never hold commands
    ]
    after = reconcile_log(log, comments, bot_login="steward-bot", known=KNOWN, prefix="steward")
    assert [e.withdrawn for e in after] == [False, False, True, True]
