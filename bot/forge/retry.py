"""One retry policy for every forge call (DESIGN §3.6), as pure rules.

5xx, 429, a secondary-limit 403 (with ``Retry-After``) and transport errors are retried
with exponential backoff and jitter, a bounded number of times. A spent primary limit
(403/429 with ``X-RateLimit-Remaining: 0``) waits for ``X-RateLimit-Reset``. Waits longer
than ``max_delay`` are not slept in a job: the caller raises ``RateLimited`` and the job is
deferred instead, so a worker slot is not held for an hour.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 60.0

    def backoff(self, attempt: int, rng: random.Random | None = None) -> float:
        """Exponential backoff with jitter: the n-th retry waits in [½, 1] × base × 2ⁿ⁻¹, capped."""
        draw: float = (rng or random).random()
        ceiling = min(self.max_delay, self.base_delay * (2.0 ** max(0, attempt - 1)))
        return ceiling * (0.5 + draw / 2)


@dataclass(frozen=True)
class RetryDecision:
    action: Literal["retry", "fail", "defer"]
    delay: float = 0.0
    reason: str = ""


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        wanted = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == wanted), None)
    return value


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


# POSTs whose repetition changes nothing: a reaction or a label the issue already has is not added twice,
# and git objects are addressed by their content. Every other POST creates something (a comment, a ref, a
# pull request, a status, a dependency) and may have done so before the forge failed to answer.
# A pin too: pinning a pinned issue leaves it pinned (Gitea's POST /issues/{index}/pin).
_RESENDABLE_POSTS = re.compile(
    r"/reactions$|/issues/\d+/labels$|/issues/\d+/pin$|/git/(?:blobs|trees|commits)$|/access_tokens$"
)
# GitHub's GraphQL takes every operation as one POST to /graphql, so the path cannot tell; these mutations
# change nothing when repeated (an issue pinned, or unpinned, twice is so once).
_RESENDABLE_MUTATIONS = frozenset({"pinIssue", "unpinIssue"})


def resendable(method: str, path: str) -> bool:
    """Whether a request may be sent again after a 5xx or a dropped connection (DESIGN §3.10).

    Reads are; PUT, PATCH and DELETE are as Steward uses them (each sets an absolute value: a body, a
    label set, a state, a ref); a POST only when repeating it changes nothing (``_RESENDABLE_POSTS``)."""
    method = method.upper()
    if method != "POST":
        return True
    return _RESENDABLE_POSTS.search(path.split("?", 1)[0]) is not None


def resendable_graphql(mutation: str | None) -> bool:
    """Whether a GraphQL request may be sent again after a 5xx or a dropped connection: a query (``None``)
    may; a mutation only when repeating it changes nothing (``_RESENDABLE_MUTATIONS``)."""
    return mutation is None or mutation in _RESENDABLE_MUTATIONS


def classify(
    status: int,
    headers: Mapping[str, str],
    *,
    attempt: int,
    policy: RetryPolicy,
    now: float,
    rng: random.Random | None = None,
    resend_ok: bool = True,
) -> RetryDecision:
    """What to do after an HTTP error ``status`` on the ``attempt``-th try (1-based).

    ``resend_ok`` False: the request is a write the forge may have applied although it answered 5xx (a
    proxy timing out after the write); it fails at once, and the job re-runs from a fresh read instead.
    A rate-limit answer (429, or 403 with ``Retry-After`` or a spent limit) means the forge refused the
    request, so waiting and resending is safe for every request."""
    retry_after = _float(_header(headers, "retry-after"))
    remaining = _header(headers, "x-ratelimit-remaining")
    reset = _float(_header(headers, "x-ratelimit-reset"))
    if status in (403, 429) and retry_after is not None:
        return _wait(max(0.0, retry_after), attempt, policy, "secondary rate limit")
    if status in (403, 429) and remaining == "0" and reset is not None:
        return _wait(max(0.0, reset - now) + 1.0, attempt, policy, "primary rate limit spent")
    if status == 429:
        return _retry(attempt, policy, rng, "too many requests")
    if status >= 500 and not resend_ok:
        return RetryDecision("fail", reason=f"server error {status} after a write that may have been applied")
    if status >= 500:
        return _retry(attempt, policy, rng, f"server error {status}")
    return RetryDecision("fail", reason=f"status {status} is not retried")


def transport_error(
    attempt: int, policy: RetryPolicy, rng: random.Random | None = None, *, unsafe_to_resend: bool = False
) -> RetryDecision:
    """``unsafe_to_resend``: a write whose request may have reached the forge. It is not sent again
    (that could post twice); the job re-runs instead and re-reads the state first."""
    if unsafe_to_resend:
        return RetryDecision("fail", reason="a write that may have reached the forge is not resent")
    return _retry(attempt, policy, rng, "transport error")


def _retry(attempt: int, policy: RetryPolicy, rng: random.Random | None, reason: str) -> RetryDecision:
    if attempt >= policy.attempts:
        return RetryDecision("fail", reason=f"{reason}; gave up after {attempt} tries")
    return RetryDecision("retry", policy.backoff(attempt, rng), reason)


def _wait(delay: float, attempt: int, policy: RetryPolicy, reason: str) -> RetryDecision:
    if delay > policy.max_delay:
        return RetryDecision("defer", delay, reason)
    if attempt >= policy.attempts:
        return RetryDecision("defer", delay, f"{reason}; still limited after {attempt} tries")
    return RetryDecision("retry", delay, reason)
