"""The receiver, which faces the internet, under the Redis ACL docs/deploy.md gives it (issue 35, "Also"), on
both forges: it takes signed deliveries and a worker answers them, while the key Steward keeps in Redis when
none is pinned (and anything outside `arq:*` / `steward:*`) is out of its reach. Before, that key was
`steward:signing:key`, inside any pattern the receiver needs."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.demo.threads import ThreadedServer, ThreadedWorker, free_port
from bot.receiver.app import create_app
from tests.e2e.conftest import USERS, make_settings
from tests.e2e.stack import ForgeUser, settle, wait_for

# Exactly the lines docs/deploy.md gives (its test keeps them the same).
RECEIVER_ACL = "user steward-receiver on >receiver-pw ~arq:* ~steward:* &* +@all -@dangerous +info"
WORKER_ACL = "user steward-worker on >worker-pw ~* &* +@all -@dangerous +info"


@pytest.fixture
def acl_redis(tmp_path: Path) -> Iterator[int]:
    port = free_port()
    acl = tmp_path / "users.acl"
    acl.write_text(f"user default off\n{RECEIVER_ACL}\n{WORKER_ACL}\n")
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--aclfile", str(acl)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def answers() -> bool:
        try:
            return bool(redis.Redis(port=port, username="steward-worker", password="worker-pw").ping())
        except redis.RedisError:
            return False

    wait_for(answers, timeout=20, what="the ACL Redis")
    yield port
    proc.terminate()
    proc.wait(20)


@pytest.mark.parametrize("flavor", ["github", "gitea"])
def test_the_receiver_works_under_its_acl_and_cannot_read_the_signing_key(
    sandbox: object, acl_redis: int, flavor: str
) -> None:
    port = acl_redis
    worker_url = f"redis://steward-worker:worker-pw@127.0.0.1:{port}/0"
    receiver_url = f"redis://steward-receiver:receiver-pw@127.0.0.1:{port}/0"
    url = sandbox.url  # type: ignore[attr-defined]
    worker = ThreadedWorker(make_settings(url, worker_url)).start()
    receiver = ThreadedServer(create_app(make_settings(url, receiver_url))).start()
    try:
        names = ("steward-secret:signing-key", "steward:signing:key")  # today's name, and the one before

        def made() -> list[str]:
            assert worker.error is None, repr(worker.error)
            store = redis.Redis.from_url(worker_url)
            return [name for name in names if store.exists(name)]

        kept = wait_for(made, what="the worker's key in Redis")
        # The receiver's user cannot read it.
        for name in kept:
            with pytest.raises(redis.exceptions.NoPermissionError):
                redis.Redis.from_url(receiver_url).get(name)
        owner = ForgeUser(url, "maintainer", USERS["maintainer"], flavor)
        repo = owner.create_repo()
        owner.add_collaborator(repo, "steward-bot", "admin" if flavor == "gitea" else "push")
        owner.add_hook(repo, f"{receiver.url}{owner.webhook_path}")
        number = owner.open_issue(repo, "ping?")
        said = owner.comment(repo, number, "/steward ping")
        settle(url, worker_url)
        replies = [c["body"] for c in owner.comments(repo, number) if f"steward:reply:{said}-" in c["body"]]
        assert replies and "pong" in replies[0]
    finally:
        receiver.stop()
        worker.stop()


def test_the_acl_lines_are_the_ones_docs_deploy_gives() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "deploy.md").read_text()
    for line in (RECEIVER_ACL, WORKER_ACL):
        assert line.replace("receiver-pw", "RECEIVER-PASSWORD").replace("worker-pw", "WORKER-PASSWORD") in doc
