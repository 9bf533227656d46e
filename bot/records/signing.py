"""Signed records (DESIGN §3.13): every data block Steward keeps in a comment or an issue body is signed with
Steward's Ed25519 key, so that anyone with the public key can check it and only Steward can write one.

The signature covers the block exactly as written (the JSON text of ``<!-- steward:data … -->``), its marker
(kind and key), where it lives (the forge, the repository's id, whether it is a comment or an issue body, and
that comment's or issue's id — ids survive renames and transfers, names and numbers do not), a sequence
number that only grows, and the key id. It is written on the line after the data block:

    <!-- steward:sig v1 kid=<key id> seq=<sequence> sig=<base64url signature> -->

A block read back is one of:

- ``verified``: signed by a key Steward knows, for this very place, and not older than the last one Steward
  wrote there (when it remembers);
- ``legacy``: no signature, in a comment or issue the forge says was created (and, for a comment, last
  edited) before Steward started signing — written by a version that did not sign;
- ``tampered``: a signature that does not match under a key Steward holds, or none where there must be one;
- ``replayed``: validly signed, but older than what Steward last wrote there (pasted back from the edit
  history);
- ``unknown-key``: signed with a key id Steward does not hold (a key lost with Redis, or any id a person
  wrote);
- ``missing``: no data block at all.

Only ``verified`` data is trusted (``bot.records.sticky.Record.trusted``). Every other block is re-derived
from its sources (DESIGN rule 13: re-derive, never trust); ``legacy`` and ``unknown-key`` quietly, the
others with a note in the thread (docs/integrity.md).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
import time
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from bot.queue.locks import LuaScript
from bot.records.signing_since import StartMemory, remembered_start, signing_start
from bot.telemetry import logs

log = logs.get("steward.signing")

Outcome = Literal["verified", "legacy", "tampered", "replayed", "unknown-key", "missing"]
TRUSTED: frozenset[Outcome] = frozenset({"verified"})
# Re-derived without a note: nobody can be shown to have changed them (docs/integrity.md).
QUIET: frozenset[Outcome] = frozenset({"legacy", "unknown-key"})
Container = Literal["comment", "issue"]

SIG_RE = re.compile(
    r"^<!-- steward:sig v1 kid=(?P<kid>[0-9a-f]{16}) seq=(?P<seq>\d{1,20}) "
    r"sig=(?P<sig>[A-Za-z0-9_-]{86}) -->$",
    re.MULTILINE,
)
# The key a worker keeps in Redis when none is pinned, outside the `steward:*` keys the receiver may read
# (docs/deploy.md, "A Redis ACL for the receiver"); where an earlier version kept it (moved at a start).
REDIS_KEY = "steward-secret:signing-key"
LEGACY_REDIS_KEY = "steward:signing:key"
REDIS_SEQ = "steward:signing:seq"


@dataclass(frozen=True)
class Place:
    """Where a block lives and what it is."""

    forge: str
    repo_id: int
    container: Container
    id: int
    kind: str
    key: str

    @property
    def ident(self) -> str:
        return f"{self.forge}:{self.repo_id}:{self.container}:{self.id}:{self.kind}:{self.key}"


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def fingerprint(public: Ed25519PublicKey) -> str:
    """What people compare: ``ed25519:`` and the key id (the first 64 bits of the raw key's SHA-256)."""
    return f"ed25519:{key_id(public)}"


def public_pem(public: Ed25519PublicKey) -> str:
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def message(place: Place, data_text: str, seq: int, kid: str) -> bytes:
    """The bytes a signature covers."""
    fields = (
        "steward-record-v1",
        place.forge,
        str(place.repo_id),
        place.container,
        str(place.id),
        place.kind,
        place.key,
        str(seq),
        kid,
        data_text,
    )
    return "\n".join(fields).encode()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Signature:
    kid: str
    seq: int
    sig: bytes

    def line(self) -> str:
        return f"<!-- steward:sig v1 kid={self.kid} seq={self.seq} sig={_b64(self.sig)} -->"


def parse_signature(body: str) -> Signature | None:
    found = SIG_RE.search(body)
    if found is None:
        return None
    try:
        return Signature(found.group("kid"), int(found.group("seq")), _unb64(found.group("sig")))
    except ValueError:
        return None


def load_private(value: str) -> Ed25519PrivateKey:
    """A PEM private key, given as the PEM text itself or as the path of a file holding it."""
    text = value if "-----BEGIN" in value else Path(value).expanduser().read_text()
    key = serialization.load_pem_private_key(text.encode(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("STEWARD_SIGNING_KEY is not an Ed25519 private key")
    return key


def verify_key(value: str) -> tuple[Ed25519PublicKey, float | None]:
    """One ``STEWARD_VERIFY_KEYS`` entry: a public key (PEM text or file path), optionally followed by
    ``;until=<ISO-8601 time>`` — after it, records that key signed are re-signed on their next event."""
    head, sep, tail = value.rpartition(";until=")
    if not sep:
        return load_public(value), None
    until = parse_time(tail.strip())
    if until is None:
        raise ValueError(f"STEWARD_VERIFY_KEYS: {tail.strip()!r} is not a time")
    return load_public(head), until


def load_public(value: str) -> Ed25519PublicKey:
    """A PEM public key (or a private key, whose public half is taken), as text or as a file path."""
    text = value if "-----BEGIN" in value else Path(value).expanduser().read_text()
    if "PRIVATE KEY" in text:
        return load_private(text).public_key()
    key = serialization.load_pem_public_key(text.encode())
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 public key")
    return key


def private_pem(key: Ed25519PrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


class SeqMemory(Protocol):
    """The last sequence number Steward wrote at each place (a cache: it only adds replay detection)."""

    async def last(self, place: Place) -> int | None: ...

    async def note(self, place: Place, seq: int) -> None: ...


class LocalMemory:
    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    async def last(self, place: Place) -> int | None:
        return self._seen.get(place.ident)

    async def note(self, place: Place, seq: int) -> None:
        self._seen[place.ident] = max(seq, self._seen.get(place.ident, 0))


class RedisMemory:
    """In Redis (``steward:signing:seq``). The keyring is the process's, and an asyncio Redis client belongs
    to the event loop that made it: a caller on another loop (a tool, a test) gets a client of its own."""

    def __init__(self, redis: Any) -> None:
        self._redis = redis
        self._home = _running_loop()
        self._others: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def _client(self) -> Any:
        loop = _running_loop()
        if loop is None or loop is self._home:
            return self._redis
        found = self._others.get(loop)
        if found is None:
            pool = self._redis.connection_pool
            found = type(self._redis)(connection_pool=type(pool)(**pool.connection_kwargs))
            self._others[loop] = found
        return found

    async def last(self, place: Place) -> int | None:
        value = await self._client().hget(REDIS_SEQ, place.ident)
        return int(value) if value is not None else None

    async def note(self, place: Place, seq: int) -> None:
        # Read, compare and write in one script: one round trip, and two writers never lower the number.
        await _NOTE_SEQ(self._client(), [REDIS_SEQ], place.ident, str(seq))


# Raises a place's last sequence number to ARGV[2] unless it is higher already (numbers are microseconds,
# 16 digits: exact in Lua's doubles).
_NOTE_SEQ = LuaScript("""
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current == false or tonumber(ARGV[2]) > tonumber(current) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0
""")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# Signatures a keyring remembers as holding (``Keyring.check``): a few hundred bytes each.
HELD_SIGNATURES = 4096


class Keyring:
    """Steward's signing key, the public keys it accepts (its own and earlier ones, for rotation), when it
    started signing, and what it remembers of the sequence numbers it wrote."""

    def __init__(
        self,
        private: Ed25519PrivateKey | None,
        public: Sequence[Ed25519PublicKey] = (),
        *,
        since: float = 0.0,
        memory: SeqMemory | None = None,
    ) -> None:
        self.private = private
        keys = [private.public_key()] if private is not None else []
        keys.extend(public)
        self.public: dict[str, Ed25519PublicKey] = {key_id(k): k for k in keys}
        # Earlier keys' end dates (key id -> seconds since the epoch): after it, what that key signed is no
        # longer trusted — it reads as signed by an unknown key, and is re-derived and re-signed quietly.
        self.until: dict[str, float] = {}
        # 0: not known (a verifier: an unsigned block reads as legacy anywhere); ``NO_LEGACY``: nowhere.
        self.since = since
        # The operator pinned the signing key (``STEWARD_SIGNING_KEY``); False: Steward keeps it in Redis.
        self.pinned = False
        self.memory: SeqMemory = memory if memory is not None else LocalMemory()
        self._last_seq = 0
        # Signatures that held, by (key id, signature, digest of the signed bytes): the same record is read
        # at every event on its thread (the verdict, the sticky comment it updates), and an Ed25519 check
        # costs far more than the digest. Only a holding signature is kept; a key no longer accepted is
        # asked of ``public`` first, so rotation still refuses it.
        self._held: OrderedDict[tuple[str, bytes, bytes], None] = OrderedDict()

    @property
    def kid(self) -> str:
        if self.private is None:
            raise RuntimeError("this keyring only verifies (no signing key)")
        return key_id(self.private.public_key())

    @property
    def fingerprint(self) -> str:
        if self.private is None:
            return ", ".join(f"ed25519:{kid}" for kid in self.public)
        return fingerprint(self.private.public_key())

    def next_seq(self) -> int:
        """Microseconds since the epoch, strictly growing within the process: it grows across restarts and a
        Redis flush too (writes on one place are serialised by its lock)."""
        self._last_seq = max(self._last_seq + 1, time.time_ns() // 1000)
        return self._last_seq

    def sign(self, place: Place, data_text: str, *, after: int = 0) -> Signature:
        """``after``: the last sequence number written at ``place`` as Redis remembers it — the new one is
        above it whatever this worker's clock says, so a worker whose clock is behind another's never writes
        a record that reads as a replay of the one before (issue 35, "Also")."""
        if self.private is None:
            raise RuntimeError("this keyring only verifies (no signing key)")
        seq = max(self.next_seq(), after + 1)
        self._last_seq = max(self._last_seq, seq)
        return Signature(self.kid, seq, self.private.sign(message(place, data_text, seq, self.kid)))

    def check(self, place: Place, data_text: str, signature: Signature) -> Outcome:
        """Whether the signature holds (without the replay check, which needs the memory)."""
        public = self.public.get(signature.kid)
        if public is None:
            return "unknown-key"
        until = self.until.get(signature.kid)
        if until is not None and time.time() > until:
            return "unknown-key"  # a retired key (STEWARD_VERIFY_KEYS `;until=`): re-derived, re-signed
        signed = message(place, data_text, signature.seq, signature.kid)
        seen = (signature.kid, signature.sig, hashlib.sha256(signed).digest())
        if seen in self._held:
            self._held.move_to_end(seen)
            return "verified"
        try:
            public.verify(signature.sig, signed)
        except InvalidSignature:
            return "tampered"
        self._held[seen] = None
        if len(self._held) > HELD_SIGNATURES:
            self._held.popitem(last=False)
        return "verified"


def parse_time(value: str) -> float | None:
    from datetime import datetime

    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


# --- the process's keyring --------------------------------------------------------------------------------

_current: Keyring | None = None


def install(keyring: Keyring) -> None:
    global _current
    _current = keyring


def installed() -> Keyring | None:
    """The keyring installed in this process, if any (``current`` without making one)."""
    return _current


def restore(mine: Keyring, previous: Keyring | None) -> None:
    """Put ``previous`` back if ``mine`` is still the process's keyring: what a worker running in a thread
    (the demo, the tests) installed does not outlive it, nor does the Redis its keyring reads."""
    global _current
    if _current is mine:
        _current = previous


def current() -> Keyring:
    """The keyring this process signs with. Without one installed (unit tests, tools that only render), an
    ephemeral key is made once: nothing it signs verifies after the process ends."""
    global _current
    if _current is None:
        log.warning("no signing key installed: using a throw-away key for this process")
        _current = Keyring(Ed25519PrivateKey.generate())
    return _current


def since_of(value: str | None) -> float | None:
    """``STEWARD_SIGNING_SINCE`` (an ISO-8601 time, or seconds since the epoch) in seconds; None: unset."""
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        found = parse_time(value)
        if found is None:
            raise ValueError(f"STEWARD_SIGNING_SINCE is not a time: {value!r}") from None
        return found


async def keyring_from(
    signing_key: str | None,
    verify_keys: Sequence[str],
    redis: Any,
    *,
    since: float | None = None,
    state: StartMemory | None = None,
    warn: bool = True,
) -> Keyring:
    """The keyring of a worker: ``STEWARD_SIGNING_KEY`` when set, else the key kept in Redis (made at the
    first start, the same for every worker sharing that Redis), signing since ``signing_start``."""
    entries = [verify_key(value) for value in verify_keys]
    public = [key for key, _ in entries]
    private, _ = await signing_key_of(signing_key, redis)
    # Redis remembers the sequence numbers of records Steward signed: it signed before.
    signed_before = await redis.exists(REDIS_SEQ) > 0
    start = await signing_start(redis, since, state, signed_before=signed_before, warn=warn)
    keyring = Keyring(private, public, since=start, memory=RedisMemory(redis))
    keyring.until = {key_id(key): until for key, until in entries if until is not None}
    log.info("signing records", key=keyring.fingerprint, since=start)
    return keyring


async def signing_key_of(signing_key: str | None, redis: Any) -> tuple[Ed25519PrivateKey, bool]:
    """The key to sign with: ``STEWARD_SIGNING_KEY`` when set, else the one kept in Redis (made now when none
    is: then the second value is True)."""
    if signing_key:
        private = load_private(signing_key)
        await _forget_kept(redis, private)
        return private, False
    if await redis.exists(LEGACY_REDIS_KEY):
        # Kept by an earlier version: the same key under its new name.
        await redis.renamenx(LEGACY_REDIS_KEY, REDIS_KEY)
    made = await redis.set(REDIS_KEY, private_pem(Ed25519PrivateKey.generate()), nx=True)
    if made:
        log.warning(
            "no STEWARD_SIGNING_KEY: generated a signing key and kept it in Redis. Pin it: "
            "`redis-cli GET steward-secret:signing-key > steward-signing.pem`, then set "
            "STEWARD_SIGNING_KEY=/path/to/steward-signing.pem (losing Redis would otherwise mean a new "
            "key, and records signed with the old one no longer verify)"
        )
    stored = await redis.get(REDIS_KEY)
    return load_private(stored.decode() if isinstance(stored, bytes) else str(stored)), bool(made)


def _kept_key(raw: Any) -> Ed25519PrivateKey | None:
    """A private key as Redis keeps it (PEM), or None when the value is not one (never read as a path)."""
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    try:
        key = serialization.load_pem_private_key(text.encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return None
    return key if isinstance(key, Ed25519PrivateKey) else None


async def _forget_kept(redis: Any, pinned: Ed25519PrivateKey) -> None:
    """With a pinned key no key stays in Redis (docs/deploy.md). Pinning copies the key a worker kept there
    (docs/integrity.md: ``redis-cli GET steward-secret:signing-key``), and an earlier version kept it as
    ``steward:signing:key``, inside the receiver's ``steward:*``: the copy of the pinned key is deleted under
    either name. Another key is not Steward's to destroy (its records may need its public half in
    ``STEWARD_VERIFY_KEYS``): it is moved out of the receiver's reach and named in the log."""
    mine = key_id(pinned.public_key())
    for name in (REDIS_KEY, LEGACY_REDIS_KEY):
        raw = await redis.get(name)
        if raw is None:
            continue
        kept = _kept_key(raw)
        if kept is not None and key_id(kept.public_key()) == mine:
            await redis.delete(name)
            log.info("deleted the copy of the pinned signing key kept in Redis", redis_key=name)
            continue
        if name == LEGACY_REDIS_KEY and await redis.renamenx(LEGACY_REDIS_KEY, REDIS_KEY):
            name = REDIS_KEY
        log.warning(
            "Redis keeps a signing key other than the pinned one: list its public half in "
            "STEWARD_VERIFY_KEYS if records it signed should still verify, then delete it "
            f"(`redis-cli DEL {name}`)",
            redis_key=name,
            key=fingerprint(kept.public_key()) if kept is not None else None,
        )


async def install_from_settings(settings: Any, redis: Any, state: StartMemory | None = None) -> Keyring:
    """Install the keyring a worker (or `steward reconcile`) signs with, from
    ``bot.config.settings.Settings``; ``state``: the workers' state file (``signing_start``)."""
    from bot.telemetry import metrics

    secret = settings.signing_key.get_secret_value() if settings.signing_key is not None else None
    since = since_of(getattr(settings, "signing_since", None))
    keyring = await keyring_from(secret, settings.verify_keys, redis, since=since, state=state)
    keyring.pinned = bool(secret)
    metrics.SIGNING_KEY_PINNED.set(1 if secret else 0)
    if not secret:
        log.error(
            "the signing key is not pinned: it lives in Redis, and losing Redis loses it. Set "
            "STEWARD_SIGNING_KEY (docs/integrity.md); until then this worker's /readyz answers 503"
        )
    install(keyring)
    return keyring


def pinned() -> bool:
    """Whether this process signs with a key the operator pinned (``STEWARD_SIGNING_KEY``)."""
    return _current is not None and _current.pinned


async def verifying_keyring(settings: Any, public_key_file: str | None = None, redis: Any = None) -> Keyring:
    """A keyring that only verifies (for `steward verify` and the report commands): the public key in
    ``public_key_file``, else the keys the settings name (``STEWARD_SIGNING_KEY``'s public half and
    ``STEWARD_VERIFY_KEYS``), else the key kept in Redis when ``redis`` is given and answers. With none, every
    signature reads as signed by an unknown key.

    When Steward started signing (``signing_start``) is read, never written: ``STEWARD_SIGNING_SINCE``, and
    what Redis remembers when ``redis`` is given. Known, an unsigned block in a place created after it reads
    as tampered; unknown, as legacy anywhere (``Keyring.since`` 0)."""
    try:
        since = since_of(getattr(settings, "signing_since", None))
    except ValueError:  # a worker refuses to start with it; here it would only name unsigned blocks
        since = None
    if public_key_file:
        return Keyring(None, [load_public(public_key_file)], since=since or 0.0)
    entries = [verify_key(value) for value in settings.verify_keys]
    public = [key for key, _ in entries]
    if settings.signing_key is not None:
        public.append(load_private(settings.signing_key.get_secret_value()).public_key())
    elif redis is not None:
        try:
            stored = await redis.get(REDIS_KEY) or await redis.get(LEGACY_REDIS_KEY)
        except Exception:  # Redis not answering: verify with what the settings name
            stored = None
        if stored:
            public.append(
                load_private(stored.decode() if isinstance(stored, bytes) else str(stored)).public_key()
            )
    if redis is not None:
        try:
            remembered = await remembered_start(redis)
        except Exception:  # Redis not answering: what the settings say
            remembered = None
        if remembered is not None and remembered > 0 and (since is None or remembered < since):
            since = remembered
    keyring = Keyring(None, public, since=since or 0.0)
    # An earlier key past its end date verifies nothing here either, as in the workers (``keyring_from``).
    keyring.until = {key_id(key): until for key, until in entries if until is not None}
    return keyring
