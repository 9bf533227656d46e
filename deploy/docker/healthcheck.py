"""The container's health check: is this Steward process doing its job?

Python only (the slim image has no curl). It asks the process that runs in this container:

- `steward serve` / `steward run`: GET /healthz on STEWARD_PORT (default 8000) must answer 200;
- `steward worker`: GET /healthz (with --ready, /readyz) on STEWARD_WORKER_METRICS_PORT when it is set;
  without that port, with --ready, Redis must answer PING at STEWARD_REDIS_URL; otherwise the check passes
  (the worker serves nothing to ask).

Usage: python healthcheck.py [auto|serve|worker] [--ready]. `auto` (the default, the image's
HEALTHCHECK) reads the command from /proc/1/cmdline; Kubernetes probes name it.
Exit 0 healthy, 1 not.
"""

from __future__ import annotations

import os
import sys
import urllib.request
from pathlib import Path

TIMEOUT = 3.0


def role_of_pid1(cmdline: Path = Path("/proc/1/cmdline")) -> str:
    try:
        args = cmdline.read_bytes().split(b"\0")
    except OSError:
        return "serve"
    return "worker" if b"worker" in args else "serve"


def http_ok(port: str, path: str) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=TIMEOUT) as response:
            return bool(response.status == 200)
    except OSError as exc:  # URLError, HTTPError (non-2xx), refused, timed out
        print(f"unhealthy: GET :{port}{path}: {exc}", file=sys.stderr)
        return False


def redis_ok(url: str) -> bool:
    import redis  # the image's venv has it; imported here so the HTTP checks stay cheap

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=TIMEOUT, socket_timeout=TIMEOUT)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (redis.RedisError, OSError) as exc:
        # Never the URL: it may hold a password.
        print(f"unready: Redis: {type(exc).__name__}", file=sys.stderr)
        return False


def healthy(role: str, ready: bool, env: dict[str, str]) -> bool:
    if role == "auto":
        role = role_of_pid1()
    if role == "worker":
        if env.get("STEWARD_WORKER_METRICS_PORT"):
            return http_ok(env["STEWARD_WORKER_METRICS_PORT"], "/readyz" if ready else "/healthz")
        if ready:
            return redis_ok(env.get("STEWARD_REDIS_URL", "redis://127.0.0.1:6379/0"))
        return True
    return http_ok(env.get("STEWARD_PORT") or "8000", "/readyz" if ready else "/healthz")


def main(argv: list[str]) -> int:
    args = [a for a in argv if a != "--ready"]
    role = args[0] if args else "auto"
    if role not in {"auto", "serve", "run", "worker"}:
        print(f"usage: healthcheck.py [auto|serve|worker] [--ready]; got {role!r}", file=sys.stderr)
        return 2
    return 0 if healthy(role, "--ready" in argv, dict(os.environ)) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
