"""The read-only forge commands (`steward verify`, `steward forks`, `steward debug-report`) say what went
wrong in one sentence that names the variable or URL and what to do, with the shared exit codes (issue 37 §2):
no forge configured 4, a token the forge rejects 4 (was "who am I: 401"), the forge down 3 (was "GET /user:
ClientConnectorError"), a missing issue 5 (was 3, "forge unreachable"). The installed entry point, against
the sandbox, on both forges."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from bot.demo.scratch_redis import Claim
from bot.demo.threads import free_port
from bot.sandbox.server import SandboxServer
from tests.e2e.stack import ForgeUser
from tests.smoke.stack import steward_command

USERS = {"owner": "cli-owner-token", "steward-bot": "cli-bot-token"}
COMMANDS = ["verify", "forks", "debug-report"]


@pytest.fixture(scope="module")
def forge() -> Iterator[SandboxServer]:
    with SandboxServer(USERS) as server:
        yield server


@pytest.fixture(scope="module")
def public_key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("key") / "steward.pub"
    key = ed25519.Ed25519PrivateKey.generate().public_key()
    path.write_bytes(
        key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return path


def _env(kind: str, url: str, redis_url: str, token: str = USERS["steward-bot"]) -> dict[str, str]:
    where = {"STEWARD_GITHUB_API_URL": url} if kind == "github" else {"STEWARD_GITEA_URL": url}
    return {
        "STEWARD_REDIS_URL": redis_url,
        **where,
        f"STEWARD_{kind.upper()}_TOKEN": token,
        "STEWARD_RETRY_ATTEMPTS": "1",
        "STEWARD_HTTP_TIMEOUT_SECONDS": "3",
    }


def _run(command: str, target: str, env: dict[str, str], public_key: Path) -> tuple[int, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STEWARD_")}
    extra = ["--public-key", str(public_key)] if command == "verify" else []
    done = subprocess.run(
        [*steward_command(), command, target, *extra],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert "Traceback" not in done.stderr and done.stdout == "", (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"steward {command}: "), lines[0]
    return done.returncode, lines[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_no_forge_configured(command: str, redis_claim: Claim, public_key: Path) -> None:
    code, said = _run(command, "owner/repo#1", {"STEWARD_REDIS_URL": redis_claim.url}, public_key)
    assert code == 4
    assert "no forge is configured: set STEWARD_GITHUB_TOKEN" in said and "STEWARD_GITEA_URL" in said


@pytest.mark.parametrize("kind", ["github", "gitea"])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_token_the_forge_rejects(
    command: str, kind: str, forge: SandboxServer, redis_claim: Claim, public_key: Path
) -> None:
    env = _env(kind, forge.url, redis_claim.url, token="wrong-token")
    code, said = _run(command, "owner/repo#1", env, public_key)
    name = "GitHub" if kind == "github" else "Gitea"
    assert code == 4, said
    assert f"{name} rejected the credentials in STEWARD_{kind.upper()}_TOKEN (401" in said
    assert "set it to a valid token of Steward's account" in said


@pytest.mark.parametrize("kind", ["github", "gitea"])
@pytest.mark.parametrize("command", COMMANDS)
def test_the_forge_down(command: str, kind: str, redis_claim: Claim, public_key: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    code, said = _run(command, "owner/repo#1", _env(kind, down, redis_claim.url), public_key)
    name = "GitHub" if kind == "github" else "Gitea"
    variable = "STEWARD_GITHUB_API_URL" if kind == "github" else "STEWARD_GITEA_URL"
    assert code == 3, said
    assert f"{name} did not answer at {down}" in said and f"check {variable}" in said


@pytest.mark.parametrize("kind", ["github", "gitea"])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_issue_is_not_found_not_unreachable(
    command: str, kind: str, forge: SandboxServer, redis_claim: Claim, public_key: Path
) -> None:
    owner = ForgeUser(forge.url, "owner", USERS["owner"], kind)
    repo = owner.create_repo()
    owner.add_collaborator(repo, "steward-bot", "admin")
    code, said = _run(command, f"{repo}#999", _env(kind, forge.url, redis_claim.url), public_key)
    name = "GitHub" if kind == "github" else "Gitea"
    assert code == 5, said
    assert f"{repo}#999 was not found on {name} at {forge.url}" in said
    assert "check the name and number" in said
