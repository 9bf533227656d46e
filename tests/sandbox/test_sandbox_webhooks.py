"""Webhooks: every state change is delivered, signed, shaped like GitHub's, in order, and recorded."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import uuid

import httpx2

from bot.sandbox.server import SandboxServer
from bot.sandbox.shared.hooks import sign

from .helpers import FIXTURES, CaptureServer, idle, schema_errors

SECRET = "s3cret"


def _hook(alice: httpx2.Client, repo: str, capture: CaptureServer, events: list[str] | None = None) -> int:
    body = {
        "name": "web",
        "config": {"url": capture.hook_url, "content_type": "json", "secret": SECRET},
        "events": events or ["*"],
        "active": True,
    }
    response = alice.post(repo + "/hooks", json=body)
    assert response.status_code == 201
    hook_id: int = response.json()["id"]
    return hook_id


def test_documented_signature_vector() -> None:
    vector = json.loads((FIXTURES / "signature-vectors.json").read_text())["vectors"][0]
    assert sign(vector["secret"], vector["payload"].encode())[0] == vector["x_hub_signature_256"]


def test_a_new_hook_is_pinged_with_signed_github_headers(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    hook_id = _hook(alice, repo, capture)
    (ping,) = capture.capture.wait_for(1)
    headers = ping.headers
    assert headers["x-github-event"] == "ping"
    assert uuid.UUID(headers["x-github-delivery"]).version == 4
    assert headers["x-github-hook-id"] == str(hook_id)
    assert headers["user-agent"].startswith("GitHub-Hookshot/")
    assert headers["content-type"] == "application/json"
    expected = hmac.new(SECRET.encode(), ping.body, hashlib.sha256).hexdigest()
    assert headers["x-hub-signature-256"] == f"sha256={expected}"
    assert (
        headers["x-hub-signature"] == "sha1=" + hmac.new(SECRET.encode(), ping.body, hashlib.sha1).hexdigest()
    )
    assert ping.payload["hook_id"] == hook_id
    assert schema_errors("ping", None, ping.payload) == []
    assert "secret" not in json.dumps(alice.get(repo + "/hooks").json()).replace('"secret": "********"', "")


def test_every_state_change_delivers_a_schema_valid_event(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    _hook(alice, repo, capture)
    alice.post(repo + "/labels", json={"name": "crash", "color": "d73a4a"})
    alice.patch(
        repo + "/labels/crash", json={"new_name": "defect", "color": "ff0000", "description": "broken"}
    )
    alice.post(repo + "/labels", json={"name": "temp"})
    alice.delete(repo + "/labels/temp")
    ms = alice.post(repo + "/milestones", json={"title": "v1", "description": "first"}).json()["number"]
    alice.patch(f"{repo}/milestones/{ms}", json={"title": "v1.0"})
    issue = alice.post(repo + "/issues", json={"title": "Crash", "body": "boom"}).json()["number"]
    alice.patch(f"{repo}/issues/{issue}", json={"title": "Crash on start", "body": "boom!"})
    alice.post(f"{repo}/issues/{issue}/labels", json=["defect"])
    alice.delete(f"{repo}/issues/{issue}/labels/defect")
    alice.patch(f"{repo}/issues/{issue}", json={"milestone": ms})
    alice.patch(f"{repo}/issues/{issue}", json={"milestone": None})
    comment = alice.post(f"{repo}/issues/{issue}/comments", json={"body": "hello"}).json()["id"]
    alice.patch(f"{repo}/issues/comments/{comment}", json={"body": "hello again"})
    alice.delete(f"{repo}/issues/comments/{comment}")
    alice.patch(f"{repo}/issues/{issue}", json={"state": "closed", "state_reason": "not_planned"})
    alice.patch(f"{repo}/issues/{issue}", json={"state": "open"})
    alice.patch(f"{repo}/milestones/{ms}", json={"state": "closed"})
    alice.patch(f"{repo}/milestones/{ms}", json={"state": "open"})
    alice.delete(f"{repo}/milestones/{ms}")
    content = base64.b64encode(b"print(1)\n").decode()
    alice.put(repo + "/contents/src/app.py", json={"message": "Add app", "content": content})
    head = alice.get(repo + "/git/ref/heads/main").json()["object"]["sha"]
    alice.post(repo + "/git/refs", json={"ref": "refs/heads/topic", "sha": head})
    idle(sandbox)

    received = capture.capture.received
    assert capture.capture.events() == [
        ("ping", None),
        ("label", "created"),
        ("label", "edited"),
        ("label", "created"),
        ("label", "deleted"),
        ("milestone", "created"),
        ("milestone", "edited"),
        ("issues", "opened"),
        ("issues", "edited"),
        ("issues", "labeled"),
        ("issues", "unlabeled"),
        ("issues", "milestoned"),
        ("issues", "demilestoned"),
        ("issue_comment", "created"),
        ("issue_comment", "edited"),
        ("issue_comment", "deleted"),
        ("issues", "closed"),
        ("issues", "reopened"),
        ("milestone", "closed"),
        ("milestone", "opened"),
        ("milestone", "deleted"),
        ("push", None),
        ("push", None),
    ]
    for delivery in received:
        assert schema_errors(delivery.event, delivery.payload.get("action"), delivery.payload) == [], (
            delivery.event
        )
        if delivery.event != "ping":
            assert delivery.payload["sender"]["login"] == "alice"
            assert delivery.payload["repository"]["full_name"] == "alice/demo"

    by_kind = {(r.event, r.payload.get("action")): r.payload for r in received}
    assert by_kind[("issues", "edited")]["changes"] == {"title": {"from": "Crash"}, "body": {"from": "boom"}}
    assert by_kind[("issue_comment", "edited")]["changes"] == {"body": {"from": "hello"}}
    assert by_kind[("label", "edited")]["changes"]["name"] == {"from": "crash"}
    assert by_kind[("issues", "labeled")]["label"]["name"] == "defect"
    assert by_kind[("issues", "milestoned")]["milestone"]["title"] == "v1.0"
    assert by_kind[("issues", "closed")]["issue"]["state_reason"] == "not_planned"
    push = [r.payload for r in received if r.event == "push"]
    assert push[0]["ref"] == "refs/heads/main"
    assert push[0]["head_commit"]["added"] == ["src/app.py"]
    assert push[1]["created"] is True and push[1]["ref"] == "refs/heads/topic"


def test_hooks_receive_only_the_events_they_subscribe_to(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    _hook(alice, repo, capture, events=["issues"])
    issue = alice.post(repo + "/issues", json={"title": "x"}).json()["number"]
    alice.post(f"{repo}/issues/{issue}/comments", json={"body": "not delivered"})
    alice.post(repo + "/labels", json={"name": "not-delivered"})
    alice.patch(f"{repo}/issues/{issue}", json={"state": "closed"})
    idle(sandbox)
    assert capture.capture.events() == [("ping", None), ("issues", "opened"), ("issues", "closed")]


def test_delivery_is_asynchronous_and_in_order_per_hook(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    gate = capture.capture.gate = threading.Event()
    try:
        _hook(alice, repo, capture, events=["issue_comment"])
        issue = alice.post(repo + "/issues", json={"title": "x"}).json()["number"]
        bodies = [f"comment {i}" for i in range(6)]
        for body in bodies:
            # each call answers while the receiver is still holding the ping: delivery never blocks the API
            assert alice.post(f"{repo}/issues/{issue}/comments", json={"body": body}).status_code == 201
        capture.capture.wait_for(1)
        # one delivery at a time per hook: nothing else is sent until the receiver answers the first
        assert len(capture.capture.received) == 1
        pending = httpx2.get(sandbox.url + "/_sandbox/deliveries/idle", params={"timeout": 0}).json()
        assert pending == {"idle": False, "pending": 7}
    finally:
        gate.set()
    idle(sandbox)
    received = capture.capture.received
    assert [r.payload["comment"]["body"] for r in received[1:]] == bodies
    log = httpx2.get(sandbox.url + "/_sandbox/deliveries").json()
    assert [d["id"] for d in log] == [r.headers["x-github-delivery"] for r in received]
    assert all(d["delivered"] and d["status_code"] == 200 for d in log)


def test_redelivery_sends_the_same_bytes_with_the_same_delivery_id(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    _hook(alice, repo, capture, events=["issues"])
    alice.post(repo + "/issues", json={"title": "x"})
    idle(sandbox)
    original = capture.capture.received[-1]
    guid = original.headers["x-github-delivery"]
    answer = httpx2.post(f"{sandbox.url}/_sandbox/deliveries/{guid}/redeliver")
    assert answer.status_code == 202
    idle(sandbox)
    again = capture.capture.received[-1]
    assert again.headers["x-github-delivery"] == guid
    assert again.body == original.body
    assert again.headers["x-hub-signature-256"] == original.headers["x-hub-signature-256"]
    attempts = [d for d in httpx2.get(sandbox.url + "/_sandbox/deliveries").json() if d["id"] == guid]
    assert [d["redelivery"] for d in attempts] == [False, True]


def test_a_failed_delivery_is_recorded_and_not_retried(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    capture.capture.status = 500
    _hook(alice, repo, capture, events=["issues"])
    alice.post(repo + "/issues", json={"title": "x"})
    idle(sandbox)
    assert len(capture.capture.received) == 2
    log = httpx2.get(sandbox.url + "/_sandbox/deliveries", params={"event": "issues"}).json()
    assert len(log) == 1
    assert log[0]["status_code"] == 500 and log[0]["delivered"] is False
    assert log[0]["response_body"] == "nope"


def test_a_receiver_that_does_not_answer_in_time_is_a_failed_delivery(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    sandbox.sandbox.deliverer.timeout = 0.3  # GitHub's is 10 s; the behaviour is the same
    gate = capture.capture.gate = threading.Event()
    try:
        _hook(alice, repo, capture, events=["issues"])
        idle(sandbox)
    finally:
        gate.set()
    (ping,) = httpx2.get(sandbox.url + "/_sandbox/deliveries").json()
    assert ping["status_code"] == "timeout" and ping["delivered"] is False


def test_the_schema_check_accepts_githubs_own_examples_and_rejects_a_missing_field() -> None:
    example = json.loads((FIXTURES / "webhooks" / "issue_comment" / "created.json").read_text())
    assert schema_errors("issue_comment", "created", example) == []
    del example["comment"]["node_id"]
    assert schema_errors("issue_comment", "created", example) != []


def test_attaching_a_sub_issue_announces_the_link_from_each_side(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    """GitHub's `sub_issues` webhook (docs.github.com/en/webhooks/webhook-events-and-payloads#sub_issues):
    `sub_issue_added` names the sub-issue's repository, `parent_issue_added` the parent's, each with both
    issues and their ids — the keys of GitHub's schemas, as the fixture built from them has
    (tests/fixtures/github/webhooks/sub_issues/). Attaching it again announces nothing; the parent's
    `updated_at` stays (neomjs/neo#7947)."""
    _hook(alice, repo, capture)
    parent = alice.post(repo + "/issues", json={"title": "Cart total ignores discount"}).json()
    child = alice.post(repo + "/issues", json={"title": "Story: keep promotions"}).json()
    for _ in range(2):
        added = alice.post(f"{repo}/issues/{parent['number']}/sub_issues", json={"sub_issue_id": child["id"]})
        assert added.status_code == 201 and added.json()["number"] == parent["number"]
    idle(sandbox)
    assert capture.capture.events()[-2:] == [
        ("sub_issues", "sub_issue_added"),
        ("sub_issues", "parent_issue_added"),
    ]
    sides = [r.payload for r in capture.capture.received if r.event == "sub_issues"]
    assert len(sides) == 2
    for payload in sides:
        example = json.loads(
            (FIXTURES / "webhooks" / "sub_issues" / f"{payload['action']}.json").read_bytes()
        )
        assert set(payload) == set(example), payload["action"]
        assert (payload["parent_issue_id"], payload["sub_issue_id"]) == (parent["id"], child["id"])
        assert payload["parent_issue"]["number"] == parent["number"]
        assert payload["sub_issue"]["number"] == child["number"]
        assert payload["sender"]["login"] == "alice"
        assert payload["repository"]["full_name"] == "alice/demo"
    assert (
        sides[0]["sub_issue_repo"]["full_name"] == sides[1]["parent_issue_repo"]["full_name"] == "alice/demo"
    )
    assert alice.get(f"{repo}/issues/{parent['number']}").json()["updated_at"] == parent["updated_at"]


def test_removing_a_sub_issue_announces_it_from_each_side(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, capture: CaptureServer
) -> None:
    """`sub_issue_removed` and `parent_issue_removed` (GitHub's schemas `webhook-sub-issues-sub-issue-removed`
    and `-parent-issue-removed`: the same keys as the added pair). Removing it again is 404 and announces
    nothing; the parent's `updated_at` stays."""
    _hook(alice, repo, capture)
    parent = alice.post(repo + "/issues", json={"title": "Cart total ignores discount"}).json()
    child = alice.post(repo + "/issues", json={"title": "Story: keep promotions"}).json()
    alice.post(f"{repo}/issues/{parent['number']}/sub_issues", json={"sub_issue_id": child["id"]})
    url = f"{repo}/issues/{parent['number']}/sub_issue"
    removed = alice.request("DELETE", url, json={"sub_issue_id": child["id"]})
    assert removed.status_code == 200 and removed.json()["number"] == parent["number"]
    assert alice.request("DELETE", url, json={"sub_issue_id": child["id"]}).status_code == 404
    assert alice.get(f"{repo}/issues/{parent['number']}/sub_issues").json() == []
    idle(sandbox)
    assert capture.capture.events()[-2:] == [
        ("sub_issues", "sub_issue_removed"),
        ("sub_issues", "parent_issue_removed"),
    ]
    sides = [r.payload for r in capture.capture.received if r.event == "sub_issues"][-2:]
    example = json.loads((FIXTURES / "webhooks" / "sub_issues" / "sub_issue_removed.json").read_bytes())
    assert set(sides[0]) == set(example)
    child_side = json.loads((FIXTURES / "webhooks" / "sub_issues" / "parent_issue_added.json").read_bytes())
    assert set(sides[1]) == set(child_side)
    assert (sides[0]["parent_issue_id"], sides[0]["sub_issue_id"]) == (parent["id"], child["id"])
    assert alice.get(f"{repo}/issues/{parent['number']}").json()["updated_at"] == parent["updated_at"]
