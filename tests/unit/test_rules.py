"""Pure rules of the machinery: signatures, sticky data blocks, retry policy, permissions."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.commands.permissions import decide, who_may
from bot.forge import Comment
from bot.forge.retry import RetryPolicy, classify, resendable, resendable_graphql, transport_error
from bot.receiver.signatures import sign_sha256, verify_github
from bot.records import sticky

FIXTURES = Path(__file__).parent.parent / "fixtures"
VECTORS = json.loads((FIXTURES / "github" / "signature-vectors.json").read_bytes())["vectors"]


@pytest.mark.parametrize("vector", VECTORS)
def test_githubs_documented_vector_verifies(vector: dict[str, str]) -> None:
    body = vector["payload"].encode()
    assert sign_sha256(vector["secret"], body) == vector["signature"]
    assert verify_github(body, vector["x_hub_signature_256"], [vector["secret"]])
    # Rotation: any configured secret may match.
    assert verify_github(body, vector["x_hub_signature_256"], ["old-secret", vector["secret"]])


@pytest.mark.parametrize("header", [None, "", "sha256=", "sha1=abc", "sha256=" + "0" * 64, "757107ea"])
def test_wrong_or_missing_signatures_fail(header: str | None) -> None:
    assert not verify_github(b"Hello, World!", header, ["It's a Secret to Everybody"])


def test_no_secret_verifies_nothing() -> None:
    assert not verify_github(b"x", "sha256=" + sign_sha256("s", b"x"), [])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_sticky_data_reads_back_exactly(data: object) -> None:
    body = sticky.render("verdict", "42", "The verdict", data=data)
    assert sticky.unverified_data(body) == data
    data_line = body.splitlines()[1]
    # Nothing inside can close the HTML comment early.
    assert "--" not in data_line[len("<!--") : -len("-->")]


def test_sticky_find_ignores_markers_pasted_by_users() -> None:
    body = sticky.render("verdict", "7", "approved")
    comments = [Comment(1, "mallory", body), Comment(2, "steward-bot", body)]
    found = sticky.find(comments, bot_login="steward-bot", kind="verdict", key="7")
    assert found is not None and found.id == 2
    assert sticky.find(comments[:1], bot_login="steward-bot", kind="verdict", key="7") is None


def test_sticky_marker_refuses_unsafe_keys() -> None:
    with pytest.raises(ValueError):
        sticky.marker("reply", "x -->")


POLICY = RetryPolicy(attempts=4, base_delay=0.5, max_delay=30)


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429])
def test_server_errors_and_429_are_retried_with_backoff(status: int) -> None:
    rng = random.Random(1)
    delays = [classify(status, {}, attempt=n, policy=POLICY, now=0, rng=rng) for n in (1, 2, 3)]
    assert all(d.action == "retry" for d in delays)
    assert 0.25 <= delays[0].delay <= 0.5 and 0.5 <= delays[1].delay <= 1.0 and 1.0 <= delays[2].delay <= 2.0
    assert classify(status, {}, attempt=4, policy=POLICY, now=0).action == "fail"


def test_retry_after_is_honoured() -> None:
    decision = classify(429, {"Retry-After": "1"}, attempt=1, policy=POLICY, now=0)
    assert decision.action == "retry" and decision.delay == 1.0
    secondary = classify(403, {"retry-after": "7"}, attempt=1, policy=POLICY, now=0)
    assert secondary.action == "retry" and secondary.delay == 7.0


def test_spent_primary_limit_waits_for_reset_or_defers_the_job() -> None:
    soon = classify(
        403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "110"}, attempt=1, policy=POLICY, now=100
    )
    assert soon.action == "retry" and soon.delay == pytest.approx(11.0)
    later = classify(
        403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "4000"}, attempt=1, policy=POLICY, now=100
    )
    assert later.action == "defer" and later.delay > POLICY.max_delay


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retried(status: int) -> None:
    assert classify(status, {}, attempt=1, policy=POLICY, now=0).action == "fail"


def test_transport_errors_are_retried_a_bounded_number_of_times() -> None:
    assert transport_error(1, POLICY).action == "retry"
    assert transport_error(4, POLICY).action == "fail"


@pytest.mark.parametrize(
    ("permission", "actor", "level", "allowed"),
    [
        ("anyone", "x", "none", True),
        ("author", "alice", "none", True),
        ("author", "bob", "read", False),
        ("author", "bob", "triage", True),
        ("triage", "bob", "read", False),
        ("triage", "bob", "triage", True),
        ("write", "bob", "triage", False),
        ("write", "bob", "admin", True),
        ("maintain", "bob", "write", False),
        ("admin", "bob", "maintain", False),
        ("admin", "bob", "admin", True),
    ],
)
def test_permission_rules(permission: str, actor: str, level: str, allowed: bool) -> None:
    decision = decide(permission, actor=actor, author="alice", actor_level=level)  # type: ignore[arg-type]
    assert decision.allowed is allowed
    assert who_may(permission)  # type: ignore[arg-type]


def test_help_table_cells_escape_pipes_so_the_table_stays_whole() -> None:
    from handlers.core.bot import HelpRow, render_help

    row = HelpRow("approve-spec", "approve-spec [apply|keep]", "Approve.", "author")
    text = render_help("steward", [row])
    [row] = [line for line in text.splitlines() if line.startswith("| `/steward")]
    assert row == "| `/steward approve-spec [apply\\|keep]` | Approve. | the author, or triage+ |"
    assert row.count(" | ") == 2


def test_a_write_that_may_have_reached_the_forge_is_not_resent() -> None:
    decision = transport_error(1, POLICY, unsafe_to_resend=True)
    assert decision.action == "fail" and "not resent" in decision.reason


@pytest.mark.parametrize("status", [500, 502, 504])
def test_a_5xx_after_a_write_that_may_have_been_applied_fails_at_once(status: int) -> None:
    decision = classify(status, {}, attempt=1, policy=POLICY, now=0, resend_ok=False)
    assert decision.action == "fail" and "may have been applied" in decision.reason


def test_a_rate_limit_refusal_is_waited_out_even_for_a_write() -> None:
    """429 and a secondary-limit 403 mean the forge refused the request: resending it is safe."""
    decision = classify(429, {"Retry-After": "2"}, attempt=1, policy=POLICY, now=0, resend_ok=False)
    assert decision.action == "retry" and decision.delay == 2.0


@pytest.mark.parametrize(
    ("method", "path", "ok"),
    [
        ("GET", "/repos/o/r/issues/1", True),
        ("PATCH", "/repos/o/r/issues/comments/5", True),
        ("PUT", "/repos/o/r/issues/1/labels", True),
        ("DELETE", "/repos/o/r/issues/1/labels/bug", True),
        ("POST", "/repos/o/r/issues/1/comments", False),
        ("POST", "/api/v1/repos/o/r/issues/1/comments", False),
        ("POST", "/repos/o/r/git/refs", False),
        ("POST", "/repos/o/r/pulls", False),
        ("POST", "/repos/o/r/statuses/abc", False),
        ("POST", "/repos/o/r/issues/1/dependencies/blocked_by", False),
        ("POST", "/repos/o/r/issues/comments/5/reactions", True),
        ("POST", "/repos/o/r/issues/1/labels", True),
        ("POST", "/repos/o/r/git/blobs", True),
        ("POST", "/repos/o/r/issues/1/labels?x=1", True),
        ("POST", "/api/v1/repos/o/r/issues/1/pin", True),
        ("POST", "/graphql", False),
    ],
)
def test_which_requests_may_be_resent(method: str, path: str, ok: bool) -> None:
    assert resendable(method, path) is ok


@pytest.mark.parametrize(
    ("mutation", "ok"),
    [(None, True), ("pinIssue", True), ("unpinIssue", True), ("addComment", False), ("createIssue", False)],
)
def test_which_graphql_requests_may_be_resent(mutation: str | None, ok: bool) -> None:
    """A query may be resent; of the mutations only those whose repetition changes nothing (a pin)."""
    assert resendable_graphql(mutation) is ok


def test_a_comment_too_long_for_the_forge_folds_its_details_first_and_keeps_its_data() -> None:
    data = {"rows": ["x" * 100] * 50}
    text = "**Next step:** do this.\n\n" + "line\n" * 100
    text += "<details><summary>big</summary>\n\n" + "y" * 70_000
    text += "\n\n</details>\n\nthe end"
    body = sticky.fit("spec", "issue", text, data, limit=60_000)
    assert len(body) <= 60_000
    assert sticky.unverified_data(body) == data, "the data block is never cut"
    assert "**Next step:** do this." in body and "the end" in body and "y" * 100 not in body


@given(st.text(max_size=200_000), st.integers(min_value=2_000, max_value=65_536))
def test_every_comment_fits_its_limit_whatever_the_text(text: str, limit: int) -> None:
    body = sticky.fit("reply", "1", text, {"k": "v"}, limit=limit)
    assert len(body) <= limit and sticky.unverified_data(body) == {"k": "v"}
    assert body.startswith(sticky.marker("reply", "1"))


def test_a_cut_inside_a_code_fence_closes_the_fence() -> None:
    text = "intro\n\n```yaml\n" + "key: value\n" * 10_000
    body = sticky.fit("reply", "1", text, limit=5_000)
    assert len(body) <= 5_000 and body.count("```") == 2


def test_data_that_leaves_no_room_is_a_bug_not_a_broken_comment() -> None:
    with pytest.raises(sticky.CommentTooLong):
        sticky.fit("spec", "issue", "text", {"huge": "z" * 70_000}, limit=60_000)


def test_a_refused_permission_check_is_logged_once_per_repository() -> None:
    """Never silent, never noisy: one warning per repository, not one per event."""
    from types import SimpleNamespace

    import structlog

    from bot.commands import dispatch
    from bot.forge import RepoRef, User

    def ctx(repo: str) -> object:
        return SimpleNamespace(
            event=SimpleNamespace(forge="gitea"),
            repo=RepoRef.parse(repo),
            me=User("steward-bot"),
            log=structlog.get_logger(),
        )

    dispatch._UNREADABLE_WARNED.clear()
    with structlog.testing.capture_logs() as logs:
        for _ in range(5):
            dispatch._warn_unreadable(ctx("o/one"))  # type: ignore[arg-type]
        dispatch._warn_unreadable(ctx("o/two"))  # type: ignore[arg-type]
    warnings = [entry for entry in logs if entry["log_level"] == "warning"]
    assert [w["repo"] for w in warnings] == ["o/one", "o/two"]
