"""`/claim`, `/assign` and `/unassign` end to end, on both forges (issue 39): GitHub assigns a commenter, so
an outsider's `/claim` assigns them there; Gitea assigns only people with write access, so Steward keeps the
outsider's claim in its signed record on the issue and says so. Assigning others needs triage (Gitea:
write) and the refusal says who may; letting go of oneself needs nothing; a claim nobody works on is
released with a note; the bare `/claim` is another bot's until `triage.short_commands` is on."""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

import handlers
from bot.commands.context import EventContext
from bot.config.settings import HandlerSettings
from bot.events.event import Event
from bot.forge import RepoRef
from bot.queue.jobs import make_redis
from bot.records import sticky
from bot.worker.jobs import build_runtime
from handlers.triage.api import ClaimedIssue, list_claims
from tests.e2e.conftest import Steward
from tests.e2e.stack import TEST_CONFIG_PATHS, wait_for
from tests.e2e.test_integrity_e2e import forge_data, rebuilt_notes

RECORD = "steward:triage-claims:record"


def assignees(steward: Steward, repo: str, number: int) -> list[str]:
    return sorted(a["login"] for a in steward.maintainer.issue(repo, number).get("assignees") or [])


def record(steward: Steward, repo: str, number: int) -> str:
    found = [c["body"] for c in steward.bot_comments(repo, number) if RECORD in c["body"]]
    return found[0] if found else ""


def replies(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "steward:reply:" in c["body"]]


def claims_listed(steward: Steward, repo: str) -> list[ClaimedIssue]:
    """What the overview is told (``handlers.triage.api.list_claims``), through the real adapter."""

    async def run() -> list[ClaimedIssue]:
        redis = make_redis(steward.redis_url)
        registry = handlers.build_registry()
        runtime = build_runtime(steward.settings, redis, registry)
        try:
            ref = RepoRef.parse(repo)
            forge = await runtime.forge("github" if steward.forge == "github" else "gitea", ref)
            event = Event(forge=forge.kind, delivery_id="t", name="reconcile", action="", sender="", repo=ref)
            ctx = EventContext(
                event=event,
                forge=forge,
                me=await forge.whoami(),
                settings=HandlerSettings(),
                registry=registry,
                log=structlog.get_logger(),
            )
            return await list_claims(ctx)
        finally:
            await runtime.aclose()
            await redis.aclose()

    return asyncio.run(run())


def reactions(steward: Steward, repo: str, comment: int) -> list[str]:
    return steward.maintainer.reactions(repo, comment)


def run(steward: Steward, who: Any, repo: str, number: int, body: str) -> int:
    comment = int(who.comment(repo, number, body))
    steward.settle()
    return comment


def test_claim_assign_and_unassign_with_a_record_where_the_forge_will_not_assign(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "Export to CSV drops the last row")
    steward.settle()

    run(steward, steward.outsider, repo, number, "/steward claim")
    labels = steward.maintainer.labels_of(repo, number)
    shown = record(steward, repo, number)
    assert "claimed" in labels and "`@outsider`, since" in shown
    if steward.forge == "github":
        assert assignees(steward, repo, number) == ["outsider"], "GitHub assigns whoever commented"
        assert "(assigned)" in shown and replies(steward, repo, number) == []
    else:
        assert assignees(steward, repo, number) == [], "Gitea assigns only people with write access"
        assert "kept by Steward: Gitea assigns only people with write access" in shown
        [reply] = replies(steward, repo, number)
        assert "Steward keeps the claim of `@outsider` in its record on this issue" in reply

    # Assigning others is triage's (Gitea: write's), and the refusal says who may.
    refused = run(steward, steward.outsider, repo, number, "/steward assign @maintainer")
    assert "confused" in reactions(steward, repo, refused)
    access = "write" if steward.forge == "gitea" else "triage"
    assert any(
        f"`/steward assign` can only be run by people with {access} access or more" in r
        for r in replies(steward, repo, number)
    )
    refused = run(steward, steward.outsider, repo, number, "/steward unassign @triager")
    assert any(
        f"only people with {access} access or more may assign or unassign other people here" in r
        for r in replies(steward, repo, number)
    )

    typo = run(steward, steward.triager, repo, number, "/steward assign @maintainr")
    assert "confused" in reactions(steward, repo, typo)
    assert any(
        "`@maintainr`: no such account on this forge, so nobody was assigned" in r
        for r in replies(steward, repo, number)
    )
    done = run(steward, steward.triager, repo, number, "/steward assign @maintainer me")
    assert "+1" in reactions(steward, repo, done)
    expected = (
        ["maintainer", "outsider", "triager"] if steward.forge == "github" else ["maintainer", "triager"]
    )
    assert assignees(steward, repo, number) == expected

    # Letting go of oneself needs nothing; the record and the label follow.
    run(steward, steward.outsider, repo, number, "/steward unassign")
    assert "outsider" not in assignees(steward, repo, number)
    assert "**No claims** on this issue now" in record(steward, repo, number)
    assert "claimed" not in steward.maintainer.labels_of(repo, number)
    run(steward, steward.maintainer, repo, number, "/steward unassign @maintainer @triager")
    assert assignees(steward, repo, number) == []


def test_a_claim_nobody_works_on_is_released_with_a_note(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "Dark mode forgets its setting")
    steward.settle()
    run(steward, steward.outsider, repo, number, "/steward claim")
    assert "claimed" in steward.maintainer.labels_of(repo, number)

    def age(days: float) -> None:
        steward.maintainer.call(
            "POST", f"{steward.sandbox.url}/_sandbox/repos/{repo}/issues/{number}/age", {"days": days}
        )

    age(29)
    steward.run_periodic("claim-release")
    steward.settle()
    assert "`@outsider`, since" in record(steward, repo, number), "29 days: not yet"
    [listed] = claims_listed(steward, repo)
    assert (listed.number, [c.login for c in listed.claims], listed.stale) == (number, ["outsider"], ())
    age(2)
    [listed] = claims_listed(steward, repo)
    assert [c.login for c in listed.stale] == ["outsider"], "the overview sees it gone stale"
    steward.run_periodic("claim-release")
    steward.settle()
    notes = [c["body"] for c in steward.bot_comments(repo, number) if "steward:triage-released:" in c["body"]]
    assert len(notes) == 1 and notes[0].count("@outsider: your claim on this issue was released") == 1
    assert "nothing from you here for 30 days" in notes[0]
    assert "**No claims**" in record(steward, repo, number)
    assert "claimed" not in steward.maintainer.labels_of(repo, number)
    assert assignees(steward, repo, number) == []
    assert claims_listed(steward, repo) == []
    steward.run_periodic("claim-release")
    steward.settle()
    assert len([c for c in steward.bot_comments(repo, number) if "triage-released" in c["body"]]) == 1


def test_the_bare_short_form_is_left_to_other_bots_until_it_is_switched_on(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "Search ignores accents")
    steward.settle()
    bare = run(steward, steward.outsider, repo, number, "/claim")
    assert reactions(steward, repo, bare) == [] and record(steward, repo, number) == ""

    steward.maintainer.put_file(repo, TEST_CONFIG_PATHS[steward.forge], "triage:\n  short_commands: true\n")
    steward.settle()
    bare = run(steward, steward.outsider, repo, number, "/claim")
    wait_for(lambda: record(steward, repo, number), what="the claim record")
    assert "`@outsider`, since" in record(steward, repo, number)
    assert "eyes" in reactions(steward, repo, bare)
    run(steward, steward.outsider, repo, number, "/steward help")
    [text] = [r for r in replies(steward, repo, number) if "Steward commands" in r]
    assert "are off on this repository" not in text


def test_help_lists_the_everyday_commands_in_their_group(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "A question")
    steward.settle()
    run(steward, steward.outsider, repo, number, "/steward help")
    [text] = [r for r in replies(steward, repo, number) if "Steward commands" in r]
    assert "**Everyday commands (assign, label …)**" in text
    assert "`/steward claim`" in text and "`/steward assign @login …`" in text
    assert "are off on this repository, so other bots' commands of those names are left to them" in text


def test_a_hand_edited_claims_record_is_rebuilt_from_the_commands(steward: Steward) -> None:
    """Only a record whose signature verifies counts (DESIGN §3.13): a claim written into the record by hand
    is dropped when the record is rebuilt from the thread's commands, with a note naming who changed it."""
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "Uploads over 2 GB fail")
    steward.settle()
    run(steward, steward.outsider, repo, number, "/steward claim")
    [mine] = [c for c in steward.bot_comments(repo, number) if RECORD in c["body"]]
    data = sticky.unverified_data(mine["body"])
    assert isinstance(data, dict) and [c["login"] for c in data["claims"]] == ["outsider"]
    forged = dict(data["claims"][0], login="maintainer", by="maintainer")
    steward.maintainer.call(
        "PATCH",
        f"/repos/{repo}/issues/comments/{mine['id']}",
        {"body": forge_data(mine["body"], {"claims": [*data["claims"], forged]})},
    )
    steward.settle()
    [note] = rebuilt_notes(steward, repo, number)
    assert "was changed by @maintainer; it was rebuilt. Nothing to do." in note
    assert "`@outsider`, since" in record(steward, repo, number)
    assert "`@maintainer`" not in record(steward, repo, number), "no command made the forged claim"
    run(steward, steward.triager, repo, number, "/steward claim")
    shown = record(steward, repo, number)
    assert "`@outsider`, since" in shown and "`@triager`, since" in shown and "`@maintainer`" not in shown
    assert len(rebuilt_notes(steward, repo, number)) == 1
