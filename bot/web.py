"""The receiver (DESIGN §1): verify ▸ size limit ▸ parse ▸ normalise ▸ dedupe ▸ enqueue ▸ 202.

It never calls the forge and never runs handler logic, so it answers well within the
forges' delivery timeouts; it answers 2xx only once the job is durably in Redis.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import orjson
from arq.connections import ArqRedis
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from bot import gauges, logs, metrics, openapi
from bot.events import (
    GITEA_HANDLED,
    GITHUB_HANDLED,
    Event,
    MalformedPayload,
    Unhandled,
    gitea_event_name,
    normalise_gitea,
    normalise_github,
)
from bot.queue import Enqueuer, make_redis
from bot.settings import Settings
from bot.signatures import verify_gitea, verify_github

log = logs.get("steward.web")

GITHUB_KNOWN = frozenset({*GITHUB_HANDLED, "ping"})
GITEA_KNOWN = frozenset(GITEA_HANDLED)


_MAX_REFUSAL_SOURCES = 10_000
LARGE_BODY_BYTES = 1024 * 1024


class TooLarge(Exception):
    pass


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise TooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


# The labelled children of the receiver's metrics, looked up once: prometheus_client's ``labels()`` costs
# more than the rest of the counting. Bounded, as the labels are (``Delivery.label``); a child is still
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


def _answer(forge: str, event: str, outcome: str, status: int, content: dict[str, Any]) -> Response:
    """``event`` must be a metric-safe label (see ``Delivery.label``), never a raw header."""
    _child(metrics.DELIVERIES, forge, event, outcome).inc()
    # The same bytes and content type as Starlette's JSONResponse, rendered by orjson.
    return Response(orjson.dumps(content), status_code=status, media_type="application/json")


# Not frozen: one is made per delivery, and a frozen dataclass sets each field through object.__setattr__.
@dataclass(slots=True)
class Delivery:
    """What a forge's headers say about one delivery, and how to check and read it."""

    forge: str
    event: str
    delivery: str
    # The headers' names, for the answers that refuse a delivery.
    names: str
    secrets_variable: str
    signature_header: str
    signed: Callable[[bytes, list[str]], bool]
    normalise: Callable[[Any], Event]
    # The event names Steward knows on this forge: the only ones that become metric labels.
    known: frozenset[str] = frozenset()
    # GitHub sends `ping` when a hook is created; Gitea has no such event.
    answers_ping: bool = False

    def label(self, verified: bool) -> str:
        """The event as a metric label: untrusted input never makes a new series (DESIGN §3.9)."""
        if not verified:
            return "unverified"
        return self.event if self.event in self.known else "other"


class Receiver:
    def __init__(self, settings: Settings, redis: ArqRedis) -> None:
        self.settings = settings
        self.redis = redis
        self.enqueuer = Enqueuer(redis, dedupe_ttl=settings.dedupe_ttl_seconds)
        self.github_secrets = [s.get_secret_value() for s in settings.github_webhook_secrets]
        self.gitea_secrets = [s.get_secret_value() for s in settings.gitea_webhook_secrets]
        self._large_bodies = asyncio.Semaphore(settings.max_large_bodies)
        # (forge, address) → the minute a 401 from there was last logged.
        self._refusals: dict[tuple[str, str], int] = {}

    async def github(self, request: Request) -> Response:
        headers = request.headers
        event_name = headers.get("x-github-event", "")
        delivery = headers.get("x-github-delivery", "")
        return await self._receive(
            request,
            Delivery(
                forge="github",
                event=event_name,
                delivery=delivery,
                names="X-GitHub-Event or X-GitHub-Delivery",
                secrets_variable="STEWARD_GITHUB_WEBHOOK_SECRETS",
                signature_header="X-Hub-Signature-256",
                signed=lambda body, secrets: verify_github(body, headers.get("x-hub-signature-256"), secrets),
                normalise=lambda payload: normalise_github(event_name, delivery, payload),
                known=GITHUB_KNOWN,
                answers_ping=True,
            ),
            self.github_secrets,
        )

    async def gitea(self, request: Request) -> Response:
        """Gitea and Forgejo deliveries: the same rules as GitHub's, Gitea's headers and signature."""
        headers = request.headers
        raw_event = headers.get("x-gitea-event") or headers.get("x-forgejo-event", "")
        event_type = headers.get("x-gitea-event-type") or headers.get("x-forgejo-event-type", "")
        event_name = gitea_event_name(raw_event, event_type) if raw_event else ""
        delivery = headers.get("x-gitea-delivery") or headers.get("x-forgejo-delivery", "")

        def signed(body: bytes, secrets: list[str]) -> bool:
            # Gitea signs twice with the same HMAC: bare hex in X-Gitea-Signature and GitHub-style in
            # X-Hub-Signature-256. Either is enough; an empty X-Gitea-Signature (no secret on the hook)
            # is not.
            signature = headers.get("x-gitea-signature") or headers.get("x-forgejo-signature")
            return verify_gitea(body, signature, secrets) or verify_github(
                body, headers.get("x-hub-signature-256"), secrets
            )

        return await self._receive(
            request,
            Delivery(
                forge="gitea",
                event=event_name,
                delivery=delivery,
                names="X-Gitea-Event or X-Gitea-Delivery",
                secrets_variable="STEWARD_GITEA_WEBHOOK_SECRETS",
                signature_header="X-Gitea-Signature",
                signed=signed,
                normalise=lambda payload: normalise_gitea(
                    raw_event, delivery, payload, event_type=event_type
                ),
                known=GITEA_KNOWN,
            ),
            self.gitea_secrets,
        )

    async def _receive(self, request: Request, d: Delivery, secrets: list[str]) -> Response:
        # A large body costs several times its size while it is read, parsed and normalised: at most
        # STEWARD_MAX_LARGE_BODIES of them at once, so memory stays under body limit × that (the chart
        # derives the receiver's memory limit from it); the others wait their turn.
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > LARGE_BODY_BYTES:
            async with self._large_bodies:
                return await self._receive_one(request, d, secrets)
        return await self._receive_one(request, d, secrets)

    async def _receive_one(self, request: Request, d: Delivery, secrets: list[str]) -> Response:
        started = time.perf_counter()
        unverified = d.label(verified=False)
        if not d.event or not d.delivery:
            return _answer(d.forge, unverified, "bad_request", 400, {"error": f"missing {d.names} header"})
        try:
            body = await read_body(request, self.settings.max_body_bytes)
        except TooLarge:
            return _answer(
                d.forge,
                unverified,
                "too_large",
                413,
                {"error": f"body larger than {self.settings.max_body_bytes} bytes"},
            )
        if not secrets:
            log.error(f"{d.forge} delivery refused: no webhook secret configured", delivery=d.delivery[:64])
            self._refused(request, d, "no webhook secret is configured")
            return _answer(
                d.forge,
                unverified,
                "bad_signature",
                401,
                {"error": f"no webhook secret is configured ({d.secrets_variable})"},
            )
        if not d.signed(body, secrets):
            self._refused(request, d, f"missing or wrong {d.signature_header}")
            return _answer(
                d.forge, unverified, "bad_signature", 401, {"error": f"missing or wrong {d.signature_header}"}
            )
        # Which secret matched, by position (never the secret): during a rotation the old one may go once
        # its count stops growing. One more HMAC per secret tried, only while two are configured.
        position = 0
        if len(secrets) > 1:
            position = next((i for i, s in enumerate(secrets) if d.signed(body, [s])), 0)
        _child(metrics.SECRET_MATCHES, d.forge, str(position)).inc()
        event_label = d.label(verified=True)
        try:
            payload = orjson.loads(body)
        except orjson.JSONDecodeError:
            return _answer(d.forge, event_label, "bad_request", 400, {"error": "the body is not valid JSON"})
        if d.answers_ping and d.event == "ping":
            return _answer(d.forge, event_label, "ping", 200, {"pong": True})
        try:
            event = d.normalise(payload)
        except Unhandled as exc:
            return _answer(d.forge, event_label, "ignored", 202, {"ignored": str(exc)})
        except MalformedPayload as exc:
            return _answer(d.forge, event_label, "bad_request", 400, {"error": str(exc)})
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
            # A field of an unexpected type that the normaliser did not foresee: still the sender's bad input
            # (DESIGN §3.7), answered 400 and logged so the normaliser can learn it — never a 500.
            log.warning("malformed payload", event=event_label, error=type(exc).__name__)
            return _answer(d.forge, event_label, "bad_request", 400, {"error": "the payload is malformed"})
        return await self._enqueue(event, started)

    async def _enqueue(self, event: Event, started: float) -> Response:
        bot_login = self.settings.bot_login
        if bot_login and event.sender.casefold() == bot_login.casefold():
            return _answer(event.forge, event.name, "ignored", 202, {"ignored": "sent by Steward itself"})
        try:
            result = await self.enqueuer.enqueue(event)
        except (RedisError, OSError) as exc:
            _redis_up(0)
            log.error(
                "cannot enqueue: Redis unavailable", delivery=event.delivery_id, error=type(exc).__name__
            )
            return _answer(
                event.forge,
                event.name,
                "unavailable",
                503,
                {"error": "the queue is unavailable; redeliver later"},
            )
        _child(metrics.ENQUEUE_SECONDS, event.forge).observe(time.perf_counter() - started)
        _redis_up(1)
        if result.outcome == "duplicate":
            return _answer(event.forge, event.name, "duplicate", 200, {"duplicate": True})
        if result.outcome != "enqueued":  # beyond the sender's event budget (bot.budget): later, or merged
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

    def _refused(self, request: Request, d: Delivery, reason: str) -> None:
        """Log a 401 once per source address and minute (address, event, reason; never the signature)."""
        address = request.client.host if request.client else "-"
        minute = int(time.time() // 60)
        if self._refusals.get((d.forge, address)) == minute:
            return
        if len(self._refusals) >= _MAX_REFUSAL_SOURCES:
            self._refusals.clear()  # a flood from many addresses: forget the old minutes, keep bounded
        self._refusals[(d.forge, address)] = minute
        log.warning(
            f"{d.forge} delivery refused (401); more from this address this minute are not logged",
            address=address,
            webhook_event=d.event[:64],
            delivery=d.delivery[:64],
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

    async def queue(self, request: Request) -> Response:
        """The queue as JSON, for KEDA's metrics-api scaler (the chart scales the workers on ``ready``)."""
        got = await gauges.refresh(self.redis)
        if got is None:
            return JSONResponse({"error": "Redis is unreachable"}, status_code=503)
        return JSONResponse(
            {"ready": got.ready, "deferred": got.deferred, "oldest_ready_seconds": got.oldest_ready}
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

    def __init__(
        self, *, webhooks: dict[str, Callable[[Request], Awaitable[Response]]], **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self._webhooks = webhooks

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            handler = self._webhooks.get(scope["path"])
            if handler is not None:
                scope["app"] = self
                response = await handler(Request(scope, receive))
                await response(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


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
        webhooks={"/webhooks/github": receiver.github, "/webhooks/gitea": receiver.gitea},
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
