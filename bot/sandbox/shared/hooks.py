"""Webhook delivery: signed, asynchronous, in order per hook, recorded, never retried (like GitHub)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import time
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

from .state import Hook

# How long a forge waits for a receiver's answer (FORGE-FACTS "Webhooks"): GitHub 10 s; Gitea's
# `[webhook] DELIVER_TIMEOUT` defaults to 5 s (modules/setting/webhook.go).
DELIVERY_TIMEOUT = 10.0
GITEA_DELIVER_TIMEOUT = 5.0


def sign(secret: str, body: bytes) -> tuple[str, str]:
    """(X-Hub-Signature-256, X-Hub-Signature) values for `body`."""
    key = secret.encode()
    return (
        "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest(),
        "sha1=" + hmac.new(key, body, hashlib.sha1).hexdigest(),
    )


@dataclass
class Delivery:
    """One attempt to deliver an event. GitHub names a delivery by a number (`id`, one per attempt) and
    the event by `guid` (X-GitHub-Delivery), which a redelivery keeps."""

    guid: str
    hook_id: int
    url: str
    event: str
    action: str | None
    body: bytes
    headers: dict[str, str]
    repository: str | None = None
    redelivery: bool = False
    status_code: int | None = None
    error: str | None = None
    response_body: str | None = None
    delivered: bool = False
    duration: float | None = None
    delivered_at: float | None = None
    id: int = 0
    queued_at: float = field(default_factory=time.time)
    # Set for an App's webhook: its deliveries are listed at /app/hook/deliveries, not a repository's.
    app_id: int | None = None
    installation_id: int | None = None
    repository_id: int | None = None
    timeout: float = DELIVERY_TIMEOUT

    def payload(self) -> Any:
        return json.loads(self._json())

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.guid,
            "hook_id": self.hook_id,
            "event": self.event,
            "action": self.action,
            "repository": self.repository,
            "url": self.url,
            "status_code": self.status_code if self.error is None else self.error,
            "response_body": self.response_body,
            "delivered": self.delivered,
            "redelivery": self.redelivery,
            "payload_size": len(self.body),
            "duration": self.duration,
        }

    def detail(self) -> dict[str, Any]:
        return {**self.summary(), "request_headers": self.headers, "payload": json.loads(self._json())}

    def _json(self) -> bytes:
        if self.headers.get("Content-Type") == "application/x-www-form-urlencoded":
            return urllib.parse.parse_qs(self.body.decode())["payload"][0].encode()
        return self.body


def github_headers(
    hook: Hook, event: str, guid: str, body: bytes, *, target: tuple[str, int] | None = None
) -> dict[str, str]:
    """`target`: ("integration", app id) for an App's webhook, else the repository's hook."""
    headers = {
        "Accept": "*/*",
        "User-Agent": "GitHub-Hookshot/sandbox",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": guid,
        "X-GitHub-Hook-ID": str(hook.id),
        "X-GitHub-Hook-Installation-Target-Type": target[0] if target else "repository",
        "Content-Type": "application/json"
        if hook.content_type == "json"
        else "application/x-www-form-urlencoded",
    }
    if target is not None:
        headers["X-GitHub-Hook-Installation-Target-ID"] = str(target[1])
    if hook.secret:
        headers["X-Hub-Signature-256"], headers["X-Hub-Signature"] = sign(hook.secret, body)
    return headers


@dataclass
class _Lane:
    queue: asyncio.Queue[Delivery] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None


class Deliverer:
    """Queues deliveries per hook and drains each queue with one task, so a hook sees events in order."""

    def __init__(self, timeout: float = DELIVERY_TIMEOUT) -> None:
        self.timeout = timeout
        self.gitea_timeout = GITEA_DELIVER_TIMEOUT
        self.log: list[Delivery] = []
        self._lanes: dict[int, _Lane] = {}
        self._pending = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._client: httpx2.AsyncClient | None = None
        self._next_id = 0

    def enqueue(
        self,
        hook: Hook,
        event: str,
        action: str | None,
        payload: dict[str, Any],
        repository: str | None,
        headers: Callable[[Hook, str, bytes], dict[str, str]] | None = None,
        *,
        app_id: int | None = None,
        installation_id: int | None = None,
        repository_id: int | None = None,
        timeout: float | None = None,
    ) -> Delivery:
        """Queue a delivery; `headers(hook, guid, body)` makes its headers (GitHub's by default)."""
        raw = json.dumps(payload, separators=(",", ":")).encode()
        if hook.content_type == "form":
            raw = urllib.parse.urlencode({"payload": raw.decode()}).encode()
        guid = str(uuid.uuid4())
        delivery = Delivery(
            guid=guid,
            hook_id=hook.id,
            url=hook.url,
            event=event,
            action=action,
            body=raw,
            headers=headers(hook, guid, raw) if headers else github_headers(hook, event, guid, raw),
            repository=repository,
            app_id=app_id,
            installation_id=installation_id,
            repository_id=repository_id,
            timeout=timeout or self.timeout,
        )
        self._submit(delivery)
        return delivery

    def redeliver(self, guid: str) -> Delivery | None:
        """Send the very same bytes and delivery id again, recorded as a new attempt."""
        original = next((d for d in self.log if d.guid == guid), None)
        return self.redeliver_attempt(original) if original is not None else None

    def by_id(self, delivery_id: int) -> Delivery | None:
        return next((d for d in self.log if d.id == delivery_id), None)

    def redeliver_attempt(self, original: Delivery) -> Delivery:
        """GitHub's "Redeliver": the same event (guid, headers, body) as a new attempt with its own id."""
        again = Delivery(
            guid=original.guid,
            hook_id=original.hook_id,
            url=original.url,
            event=original.event,
            action=original.action,
            body=original.body,
            headers=dict(original.headers),
            repository=original.repository,
            redelivery=True,
            app_id=original.app_id,
            installation_id=original.installation_id,
            repository_id=original.repository_id,
            timeout=original.timeout,
        )
        self._submit(again)
        return again

    def _submit(self, delivery: Delivery) -> None:
        self._next_id += 1
        delivery.id = self._next_id
        self.log.append(delivery)
        lane = self._lanes.setdefault(delivery.hook_id, _Lane())
        if lane.task is None or lane.task.done():
            lane.task = asyncio.get_running_loop().create_task(self._drain(lane))
        self._pending += 1
        self._idle.clear()
        lane.queue.put_nowait(delivery)

    async def _drain(self, lane: _Lane) -> None:
        while True:
            delivery = await lane.queue.get()
            try:
                await self._send(delivery)
            finally:
                self._pending -= 1
                if self._pending == 0:
                    self._idle.set()

    async def _send(self, delivery: Delivery) -> None:
        if self._client is None:
            self._client = httpx2.AsyncClient(timeout=self.timeout)
        started = time.monotonic()
        try:
            response = await self._client.post(
                delivery.url, content=delivery.body, headers=delivery.headers, timeout=delivery.timeout
            )
        except httpx2.TimeoutException:
            delivery.error = "timeout"
        except httpx2.HTTPError as exc:
            delivery.error = f"{type(exc).__name__}: {exc}"
        else:
            delivery.status_code = response.status_code
            delivery.response_body = response.text[:4096]
            delivery.delivered = 200 <= response.status_code < 300
        delivery.duration = round(time.monotonic() - started, 4)
        delivery.delivered_at = time.time()

    @property
    def pending(self) -> int:
        return self._pending

    async def wait_idle(self, seconds: float) -> bool:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._idle.wait()
        return self._pending == 0

    def forget_hook(self, hook_id: int) -> None:
        lane = self._lanes.pop(hook_id, None)
        if lane is not None and lane.task is not None and lane.queue.empty():
            lane.task.cancel()

    async def aclose(self) -> None:
        tasks = [lane.task for lane in self._lanes.values() if lane.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._lanes.clear()
        # queued deliveries die with the loop; a fresh Event lets the app be served again on a new loop
        self._pending = 0
        self._idle = asyncio.Event()
        self._idle.set()
        if self._client is not None:
            await self._client.aclose()
            self._client = None
