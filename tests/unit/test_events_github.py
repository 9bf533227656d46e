"""The GitHub normaliser, on every octokit example of the events Steward handles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.events.event import EVENT_FORMAT, Event, MalformedPayload, ReviewSnapshot, Unhandled
from bot.events.github import GITHUB_HANDLED, normalise_github

WEBHOOKS = Path(__file__).parent.parent / "fixtures" / "github" / "webhooks"
SCHEMAS = Path(__file__).parent.parent / "fixtures" / "github" / "webhook-schemas"


def _examples(handled: bool) -> list[tuple[str, Path]]:
    cases = []
    for path in sorted(WEBHOOKS.glob("*/*.json")):
        event = path.parent.name
        action = json.loads(path.read_bytes()).get("action")
        allowed = GITHUB_HANDLED.get(event, frozenset())
        is_handled = event in GITHUB_HANDLED and (allowed is None or action in allowed)
        if event == "check_run" and action == "created":
            # A run's start counts only for a run named like Steward's own (issue 35 item 7).
            is_handled = json.loads(path.read_bytes())["check_run"]["name"].startswith("steward/")
        if is_handled == handled:
            cases.append((event, path))
    return cases


HANDLED = _examples(True)
UNHANDLED = _examples(False)


def test_every_handled_event_has_examples() -> None:
    events = {event for event, _ in HANDLED}
    assert {
        "issues",
        "issue_comment",
        "pull_request",
        "milestone",
        "push",
        "installation",
        "status",
        "check_run",
        "check_suite",
        "pull_request_review",
    } <= events


@pytest.mark.parametrize(("event_name", "path"), HANDLED, ids=[f"{e}/{p.name}" for e, p in HANDLED])
def test_handled_examples_normalise(event_name: str, path: Path) -> None:
    payload = json.loads(path.read_bytes())
    event = normalise_github(event_name, "d-1", payload)
    assert event.forge == "github" and event.name == event_name
    assert event.action == payload.get("action", "")
    assert event.sender == payload["sender"]["login"]
    assert event.sender_is_bot == (payload["sender"]["type"] == "Bot")
    if "repository" in payload:
        assert event.repo is not None and event.repo.full_name == payload["repository"]["full_name"]
    if "installation" in payload:
        assert event.installation_id == payload["installation"]["id"]
    if event_name in ("issues", "issue_comment"):
        assert event.issue is not None
        assert event.issue.number == payload["issue"]["number"]
        assert event.issue.body == (payload["issue"]["body"] or "")
        assert event.issue.labels == tuple(label["name"] for label in payload["issue"]["labels"])
        assert event.issue.is_pull_request == ("pull_request" in payload["issue"])
    if event_name == "issue_comment":
        assert event.comment is not None and event.comment.id == payload["comment"]["id"]
        assert event.comment.body == payload["comment"]["body"]
        if payload["action"] == "edited":
            assert event.previous_body == payload["changes"]["body"]["from"]
    if event_name == "issues" and payload["action"] in ("labeled", "unlabeled"):
        assert event.label == payload["label"]["name"]
    if event_name == "pull_request":
        raw_pull = payload["pull_request"]
        assert event.issue is not None and event.issue.is_pull_request
        assert event.pull is not None
        assert (event.pull.head_ref, event.pull.head_sha, event.pull.base_ref) == (
            raw_pull["head"]["ref"],
            raw_pull["head"]["sha"],
            raw_pull["base"]["ref"],
        )
        assert (event.pull.merged, event.pull.draft) == (
            raw_pull["merged"] is True,
            raw_pull["draft"] is True,
        )
    if event_name == "status":
        assert event.report is not None
        assert (event.report.sha, event.report.context, event.report.state) == (
            payload["sha"],
            payload["context"],
            payload["state"],
        )
    if event_name in ("check_run", "check_suite"):
        raw = payload[event_name]
        assert event.report is not None and event.report.sha == raw["head_sha"]
        assert (event.report.state, event.report.conclusion) == (raw["status"], raw["conclusion"])
        assert event.report.app == (raw["app"].get("slug") or ""), "whose run it is (Steward's, or not)"
        assert event.report.pulls == tuple(p["number"] for p in raw["pull_requests"])
        if event_name == "check_run":
            assert event.report.context == raw["name"]
    if event_name == "milestone":
        assert event.milestone is not None and event.milestone.number == payload["milestone"]["number"]
    if event_name == "push":
        assert event.ref == payload["ref"] and event.after == payload["after"]
    if event_name == "pull_request_review":
        raw, raw_pull = payload["review"], payload["pull_request"]
        assert event.review == ReviewSnapshot(raw["state"], raw["user"]["login"], raw["id"], raw["commit_id"])
        assert event.issue is not None and event.issue.number == raw_pull["number"]
        assert event.issue.is_pull_request
        assert event.pull is not None and event.pull.head_sha == raw_pull["head"]["sha"]
    # The event survives the queue unchanged.
    assert Event.from_json(event.to_json()) == event


@pytest.mark.parametrize(("event_name", "path"), UNHANDLED, ids=[f"{e}/{p.name}" for e, p in UNHANDLED])
def test_unhandled_examples_are_ignored_with_a_reason(event_name: str, path: Path) -> None:
    with pytest.raises(Unhandled) as excinfo:
        normalise_github(event_name, "d-1", json.loads(path.read_bytes()))
    assert event_name in str(excinfo.value)


@pytest.mark.parametrize(
    "payload",
    [
        [],
        "x",
        3,
        None,
        {"action": "opened"},
        {"action": "opened", "issue": "nope"},
        {"action": "created", "issue": {"number": 1}, "comment": {}, "repository": {"full_name": "a/b"}},
    ],
)
def test_malformed_payloads_are_refused(payload: object) -> None:
    with pytest.raises(MalformedPayload):
        normalise_github(
            "issue_comment" if isinstance(payload, dict) and "comment" in payload else "issues", "d", payload
        )


@pytest.mark.parametrize(("event_name", "path"), HANDLED, ids=[f"{e}/{p.name}" for e, p in HANDLED])
def test_an_event_in_a_repository_that_names_none_is_refused(event_name: str, path: Path) -> None:
    """Found by tests/fuzz/test_receiver_fuzz.py: a `milestone.deleted` without its `repository` was queued,
    and its job failed for good ("this event names no repository"). Every event Steward handles happens in
    a repository, but an installation's: without the repository it is malformed (answered 400)."""
    payload = json.loads(path.read_bytes())
    payload.pop("repository", None)
    if event_name in ("installation", "installation_repositories"):
        assert normalise_github(event_name, "d-1", payload).repo is None
        return
    with pytest.raises(MalformedPayload, match="must name its repository"):
        normalise_github(event_name, "d-1", payload)


def test_issue_key_serialises_per_issue() -> None:
    payload = json.loads((WEBHOOKS / "issue_comment" / "created.json").read_bytes())
    event = normalise_github("issue_comment", "d", payload)
    # The repository by its id, which a rename or a transfer keeps (bot.forge.repo_key).
    assert event.issue_key == f"github:#{payload['repository']['id']}#{payload['issue']['number']}"
    again = Event.from_json(event.to_json()).repo
    assert again is not None and again == event.repo and again.id == payload["repository"]["id"]


def test_a_renamed_or_transferred_repository_is_handled_and_says_its_old_name() -> None:
    """octokit/webhooks `repository.renamed` (`changes.repository.name.from`) and `repository.transferred`
    (`changes.owner.from.user` or `.organization`): the repository as it is now, its id, the name it had."""
    for action in ("renamed", "transferred"):
        payload = json.loads((WEBHOOKS / "repository" / f"{action}.json").read_bytes())
        if action == "renamed":
            # octokit's example keeps the name it says it changed from; GitHub's names the new one.
            payload["repository"].update(name="Renamed", full_name="Octocoders/Renamed")
        event = normalise_github("repository", "d", payload)
        repo = payload["repository"]
        assert event.kind == f"repository.{action}" and event.repo is not None
        assert (event.repo.full_name, event.repo.id) == (repo["full_name"], repo["id"])
        if action == "renamed":
            old = payload["changes"]["repository"]["name"]["from"]
            assert event.extra == {"renamed_from": f"{repo['owner']['login']}/{old}"}
        else:
            before = payload["changes"]["owner"]["from"]
            owner = (before.get("user") or before.get("organization"))["login"]
            assert event.extra == {"renamed_from": f"{owner}/{repo['name']}"}


@pytest.mark.parametrize("action", ["sub_issue_added", "sub_issue_removed"])
def test_a_sub_issue_added_or_removed_is_the_parents_event_naming_the_sub_issue(action: str) -> None:
    """GitHub's `sub_issues` (tests/fixtures/github/webhooks/sub_issues/, built from its schema): the parent's
    side, `sub_issue_added` or `sub_issue_removed`, is handled as an event on the parent (its lock, its
    snapshot) that names the sub-issue and its repository; the child's side of the same link,
    `parent_issue_added`, is not."""
    payload = json.loads((WEBHOOKS / "sub_issues" / f"{action}.json").read_bytes())
    event = normalise_github("sub_issues", "d", payload)
    assert event.kind == f"sub_issues.{action}"
    assert event.issue is not None and event.issue.number == payload["parent_issue"]["number"] == 1
    assert event.issue_key == f"github:#{payload['repository']['id']}#1"
    assert event.extra == {"sub_issue": "2", "sub_issue_repo": "Codertocat/Hello-World"}
    assert Event.from_json(event.to_json()).extra == event.extra
    with pytest.raises(MalformedPayload):
        normalise_github("sub_issues", "d", {**payload, "sub_issue": {}})
    other = json.loads((WEBHOOKS / "sub_issues" / "parent_issue_added.json").read_bytes())
    with pytest.raises(Unhandled):
        normalise_github("sub_issues", "d", other)


def test_the_queued_form_carries_every_field() -> None:
    from dataclasses import fields

    payload = json.loads((WEBHOOKS / "issues" / "labeled.json").read_bytes())
    event = normalise_github("issues", "d", payload)
    assert set(json.loads(event.to_json())) == {f.name for f in fields(Event)}


def test_the_repository_id_travels_where_a_worker_of_the_previous_version_takes_it() -> None:
    """A worker of the previous version builds ``RepoRef(**repo)`` (a new key there fails the job) and takes
    any key in ``extra``: the id travels in ``extra`` and comes back as ``repo.id``, ``extra`` as it was."""
    payload = json.loads((WEBHOOKS / "issues" / "labeled.json").read_bytes())
    event = normalise_github("issues", "d", payload)
    queued = json.loads(event.to_json())
    assert set(queued["repo"]) == {"owner", "name"}
    # (and the event's format, issue 40 item 5: tests/integration/test_event_format.py)
    assert queued["extra"] == {
        **event.extra,
        "_repo_id": str(payload["repository"]["id"]),
        "_format": str(EVENT_FORMAT),
    }
    again = Event.from_json(event.to_json())
    assert (
        again.repo is not None and again.repo.id == payload["repository"]["id"] and again.extra == event.extra
    )


def test_installation_events_name_their_repositories() -> None:
    """`installation.created` lists every repository the App was installed on (`repositories`);
    `installation_repositories.added` the ones added (`repositories_added`); `removed` is not handled."""
    created = json.loads((WEBHOOKS / "installation" / "created.json").read_bytes())
    event = normalise_github("installation", "d-1", created)
    assert event.repo is None and event.installation_id == 957387
    assert [r.full_name for r in event.repos] == ["Codertocat/Hello-World"]
    assert Event.from_json(event.to_json()) == event
    added = json.loads((WEBHOOKS / "installation_repositories" / "added.json").read_bytes())
    event = normalise_github("installation_repositories", "d-2", added)
    assert event.kind == "installation_repositories.added"
    assert [r.full_name for r in event.repos] == ["Codertocat/Space"]
    removed = json.loads((WEBHOOKS / "installation_repositories" / "removed.json").read_bytes())
    with pytest.raises(Unhandled):
        normalise_github("installation_repositories", "d-3", removed)
    listed: list[object] = [{"full_name": f"o/r{i}"} for i in range(500)]
    many = {**created, "repositories": [{"full_name": "bad"}, 7, *listed]}
    assert len(normalise_github("installation", "d-4", many).repos) == 200


def test_review_events_rely_only_on_what_the_schemas_require() -> None:
    """octokit's payload schemas for `pull_request_review` submitted / edited / dismissed (there is no
    example of `edited`): each requires the review and the pull request; a review always has an id, a user,
    a `commit_id` and a lower-case `state` Steward knows."""
    for action in ("submitted", "edited", "dismissed"):
        schema = json.loads((SCHEMAS / "pull_request_review" / f"{action}.schema.json").read_bytes())
        assert {"action", "review", "pull_request", "repository", "sender"} <= set(schema["required"])
        assert schema["properties"]["action"]["enum"] == [action]
        assert action in (GITHUB_HANDLED["pull_request_review"] or ())
    review = json.loads((SCHEMAS / "common" / "pull-request-review.schema.json").read_bytes())
    assert {"id", "user", "commit_id", "state"} <= set(review["required"])
    assert set(review["properties"]["state"]["enum"]) == {
        "commented",
        "changes_requested",
        "approved",
        "dismissed",
    }
    # An edited review (its body changed), built from the submitted example as the schema describes it.
    submitted = json.loads((WEBHOOKS / "pull_request_review" / "submitted.json").read_bytes())
    edited = {**submitted, "action": "edited", "changes": {"body": {"from": "old"}}}
    event = normalise_github("pull_request_review", "d", edited)
    assert event.kind == "pull_request_review.edited" and event.review is not None
    with pytest.raises(MalformedPayload):
        normalise_github("pull_request_review", "d", {**submitted, "review": {"state": "approved"}})


def test_a_locked_issue_says_so_and_an_unlocked_one_queues_as_before() -> None:
    """The issue of octokit/webhooks' `issues.locked` example, delivered as an `issues.edited` (Steward does
    not handle `locked` itself): the snapshot's `locked`, kept through the queue; an unlocked issue's queued
    form has no `locked` key, so a worker of an earlier version still reads it."""
    payload = json.loads((WEBHOOKS / "issues" / "locked.json").read_bytes())
    locked = normalise_github("issues", "d-1", {**payload, "action": "edited", "changes": {}})
    assert locked.issue is not None and locked.issue.locked is True
    assert Event.from_json(locked.to_json()) == locked
    opened = normalise_github("issues", "d-2", json.loads((WEBHOOKS / "issues" / "opened.json").read_bytes()))
    assert opened.issue is not None and opened.issue.locked is False
    assert "locked" not in json.loads(opened.to_json())["issue"]


def test_a_check_run_starting_counts_only_when_named_like_steward_s_own() -> None:
    """Another app's run named `steward/…` is answered when it starts (it may be created completed); any
    other run's start is dropped by the receiver (a busy CI queues no job for it), its completion is not."""
    payload = json.loads((WEBHOOKS / "check_run" / "created.json").read_bytes())
    with pytest.raises(Unhandled, match="only its completion counts"):
        normalise_github("check_run", "d-1", payload)
    payload["check_run"]["name"] = "steward/regression-first"
    event = normalise_github("check_run", "d-2", payload)
    assert event.report is not None and event.report.context == "steward/regression-first"
    payload["action"], payload["check_run"]["name"] = "completed", "build"
    assert normalise_github("check_run", "d-3", payload).report is not None
