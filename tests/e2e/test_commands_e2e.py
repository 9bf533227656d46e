"""Steward end to end: the sandbox forge delivers signed webhooks to a real receiver, a real
worker answers through gidgethub (GitHub) or py-gitea (Gitea) over HTTP — every test runs on both
forges (the `steward` fixture is parametrised). Each test asserts what a user would see."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.e2e.conftest import Steward


def replies(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number)]


def test_help_is_answered_once_with_every_command_and_who_may_run_it(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "Something is broken")
    comment = steward.maintainer.comment(repo, number, "/steward help")
    steward.settle()
    bodies = replies(steward, repo, number)
    assert len(bodies) == 1
    assert "`/steward help`" in bodies[0] and "`/steward ping`" in bodies[0] and "anyone" in bodies[0]
    shown = bodies[0].split("<details>", 1)[0]  # a maintainer may run them all: their names, by capability
    assert "- **Milestones**: `gate`, `ratify`" in shown and len(shown.strip().splitlines()) <= 20
    assert "eyes" in steward.maintainer.reactions(repo, comment)


def test_help_shows_a_reporter_what_they_may_run_in_one_screen_and_folds_the_rest(steward: Steward) -> None:
    """Issue 37 §3: the help was a 27-row alphabetical table; a reporter sees first what they may run."""
    repo = steward.new_repo()
    number = steward.outsider.open_issue(repo, "Export crashes")
    steward.outsider.comment(repo, number, "/steward help")
    steward.settle()
    [body] = replies(steward, repo, number)
    shown, folded = body.split("<details>", 1)
    assert "**What you can run here:**" in shown
    # The author's and anyone's: with the everyday commands (issue 39) a reporter may run more than fit one a
    # line, so they are named by capability.
    assert "**Refining issues**: `refine`" in shown and "`ping`" in shown
    assert "`close`, `reopen`, `duplicate`" in shown  # their own report's
    assert "`bugfix`" not in shown and "`/steward bugfix" in folded  # write access: folded
    assert "| `/steward refine` |" in folded  # the fold has every command, with who may run it
    assert len(shown.strip().splitlines()) <= 20  # one screen, however many commands there are
    assert "**Regression-first bugfixes**" in folded and "**Root cause (the hypotheses board)**" in folded
    assert "add a hypothesis H\\<n> to the root-cause board" in folded  # the placeholder survives GitHub


def test_ping_replies_with_the_version(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "hello")
    steward.outsider.comment(repo, number, "/ping")
    steward.settle()
    [body] = replies(steward, repo, number)
    assert "pong — Steward" in body


def test_a_replayed_delivery_gives_one_reply(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "replay me")
    steward.maintainer.comment(repo, number, "/steward ping")
    steward.settle()
    deliveries = steward.maintainer.call(
        "GET", f"{steward.sandbox.url}/_sandbox/deliveries?event=issue_comment"
    )
    mine = [d for d in deliveries if d["action"] == "created"][-1]
    for _ in range(5):
        steward.maintainer.call("POST", f"{steward.sandbox.url}/_sandbox/deliveries/{mine['id']}/redeliver")
    steward.settle()
    assert len(replies(steward, repo, number)) == 1


def test_the_same_event_under_a_new_delivery_id_still_writes_nothing_new(steward: Steward) -> None:
    """Idempotent handlers: even when dedupe cannot help (Redis flushed), a replay edits nothing."""
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "idempotent")
    steward.maintainer.comment(repo, number, "/steward help")
    steward.settle()
    before = steward.bot_comments(repo, number)
    deliveries = steward.maintainer.call(
        "GET", f"{steward.sandbox.url}/_sandbox/deliveries?event=issue_comment"
    )
    mine = [d for d in deliveries if d["action"] == "created"][-1]
    payload = steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries/{mine['id']}")[
        "payload"
    ]
    steward.deliver("issue_comment", json.dumps(payload).encode(), delivery=str(uuid.uuid4()))
    steward.settle()
    after = steward.bot_comments(repo, number)
    assert [(c["id"], c["body"], c["updated_at"]) for c in after] == [
        (c["id"], c["body"], c["updated_at"]) for c in before
    ]


@pytest.mark.parametrize(
    "body",
    [
        "```\n/steward ping\n```",
        "~~~\n/steward ping\n~~~",
        "Try `/steward ping` to check.",
        "> /steward ping",
        "<!-- /steward ping -->",
        "    /steward ping",
    ],
    ids=["fence", "tilde-fence", "inline-code", "quote", "html-comment", "indented-code"],
)
def test_commands_in_code_quotes_or_comments_do_nothing(steward: Steward, body: str) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "quoted")
    comment = steward.maintainer.comment(repo, number, body)
    steward.settle()
    assert replies(steward, repo, number) == []
    assert steward.maintainer.reactions(repo, comment) == []


def test_an_edited_comment_runs_only_the_commands_it_added(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "edits")
    comment = steward.maintainer.comment(repo, number, "/steward ping")
    steward.settle()
    assert len(replies(steward, repo, number)) == 1
    steward.maintainer.edit_comment(repo, comment, "/steward ping\n\nfixed a typo")
    steward.settle()
    assert len(replies(steward, repo, number)) == 1
    steward.maintainer.edit_comment(repo, comment, "/steward ping\n\n/steward help")
    steward.settle()
    bodies = replies(steward, repo, number)
    assert len(bodies) == 2 and any("Steward commands" in b for b in bodies)


def test_the_bots_own_comment_never_triggers_work(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "self")
    comment = steward.bot.comment(repo, number, "/steward ping")
    steward.settle()
    assert [c["id"] for c in steward.bot_comments(repo, number)] == [comment]
    assert steward.maintainer.reactions(repo, comment) == []


async def _secret(ctx) -> None:  # type: ignore[no-untyped-def]
    await ctx.reply("secret ran")


def _add_secret(registry) -> None:  # type: ignore[no-untyped-def]
    registry.command("e2e-secret", usage="e2e-secret", help="A test-only command.", permission="write")(
        _secret
    )


@pytest.mark.extend_registry.with_args(_add_secret)
def test_an_outsider_is_refused_with_who_may_run_it(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "perm")
    comment = steward.outsider.comment(repo, number, "/steward e2e-secret")
    steward.settle()
    [body] = replies(steward, repo, number)
    assert "@outsider" in body and "can only be run by people with write access or more" in body
    assert "`none`" in body or "`read`" in body
    assert "confused" in steward.maintainer.reactions(repo, comment)
    steward.maintainer.comment(repo, number, "/steward e2e-secret")
    steward.settle()
    assert any(b.endswith("secret ran\n") or "secret ran" in b for b in replies(steward, repo, number))


def test_an_unknown_command_is_answered_with_the_closest_one(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "typo")
    steward.maintainer.comment(repo, number, "/steward hlep")
    steward.settle()
    [body] = replies(steward, repo, number)
    assert "I don't know the command `/steward hlep`" in body and "Did you mean `/steward help`?" in body


def test_server_errors_are_retried_into_one_comment(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "flaky forge")
    steward.faults(
        {
            "method": "POST",
            "path": rf"/repos/{repo}/issues/{number}/comments$",
            "status": 500,
            "times": 2,
            "login": "steward-bot",
        }
    )
    steward.maintainer.client.delete(f"{steward.sandbox.url}/_sandbox/requests")
    steward.maintainer.comment(repo, number, "/steward ping")
    steward.settle()
    assert len(replies(steward, repo, number)) == 1


def test_429_with_retry_after_waits_then_succeeds(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "rate limited")
    steward.faults(
        {
            "method": "POST",
            "path": rf"/repos/{repo}/issues/{number}/comments$",
            "status": 429,
            "times": 1,
            "headers": {"Retry-After": "1"},
            "login": "steward-bot",
        }
    )
    steward.maintainer.comment(repo, number, "/steward ping")
    steward.settle()
    assert len(replies(steward, repo, number)) == 1
    log = steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/requests")
    posts = [
        r
        for r in log
        if r["method"] == "POST"
        and r["path"].endswith(f"/repos/{repo}/issues/{number}/comments")
        and r["login"] == "steward-bot"
    ]
    assert [p["status"] for p in posts] == [429, 201]


@pytest.mark.handler_settings(limits={"commands_per_minute": 100})
def test_fifty_deliveries_for_one_issue_are_each_answered_once(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "busy issue")
    ids = [steward.maintainer.comment(repo, number, f"/steward ping\n\nrun {i}") for i in range(50)]
    steward.settle(timeout=120)
    bodies = replies(steward, repo, number)
    assert len(bodies) == 50
    markers = {b.splitlines()[0] for b in bodies}
    assert len(markers) == 50, "each command has its own reply"
    assert all(f"steward:reply:{i}-" in "".join(markers) for i in ids)


def test_a_person_over_the_command_budget_gets_one_short_answer_not_twenty(steward: Steward) -> None:
    """Abuse of the write budget: one comment with twenty commands (the grammar's cap) runs the first ten
    (the default budget a person has per minute and repository); the rest get one 😕 on the comment and
    one reply saying when to try again — not ten more replies."""
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "spam")
    flood = "\n\n".join(f"/steward ping {i}" for i in range(20))
    comment = steward.outsider.comment(repo, number, flood)
    steward.settle()
    bodies = replies(steward, repo, number)
    pongs = [b for b in bodies if "pong" in b]
    refusals = [b for b in bodies if "commands here in the last minute" in b]
    assert len(pongs) == 10 and len(refusals) == 1
    assert "@outsider" in refusals[0] and "Try again in " in refusals[0]
    assert sorted(steward.maintainer.reactions(repo, comment)) == ["confused", "eyes"]
    steward.outsider.comment(repo, number, "/steward ping again")
    steward.settle()
    assert len(replies(steward, repo, number)) == 11, "still over budget: no new reply within the minute"


def test_each_thread_where_a_person_is_over_budget_says_why_once(steward: Steward) -> None:
    """Every refusal says why (DESIGN §3.4): past the budget, a command in another thread is not met with
    a bare 😕: that thread gets its own notice; more commands there within the minute get none."""
    repo = steward.new_repo()
    first = steward.maintainer.open_issue(repo, "spam here")
    second = steward.maintainer.open_issue(repo, "and there")
    steward.outsider.comment(repo, first, "\n\n".join(f"/steward ping {i}" for i in range(11)))
    steward.settle()
    steward.outsider.comment(repo, second, "/steward ping over there")
    steward.settle()
    over = [b for b in replies(steward, repo, second) if "commands here in the last minute" in b]
    assert len(over) == 1 and "@outsider" in over[0] and "`/steward ping`" in over[0]
    steward.outsider.comment(repo, second, "/steward ping once more")
    steward.outsider.comment(repo, first, "/steward ping once more")
    steward.settle()
    assert len(replies(steward, repo, second)) == 1, "one notice a minute per thread"
    assert len([b for b in replies(steward, repo, first) if "last minute" in b]) == 1


def test_the_command_budget_is_per_person(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "spam")
    steward.outsider.comment(repo, number, "\n\n".join(f"/steward ping {i}" for i in range(12)))
    steward.settle()
    steward.maintainer.comment(repo, number, "/steward ping mine")
    steward.settle()
    assert any("pong" in b for b in replies(steward, repo, number)[-1:]), "another person is not held back"


def test_on_gitea_a_bot_with_write_access_says_what_to_change_instead_of_going_silent(
    steward: Steward,
) -> None:
    """FORGE-FACTS: Gitea refuses a Write collaborator the permission API. A command that needs it is
    answered in the thread with what a maintainer must change; on GitHub, write access is enough."""
    repo = steward.maintainer.create_repo()
    steward.maintainer.add_collaborator(repo, "steward-bot", "push")
    steward.maintainer.add_hook(repo, f"{steward.receiver.url}{steward.maintainer.webhook_path}")
    number = steward.maintainer.open_issue(repo, "check me")
    steward.outsider.comment(repo, number, "/steward refresh")
    steward.settle()
    [reply] = replies(steward, repo, number)
    if steward.forge == "gitea":
        assert reply.splitlines()[-1].startswith("@outsider: Steward cannot read permissions on this")
        assert "give `steward-bot` **Administrator** access" in reply
    else:
        assert "can only be run by people with triage access or more" in reply


@pytest.mark.parametrize(
    "fault", [{"status": 502}, {"drop": True}], ids=["apply-then-502", "apply-then-drop"]
)
def test_a_reply_the_forge_applied_without_confirming_is_not_doubled(
    steward: Steward, fault: dict[str, object]
) -> None:
    """Doubled writes: the forge posts the reply but answers 502 (or drops the connection). Steward does
    not resend the POST; the job runs again from a fresh read and finds its reply: one reply in all."""
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "flaky proxy")
    path = f"/repos/{repo}/issues/{number}/comments$"
    steward.faults({"method": "POST", "path": path, "apply": True, "login": "steward-bot", **fault})
    steward.maintainer.comment(repo, number, "/steward ping")
    steward.settle()
    bodies = replies(steward, repo, number)
    assert len(bodies) == 1 and "pong" in bodies[0]
