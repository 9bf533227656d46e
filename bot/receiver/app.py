"""The receiver (DESIGN §1): verify ▸ size limit ▸ parse ▸ normalise ▸ dedupe ▸ enqueue ▸ 202.

It never calls the forge and never runs handler logic, so it answers well within the
forges' delivery timeouts; it answers 2xx only once the job is durably in Redis.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import msgspec
import orjson
from arq.connections import ArqRedis
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.config.settings import Settings
from bot.events.event import Event, MalformedPayload, Unhandled
from bot.events.gitea import GITEA_HANDLED, gitea_event_name, normalise_gitea
from bot.events.github import GITHUB_HANDLED, normalise_github
from bot.queue import gauges
from bot.queue.budgets import read_command_names
from bot.queue.jobs import Enqueuer, make_redis
from bot.receiver import openapi
from bot.receiver.signatures import verify_gitea, verify_github
from bot.telemetry import logs, metrics

log = logs.get("steward.web")

GITHUB_KNOWN = frozenset({*GITHUB_HANDLED, "ping"})
GITEA_KNOWN = frozenset(GITEA_HANDLED)


_MAX_REFUSAL_SOURCES = 10_000
LARGE_BODY_BYTES = 1024 * 1024
_JSON_TYPE = (b"content-type", b"application/json")


class TooLarge(Exception):
    pass


# The scope's raw headers, looked up by lower-case name: built once per delivery, the first of a repeated
# header wins (as Starlette's ``Headers.get``), without Starlette's per-lookup scan and decoding.
RawHeaders = dict[bytes, bytes]


def raw_headers(scope: Scope) -> RawHeaders:
    return dict(reversed(scope["headers"]))


def _text(headers: RawHeaders, name: bytes) -> str:
    value = headers.get(name)
    return "" if value is None else value.decode("latin-1")


async def read_body(receive: Receive, headers: RawHeaders, limit: int) -> bytes:
    """The request body from the ASGI messages, refused past ``limit`` bytes (declared or read)."""
    declared = headers.get(b"content-length", b"")
    if declared.isdigit() and int(declared) > limit:
        raise TooLarge
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # http.disconnect: the sender went away
            raise ClientDisconnect()
        chunk = message.get("body", b"")
        more = message.get("more_body", False)
        if not more and not chunks:  # the usual case: the whole body in one message
            if len(chunk) > limit:
                raise TooLarge
            return bytes(chunk)
        size += len(chunk)
        if size > limit:
            raise TooLarge
        chunks.append(chunk)
        if not more:
            return b"".join(chunks)


# The labelled children of the receiver's metrics, looked up once: prometheus_client's ``labels()`` costs
# more than the rest of the counting. Bounded, as the labels are (``Forge.label``); a child is still
# made on first use, so a process that received nothing shows no series.
_children: dict[tuple[str, ...], Any] = {}


def _child(metric: Any, *labels: str) -> Any:
    key = (metric._name, *labels)
    child = _children.get(key)
    if child is None:
        child = _children[key] = metric.labels(*labels)
    return child


def _redis_up(value: int) -> None:
    _child(metrics.REDIS_UP, "receiver").set(value)


def _render(content: dict[str, Any]) -> bytes:
    # The same bytes as Starlette's JSONResponse, rendered by orjson.
    return orjson.dumps(content)


# The answers whose body never changes, rendered once.
_NOT_JSON = _render({"error": "the body is not valid JSON"})
_PONG = _render({"pong": True})
_MALFORMED = _render({"error": "the payload is malformed"})
_SELF_SENT = _render({"ignored": "sent by Steward itself"})
_UNAVAILABLE = _render({"error": "the queue is unavailable; redeliver later"})
_DUPLICATE = _render({"duplicate": True})


class _Sender(msgspec.Struct):
    login: Any = msgspec.UNSET
    username: Any = msgspec.UNSET


class _SenderOnly(msgspec.Struct):
    sender: _Sender | msgspec.UnsetType = msgspec.UNSET


# Decodes a body's ``sender`` and nothing else: the rest is only checked to be JSON, without building it.
_SENDER_ONLY = msgspec.json.Decoder(_SenderOnly)


def _utf8(body: bytes) -> bool:
    if body.isascii():
        return True
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _sender_fields(body: bytes) -> _Sender | None:
    """The body's ``sender`` object, or None when it has none or is not a JSON object with one."""
    try:
        found = _SENDER_ONLY.decode(body)
    except (msgspec.MsgspecError, RecursionError):  # not JSON, a sender that is not an object, nesting
        return None  # deeper than msgspec goes: the full path decides
    return found.sender if isinstance(found.sender, _Sender) else None


# (status, body): what a delivery is answered, always as application/json.
Answer = tuple[int, bytes]


def _counted(forge: str, event: str, outcome: str, status: int, body: bytes) -> Answer:
    """``event`` must be a metric-safe label (see ``Forge.label``), never a raw header."""
    child = _children.get(("deliveries", forge, event, outcome))
    if child is None:
        child = _children["deliveries", forge, event, outcome] = metrics.DELIVERIES.labels(
            forge, event, outcome
        )
    child.inc()
    return status, body


def _answer(forge: str, event: str, outcome: str, status: int, content: dict[str, Any]) -> Answer:
    return _counted(forge, event, outcome, status, _render(content))


def _response(answer: Answer) -> Response:
    return Response(answer[1], status_code=answer[0], media_type="application/json")


class Forge:
    """How one forge's deliveries are read: their headers, signature and payload. One per forge and
    process; what one delivery's headers say is passed in, never kept."""

    name = ""
    # The headers' names, for the answers that refuse a delivery.
    names = ""
    secrets_variable = ""
    signature_header = ""
    # The event names Steward knows on this forge: the only ones that become metric labels.
    known: frozenset[str] = frozenset()
    # GitHub sends `ping` when a hook is created; Gitea has no such event.
    answers_ping = False

    def identify(self, headers: RawHeaders) -> tuple[str, str]:
        """The event name and delivery id the headers give ("" when missing)."""
        raise NotImplementedError

    def signed(self, headers: RawHeaders, body: bytes, secrets: list[str]) -> bool:
        raise NotImplementedError

    def normalise(self, headers: RawHeaders, event: str, delivery: str, payload: Any) -> Event:
        raise NotImplementedError

    def sender(self, body: bytes) -> str:
        """The sender's login as the normaliser would read it ("" when it cannot tell), from the body
        alone: a fraction of the full parse (see ``Receiver._deliver_one``)."""
        raise NotImplementedError

    def label(self, event: str, verified: bool) -> str:
        """The event as a metric label: untrusted input never makes a new series (DESIGN §3.9)."""
        if not verified:
            return "unverified"
        return event if event in self.known else "other"


class GitHubForge(Forge):
    name = "github"
    names = "X-GitHub-Event or X-GitHub-Delivery"
    secrets_variable = "STEWARD_GITHUB_WEBHOOK_SECRETS"
    signature_header = "X-Hub-Signature-256"
    known = GITHUB_KNOWN
    answers_ping = True

    def identify(self, headers: RawHeaders) -> tuple[str, str]:
        return _text(headers, b"x-github-event"), _text(headers, b"x-github-delivery")

    def signed(self, headers: RawHeaders, body: bytes, secrets: list[str]) -> bool:
        return verify_github(body, _text(headers, b"x-hub-signature-256"), secrets)

    def normalise(self, headers: RawHeaders, event: str, delivery: str, payload: Any) -> Event:
        return normalise_github(event, delivery, payload)

    def sender(self, body: bytes) -> str:
        found = _sender_fields(body)  # as bot.events.payload.login_of
        return found.login if found is not None and isinstance(found.login, str) else ""


class GiteaForge(Forge):
    """Gitea and Forgejo deliveries: the same rules as GitHub's, Gitea's headers and signature."""

    name = "gitea"
    names = "X-Gitea-Event or X-Gitea-Delivery"
    secrets_variable = "STEWARD_GITEA_WEBHOOK_SECRETS"
    signature_header = "X-Gitea-Signature"
    known = GITEA_KNOWN

    @staticmethod
    def _raw(headers: RawHeaders) -> tuple[str, str]:
        raw_event = _text(headers, b"x-gitea-event") or _text(headers, b"x-forgejo-event")
        event_type = _text(headers, b"x-gitea-event-type") or _text(headers, b"x-forgejo-event-type")
        return raw_event, event_type

    def identify(self, headers: RawHeaders) -> tuple[str, str]:
        raw_event, event_type = self._raw(headers)
        event_name = gitea_event_name(raw_event, event_type) if raw_event else ""
        return event_name, _text(headers, b"x-gitea-delivery") or _text(headers, b"x-forgejo-delivery")

    def signed(self, headers: RawHeaders, body: bytes, secrets: list[str]) -> bool:
        # Gitea signs twice with the same HMAC: bare hex in X-Gitea-Signature and GitHub-style in
        # X-Hub-Signature-256. Either is enough; an empty X-Gitea-Signature (no secret on the hook) is not.
        signature = _text(headers, b"x-gitea-signature") or _text(headers, b"x-forgejo-signature")
        return verify_gitea(body, signature, secrets) or verify_github(
            body, _text(headers, b"x-hub-signature-256"), secrets
        )

    def normalise(self, headers: RawHeaders, event: str, delivery: str, payload: Any) -> Event:
        raw_event, event_type = self._raw(headers)
        return normalise_gitea(raw_event, delivery, payload, event_type=event_type)

    def sender(self, body: bytes) -> str:
        found = _sender_fields(body)  # as bot.events.gitea._gitea_login
        if found is None:
            return ""
        for name in (found.login, found.username):
            if isinstance(name, str) and name:
                return name
        return ""


GITHUB = GitHubForge()
GITEA = GiteaForge()


class Receiver:
    def __init__(self, settings: Settings, redis: ArqRedis) -> None:
        self.settings = settings
        self.redis = redis
        self.enqueuer = Enqueuer(redis, dedupe_ttl=settings.dedupe_ttl_seconds)
        self._names_read_at = float("-inf")
        self._secrets = {
            GITHUB.name: [s.get_secret_value() for s in settings.github_webhook_secrets],
            GITEA.name: [s.get_secret_value() for s in settings.gitea_webhook_secrets],
        }
        self._bot_login = settings.bot_login.casefold() if settings.bot_login else None
        self._too_large = _render({"error": f"body larger than {settings.max_body_bytes} bytes"})
        self._large_bodies = asyncio.Semaphore(settings.max_large_bodies)
        # (forge, address) → the minute a 401 from there was last logged.
        self._refusals: dict[tuple[str, str], int] = {}

    @property
    def github_secrets(self) -> list[str]:
        return self._secrets[GITHUB.name]

    @property
    def gitea_secrets(self) -> list[str]:
        return self._secrets[GITEA.name]

    # Starlette endpoints (the routes; tests): the same answers as the ASGI path below.
    async def github(self, request: Request) -> Response:
        return _response(await self.deliver(GITHUB, request.scope, request.receive))

    async def gitea(self, request: Request) -> Response:
        return _response(await self.deliver(GITEA, request.scope, request.receive))

    def asgi(self, forge: Forge) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
        """The webhook endpoint of ``forge`` as a bare ASGI app: no Request or Response object."""

        async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
            status, body = await self.deliver(forge, scope, receive)
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(b"content-length", b"%d" % len(body)), _JSON_TYPE],
                }
            )
            await send({"type": "http.response.body", "body": body})

        return endpoint

    async def deliver(self, forge: Forge, scope: Scope, receive: Receive) -> Answer:
        # A large body costs several times its size while it is read, parsed and normalised: at most
        # STEWARD_MAX_LARGE_BODIES of them at once, so memory stays under body limit × that (the chart
        # derives the receiver's memory limit from it); the others wait their turn.
        headers = raw_headers(scope)
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > LARGE_BODY_BYTES:
            async with self._large_bodies:
                return await self._deliver_one(forge, scope, headers, receive)
        return await self._deliver_one(forge, scope, headers, receive)

    async def _deliver_one(self, forge: Forge, scope: Scope, headers: RawHeaders, receive: Receive) -> Answer:
        started = time.perf_counter()
        event_name, delivery = forge.identify(headers)
        if not event_name or not delivery:
            return _answer(
                forge.name, "unverified", "bad_request", 400, {"error": f"missing {forge.names} header"}
            )
        try:
            body = await read_body(receive, headers, self.settings.max_body_bytes)
        except TooLarge:
            return _counted(forge.name, "unverified", "too_large", 413, self._too_large)
        secrets = self._secrets[forge.name]
        if not secrets:
            log.error(f"{forge.name} delivery refused: no webhook secret configured", delivery=delivery[:64])
            self._refused(scope, forge, event_name, delivery, "no webhook secret is configured")
            return _answer(
                forge.name,
                "unverified",
                "bad_signature",
                401,
                {"error": f"no webhook secret is configured ({forge.secrets_variable})"},
            )
        if not forge.signed(headers, body, secrets):
            self._refused(scope, forge, event_name, delivery, f"missing or wrong {forge.signature_header}")
            return _answer(
                forge.name,
                "unverified",
                "bad_signature",
                401,
                {"error": f"missing or wrong {forge.signature_header}"},
            )
        # Which secret matched, by position (never the secret): during a rotation the old one may go once
        # its count stops growing. One more HMAC per secret tried, only while two are configured.
        position = 0
        if len(secrets) > 1:
            position = next((i for i, s in enumerate(secrets) if forge.signed(headers, body, [s])), 0)
        _child(metrics.SECRET_MATCHES, forge.name, str(position)).inc()
        event_label = forge.label(event_name, verified=True)
        # Every write Steward makes comes back as 2–5 deliveries sent by itself: they are dropped on their
        # sender alone, read without building the rest of the payload (a fraction of the full parse and
        # normalisation). A body that is not JSON, or whose sender is not an object, goes the full way
        # below and is answered as before; so does a ping. The sender decode checks the rest's syntax but
        # not the UTF-8 of strings it skips: that is checked here, so invalid UTF-8 is still a 400.
        if (
            self._bot_login is not None
            and not (forge.answers_ping and event_name == "ping")
            and forge.sender(body).casefold() == self._bot_login
            and _utf8(body)
        ):
            return _counted(forge.name, event_label, "ignored", 202, _SELF_SENT)
        try:
            payload = orjson.loads(body)
        except orjson.JSONDecodeError:
            return _counted(forge.name, event_label, "bad_request", 400, _NOT_JSON)
        if forge.answers_ping and event_name == "ping":
            return _counted(forge.name, event_label, "ping", 200, _PONG)
        try:
            event = forge.normalise(headers, event_name, delivery, payload)
        except Unhandled as exc:
            return _answer(forge.name, event_label, "ignored", 202, {"ignored": str(exc)})
        except MalformedPayload as exc:
            return _answer(forge.name, event_label, "bad_request", 400, {"error": str(exc)})
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
            # A field of an unexpected type that the normaliser did not foresee: still the sender's bad input
            # (DESIGN §3.7), answered 400 and logged so the normaliser can learn it — never a 500.
            log.warning("malformed payload", event=event_label, error=type(exc).__name__)
            return _counted(forge.name, event_label, "bad_request", 400, _MALFORMED)
        return await self._enqueue(event, started)

    async def _enqueue(self, event: Event, started: float) -> Answer:
        bot_login = self.settings.bot_login
        if bot_login and event.sender.casefold() == bot_login.casefold():
            return _counted(event.forge, event.name, "ignored", 202, _SELF_SENT)
        try:
            if event.name == "issue_comment":
                await self._command_names()
            result = await self.enqueuer.enqueue(event)
        except (RedisError, OSError) as exc:
            _redis_up(0)
            log.error(
                "cannot enqueue: Redis unavailable", delivery=event.delivery_id, error=type(exc).__name__
            )
            return _counted(event.forge, event.name, "unavailable", 503, _UNAVAILABLE)
        _child(metrics.ENQUEUE_SECONDS, event.forge).observe(time.perf_counter() - started)
        _redis_up(1)
        if result.outcome == "duplicate":
            return _counted(event.forge, event.name, "duplicate", 200, _DUPLICATE)
        if (
            result.outcome != "enqueued"
        ):  # beyond the sender's event budget (bot.queue.budgets): later, or merged
            outcome, job = result.outcome, result.job_id
            log.info(
                f"delivery {outcome}",
                delivery=event.delivery_id,
                kind=event.kind,
                job=job,
                delay=result.delay,
            )
            return _answer(event.forge, event.name, outcome, 202, {"job": job, outcome: result.delay or True})
        log.info("delivery enqueued", delivery=event.delivery_id, kind=event.kind, job=result.job_id)
        return _answer(event.forge, event.name, "accepted", 202, {"job": result.job_id})

    def _refused(self, scope: Scope, forge: Forge, event: str, delivery: str, reason: str) -> None:
        """Log a 401 once per source address and minute (address, event, reason; never the signature)."""
        client = scope.get("client")
        address = client[0] if client else "-"
        minute = int(time.time() // 60)
        if self._refusals.get((forge.name, address)) == minute:
            return
        if len(self._refusals) >= _MAX_REFUSAL_SOURCES:
            self._refusals.clear()  # a flood from many addresses: forget the old minutes, keep bounded
        self._refusals[(forge.name, address)] = minute
        log.warning(
            f"{forge.name} delivery refused (401); more from this address this minute are not logged",
            address=address,
            webhook_event=event[:64],
            delivery=delivery[:64],
            reason=reason,
        )

    async def healthz(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(self, request: Request) -> Response:
        try:
            await self.redis.ping()
        except (RedisError, OSError):
            _redis_up(0)
            return JSONResponse({"status": "unavailable", "redis": "unreachable"}, status_code=503)
        _redis_up(1)
        # No worker heartbeat: still ready (the queue is durable, deliveries are kept) but visibly degraded.
        try:
            age = (await gauges.sample(self.redis)).heartbeat_age
        except (RedisError, OSError):
            age = 0.0
        if age is None or age > gauges.HEARTBEAT_STALE_SECONDS:
            seen = "never" if age is None else f"{int(age)}s ago"
            worker = f"no worker heartbeat (last {seen}); deliveries are queued until a worker runs"
            return JSONResponse({"status": "degraded", "redis": "ok", "worker": worker})
        return JSONResponse({"status": "ok", "redis": "ok"})

    async def _command_names(self) -> None:
        """The commands the workers run (``bot.queue.budgets.CommandNames``), read again every
        ``NAMES_EVERY`` seconds: a comment skips its sender's event budget only when it names one."""
        now = time.monotonic()
        if now - self._names_read_at < NAMES_EVERY:
            return
        self._names_read_at = now
        try:
            names = await read_command_names(self.enqueuer.redis)
        except RedisError:
            return  # the enqueue that follows meets the outage and answers 503
        if names is not None:
            self.enqueuer.command_names = names

    async def queue(self, request: Request) -> Response:
        """The queue as JSON, for KEDA's metrics-api scaler (the chart scales the workers on ``ready``)."""
        got = await gauges.refresh(self.redis)
        if got is None:
            return JSONResponse({"error": "Redis is unreachable"}, status_code=503)
        return JSONResponse(
            {
                "ready": got.ready,
                "running": got.running,
                "stranded": got.stranded,
                "deferred": got.deferred,
                "oldest_ready_seconds": got.oldest_ready,
            }
        )

    async def metrics(self, request: Request) -> Response:
        await gauges.refresh(self.redis)
        return Response(metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


async def openapi_description(request: Request) -> Response:
    return JSONResponse(openapi.description())


class ReceiverApp(Starlette):
    """Starlette, with the webhook deliveries served ahead of its middleware stack and router.

    A delivery is the receiver's hot path: its handler answers every outcome itself (400, 401, 413, 202,
    503), so the error middlewares, the route matching and the per-request wrappers are not needed there.
    Everything else (health, metrics, a GET on a webhook path: 405) goes through Starlette as before.
    An error escaping a handler is answered 500 and logged by the server, as Starlette would have."""

    def __init__(self, *, webhooks: dict[str, ASGIApp], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._webhooks = webhooks

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            endpoint = self._webhooks.get(scope["path"])
            if endpoint is not None:
                scope["app"] = self
                await endpoint(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


# How often the receiver reads the commands the workers published.
NAMES_EVERY = 10.0


def create_app(settings: Settings, redis_factory: Callable[[], ArqRedis] | None = None) -> Starlette:
    redis = redis_factory() if redis_factory else make_redis(settings.redis_url)
    receiver = Receiver(settings, redis)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        beat = asyncio.create_task(
            gauges.receiver_heartbeat(redis, catch_up=settings.reconcile_on_start, log=log)
        )
        yield
        beat.cancel()
        await redis.aclose()

    app = ReceiverApp(
        webhooks={"/webhooks/github": receiver.asgi(GITHUB), "/webhooks/gitea": receiver.asgi(GITEA)},
        routes=[
            Route("/webhooks/github", receiver.github, methods=["POST"]),
            Route("/webhooks/gitea", receiver.gitea, methods=["POST"]),
            Route("/healthz", receiver.healthz, methods=["GET"]),
            Route("/readyz", receiver.readyz, methods=["GET"]),
            Route("/metrics", receiver.metrics, methods=["GET"]),
            Route("/queue", receiver.queue, methods=["GET"]),
            Route("/openapi.json", openapi_description, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.receiver = receiver
    return app
