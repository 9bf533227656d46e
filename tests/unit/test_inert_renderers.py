"""Every place Steward writes people's text, rendered with hostile text: nothing in what Steward writes acts
(a mention, a closing keyword, HTML, an image) that was not Steward's own. Steward's own parts are what the
same renderer writes when the person's text is a plain "x"; the hostile rendering may hold no more."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.config.repo_file import ConfigError
from bot.forge import Issue
from bot.records.neutralise import live_parts
from handlers.backlog.render import _spec_body
from handlers.backlog.spec import Spec
from handlers.bug_refinement.render import render_bug_comment, render_story_comment
from handlers.bug_refinement.rules import Blocker, BugVerdict, StoryVerdict
from handlers.bugfix.gate import UsageError, parse_bugfix_args, pull_title, red_message
from handlers.bugfix.ledger import Ledger
from handlers.bugfix.render import Summary, pull_body, summary_text
from handlers.bugfix.status import RegressionStatus
from handlers.core import config as config_handler
from handlers.debug.board import Board, Entry, Hypothesis
from handlers.debug.render import render_board, render_escalation
from handlers.forks.juror import ForkStatus, Record, Verdict
from handlers.forks.render import Hints, history_lines, refusal, render_comment
from handlers.milestones.render import dashboard_title, plain
from handlers.onboarding.plan import Preview, _preview_lines
from handlers.triage.closing import UsageError as TargetError
from handlers.triage.closing import closed_text, parse_close, parse_target
from handlers.triage.welcome import welcome_text
from tests.unit.test_neutralise import PEOPLES_TEXT


def _parts(text: str) -> Counter[tuple[str, str]]:
    return Counter((kind, found) for kind, items in live_parts(text).items() for found in items)


def assert_inert(render: Callable[[str], str], text: str) -> None:
    own = _parts(render("x"))
    extra = _parts(render(text)) - own
    assert not extra, f"people's text acts in what Steward writes: {sorted(extra)}"


def _bugfix_summary(t: str) -> str:
    s = Summary(1, 2, t, t, t, "tests/test_x.py", "a" * 40, "failure", "b" * 40, "success", "success")
    return summary_text(s, Ledger())


def _bugfix_usage(t: str) -> str:
    messages = []
    for args in ([t], ["--base", t], ["--trust-test", t], [t, "--base"]):
        try:
            parse_bugfix_args(args)
        except UsageError as exc:
            messages.append(str(exc))
    return "\n".join(messages)


def _forks(t: str) -> str:
    decided = Record(
        "k1",
        "decide",
        "F1",
        "valid",
        t,
        "maint",
        "2026-01-01T00:00:00Z",
        decider="maint",
        url="https://forge/c/1",
        decided_at="2026-01-01T00:00:00Z",
        quote=t,
        hash="h" * 64,
    )
    refused = Record("k2", "decide", "F2", "invalid", t, "out", "2026-01-02T00:00:00Z", reason=t)
    verdict = Verdict(
        forks=(
            ForkStatus("F1", t, "resolved", record=decided, history=(refused,)),
            ForkStatus("F2", t, "claimed", reason=t, claimed=t),
        ),
        stray=(refused,),
    )
    return "\n".join([render_comment(verdict, Hints()), *history_lines(verdict), refusal(refused, Hints())])


def _debug(t: str) -> str:
    entry = Entry(1, "evidence", "maint", "2026-01-01T00:00", hypothesis=1, stance="for", title=t, text=t)
    h = Hypothesis(1, t, t, (t,), "maint", "2026-01-01", "https://forge/c/1", 0, evidence_for=(entry,))
    board = Board((h,), (entry, Entry(2, "hypothesis", "out", "2026-01-01", hypothesis=1, title=t)), 0, None)
    common = {"author": "author", "escalate_to": ("lead",), "prefix": "steward"}
    return render_board(board, timeout_hours=24, **common) + render_escalation(board, board_url="u", **common)


def _onboarding(t: str) -> str:
    verdict = BugVerdict("o/r#1", "rejected", "h", "2026-01-01T00:00:00Z", (Blocker("X", t),), ())
    return "\n".join(_preview_lines(Preview(Issue(1, t, "", "open", "out"), verdict), "bug"))


def _config(t: str) -> str:
    errors = [ConfigError(t, 3, t)]
    issue = config_handler.error_issue_body(".github/steward.yml", errors, pushed_by="maint", stale=False)
    return issue + config_handler.status_description(errors)


def _duplicate_usage(t: str) -> str:
    try:
        parse_target((t,), "steward")
    except TargetError as exc:
        return str(exc)
    return ""


RENDERERS: dict[str, Callable[[str], str]] = {
    "bugfix pull request body": lambda t: pull_body(1, t, t, "tests/test_x.py"),
    "bugfix pull request title": lambda t: pull_title(1, t),
    "bugfix red commit message": lambda t: red_message(1, t),
    "bugfix merge summary": _bugfix_summary,
    "bugfix usage errors (echoing the arguments)": _bugfix_usage,
    "bugfix status description and detail": lambda t: "\n".join(
        [(s := RegressionStatus("failure", "X", f"it also changes {t}", detail=t)).description, s.detail]
    ),
    "forks table, history and refusal": _forks,
    "milestones cell and dashboard title": lambda t: plain(t) + "\n" + dashboard_title(t),
    "debug board and escalation": _debug,
    "backlog spec": lambda t: "\n".join(_spec_body(Spec(version=1, goal=t, requirements=(t,)), heading="#")),
    "bug refinement verdict": lambda t: render_bug_comment(
        BugVerdict("o/r#1", "rejected", "h", "2026-01-01T00:00:00Z", (Blocker("X", t),), ())
    ),
    "bug refinement story verdict": lambda t: render_story_comment(
        StoryVerdict("o/r#1", "#2", "rejected", "h", "2026-01-01T00:00:00Z", (Blocker("X", t),)), "#1"
    ),
    "onboarding preview": _onboarding,
    "configuration errors": _config,
    "close reply (the reason) and the welcome (configured words)": lambda t: "\n".join(
        [closed_text("bob", parse_close(tuple(t.split())), "steward"), welcome_text("newbie", t)]
    ),
    "duplicate usage error (echoing the argument)": _duplicate_usage,
}


@given(st.sampled_from(sorted(RENDERERS)), PEOPLES_TEXT)
@settings(max_examples=600)
def test_no_renderer_lets_peoples_text_act(name: str, text: str) -> None:
    assert_inert(RENDERERS[name], text)


REPRODUCED = (
    "ask @maint2 @acme/everyone — Closes #1, fixes #3 <img src=https://tracker.example/p.png> ![x](u)"
)


def test_the_reproduced_texts_act_in_no_renderer() -> None:
    for name, render in RENDERERS.items():
        assert_inert(render, REPRODUCED), name


def test_the_mentions_steward_means_to_make_are_kept() -> None:
    assert "@author" in _debug("x") and "@lead" in _debug("x")
    assert "@maint" in _forks("x")
