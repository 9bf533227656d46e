"""The signing key as an operator handles it (issue 35, "Also"; docs/integrity.md "Keys"), on both forges.

- A pinned key (`STEWARD_SIGNING_KEY`) is not kept in Redis, which the internet-facing receiver shares
  (docs/deploy.md: "with a pinned key no key is in Redis at all"). Before: pinning the key a worker had kept
  in Redis, as docs/integrity.md says (`redis-cli GET steward-secret:signing-key > steward-signing.pem`), left
  that copy in Redis for good — and one an earlier version had kept as `steward:signing:key` stayed inside
  the receiver's `steward:*`. Now the first pinned start deletes the copy of the pinned key, under either
  name.
- An earlier key listed in `STEWARD_VERIFY_KEYS` with an end date (`;until=`): until then, what it signed
  verifies and is not rewritten; after it, nothing it signed is trusted — neither the records it signed before
  the end, nor one it signs after (a retired key may have leaked, and the sequence number in a signature is
  the signer's to choose) — and each is re-signed with the current key at its next event, quietly. Before:
  `steward verify` (and `steward forks`, the debug report) run with the operator's settings dropped the end
  dates and reported a retired key's records, a forgery signed after the end included, as verified.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import SecretStr

from bot.demo.threads import ThreadedWorker
from bot.records import sticky
from bot.records.signing import (
    LEGACY_REDIS_KEY,
    REDIS_KEY,
    Keyring,
    Place,
    fingerprint,
    load_private,
    parse_signature,
    private_pem,
    public_pem,
)
from tests.e2e.conftest import Steward
from tests.e2e.stack import steward_in_process
from tests.e2e.test_integrity_e2e import FORKS, rebuilt_notes, verify, writer

MARK = "<!-- steward:forks:reconciliation -->"
RECORD = "forks:reconciliation"
F1_RESOLVED = "| **F1** | Postgres or SQLite? | ✅ resolved | Postgres |"


def _stop(steward: Steward) -> None:
    for each in steward.workers:
        each.stop()


def _restart(steward: Steward, **settings: Any) -> None:
    """A worker started with the operator's new settings (the receiver keeps running and queueing)."""
    steward.settings = steward.settings.model_copy(update=settings)
    steward.workers.append(
        ThreadedWorker(steward.settings, handler_settings=steward.workers[0].handler_settings).start()
    )


def _record(steward: Steward, repo: str, number: int) -> dict[str, Any]:
    [found] = [c for c in steward.bot_comments(repo, number) if c["body"].startswith(MARK)]
    return found


def _signer(body: str) -> str:
    signature = parse_signature(body)
    assert signature is not None, body[:300]
    return f"ed25519:{signature.kid}"


def _private_keys_in(store: redis.Redis, *keys: Ed25519PrivateKey) -> list[str]:
    """The Redis keys whose values hold private key material: a PEM private key, or the raw or encoded bytes
    of one of ``keys``."""
    needles = [b"PRIVATE KEY"]
    for key in keys:
        needles.append(key.private_bytes_raw())
        needles.append(private_pem(key).split("\n")[1].encode())  # the PEM's base64 body
    found = []
    for name in store.scan_iter(count=1000):
        kind = store.type(name).decode()
        if kind == "string":
            values = [store.get(name) or b""]
        elif kind == "hash":
            values = [part for pair in store.hgetall(name).items() for part in pair]
        elif kind == "list":
            values = list(store.lrange(name, 0, -1))
        elif kind == "set":
            values = list(store.smembers(name))
        elif kind == "zset":
            values = list(store.zrange(name, 0, -1))
        else:
            values = [repr(store.xrange(name)).encode()] if kind == "stream" else []
        if any(needle in value for value in values for needle in needles):
            found.append(name.decode())
    return found


@pytest.mark.parametrize("kept_as", ["nothing", REDIS_KEY, LEGACY_REDIS_KEY])
def test_a_pinned_signing_key_leaves_no_private_key_in_redis(
    steward: Steward, tmp_path: Path, kept_as: str
) -> None:
    """``kept_as``: what Redis held when the operator pinned the key — nothing (a key made with `openssl
    genpkey`, Redis never had one), the key a worker kept (copied out as docs/integrity.md says), or that key
    under the name an earlier version kept it by."""
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=FORKS)
    steward.settle()
    before = _record(steward, repo, number)["body"]
    _stop(steward)
    store = redis.Redis.from_url(steward.redis_url)
    kept = store.get(REDIS_KEY)
    assert kept is not None, "a worker without a pinned key keeps its key in Redis"
    if kept_as == "nothing":
        store.delete(REDIS_KEY)
        pinned = Ed25519PrivateKey.generate()
    else:
        pinned = load_private(kept.decode())
        if kept_as == LEGACY_REDIS_KEY:
            store.rename(REDIS_KEY, LEGACY_REDIS_KEY)
    pem = tmp_path / "steward-signing.pem"
    pem.write_text(private_pem(pinned))
    _restart(steward, signing_key=SecretStr(str(pem)))
    m.comment(repo, number, "/decide F1 Postgres")
    asked = m.comment(repo, number, "/steward ping")
    steward.settle()
    assert _private_keys_in(store, pinned) == [], "no private key in the Redis the receiver shares"
    assert any(
        f"steward:reply:{asked}-" in c["body"] and "pong" in c["body"] for c in m.comments(repo, number)
    )
    record = _record(steward, repo, number)["body"]
    assert F1_RESOLVED in record
    assert _signer(record) == fingerprint(pinned.public_key())
    public = tmp_path / "steward.pub"
    public.write_text(public_pem(pinned.public_key()))
    done = verify(steward, f"{repo}#{number}", public)
    assert done.returncode == 0, done.stdout + done.stderr
    assert rebuilt_notes(steward, repo, number) == [], "re-signed quietly where the key changed"
    if kept_as != "nothing":
        assert _signer(before) == _signer(record), "the same key, pinned: what it signed before holds"


def operator_verify(
    steward: Steward, target: str, *, signing_key: Path, verify_keys: str
) -> subprocess.CompletedProcess[str]:
    """`steward verify` as the operator runs it: the keys from the workers' settings, no --public-key (in this
    process: tests/smoke runs the installed command)."""
    env = dict(
        STEWARD_REDIS_URL="redis://127.0.0.1:1/0",  # the settings name the keys: Redis is not asked
        STEWARD_SIGNING_KEY=str(signing_key),
        STEWARD_VERIFY_KEYS=verify_keys,
        STEWARD_GITHUB_API_URL=steward.settings.github_api_url,
        STEWARD_GITHUB_TOKEN="tok-maintainer",
        STEWARD_GITEA_URL=str(steward.settings.gitea_url),
        STEWARD_GITEA_TOKEN="tok-maintainer",
        STEWARD_LOG_LEVEL="warning",
    )
    argv = ["verify", target, "--forge", steward.forge, "--json", "--bot", "steward-bot"]
    return steward_in_process(argv, env)


def _rows(done: subprocess.CompletedProcess[str]) -> list[tuple[str, str, str]]:
    rows = json.loads(done.stdout)["records"]
    return [(row["record"], row["outcome"], row["key"]) for row in rows]


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_retired_key_verifies_until_its_end_date_and_nothing_it_signed_after(
    steward: Steward, tmp_path: Path
) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    writer(steward, repo)
    number = m.open_issue(repo, "Storage", body=FORKS)
    m.comment(repo, number, "/decide F1 Postgres")
    steward.settle()
    target = f"{repo}#{number}"
    # The key the first worker signed with is rotated out: a new key is pinned, and the old one's public half
    # is listed until an end date an hour away.
    _stop(steward)
    old = load_private(redis.Redis.from_url(steward.redis_url).get(REDIS_KEY).decode())
    new = Ed25519PrivateKey.generate()
    (old_pub := tmp_path / "old.pub").write_text(public_pem(old.public_key()))
    (new_pem := tmp_path / "new.pem").write_text(private_pem(new))
    (new_pub := tmp_path / "new.pub").write_text(public_pem(new.public_key()))
    was, now = fingerprint(old.public_key()), fingerprint(new.public_key())
    later = f"{old_pub};until={_iso(datetime.now(UTC) + timedelta(hours=1))}"
    _restart(steward, signing_key=SecretStr(str(new_pem)), verify_keys=[later])
    m.comment(repo, number, "Thanks, Postgres it is.")  # the thread's next event reads the record
    steward.settle()
    record = _record(steward, repo, number)["body"]
    assert F1_RESOLVED in record and _signer(record) == was, "it verified: not rewritten"
    done = operator_verify(steward, target, signing_key=new_pem, verify_keys=later)
    assert done.returncode == 0 and _rows(done) == [(RECORD, "verified", was)], done.stdout + done.stderr

    # The end date passes (here: the operator moves it to a second ago).
    _stop(steward)
    ended = f"{old_pub};until={_iso(datetime.now(UTC) - timedelta(seconds=1))}"
    done = operator_verify(steward, target, signing_key=new_pem, verify_keys=ended)
    assert done.returncode == 1, done.stdout + done.stderr
    assert _rows(done) == [(RECORD, "unknown-key", was)], "signed before its end, read after it: not trusted"
    _restart(steward, verify_keys=[ended])
    m.comment(repo, number, "Any news?")
    steward.settle()
    record = _record(steward, repo, number)["body"]
    assert F1_RESOLVED in record and _signer(record) == now, "re-derived, re-signed with the current key"
    assert rebuilt_notes(steward, repo, number) == [], "quietly: nobody changed it"
    done = operator_verify(steward, target, signing_key=new_pem, verify_keys=ended)
    assert done.returncode == 0 and _rows(done) == [(RECORD, "verified", now)], done.stdout + done.stderr

    # While Steward is down, whoever holds the retired key signs a record after its end date (valid under that
    # key, at this very place, with data of their own) and a writer puts it in.
    _stop(steward)
    [comment] = [c for c in steward.bot_comments(repo, number) if c["body"].startswith(MARK)]
    repo_id = int(m.call("GET", f"/repos/{repo}")["id"])
    place = Place(steward.forge, repo_id, "comment", int(comment["id"]), "forks", "reconciliation")
    data = sticky.unverified_data(record)
    assert isinstance(data, dict)
    body, _ = sticky.signed(Keyring(old), place, sticky.visible_text(record), {**data, "sources": [1, 2, 3]})
    steward.outsider.edit_comment(repo, int(comment["id"]), body)
    done = operator_verify(steward, target, signing_key=new_pem, verify_keys=ended)
    assert done.returncode == 1, done.stdout + done.stderr
    assert _rows(done) == [(RECORD, "unknown-key", was)], "signed after its end: never trusted"
    # Steward back: the edit's event re-derives the record from its sources and signs it with the current key.
    _restart(steward)
    steward.settle()
    record = _record(steward, repo, number)["body"]
    assert F1_RESOLVED in record and _signer(record) == now
    data = sticky.unverified_data(record)
    assert isinstance(data, dict) and data.get("sources") != [1, 2, 3], "the forged data is gone"
    [note] = rebuilt_notes(steward, repo, number)
    assert "was changed by @outsider; it was rebuilt" in note
    assert operator_verify(steward, target, signing_key=new_pem, verify_keys=ended).returncode == 0
    assert verify(steward, target, new_pub).returncode == 0, "and with only the current public key"
