"""`/label foo -bar` end to end, on both forges (issue 39): labels that exist here, each by whoever
`triage.labels` lets — by default triage (Gitea: write) and more, as the forge does — never a label Steward
manages itself; a name that is no label gets the nearest names; a refusal changes nothing and says who may.
A repository may let anyone, or the issue's author, set some labels (Prow's restricted labels)."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Steward
from tests.e2e.stack import TEST_CONFIG_PATHS

LABELS = ["bug", "wontfix", "good first issue", "area/ui", "refinement:approved", "claimed"]


def replies(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "steward:reply:" in c["body"]]


def run(steward: Steward, who: Any, repo: str, number: int, body: str) -> int:
    comment = int(who.comment(repo, number, body))
    steward.settle()
    return comment


def labelled_issue(steward: Steward, repo: str) -> int:
    steward.maintainer._label_ids(repo, LABELS)
    number = steward.outsider.open_issue(repo, "The sidebar overlaps the footer")
    steward.maintainer.add_labels(repo, number, ["wontfix"])
    steward.settle()
    return number


def test_labels_are_set_and_removed_by_whom_the_forge_lets_and_refusals_say_why(steward: Steward) -> None:
    repo = steward.new_repo()
    number = labelled_issue(steward, repo)
    m = steward.maintainer
    access = "write" if steward.forge == "gitea" else "triage"

    refused = run(steward, steward.outsider, repo, number, "/steward label bug")
    assert "confused" in m.reactions(repo, refused)
    assert sorted(m.labels_of(repo, number)) == ["wontfix"]
    assert any(
        f"`bug` may be set or removed here by people with {access} access or more" in r
        for r in replies(steward, repo, number)
    )

    done = run(steward, steward.triager, repo, number, '/steward label bug "good first issue" -wontfix')
    assert "+1" in m.reactions(repo, done)
    assert sorted(m.labels_of(repo, number)) == ["bug", "good first issue"]
    again = run(steward, steward.triager, repo, number, '/steward label bug "good first issue" -wontfix')
    assert "+1" in m.reactions(repo, again) and sorted(m.labels_of(repo, number)) == [
        "bug",
        "good first issue",
    ]

    run(steward, steward.triager, repo, number, "/steward label bgu")
    assert any(
        "`bgu` is not a label of this repository. Did you mean `bug`?" in r
        for r in replies(steward, repo, number)
    )

    run(steward, steward.maintainer, repo, number, "/steward label refinement:approved -claimed area/ui")
    [managed] = [r for r in replies(steward, repo, number) if "refinement:approved" in r]
    assert "`refinement:approved` is a label Steward sets and removes itself" in managed
    assert "`claimed` is a label Steward sets and removes itself" in managed
    assert "area/ui" not in m.labels_of(repo, number), "all or nothing"


def test_a_repository_may_let_anyone_or_the_author_set_some_labels(steward: Steward) -> None:
    repo = steward.new_repo()
    config = 'triage:\n  labels:\n    anyone: ["good first issue"]\n    author: ["area/*"]\n'
    steward.maintainer.put_file(repo, TEST_CONFIG_PATHS[steward.forge], config)
    steward.settle()
    number = labelled_issue(steward, repo)
    run(steward, steward.outsider, repo, number, '/steward label "good first issue" area/ui')
    assert sorted(steward.maintainer.labels_of(repo, number)) == ["area/ui", "good first issue", "wontfix"]
    other = steward.maintainer.open_issue(repo, "Someone else's issue")
    steward.settle()
    run(steward, steward.outsider, repo, other, "/steward label area/ui")
    assert steward.maintainer.labels_of(repo, other) == []
    assert any(
        "`area/ui` may be set or removed here by the author of this issue or pull request" in r
        for r in replies(steward, repo, other)
    )
