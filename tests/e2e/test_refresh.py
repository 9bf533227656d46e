"""`/steward refresh` re-runs the level-triggered checks from the issue's current state."""

from __future__ import annotations

import pytest

from bot.commands.context import EventContext
from bot.commands.registry import Registry
from tests.e2e.conftest import Steward


async def wip_label(ctx: EventContext) -> None:
    """A check that mirrors whether the title says WIP into a label, as a handler would."""
    assert ctx.event.issue is not None
    if "wip" in ctx.event.issue.title.lower() and not any(label == "wip" for label in ctx.event.issue.labels):
        await ctx.forge.ensure_label(ctx.repo, "wip", color="fbca04", description="work in progress")
        await ctx.forge.add_labels(ctx.repo, ctx.number, ["wip"])


def title_check(registry: Registry) -> None:
    registry.on("issues", "edited", checks="whether the title says WIP")(wip_label)


@pytest.mark.extend_registry.with_args(title_check)
def test_triage_can_refresh_and_the_checks_see_the_current_issue(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "WIP: new parser")
    steward.triager.comment(repo, number, "/steward refresh")
    steward.settle()
    [reply] = [c["body"] for c in steward.bot_comments(repo, number)]
    assert "Re-checked this issue from its current state: " in reply
    assert "whether the title says WIP" in reply
    assert "wip_label" not in reply and "on_issue" not in reply, "no internal names in a comment"
    labels = [
        label["name"] for label in steward.maintainer.call("GET", f"/repos/{repo}/issues/{number}")["labels"]
    ]
    assert labels == ["wip"]


def test_refresh_is_refused_to_people_without_triage(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "refresh me")
    steward.outsider.comment(repo, number, "/refresh")
    steward.settle()
    [reply] = [c["body"] for c in steward.bot_comments(repo, number)]
    floor = "write" if steward.forge == "gitea" else "triage"  # Gitea has no triage role
    assert f"can only be run by people with {floor} access or more" in reply
    assert "configuration" not in reply, "nothing a user cannot do is suggested"
