"""A worker's own HTTP port (``STEWARD_WORKER_METRICS_PORT``): ``/metrics`` (Prometheus, also at ``/``),
``/healthz`` (the process is alive) and ``/readyz`` (503 while Redis is unreachable, or while the signing key
is not pinned: docs/integrity.md), so an operator or a Kubernetes probe sees an outage on the worker too. A
few lines of asyncio: nothing here is on a hot path."""

from __future__ import annotations

import asyncio
import contextlib

from bot.queue import gauges
from bot.records import signing
from bot.telemetry import metrics
from bot.worker.redis_watch import RedisWatch

_STATUS = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}


def _answer(status: int, body: bytes, content_type: str = "application/json") -> bytes:
    head = (
        f"HTTP/1.1 {status} {_STATUS[status]}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


async def respond(method: str, path: str, watch: RedisWatch) -> bytes:
    path = path.split("?", 1)[0]
    if method not in ("GET", "HEAD"):
        return _answer(405, b'{"error": "GET only"}')
    if path in ("/", "/metrics"):
        await gauges.refresh(watch.redis)
        return _answer(200, metrics.render(), "text/plain; version=0.0.4; charset=utf-8")
    if path == "/healthz":
        return _answer(200, b'{"status": "ok"}')
    if path == "/readyz":
        if not await watch.answers():
            return _answer(503, b'{"status": "unavailable", "redis": "unreachable"}')
        if not signing.pinned():
            # Loud, not fatal: the worker still pulls and answers work (docs/integrity.md says why).
            return _answer(503, b'{"status": "unavailable", "redis": "ok", "signing": "not pinned"}')
        return _answer(200, b'{"status": "ok", "redis": "ok"}')
    return _answer(404, b'{"error": "not found"}')


async def serve(port: int, watch: RedisWatch, host: str = "0.0.0.0") -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readline(), 5)
            parts = request.decode("latin-1").split()
            method, path = (parts[0], parts[1]) if len(parts) >= 2 else ("GET", "/")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    while (await reader.readline()).strip():
                        pass  # headers: not needed
            writer.write(await respond(method.upper(), path, watch))
            await writer.drain()
        except (TimeoutError, ConnectionError, UnicodeDecodeError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    return await asyncio.start_server(handle, host, port)
