"""The Gitea/Forgejo normaliser, on every Gitea and Forgejo payload in the fixtures.

Which fixture fields this relies on (tests/fixtures/gitea/webhooks, see PROVENANCE.md):

- All payloads: ``action``, ``sender.login``, ``repository.full_name`` — present in every file, old or new.
- ``issue``/``pull_request``: ``number``, ``title``, ``body``, ``state``, ``user.login``, ``labels[].name``,
  ``milestone.id``. woodpecker's ``HookPullRequest.json`` (Gitea and Forgejo) is hand-trimmed: its
  ``pull_request`` has no ``number`` or ``labels``, so the number comes from the top-level ``number``.
- ``comment``: ``id``, ``body``, ``user.login``; ``changes.body.from`` on edits. go-scm's comment payloads are
  2017-era and have no ``is_pull``; a comment on a pull request is then known from X-Gitea-Event-Type
  ``pull_request_comment`` (go-playground's newer payload has ``is_pull: true``).
- ``push``: ``ref`` and ``after``.
- go-scm's ``issues_closed.json`` is hand-derived from ``issues_opened.json``: only ``action`` and
  ``issue.state`` are relied on there (it has no ``closed_at``).
- go-playground's tests sent the specific type in X-Gitea-Event; ``index.json`` gives the headers a current
  Gitea sends, which is what these tests use (and the receiver also maps a specific type back).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.events.event import Event, MalformedPayload, Unhandled
from bot.events.gitea import GITEA_HANDLED, gitea_event_name, normalise_gitea

WEBHOOKS = Path(__file__).parent.parent / "fixtures" / "gitea" / "webhooks"
INDEX: list[dict[str, Any]] = json.loads((WEBHOOKS / "index.json").read_text())["files"]


def _name(entry: dict[str, Any]) -> str:
    return gitea_event_name(entry["x_gitea_event"], entry["x_gitea_event_type"])


def _handled(entry: dict[str, Any]) -> bool:
    event = _name(entry)
    allowed = GITEA_HANDLED.get(event, frozenset())
    return event in GITEA_HANDLED and (allowed is None or entry["action"] in allowed)


HANDLED = [e for e in INDEX if _handled(e)]
UNHANDLED = [e for e in INDEX if not _handled(e)]


def _payload(entry: dict[str, Any]) -> Any:
    return json.loads((WEBHOOKS / entry["file"]).read_bytes())


def _normalise(entry: dict[str, Any]) -> Event:
    return normalise_gitea(
        entry["x_gitea_event"], "d-1", _payload(entry), event_type=entry["x_gitea_event_type"]
    )


def test_the_index_covers_every_payload_file() -> None:
    files = {str(p.relative_to(WEBHOOKS)) for p in WEBHOOKS.glob("*/*.json")}
    assert files == {e["file"] for e in INDEX}


def test_every_handled_kind_has_a_fixture() -> None:
    kinds = {(_name(e), e["action"]) for e in HANDLED}
    for event, actions in GITEA_HANDLED.items():
        for action in actions or {None}:
            if (event, action) in {("issues", "edited"), ("issues", "reopened"), ("issues", "label_cleared")}:
                continue  # no such Gitea fixture exists (fixtures README, "Not found")
            if (event, action) in {("issues", "demilestoned"), ("issues", "unassigned")}:
                continue  # (unassigned: the shape of issue_assign's `assigned`, delivered in tests/e2e)
            if (event, action) == ("status", None):
                # No real Gitea `status` payload is among the fixtures (Gitea's tests build payloads in Go);
                # the sandbox's, shaped after CommitStatusPayload, is normalised in tests/sandbox.
                continue
            assert (event, action) in kinds, f"no fixture for {event}.{action}"


@pytest.mark.parametrize("entry", HANDLED, ids=[e["file"] for e in HANDLED])
def test_handled_payloads_normalise(entry: dict[str, Any]) -> None:
    payload = _payload(entry)
    event = _normalise(entry)
    assert event.forge == "gitea" and event.name == _name(entry)
    assert event.sender == payload["sender"]["login"] and not event.sender_is_bot
    assert event.repo is not None and event.repo.full_name == payload["repository"]["full_name"]
    assert event.extra["gitea_event_type"] == entry["x_gitea_event_type"]
    assert Event.from_json(event.to_json()) == event
    assert event.repo.id == payload["repository"]["id"] == Event.from_json(event.to_json()).repo.id  # type: ignore[union-attr]
    if event.name in ("issues", "issue_comment", "pull_request"):
        raw = payload.get("issue") or payload["pull_request"]
        assert event.issue is not None
        assert event.issue.number == raw.get("number", payload.get("number"))
        assert event.issue.title == raw["title"]
        assert event.issue.labels == tuple(label["name"] for label in raw.get("labels") or ())
        # Keyed by the repository's id, which a rename keeps (bot.forge.repo_key).
        assert event.issue_key == f"gitea:#{payload['repository']['id']}#{event.issue.number}"
    if event.name in ("pull_request", "pull_request_review"):
        raw_pull = payload["pull_request"]
        assert event.issue is not None and event.issue.is_pull_request
        assert event.pull is not None
        assert (event.pull.head_ref, event.pull.base_ref) == (
            raw_pull["head"]["ref"],
            raw_pull["base"]["ref"],
        )
        assert event.pull.head_sha == raw_pull["head"].get("sha", "")
        assert event.pull.merged == (raw_pull.get("merged") is True)
        milestone = raw_pull.get("milestone") if event.name == "pull_request" else None
        assert (event.milestone.number if event.milestone else None) == (milestone or {}).get("id")
    if event.name == "issue_comment":
        assert event.comment is not None and event.comment.id == payload["comment"]["id"]
        assert event.comment.body == payload["comment"]["body"]
        assert event.comment.author == payload["comment"]["user"]["login"]
        assert event.issue is not None
        on_pr = entry["x_gitea_event_type"] == "pull_request_comment"
        assert event.issue.is_pull_request == on_pr
    if event.name == "push":
        assert event.ref == payload["ref"] and event.after == payload["after"] and event.action == ""


LABEL_ENTRIES = [e for e in HANDLED if e["action"] in ("label_updated", "label_cleared")]


@pytest.mark.parametrize("entry", HANDLED, ids=[e["file"] for e in HANDLED])
def test_an_event_that_names_no_repository_is_refused(entry: dict[str, Any]) -> None:
    """Every event Gitea sends happens in a repository: one whose payload names none is malformed (answered
    400), never queued for a job that cannot act (tests/fuzz/test_receiver_fuzz.py found it on GitHub)."""
    payload = _payload(entry)
    payload.pop("repository", None)
    with pytest.raises(MalformedPayload, match="must name its repository"):
        normalise_gitea(entry["x_gitea_event"], "d-1", payload, event_type=entry["x_gitea_event_type"])


@pytest.mark.parametrize("entry", LABEL_ENTRIES, ids=[e["file"] for e in LABEL_ENTRIES])
def test_label_events_say_they_carry_the_whole_set(entry: dict[str, Any]) -> None:
    """Gitea sends the labels now on the issue, not the one that changed: handlers see `labeled`,
    no single label, and the full set on the issue snapshot. `label_cleared` does not mean "no labels
    left": both Forgejo's and Gitea's fixtures of it still list labels, so it is read like `label_updated`."""
    event = _normalise(entry)
    raw = _payload(entry)["pull_request" if event.name == "pull_request" else "issue"]
    assert event.action == "labeled" and event.label is None and event.labels_are_full_set
    assert event.issue is not None
    assert event.issue.labels == tuple(label["name"] for label in raw.get("labels") or ())


def test_action_names_map_onto_githubs() -> None:
    [sync] = [e for e in HANDLED if e["file"] == "go-scm/pull_request_synchronized.json"]
    assert _normalise(sync).action == "synchronize"
    [opened] = [e for e in HANDLED if e["file"] == "go-playground/issues-event.json"]
    assert _normalise(opened).action == "opened" and not _normalise(opened).labels_are_full_set


def test_milestone_events_carry_the_milestone_id() -> None:
    [entry] = [e for e in HANDLED if e["file"] == "go-playground/issue-milestone-event.json"]
    event = _normalise(entry)
    raw = _payload(entry)["issue"]["milestone"]
    assert event.action == "milestoned"
    assert event.milestone is not None and event.milestone.number == raw["id"]
    assert event.issue is not None and event.issue.milestone == raw["id"]


def test_a_merged_pull_request_is_closed_and_merged() -> None:
    merged = [
        e for e in HANDLED if e["file"].endswith(("HookPullRequestMerged.json", "pull_request_merged.json"))
    ]
    assert merged
    for entry in merged:
        event = _normalise(entry)
        assert event.action == "closed" and event.pull is not None and event.pull.merged


def test_pull_request_milestone_events_pass_with_the_milestone() -> None:
    """X-Gitea-Event-Type pull_request_milestone: milestoned/demilestoned on a pull request."""
    found = [e for e in HANDLED if e["x_gitea_event_type"] == "pull_request_milestone"]
    assert {e["action"] for e in found} == {"milestoned", "demilestoned"}
    for entry in found:
        event = _normalise(entry)
        if event.action == "milestoned":
            assert event.milestone is not None and event.milestone.number > 0


def test_edited_comment_keeps_the_previous_body() -> None:
    [entry] = [e for e in HANDLED if e["file"] == "go-scm/issue_comment_edited.json"]
    assert _normalise(entry).previous_body == _payload(entry)["changes"]["body"]["from"]


def test_closed_issue_state() -> None:
    """go-scm's issues_closed.json is hand-derived: only action and state are relied on."""
    [entry] = [e for e in HANDLED if e["file"] == "go-scm/issues_closed.json"]
    event = _normalise(entry)
    assert event.action == "closed" and event.issue is not None and event.issue.state == "closed"


@pytest.mark.parametrize("entry", UNHANDLED, ids=[e["file"] for e in UNHANDLED])
def test_unhandled_payloads_are_ignored(entry: dict[str, Any]) -> None:
    with pytest.raises(Unhandled):
        _normalise(entry)


def test_a_specific_type_in_x_gitea_event_maps_to_the_broad_event() -> None:
    """go-playground's own tests put `issue_label` in X-Gitea-Event, as old Gitea versions did."""
    assert gitea_event_name("issue_label") == "issues"
    assert gitea_event_name("pull_request_comment") == "issue_comment"
    assert gitea_event_name("", "pull_request_sync") == "pull_request"
    [entry] = [e for e in HANDLED if e["file"] == "go-playground/issue-label-event.json"]
    assert normalise_gitea("issue_label", "d", _payload(entry)).name == "issues"


@pytest.mark.parametrize(
    "payload",
    [[], {"action": "opened"}, {"action": "opened", "repository": {"full_name": "a/b"}, "issue": {}}],
)
def test_malformed_payloads_are_refused(payload: Any) -> None:
    with pytest.raises(MalformedPayload):
        normalise_gitea("issues", "d", payload)


REVIEWS = [e for e in HANDLED if _name(e) == "pull_request_review"]
# modules/webhook/type.go: the review's type → X-Gitea-Event; the state Steward reads from it.
REVIEW_STATES = {
    "pull_request_review_approved": ("pull_request_approved", "approved"),
    "pull_request_review_rejected": ("pull_request_rejected", "changes_requested"),
    "pull_request_review_comment": ("pull_request_comment", "commented"),
}


def test_every_review_kind_has_a_fixture() -> None:
    assert {e["x_gitea_event_type"] for e in REVIEWS} == set(REVIEW_STATES)


@pytest.mark.parametrize("entry", REVIEWS, ids=[e["file"] for e in REVIEWS])
def test_native_reviews_normalise(entry: dict[str, Any]) -> None:
    """X-Gitea-Event pull_request_approved / _rejected / _comment, action `reviewed`: a
    `pull_request_review.submitted` whose state comes from the event (the payload's `review` has only
    `type` and `content`), by the sender, on the pull request of the payload; no review id or commit."""
    payload = _payload(entry)
    event = _normalise(entry)
    broad, state = REVIEW_STATES[entry["x_gitea_event_type"]]
    assert entry["x_gitea_event"] == broad
    assert (event.name, event.action, event.extra["gitea_action"]) == (
        "pull_request_review",
        "submitted",
        "reviewed",
    )
    assert event.review is not None
    assert (event.review.state, event.review.author) == (state, payload["sender"]["login"])
    assert (event.review.id, event.review.commit_id) == (0, "")
    assert event.issue is not None and event.issue.number == payload["number"]
    assert event.pull is not None and event.pull.head_sha == payload["pull_request"]["head"]["sha"]


def test_a_review_comment_is_not_a_pull_request_comment() -> None:
    """X-Gitea-Event `pull_request_comment` with type `pull_request_review_comment` is a review; the same
    X-Gitea-Event alone (older Gitea put the specific type there) is a comment on a pull request."""
    assert gitea_event_name("pull_request_comment", "pull_request_review_comment") == "pull_request_review"
    assert gitea_event_name("pull_request_review_comment") == "pull_request_review"
    assert gitea_event_name("issue_comment", "pull_request_comment") == "issue_comment"
    assert gitea_event_name("pull_request_comment") == "issue_comment"
    assert gitea_event_name("pull_request_approved") == "pull_request_review"
    assert gitea_event_name("pull_request", "pull_request_review_request") == "pull_request"
