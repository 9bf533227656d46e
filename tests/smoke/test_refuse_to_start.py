"""`steward run`, `steward serve` and `steward worker` refuse to start wrong (issue 37 §2): with no forge
configured, without the webhook secret of a forge they receive from, or with credentials the forge rejects,
they stop before starting with one sentence naming the variable and what to do, exit status 4; a forge that
is down or answers 5xx is asked once and they start anyway. Each runs from the installed entry point against
the sandbox forge."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.demo.scratch_redis import Claim
from bot.demo.threads import free_port
from bot.sandbox.server import SandboxServer
from tests.e2e.stack import SECRET
from tests.smoke.stack import steward, steward_command, wait_up

REFUSED = 4
BOT_TOKEN = "refuse-bot-token"


@pytest.fixture(scope="module")
def forge() -> Iterator[SandboxServer]:
    with SandboxServer({"steward-bot": BOT_TOKEN}) as server:
        yield server


def _env(forge: str, sandbox_url: str, redis_url: str, **more: str) -> dict[str, str]:
    prefix = f"STEWARD_{forge.upper()}"
    where = (
        {"STEWARD_GITHUB_API_URL": sandbox_url} if forge == "github" else {"STEWARD_GITEA_URL": sandbox_url}
    )
    return {
        "STEWARD_REDIS_URL": redis_url,
        **where,
        f"{prefix}_TOKEN": BOT_TOKEN,
        f"{prefix}_WEBHOOK_SECRETS": SECRET,
        "STEWARD_PORT": str(free_port()),
        "STEWARD_RECONCILE_ON_START": "false",
        "STEWARD_RECONCILE_INTERVAL_SECONDS": "0",
        **more,
    }


def _refusal(command: str, env: dict[str, str]) -> str:
    """What `steward COMMAND` says on stderr when it refuses (it must exit 4, at once, with one line)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STEWARD_")}
    done = subprocess.run(
        [*steward_command(), command],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == REFUSED, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"steward {command}: "), lines[0]
    return lines[0]


@pytest.mark.parametrize("command", ["run", "worker"])
def test_no_forge_configured_refuses_and_says_what_to_set(command: str, redis_claim: Claim) -> None:
    said = _refusal(command, {"STEWARD_REDIS_URL": redis_claim.url})
    assert "No forge is configured" in said
    assert "STEWARD_GITHUB_TOKEN" in said and "STEWARD_GITEA_URL" in said and "STEWARD_GITEA_TOKEN" in said


def test_a_receiver_with_nothing_to_receive_refuses(redis_claim: Claim) -> None:
    said = _refusal("serve", {"STEWARD_REDIS_URL": redis_claim.url})
    assert "No forge is configured to receive from" in said
    assert "STEWARD_GITHUB_WEBHOOK_SECRETS" in said and "STEWARD_GITEA_WEBHOOK_SECRETS" in said


@pytest.mark.parametrize("forge_kind", ["github", "gitea"])
def test_a_receiver_as_the_chart_deploys_it_needs_no_credentials(
    forge_kind: str, forge: SandboxServer, redis_claim: Claim
) -> None:
    """The Helm chart gives the receiver its webhook secrets and the shared ConfigMap (the App's id, Gitea's
    address), never the forge's credentials: it starts, and asks the forge nothing."""
    redis_claim.reset()
    admin = httpx2.Client(base_url=forge.url)
    admin.delete("/_sandbox/requests").raise_for_status()
    shared = (
        {"STEWARD_GITHUB_API_URL": forge.url, "STEWARD_GITHUB_APP_ID": "7302"}
        if forge_kind == "github"
        else {"STEWARD_GITEA_URL": forge.url}
    )
    env = {
        "STEWARD_REDIS_URL": redis_claim.url,
        **shared,
        f"STEWARD_{forge_kind.upper()}_WEBHOOK_SECRETS": SECRET,
        "STEWARD_PORT": str(free_port()),
    }
    with steward("serve", env=env) as serve:
        wait_up(f"http://127.0.0.1:{env['STEWARD_PORT']}/healthz", serve, "steward serve")
        assert admin.get("/_sandbox/requests").json() == []
    del env[f"STEWARD_{forge_kind.upper()}_WEBHOOK_SECRETS"]
    assert f"STEWARD_{forge_kind.upper()}_WEBHOOK_SECRETS is empty" in _refusal("serve", env)


@pytest.mark.parametrize("forge_kind", ["github", "gitea"])
@pytest.mark.parametrize("command", ["run", "serve"])
def test_a_receiving_forge_without_its_webhook_secret_refuses(
    command: str, forge_kind: str, forge: SandboxServer, redis_claim: Claim
) -> None:
    env = _env(forge_kind, forge.url, redis_claim.url)
    del env[f"STEWARD_{forge_kind.upper()}_WEBHOOK_SECRETS"]
    said = _refusal(command, env)
    assert f"STEWARD_{forge_kind.upper()}_WEBHOOK_SECRETS is empty" in said


def test_a_worker_receives_nothing_and_needs_no_webhook_secret(
    forge: SandboxServer, redis_claim: Claim
) -> None:
    redis_claim.reset()
    metrics = free_port()
    env = _env("gitea", forge.url, redis_claim.url, STEWARD_WORKER_METRICS_PORT=str(metrics))
    del env["STEWARD_GITEA_WEBHOOK_SECRETS"]
    with steward("worker", env=env) as worker:
        wait_up(f"http://127.0.0.1:{metrics}/healthz", worker, "steward worker")
        assert worker.popen.poll() is None, worker.output()[-2000:]


def test_half_a_gitea_configuration_refuses(redis_claim: Claim) -> None:
    said = _refusal("worker", {"STEWARD_REDIS_URL": redis_claim.url, "STEWARD_GITEA_URL": "http://x"})
    assert "STEWARD_GITEA_URL is set but STEWARD_GITEA_TOKEN is not" in said


@pytest.mark.parametrize("forge_kind", ["github", "gitea"])
@pytest.mark.parametrize("command", ["run", "serve", "worker"])
def test_a_token_the_forge_rejects_refuses(
    command: str, forge_kind: str, forge: SandboxServer, redis_claim: Claim
) -> None:
    redis_claim.reset()
    env = _env(forge_kind, forge.url, redis_claim.url, **{f"STEWARD_{forge_kind.upper()}_TOKEN": "wrong"})
    said = _refusal(command, env)
    name = "GitHub" if forge_kind == "github" else "Gitea"
    assert f"{name} rejected the token in STEWARD_{forge_kind.upper()}_TOKEN" in said
    assert ": 401" in said and "set it to a valid token of Steward's account" in said


def _pem(key: rsa.RSAPrivateKey, path: Path) -> Path:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return path


def test_an_app_key_the_forge_rejects_refuses_and_the_right_one_starts(
    forge: SandboxServer, redis_claim: Claim, tmp_path: Path
) -> None:
    redis_claim.reset()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    httpx2.post(
        f"{forge.url}/_sandbox/apps",
        json={"app_id": 7301, "slug": "steward-refuse", "public_key_pem": public.decode()},
    ).raise_for_status()
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    env = {
        "STEWARD_REDIS_URL": redis_claim.url,
        "STEWARD_GITHUB_API_URL": forge.url,
        "STEWARD_GITHUB_APP_ID": "7301",
        "STEWARD_GITHUB_PRIVATE_KEY_PATH": str(_pem(other, tmp_path / "other.pem")),
        "STEWARD_GITHUB_WEBHOOK_SECRETS": SECRET,
        "STEWARD_PORT": str(free_port()),
        "STEWARD_RECONCILE_ON_START": "false",
    }
    said = _refusal("serve", env)
    assert (
        "GitHub rejected the App's key in STEWARD_GITHUB_APP_ID and STEWARD_GITHUB_PRIVATE_KEY_PATH" in said
    )
    assert "(GET " in said and "/app: 401" in said
    env["STEWARD_GITHUB_PRIVATE_KEY_PATH"] = str(_pem(key, tmp_path / "right.pem"))
    with steward("serve", env=env) as serve:
        wait_up(f"http://127.0.0.1:{env['STEWARD_PORT']}/healthz", serve, "steward serve")


def test_a_forge_answering_5xx_is_asked_once_and_steward_starts(
    forge: SandboxServer, redis_claim: Claim
) -> None:
    """Both forges configured and both answering 503: one GET each, a warning each, and the receiver up."""
    redis_claim.reset()
    admin = httpx2.Client(base_url=forge.url)
    admin.delete("/_sandbox/requests").raise_for_status()
    for path in ("^/user$", "^/api/v1/user$"):
        admin.post("/_sandbox/faults", json={"method": "GET", "path": path, "status": 503, "times": 10})
    env = {**_env("github", forge.url, redis_claim.url), **_env("gitea", forge.url, redis_claim.url)}
    try:
        with steward("serve", env=env) as serve:
            wait_up(f"http://127.0.0.1:{env['STEWARD_PORT']}/healthz", serve, "steward serve")
            asked = [r["path"] for r in admin.get("/_sandbox/requests").json()]
            assert sorted(asked) == ["/api/v1/user", "/user"], asked
            said = serve.output()
            assert said.count("the forge did not answer; starting anyway") == 2, said
    finally:
        admin.delete("/_sandbox/faults").raise_for_status()


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_an_unreachable_forge_does_not_stop_steward(command: str, redis_claim: Claim) -> None:
    redis_claim.reset()
    metrics = free_port()
    env = {
        **_env("github", f"http://127.0.0.1:{free_port()}", redis_claim.url),
        "STEWARD_WORKER_METRICS_PORT": str(metrics),
    }
    with steward(command, env=env) as running:
        url = (
            f"http://127.0.0.1:{env['STEWARD_PORT']}/healthz"
            if command == "serve"
            else (f"http://127.0.0.1:{metrics}/healthz")
        )
        wait_up(url, running, f"steward {command}")
        assert "the forge did not answer; starting anyway" in running.output()
