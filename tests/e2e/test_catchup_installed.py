"""The catch-up covers every repository Steward is installed on, not only those it heard from (issue 40
item 1), end to end on both forges and as a GitHub App.

The catch-up used to walk the repositories that sent an event in the last 30 days, a list kept in Redis: a
quiet repository (or every repository, once Redis came back empty) was never caught up, and `steward
reconcile` said "No repository to reconcile". Now it asks the forge what Steward is installed on — the
token's repositories (`GET /user/repos` on GitHub and Gitea) or the App's installations and their
repositories — and covers each one where it may write.

Each test's Steward token belongs to a bot user of its own, so what the forge lists is this test's
repositories only (the session's sandbox holds every other test's too).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
import redis
from pydantic import SecretStr

from bot.config.settings import Settings
from bot.demo.threads import ThreadedWorker
from bot.sandbox.server import SandboxServer
from tests.e2e.conftest import Steward
from tests.e2e.stack import ROOT, ForgeUser, app_key, settle, wait_for
from tests.e2e.test_reconcile_e2e import REJECTED, _steward_down, _verdicts_by_anyone


def _reconcile(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`steward reconcile ARGS` as an operator runs it, with exactly the settings in ``env``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("STEWARD_")}
    base.update(
        STEWARD_RETRY_BASE_DELAY="0.05",
        STEWARD_LOG_LEVEL="warning",
        STEWARD_RECONCILE_QUOTA_FLOOR="0",
        STEWARD_RECONCILE_INSTALLED="true",
    )
    base.update(env)
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "reconcile", *args],
        env=base,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )


def _pongs(comments: list[dict[str, object]]) -> list[object]:
    return [c for c in comments if "pong" in str(c["body"])]


def _quiet_bot(steward: Steward) -> tuple[str, str]:
    """A bot user of this test's own, and its token."""
    login, token = f"quiet-{uuid.uuid4().hex[:6]}", f"tok-{uuid.uuid4().hex}"
    httpx2.post(
        f"{steward.sandbox.url}/_sandbox/users", json={"login": login, "token": token}
    ).raise_for_status()
    return login, token


def test_a_quiet_repository_is_caught_up(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    login, token = _quiet_bot(steward)
    m.add_collaborator(repo, login, "admin" if steward.forge == "gitea" else "push")
    # The worker (and the receiver, once back) are the same bot as the operator's `steward reconcile`: what
    # the run writes is Steward's own, not a person's event for the worker to answer again.
    steward.settings = steward.settings.model_copy(
        update={"github_token": SecretStr(token), "gitea_token": SecretStr(token), "bot_login": login}
    )
    for worker in steward.workers:
        worker.stop()
    steward.workers = [ThreadedWorker(steward.settings).start()]
    readonly = steward.new_repo()
    m.add_collaborator(readonly, login, "pull")  # listed, but Steward may not write there: left out
    number = m.open_issue(repo, "a question")
    steward.settle()
    # Nothing came from the repository for 30 days (or Redis lost the list): Steward has not heard of it.
    redis.Redis.from_url(steward.redis_url).delete(f"steward:repos:{steward.forge}")
    with _steward_down(steward):
        m.comment(repo, number, "/steward ping")
        bug = m.open_issue(repo, "Login button does nothing", REJECTED, labels=["bug", "refine"])
        wait_for(
            lambda: m.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries/idle").get("idle"),
            what="the sandbox's deliveries",
        )
    env = {"STEWARD_REDIS_URL": steward.redis_url}
    if steward.forge == "github":
        env |= {"STEWARD_GITHUB_API_URL": steward.settings.github_api_url, "STEWARD_GITHUB_TOKEN": token}
    else:
        env |= {"STEWARD_GITEA_URL": str(steward.settings.gitea_url), "STEWARD_GITEA_TOKEN": token}
    run = _reconcile(env)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "No repository to reconcile" not in run.stdout, run.stdout
    assert "Reconciling 1 repository" in run.stdout, run.stdout
    # The job the comment's delivery would have queued runs on the worker.
    wait_for(lambda: _pongs(m.comments(repo, number)), timeout=60, what="the answer to the ping")
    steward.settle(60)
    assert len(_pongs(m.comments(repo, number))) == 1
    # The bug labelled for refinement meanwhile is refined by the run itself, once.
    [verdict] = _verdicts_by_anyone(steward, repo, bug)
    assert "status: rejected" in verdict
    assert "refinement:needs-info" in m.labels_of(repo, bug)


APP_ID = 7301
USERS = {"owner": "tok-owner", "visitor": "tok-visitor"}


@pytest.fixture
def app_sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(USERS) as server:
        yield server


def test_an_app_catches_up_every_repository_of_its_installations(
    app_sandbox: SandboxServer, redis_url: str, tmp_path: Path
) -> None:
    key_path, public = app_key(tmp_path)
    admin = httpx2.Client(base_url=app_sandbox.url)
    admin.post(
        "/_sandbox/apps", json={"app_id": APP_ID, "slug": "steward-app", "public_key_pem": public}
    ).raise_for_status()
    owner = ForgeUser(app_sandbox.url, "owner", USERS["owner"])
    quiet = [owner.create_repo() for _ in range(3)]
    outside = owner.create_repo()  # not in the installation
    admin.post(
        f"/_sandbox/apps/{APP_ID}/installations",
        json={"owner": "owner", "repos": [r.split("/")[1] for r in quiet]},
    ).raise_for_status()
    visitor = ForgeUser(app_sandbox.url, "visitor", USERS["visitor"])
    # No webhook reaches Steward: every repository is quiet.
    pinged = {r: owner.open_issue(r, "a question") for r in [*quiet, outside]}
    for r, number in pinged.items():
        visitor.comment(r, number, "/steward ping")

    settings = Settings(
        redis_url=redis_url,
        github_api_url=app_sandbox.url,
        github_app_id=str(APP_ID),
        github_private_key_path=key_path,
        retry_base_delay=0.05,
        reconcile_quota_floor=0.0,
        reconcile_interval_seconds=0,
    )
    worker = ThreadedWorker(settings).start()
    try:
        env = {
            "STEWARD_REDIS_URL": redis_url,
            "STEWARD_GITHUB_API_URL": app_sandbox.url,
            "STEWARD_GITHUB_APP_ID": str(APP_ID),
            "STEWARD_GITHUB_PRIVATE_KEY_PATH": str(key_path),
        }
        run = _reconcile(env, "--since", "1h")
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        assert "Reconciling 3 repositories" in run.stdout, run.stdout
        for r in quiet:
            wait_for(lambda r=r: _pongs(owner.comments(r, pinged[r])), timeout=60, what=f"the answer on {r}")
        settle(app_sandbox.url, redis_url, 60)
        for r in quiet:
            assert len(_pongs(owner.comments(r, pinged[r]))) == 1
        assert not _pongs(owner.comments(outside, pinged[outside])), "not installed there: not answered"
    finally:
        worker.stop()
