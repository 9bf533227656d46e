"""The receiver's webhook endpoints as bare ASGI (bot.receiver.app.Receiver.asgi): what a sender sees is what
the Starlette endpoint gave — the status, a JSON body with its content type and length — whether the body
comes in one message or several, whatever the order of the headers; a repeated header counts by its first
copy. None of these reaches Redis (a ping, an unhandled event, refusals), so no Redis is needed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest
from starlette.requests import ClientDisconnect

from bot.config.settings import Settings
from bot.queue.jobs import make_redis
from bot.receiver.app import GITEA, GITHUB, Receiver
from bot.receiver.signatures import sign_sha256

SECRET = "s3cret"
WEBHOOKS = Path(__file__).parent.parent / "fixtures" / "github" / "webhooks"
UNHANDLED = orjson.dumps({"action": "locked", "sender": {"login": "alice"}})


def _receiver(**settings: Any) -> Receiver:
    # The client connects only when used, and none of these deliveries uses it.
    return Receiver(
        Settings(github_webhook_secrets=SECRET, gitea_webhook_secrets=SECRET, **settings),
        make_redis("redis://127.0.0.1:1/0"),
    )


def _call(
    receiver: Receiver,
    headers: list[tuple[bytes, bytes]],
    chunks: list[bytes],
    *,
    forge: Any = GITHUB,
    disconnect: bool = False,
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    if disconnect:
        messages = [{**messages[0], "more_body": True}, {"type": "http.disconnect"}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/webhooks/github",
        "headers": headers,
        "client": ("10.0.0.1", 1234),
    }
    asyncio.run(receiver.asgi(forge)(scope, receive, send))
    start, body = sent
    assert start["type"] == "http.response.start" and body["type"] == "http.response.body"
    return start["status"], start["headers"], body["body"]


def _github(event: bytes, body: bytes, *, secret: str = SECRET) -> list[tuple[bytes, bytes]]:
    return [
        (b"x-github-event", event),
        (b"x-github-delivery", b"d-1"),
        (b"x-hub-signature-256", b"sha256=" + sign_sha256(secret, body).encode()),
    ]


def test_a_body_in_several_messages_is_read_whole() -> None:
    body = UNHANDLED
    status, headers, answer = _call(_receiver(), _github(b"issues", body), [body[:5], body[5:20], body[20:]])
    assert status == 202
    assert orjson.loads(answer) == {"ignored": "action issues.locked is not handled"}
    assert headers == [(b"content-length", str(len(answer)).encode()), (b"content-type", b"application/json")]


def test_a_ping_is_answered_with_its_constant_body() -> None:
    body = b'{"zen": "Keep it logically awesome."}'
    status, _, answer = _call(_receiver(), _github(b"ping", body), [body])
    assert (status, orjson.loads(answer)) == (200, {"pong": True})


def test_a_repeated_header_counts_by_its_first_copy() -> None:
    """As Starlette's Headers.get: the first X-Hub-Signature-256 is the one checked."""
    body = UNHANDLED
    good = _github(b"issues", body)
    wrong = (b"x-hub-signature-256", b"sha256=" + sign_sha256("wrong", body).encode())
    assert _call(_receiver(), [*good, wrong], [body])[0] == 202
    assert _call(_receiver(), [good[0], good[1], wrong, good[2]], [body])[0] == 401


def test_a_body_past_the_limit_in_several_messages_is_refused_413() -> None:
    body = b"x" * 3000
    status, _, answer = _call(
        _receiver(max_body_bytes=2048), _github(b"issues", body), [body[:1500], body[1500:]]
    )
    assert (status, orjson.loads(answer)) == (413, {"error": "body larger than 2048 bytes"})


def test_malformed_json_and_missing_headers_are_refused_400() -> None:
    body = b"{not json"
    status, _, answer = _call(_receiver(), _github(b"issues", body), [body])
    assert (status, orjson.loads(answer)) == (400, {"error": "the body is not valid JSON"})
    status, _, answer = _call(_receiver(), _github(b"issues", body)[1:], [body])
    assert (status, orjson.loads(answer)) == (
        400,
        {"error": "missing X-GitHub-Event or X-GitHub-Delivery header"},
    )


def test_gitea_reads_its_own_headers() -> None:
    body = orjson.dumps({"action": "published", "sender": {"login": "alice"}})
    headers = [
        (b"x-gitea-event", b"release"),
        (b"x-gitea-event-type", b"release"),
        (b"x-gitea-delivery", b"g-1"),
        (b"x-gitea-signature", sign_sha256(SECRET, body).encode()),
    ]
    status, _, answer = _call(_receiver(), headers, [body], forge=GITEA)
    assert status == 202 and "ignored" in orjson.loads(answer)
    unsigned = [h for h in headers if h[0] != b"x-gitea-signature"]
    assert _call(_receiver(), unsigned, [body], forge=GITEA)[0] == 401


def test_a_sender_gone_mid_body_is_a_client_disconnect() -> None:
    """As Starlette's request stream: nothing is answered to a sender that went away."""
    with pytest.raises(ClientDisconnect):
        _call(_receiver(), _github(b"issues", UNHANDLED), [UNHANDLED], disconnect=True)


def _from(sender: Any, event: bytes = b"issue_comment") -> tuple[list[tuple[bytes, bytes]], bytes]:
    body = (WEBHOOKS / "issue_comment" / "created.json").read_bytes()
    payload = orjson.loads(body)
    payload["sender"] = sender
    body = orjson.dumps(payload)
    return _github(event, body), body


@pytest.mark.parametrize("login", ["Steward-Bot", "steward-bot", "STEWARD-BOT"])
def test_steward_s_own_delivery_is_dropped_on_its_sender_before_redis(login: str) -> None:
    """The forge sends a delivery for each of Steward's writes: answered 202 "sent by Steward itself"
    without being queued (this receiver's Redis is unreachable: queueing would answer 503), whatever the
    case of the login."""
    receiver = _receiver(bot_login="Steward-Bot")
    headers, body = _from({"login": login, "type": "Bot"})
    status, _, answer = _call(receiver, headers, [body])
    assert (status, orjson.loads(answer)) == (202, {"ignored": "sent by Steward itself"})


def test_gitea_s_own_delivery_is_known_by_its_username_too() -> None:
    receiver = _receiver(bot_login="steward-bot")
    body = orjson.dumps({"action": "opened", "sender": {"login": "", "username": "steward-bot"}})
    headers = [
        (b"x-gitea-event", b"issues"),
        (b"x-gitea-delivery", b"g-2"),
        (b"x-gitea-signature", sign_sha256(SECRET, body).encode()),
    ]
    status, _, answer = _call(receiver, headers, [body], forge=GITEA)
    assert (status, orjson.loads(answer)) == (202, {"ignored": "sent by Steward itself"})


def test_steward_s_own_ping_and_malformed_json_are_answered_as_before() -> None:
    receiver = _receiver(bot_login="steward-bot")
    ping = orjson.dumps({"zen": "z", "sender": {"login": "steward-bot"}})
    assert _call(receiver, _github(b"ping", ping), [ping])[0] == 200
    deep = b'{"sender": {"login": "steward-bot"}, "x": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"
    for broken in (
        b'{"sender": {"login": "steward-bot"}, "x": ',
        b'{"sender": {"login": "steward-bot"}, "x": "\xff"}',
        deep,  # deeper than the sender decode goes (RecursionError there): the full path's 400
    ):
        status, _, answer = _call(receiver, _github(b"issues", broken), [broken])
        assert (status, orjson.loads(answer)) == (400, {"error": "the body is not valid JSON"}), broken


@pytest.mark.parametrize("sender", ["steward-bot", ["steward-bot"], {"login": 7}, None])
def test_a_sender_that_is_not_a_login_object_goes_the_full_way(sender: Any) -> None:
    """Not recognised early: the full path decides (the normaliser reads no login from it, so the delivery
    is queued — here Redis is unreachable, hence 503 — rather than dropped)."""
    receiver = _receiver(bot_login="steward-bot")
    headers, body = _from(sender)
    assert _call(receiver, headers, [body])[0] == 503


def test_a_person_who_mentions_steward_is_not_taken_for_it() -> None:
    receiver = _receiver(bot_login="steward-bot")
    body = (WEBHOOKS / "issue_comment" / "created.json").read_bytes()
    payload = orjson.loads(body)
    payload["comment"]["body"] = "@steward-bot please look; steward-bot wrote this"
    body = orjson.dumps(payload)
    assert _call(receiver, _github(b"issue_comment", body), [body])[0] == 503  # queued (Redis is down)
