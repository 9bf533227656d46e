"""Putting one of Steward's labels on an issue corrects its description to the repository's language when it
is Steward's own in another language, and never touches a team's (issue 34 §2; the push that changes the
language is pinned end to end by tests/e2e/test_label_language_e2e.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from bot.config.label_texts import LABEL_DESCRIPTIONS
from bot.forge import Label, RepoRef
from handlers.bug_refinement.labels import ensure_described


class Labels:
    def __init__(self, description: str) -> None:
        self.label = Label("refinement:needs-info", "d4c5f9", description)
        self.writes: list[str] = []

    async def ensure_label(self, repo: RepoRef, name: str, **_: str) -> Label:
        return self.label

    async def set_label_description(self, repo: RepoRef, name: str, description: str) -> Label:
        self.writes.append(description)
        return Label(name, self.label.color, description)


def described(existing: str, wanted: str) -> list[str]:
    forge = Labels(existing)
    ctx: Any = SimpleNamespace(forge=forge, repo=RepoRef("o", "r"))
    asyncio.run(ensure_described(ctx, forge.label.name, color="d4c5f9", description=wanted))
    return forge.writes


def test_stewards_own_description_in_another_language_is_replaced() -> None:
    pt, en = LABEL_DESCRIPTIONS["pt"]["needs-info"], LABEL_DESCRIPTIONS["en"]["needs-info"]
    assert described(en, pt) == [pt]


def test_a_description_already_right_or_the_teams_own_is_left_alone() -> None:
    pt = LABEL_DESCRIPTIONS["pt"]["needs-info"]
    assert described(pt, pt) == []
    assert described("Waiting on the reporter (our words)", pt) == []
    assert described("", pt) == []
