"""The receiver's early look at a delivery's sender (bot.receiver.app.Forge.sender, read before the full parse
to drop Steward's own deliveries) names the sender the normaliser names, for every fixture and for hostile
mutations of them: it never drops a delivery the full path would have queued for someone else."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.events.gitea import normalise_gitea
from bot.events.github import normalise_github
from bot.receiver.app import GITEA, GITHUB
from tests.fuzz.test_receiver_fuzz import GITEA as GITEA_PAYLOADS
from tests.fuzz.test_receiver_fuzz import GITHUB as GITHUB_PAYLOADS
from tests.fuzz.test_receiver_fuzz import hostile, mutated


def _normalised_sender(forge: str, event: str, body: bytes) -> str | None:
    """The sender the full path reads, or None when it would not queue the delivery at all."""
    try:
        payload = orjson.loads(body)
        if forge == "github":
            return normalise_github(event, "d", payload).sender
        return normalise_gitea(event, "d", payload).sender
    except Exception:
        return None


def _check(forge: str, event: str, body: bytes) -> None:
    early = (GITHUB if forge == "github" else GITEA).sender(body)
    full = _normalised_sender(forge, event, body)
    if full is not None:
        assert early == full, (forge, event, body[:300])


@pytest.mark.parametrize(("event", "payload"), GITHUB_PAYLOADS, ids=[e for e, _ in GITHUB_PAYLOADS])
def test_github_fixtures(event: str, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    _check("github", event, body)
    assert GITHUB.sender(body) == (payload.get("sender") or {}).get("login", "")


@pytest.mark.parametrize(("event", "payload"), GITEA_PAYLOADS, ids=[e for e, _ in GITEA_PAYLOADS])
def test_gitea_fixtures(event: str, payload: dict[str, Any]) -> None:
    _check("gitea", event, json.dumps(payload).encode())


SENDERS = st.one_of(
    hostile,
    st.fixed_dictionaries({}, optional={"login": hostile, "username": hostile, "type": hostile}),
    st.fixed_dictionaries({"login": st.text(max_size=20)}, optional={"username": st.text(max_size=20)}),
)


@settings(max_examples=300, suppress_health_check=list(HealthCheck), database=None)
@given(forge=st.sampled_from(["github", "gitea"]), data=st.data())
def test_hostile_senders_and_payloads(forge: str, data: st.DataObject) -> None:
    event, body = data.draw(mutated(GITHUB_PAYLOADS if forge == "github" else GITEA_PAYLOADS))
    _check(forge, event, body)
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        return  # json.dumps wrote a NaN or an infinity: not JSON, the full path answers 400
    if isinstance(payload, dict):
        payload["sender"] = data.draw(SENDERS)
        _check(forge, event, json.dumps(payload).encode())
