"""Fixtures for the sandbox forge tests: a served sandbox, a webhook receiver, validators."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest

from bot.sandbox.server import SandboxServer

from .helpers import Capture, CaptureServer, OpenApiCheck, client, gitea_client

USERS = {"alice": "alice-token", "bob": "bob-token", "carol": "carol-token", "dave": "dave-token"}


@pytest.fixture
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(USERS) as server:
        yield server


@pytest.fixture
def alice(sandbox: SandboxServer) -> Iterator[httpx2.Client]:
    with client(sandbox, "alice-token") as c:
        yield c


@pytest.fixture
def g(sandbox: SandboxServer) -> Iterator[httpx2.Client]:
    """alice's client of the Gitea API (`/api/v1`)."""
    with gitea_client(sandbox, "alice-token") as c:
        yield c


@pytest.fixture
def repo(alice: httpx2.Client) -> str:
    """alice/demo, a public repository owned by alice."""
    assert alice.post("/user/repos", json={"name": "demo", "description": "a demo"}).status_code == 201
    return "/repos/alice/demo"


@pytest.fixture
def capture() -> Iterator[CaptureServer]:
    with CaptureServer(Capture()) as server:
        yield server


@pytest.fixture(scope="session")
def openapi() -> OpenApiCheck:
    return OpenApiCheck.load()
