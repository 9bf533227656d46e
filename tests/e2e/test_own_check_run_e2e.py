"""Steward as a GitHub App posts its `steward/*` results as check runs too (issue 35 item 7), and another
app's check run of the same name is answered at once with Steward's own.

Before: Steward posted commit statuses only, and a required *status* cannot be pinned to its source (anyone
with write access can post one). A check run can be posted by a GitHub App only (a token gets 403 "You must
authenticate via a GitHub App."), and branch protection can pin a required check to its App. Now, as an App,
Steward posts both (the status keeps a required status set up before working), and a check run named like
one of its own from another app is followed by Steward's own run again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from bot.config.settings import Settings
from bot.demo.threads import ThreadedServer, ThreadedWorker
from bot.receiver.app import create_app
from bot.sandbox.server import SandboxServer
from tests.e2e.stack import SECRET, TEST_CONFIG_PATHS, ForgeUser, app_key, settle, wait_for

STEWARD_APP, OTHER_APP = 7301, 7302
USERS = {"owner": "tok-owner"}
CONTEXT = "steward/config"


@pytest.fixture
def app_sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(USERS) as server:
        yield server


def installation_token(admin: httpx2.Client, app_id: int, key_path: Path, installation: int) -> str:
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    now = int(time.time())
    signed = jwt.encode({"iat": now - 60, "exp": now + 540, "iss": str(app_id)}, key, algorithm="RS256")  # type: ignore[arg-type]
    minted = admin.post(
        f"/app/installations/{installation}/access_tokens", headers={"Authorization": f"Bearer {signed}"}
    )
    minted.raise_for_status()
    return str(minted.json()["token"])


def latest_run(owner: ForgeUser, repo: str, sha: str) -> dict[str, Any] | None:
    runs = owner.call("GET", f"/repos/{repo}/commits/{sha}/check-runs?filter=all&check_name={CONTEXT}")
    return max(runs["check_runs"], key=lambda r: r["id"], default=None)


def test_as_an_app_steward_posts_check_runs_and_answers_another_app_s(
    app_sandbox: SandboxServer, redis_url: str, tmp_path: Path
) -> None:
    admin = httpx2.Client(base_url=app_sandbox.url, timeout=30)
    owner = ForgeUser(app_sandbox.url, "owner", USERS["owner"])
    repo = owner.create_repo()
    keys = {}
    installations = {}
    for app_id, slug in ((STEWARD_APP, "steward-app"), (OTHER_APP, "other-ci")):
        (tmp_path / slug).mkdir()
        keys[app_id], public = app_key(tmp_path / slug)
        made = admin.post("/_sandbox/apps", json={"app_id": app_id, "slug": slug, "public_key_pem": public})
        made.raise_for_status()
        inst = admin.post(
            f"/_sandbox/apps/{app_id}/installations", json={"owner": "owner", "repos": [repo.split("/")[1]]}
        )
        inst.raise_for_status()
        installations[app_id] = int(inst.json()["id"])
    settings = Settings(
        redis_url=redis_url,
        github_api_url=app_sandbox.url,
        github_app_id=str(STEWARD_APP),
        github_private_key_path=keys[STEWARD_APP],
        github_webhook_secrets=SECRET,  # type: ignore[arg-type]
        retry_base_delay=0.05,
        reconcile_interval_seconds=0,
    )
    receiver = ThreadedServer(create_app(settings)).start()
    worker = ThreadedWorker(settings).start()
    try:
        owner.add_hook(repo, f"{receiver.url}/webhooks/github")
        # A configuration file Steward cannot read, on a branch: its result on the commit is a failure.
        main = owner.call("GET", f"/repos/{repo}/git/ref/heads/main")["object"]["sha"]
        owner.call("POST", f"/repos/{repo}/git/refs", {"ref": "refs/heads/change", "sha": main})
        sha = owner.put_file(repo, TEST_CONFIG_PATHS["github"], "bugfix: [unclosed\n", branch="change")
        settle(app_sandbox.url, redis_url)
        run = wait_for(lambda: latest_run(owner, repo, sha), what="Steward's check run")
        assert (run["app"]["slug"], run["status"], run["conclusion"]) == (
            "steward-app",
            "completed",
            "failure",
        )
        assert run["output"]["title"], "the check run says why"
        [status] = [
            s for s in owner.call("GET", f"/repos/{repo}/commits/{sha}/statuses") if s["context"] == CONTEXT
        ]
        assert (status["state"], status["creator"]["login"]) == ("failure", "steward-app[bot]"), (
            "and a status"
        )
        # Only an App may post a check run: a token is refused.
        refused = owner.client.post(f"/repos/{repo}/check-runs", json={"name": CONTEXT, "head_sha": sha})
        assert refused.status_code == 403 and "GitHub App" in refused.text
        # Another app's run of Steward's name: Steward's own run follows at once.
        other = installation_token(admin, OTHER_APP, keys[OTHER_APP], installations[OTHER_APP])
        forged = {"name": CONTEXT, "head_sha": sha, "status": "completed", "conclusion": "success"}
        answer = admin.post(
            f"/repos/{repo}/check-runs", json=forged, headers={"Authorization": f"token {other}"}
        )
        assert answer.status_code == 201, answer.text
        settle(app_sandbox.url, redis_url)
        again = wait_for(
            lambda: (
                (r := latest_run(owner, repo, sha)) is not None and r["app"]["slug"] == "steward-app" and r
            ),
            what="Steward's own check run again",
        )
        assert again["conclusion"] == "failure" and again["id"] > answer.json()["id"]
        # Steward's own runs are not answered again (one of its own after the forged one, none more).
        runs = owner.call("GET", f"/repos/{repo}/commits/{sha}/check-runs?filter=all&check_name={CONTEXT}")
        assert [r["app"]["slug"] for r in sorted(runs["check_runs"], key=lambda r: r["id"])] == [
            "steward-app",
            "other-ci",
            "steward-app",
        ]
    finally:
        worker.stop()
        receiver.stop()
