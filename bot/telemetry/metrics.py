"""Prometheus metrics. Label values are closed sets or names: never a secret or a body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

REGISTRY = CollectorRegistry(auto_describe=True)

# (metric, label values) → the metric's child: ``labels()`` takes a lock and checks and copies the values on
# every call, and the worker counts every forge request and job (the receiver keeps its own,
# bot.receiver.app).
_children: dict[tuple[int, tuple[str, ...]], Any] = {}


def child(metric: Any, *labels: str) -> Any:
    """``metric.labels(*labels)``, looked up once per process. Label values must be closed sets or names
    (the module's rule), so the cache stays small."""
    key = (id(metric), labels)
    found = _children.get(key)
    if found is None:
        found = _children[key] = metric.labels(*labels)
    return found


DELIVERIES = Counter(
    "steward_deliveries",
    "Webhook deliveries received, by forge, event and outcome",
    ["forge", "event", "outcome"],
    registry=REGISTRY,
)
ENQUEUE_SECONDS = Histogram(
    "steward_enqueue_seconds",
    "Time from receiving a delivery to its job being durably enqueued",
    ["forge"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
    registry=REGISTRY,
)
JOBS = Counter(
    "steward_jobs",
    "Jobs run by the worker, by handler and outcome",
    ["handler", "outcome"],
    registry=REGISTRY,
)
FORGE_CALLS = Counter(
    "steward_forge_calls",
    "HTTP calls made to a forge, by forge, method and status",
    ["forge", "method", "status"],
    registry=REGISTRY,
)
BUDGET_WAITS = Counter(
    "steward_budget_waits",
    "Times a worker waited for write budget",
    ["forge"],
    registry=REGISTRY,
)
BUDGET_DEFERRALS = Counter(
    "steward_budget_deferrals",
    "Jobs deferred because the write budget would have kept them waiting too long",
    ["forge"],
    registry=REGISTRY,
)
BUDGET_WAIT_SECONDS = Counter(
    "steward_budget_wait_seconds",
    "Seconds spent waiting for write budget",
    ["forge"],
    registry=REGISTRY,
)


DEAD_JOBS = Gauge(
    "steward_dead_jobs",
    "Jobs that failed for good and wait in the dead-letter list (steward dead list)",
    registry=REGISTRY,
)


REDIS_UP = Gauge(
    "steward_redis_up",
    "Whether Redis answered the last time this process needed it (1) or not (0)",
    ["process"],
    registry=REGISTRY,
)
SIGNING_KEY_PINNED = Gauge(
    "steward_signing_key_pinned",
    "Whether this worker signs with a key the operator pinned (STEWARD_SIGNING_KEY: 1) or one kept in Redis "
    "(0: losing Redis loses the key; docs/integrity.md)",
    registry=REGISTRY,
)
REDIS_RECONNECTS = Counter(
    "steward_redis_reconnects",
    "Times this process found Redis back after it had been unreachable",
    ["process"],
    registry=REGISTRY,
)


def render() -> bytes:
    return generate_latest(REGISTRY)


# --- read from Redis when metrics are scraped (bot.queue.gauges): the same on the receiver and every worker

DEAD_BYTES = Gauge(
    "steward_dead_bytes",
    "Bytes the dead-letter list holds (its cap: STEWARD_DEAD_MAX_BYTES)",
    registry=REGISTRY,
)
DEAD_DROPPED = Counter(
    "steward_dead_dropped",
    "Dead jobs dropped, oldest first, because the list reached its cap in entries or bytes",
    ["reason"],
    registry=REGISTRY,
)
QUEUE_JOBS = Gauge(
    "steward_queue_jobs",
    "Jobs in the queue: ready (due now, waiting for a worker), running (a live worker runs it), stranded "
    "(a worker that died was running it: released within seconds) or deferred (due later: held back by a "
    "budget, a busy issue, a retry's backoff, or scheduled work)",
    ["state"],
    registry=REGISTRY,
)
QUEUE_OLDEST_READY_SECONDS = Gauge(
    "steward_queue_oldest_ready_seconds",
    "How long the oldest ready job has been due (0 when none is ready)",
    registry=REGISTRY,
)
WORKER_HEARTBEAT_SECONDS = Gauge(
    "steward_worker_heartbeat_age_seconds",
    "Seconds since any worker's polling loop last reported in (no worker ever: -1)",
    registry=REGISTRY,
)
WORKER_LAST_JOB_SECONDS = Gauge(
    "steward_worker_last_job_age_seconds",
    "Seconds since any worker last finished a job (none yet: -1)",
    registry=REGISTRY,
)
CLOCK_SKEW = Gauge(
    "steward_clock_skew_seconds",
    "This process's clock minus Redis's TIME: the queue's times are read on Redis's clock, corrected by it",
    ["process"],
    registry=REGISTRY,
)
FORGE_AUTH_FAILING = Gauge(
    "steward_forge_auth_failing",
    "1 while the forge refuses Steward's credentials (401) and its jobs wait, 0 once a job got through",
    ["forge"],
    registry=REGISTRY,
)
FORGE_AUTH_FAILURES = Counter(
    "steward_forge_auth_failures",
    "Answers 401 from the forge (a revoked or expired token, a rotated App key)",
    ["forge"],
    registry=REGISTRY,
)
DELIVERIES_UNCHECKED = Gauge(
    "steward_deliveries_unchecked",
    "1 for each repository whose failed webhook deliveries the catch-up may not read (a token without admin "
    "there: 403), so nothing missed there is redelivered",
    ["forge", "repository"],
    registry=REGISTRY,
)
INSTALLED_REPOS = Gauge(
    "steward_installed_repositories",
    "Repositories the forge says Steward is installed on and may write to, as the last catch-up read them",
    ["forge"],
    registry=REGISTRY,
)
REDIS_EMPTIED = Counter(
    "steward_redis_emptied",
    "Times a process found Redis empty of Steward's state (a flushed or replaced Redis): the queue, the "
    "dedupe keys and the catch-up's window were lost, and a catch-up over the whole window was queued",
    ["process"],
    registry=REGISTRY,
)
SECRET_MATCHES = Counter(
    "steward_webhook_secret_matches",
    "Deliveries whose signature matched the webhook secret at this position of the list (0: the first), "
    "by forge: once the old secret's count stops growing it may be dropped",
    ["forge", "position"],
    registry=REGISTRY,
)
FORGE_RATE_REMAINING = Gauge(
    "steward_forge_rate_limit_remaining",
    "Requests left in the forge's rate-limit window (X-RateLimit-Remaining of the last answer), per forge "
    "and token or App installation (a digest, never the token)",
    ["forge", "installation"],
    registry=REGISTRY,
)
FORGE_RATE_LIMIT = Gauge(
    "steward_forge_rate_limit",
    "The forge's rate limit for that token or installation (X-RateLimit-Limit)",
    ["forge", "installation"],
    registry=REGISTRY,
)


def note_rate_limit(forge: str, key: str, headers: Mapping[str, str]) -> None:
    """Record the rate-limit headroom a forge's answer reports (GitHub sends it on every answer)."""
    remaining = headers.get("x-ratelimit-remaining") or headers.get("X-RateLimit-Remaining")
    if remaining is None or not remaining.isdigit():
        return
    # A token's digest, `installation:<id>` or `app:<id>` (bot.forge's budget keys): never a secret.
    who = key.removeprefix(f"{forge}:")
    child(FORGE_RATE_REMAINING, forge, who).set(int(remaining))
    limit = headers.get("x-ratelimit-limit") or headers.get("X-RateLimit-Limit")
    if limit is not None and limit.isdigit():
        child(FORGE_RATE_LIMIT, forge, who).set(int(limit))
        HEADROOM[(forge, who)] = (int(remaining), int(limit))


# (forge, installation digest) → (remaining, limit), as the last answer said: the catch-up stops for the
# hour when a forge's quota runs low (bot.catchup.reconcile), leaving the rest to people's commands.
HEADROOM: dict[tuple[str, str], tuple[int, int]] = {}


def headroom(forge: str) -> float | None:
    """The smallest share of its quota left among the forge's tokens and installations (None: unknown)."""
    shares = [left / limit for (kind, _), (left, limit) in HEADROOM.items() if kind == forge and limit > 0]
    return min(shares) if shares else None
