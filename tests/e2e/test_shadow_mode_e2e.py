"""Shadow mode (issue 37 §4), on both forges: with `mode: shadow` in its configuration a repository gets
nothing written by Steward — no verdict, no label, no reaction, no reply — while `/steward config` answers
and shows the last things Steward would have done there; `mode: live` lets it act."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Steward
from tests.e2e.stack import reconcile

FAST = {"grace_period_seconds": 1, "refresh_debounce_seconds": 0.3, "notify": ["maintainer"]}

REPORT = "App crashes when I open the cart"


def config_path(steward: Steward) -> str:
    return f"{'.gitea' if steward.forge == 'gitea' else '.github'}/steward.yml"


def test_in_shadow_mode_steward_writes_nothing_and_config_shows_what_it_would_have_done(
    steward: Steward,
) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    m.put_file(repo, config_path(steward), "mode: shadow\n")
    steward.settle()
    bug = m.open_issue(repo, "The cart crashes", REPORT, labels=["bug", "refine"])
    ping = m.comment(repo, bug, "/steward refine")
    steward.settle()
    assert steward.bot_comments(repo, bug) == [], "no verdict, no reply"
    assert not any(label.startswith("refinement:") for label in m.labels_of(repo, bug))
    assert m.reactions(repo, ping) == [], "not even the 👀 of an accepted command"

    m.comment(repo, bug, "/steward config")
    steward.settle()
    [answer] = [c["body"] for c in steward.bot_comments(repo, bug)]
    assert "**Shadow mode** (`mode: shadow`)" in answer
    assert "things it would have done, newest first" in answer
    assert f" #{bug}: would comment on {repo}#{bug}: " in answer  # the verdict, not posted
    assert f"would add refinement:needs-info to {repo}#{bug}" in answer
    assert "would react eyes to comment" in answer and "<!--" not in answer.split("newest first")[1]

    m.put_file(repo, config_path(steward), "mode: live\n")
    steward.settle()
    m.edit_issue(repo, bug, body=REPORT + "\n\nEvery time.")
    steward.settle()
    assert any(label.startswith("refinement:") for label in m.labels_of(repo, bug)), "live: it acts"


@pytest.mark.handler_settings(milestones=FAST)
def test_in_shadow_mode_a_milestone_closed_too_early_stays_closed_whichever_path_checks_it(
    steward: Steward,
) -> None:
    """GitHub's gate runs from the milestone webhook's job, Gitea's from the periodic poll, and the catch-up
    from `steward reconcile`'s own loop: each writes nothing in shadow mode."""
    m = steward.maintainer
    repo = steward.new_repo()
    m.put_file(repo, config_path(steward), "mode: shadow\n")
    steward.settle()
    key = m.create_milestone(repo, "v1")
    m.open_issue(repo, "Export orders", milestone=key)
    steward.settle()
    m.set_milestone_state(repo, key, "closed")
    steward.settle()
    if steward.forge == "gitea":
        steward.run_periodic("milestones")
    steward.settle()
    assert m.milestone(repo, key)["state"] == "closed", "not reopened in shadow mode"
    assert [i for i in m.issues(repo, "milestone-dashboard") if i["user"]["login"] == "steward-bot"] == []
    number = m.open_issue(repo, "What would it do?", "Tell me.")
    m.comment(repo, number, "/steward config")
    steward.settle()
    [answer] = [c["body"] for c in steward.bot_comments(repo, number)]
    assert f"would set milestone 'v1' of {repo} to open" in answer, answer


def test_in_shadow_mode_the_catch_up_writes_nothing_either(steward: Steward) -> None:
    """`steward reconcile` re-derives every labelled issue in its own loop, outside the event jobs."""
    m = steward.maintainer
    repo = steward.new_repo()
    m.put_file(repo, config_path(steward), "mode: shadow\n")
    steward.settle()
    bug = m.open_issue(repo, "The cart crashes", REPORT, labels=["bug", "refine"])
    steward.settle()
    done = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    assert done.returncode == 0, done.stdout + done.stderr
    steward.settle()
    assert steward.bot_comments(repo, bug) == [], "no verdict from the catch-up"
    assert not any(label.startswith("refinement:") for label in m.labels_of(repo, bug))
    m.comment(repo, bug, "/steward config")
    steward.settle()
    [answer] = [c["body"] for c in steward.bot_comments(repo, bug)]
    assert f"on the catch-up (steward reconcile): would comment on {repo}#{bug}: " in answer
