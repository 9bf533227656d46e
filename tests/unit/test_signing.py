"""Signed records (issue 23, item 1): what a block read back is worth — verified, tampered, replayed, signed
with an unknown key, legacy (written before signing) — and that nothing but Steward's key makes one verify."""

from __future__ import annotations

import time
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from bot.records import signing, sticky
from bot.records.signing import (
    Keyring,
    Place,
    Signature,
    key_id,
    load_private,
    load_public,
    parse_signature,
    private_pem,
    public_pem,
)

PLACE = Place("github", 77, "comment", 1001, "debug-board", "5")


async def read(keyring: Keyring, body: str, place: Place = PLACE, **kw: object) -> sticky.Record:
    return await sticky.verify(
        keyring,
        body,
        forge=place.forge,
        repo_id=place.repo_id,
        container=place.container,
        id=place.id,
        kind=place.kind,
        key=place.key,
        **kw,  # type: ignore[arg-type]
    )


def signed(keyring: Keyring, data: object, place: Place = PLACE) -> str:
    body, _seq = sticky.signed(keyring, place, "the board", data)
    return body


async def test_a_block_steward_signed_verifies_and_gives_its_data() -> None:
    keyring = Keyring(Ed25519PrivateKey.generate())
    record = await read(keyring, signed(keyring, {"log": [1, 2]}))
    assert record.outcome == "verified" and record.trusted == {"log": [1, 2]}


async def test_an_edited_block_is_tampered_and_its_data_is_not_trusted() -> None:
    keyring = Keyring(Ed25519PrivateKey.generate())
    body = signed(keyring, {"override": None})
    forged = body.replace('{"override":null}', '{"override":{"by":"maintainer"}}')
    assert forged != body
    record = await read(keyring, forged)
    assert record.outcome == "tampered" and record.trusted is None and record.broken
    assert record.shown == {"override": {"by": "maintainer"}}, "shown, for a report, never trusted"


async def test_a_block_copied_to_another_comment_or_repository_does_not_verify() -> None:
    keyring = Keyring(Ed25519PrivateKey.generate())
    body = signed(keyring, {"x": 1})
    for other in (
        Place("github", 77, "comment", 1002, "debug-board", "5"),
        Place("github", 78, "comment", 1001, "debug-board", "5"),
        Place("gitea", 77, "comment", 1001, "debug-board", "5"),
        Place("github", 77, "issue", 1001, "debug-board", "5"),
        Place("github", 77, "comment", 1001, "debug-board", "6"),
    ):
        assert (await read(keyring, body, other)).outcome == "tampered", other


async def test_an_older_signed_version_pasted_back_is_a_replay() -> None:
    keyring = Keyring(Ed25519PrivateKey.generate())
    old = signed(keyring, {"budgets": 5})
    new, seq = sticky.signed(keyring, PLACE, "t", {"budgets": 0})
    await keyring.memory.note(PLACE, seq)
    assert (await read(keyring, new)).outcome == "verified"
    replayed = await read(keyring, old)
    assert replayed.outcome == "replayed" and replayed.trusted is None
    assert (await read(keyring, old, remember=False)).outcome == "verified", "a verifier without memory"


async def test_a_record_that_pins_its_text_does_not_verify_once_the_text_is_edited() -> None:
    """The RA9 verdict's YAML is what readers trust: its signed block pins the visible text (issue 23)."""
    keyring = Keyring(Ed25519PrivateKey.generate())
    text = "## Refinement Verdict\n\n```yaml\nstatus: rejected\nblockers:\n  - RA9-3\n```"
    shown, data = sticky.covered(PLACE.kind, PLACE.key, text, {"bugId": "B-1"})
    body, _ = sticky.signed(keyring, PLACE, shown, data)
    assert (await read(keyring, body)).outcome == "verified"
    assert (await read(keyring, body.replace("RA9-3", "RA9-3  ") + "\n")).outcome == "verified", "blanks"
    edited = body.replace("status: rejected", "status: approved")
    record = await read(keyring, edited)
    assert record.outcome == "tampered" and record.trusted is None
    # A record that does not pin its text: the text is a view, an edit of it leaves the block trusted.
    plain = signed(keyring, {"bugId": "B-1"})
    assert (await read(keyring, plain.replace("the board", "a forged board"))).outcome == "verified"


async def test_a_pinned_text_too_long_for_a_comment_is_pinned_as_shrunk() -> None:
    keyring = Keyring(Ed25519PrivateKey.generate())
    text = "\n".join(f"line {i} " + "x" * 80 for i in range(2000))
    shown, data = sticky.covered(PLACE.kind, PLACE.key, text, {"k": 1})
    body, _ = sticky.signed(keyring, PLACE, shown, data)
    assert len(body) <= sticky.MAX_CHARS and "too long to show here" in body
    assert (await read(keyring, body)).outcome == "verified"


async def test_an_unknown_key_cannot_verify_and_an_earlier_key_listed_for_rotation_does() -> None:
    before = Ed25519PrivateKey.generate()
    old_body = signed(Keyring(before), {"x": 1})
    now = Keyring(Ed25519PrivateKey.generate())
    record = await read(now, old_body)
    assert record.outcome == "unknown-key" and record.trusted is None
    rotated = Keyring(Ed25519PrivateKey.generate(), [before.public_key()])
    assert (await read(rotated, old_body)).outcome == "verified"


class CountingKey:
    """A public key that counts its Ed25519 checks."""

    def __init__(self, key: Any) -> None:
        self.key, self.checks = key, 0

    def verify(self, sig: bytes, data: bytes) -> None:
        self.checks += 1
        self.key.verify(sig, data)


async def test_a_record_read_again_is_not_checked_again_but_any_change_is() -> None:
    """The same signed record is read at every event on its thread: its Ed25519 check is done once per
    process. A changed block, another place, or a key no longer accepted is judged afresh."""
    keyring = Keyring(Ed25519PrivateKey.generate())
    body = signed(keyring, {"log": [1, 2]})
    counting = keyring.public[keyring.kid] = CountingKey(keyring.public[keyring.kid])  # type: ignore[assignment]
    for _ in range(3):
        assert (await read(keyring, body)).outcome == "verified"
    assert counting.checks == 1, "read three times, checked once"
    forged = body.replace('{"log":[1,2]}', '{"log":[1,2,3]}')
    assert forged != body and (await read(keyring, forged)).outcome == "tampered"
    other = Place("github", 77, "comment", 1002, "debug-board", "5")
    assert (await read(keyring, body, other)).outcome == "tampered"
    assert counting.checks == 3, "each change was checked"
    assert (await read(keyring, forged)).outcome == "tampered", "a refusal is not remembered as holding"
    del keyring.public[keyring.kid]
    assert (await read(keyring, body)).outcome == "unknown-key", "a key no longer accepted refuses it"


async def test_a_block_written_before_signing_is_legacy_and_never_trusted() -> None:
    """Legacy is decided from what nobody can edit — when the forge says the place was created (and, for a
    comment, last changed) against the signing start — never from the absence of memory; and a legacy block is
    not trusted: it is re-derived from its sources, quietly (issue 35 item 1)."""
    keyring = Keyring(Ed25519PrivateKey.generate(), since=time.time())
    legacy = sticky.fit("debug-board", "5", "the board", {"log": []})
    old, late = "2020-01-01T00:00:00Z", "2099-01-01T00:00:00Z"
    record = await read(keyring, legacy, created_at=old, changed_at=old)
    assert record.outcome == "legacy" and record.trusted is None and record.broken and record.quiet
    assert record.shown == {"log": []}
    # Changed after Steward started signing: Steward would have signed it.
    assert (await read(keyring, legacy, created_at=old, changed_at=late)).outcome == "tampered"
    # A place created after the signing start (an issue body: no change time is given) is never legacy.
    assert (await read(keyring, legacy, created_at=late)).outcome == "tampered"
    # Nor one whose creation time the forge did not give.
    assert (await read(keyring, legacy)).outcome == "tampered"
    # Re-signed once: an unsigned block there now is tampering, whatever its date.
    _, seq = sticky.signed(keyring, PLACE, "t", {"log": []})
    await keyring.memory.note(PLACE, seq)
    assert (await read(keyring, legacy, created_at=old, changed_at=old)).outcome == "tampered"


async def test_a_block_signed_by_an_unknown_key_is_re_derived_quietly() -> None:
    """Issue 40 item 2: a key lost with Redis leaves records no key Steward holds verifies — not tampering
    (no note), not trusted either (re-derived); a signature that fails under a key Steward holds is
    tampering."""
    lost = Keyring(Ed25519PrivateKey.generate(), since=time.time())
    body = signed(lost, {"x": 1})
    keyring = Keyring(Ed25519PrivateKey.generate(), since=time.time())
    record = await read(keyring, body)
    assert record.outcome == "unknown-key" and record.trusted is None and record.broken and record.quiet
    forged = body.replace('{"x":1}', '{"x":2}')
    tampered = await read(lost, forged)
    assert tampered.outcome == "tampered" and not tampered.quiet


async def test_a_stripped_or_mangled_signature_is_tampering() -> None:
    keyring = Keyring(Ed25519PrivateKey.generate(), since=time.time())
    body = signed(keyring, {"x": 1})
    mangled = body.replace("sig=", "sig=AA", 1)
    assert (await read(keyring, mangled)).outcome == "tampered"
    assert (await read(keyring, sticky.unsigned(body), changed_at="2099-01-01T00:00:00Z")).outcome == (
        "tampered"
    )


async def test_a_missing_block_where_steward_always_writes_one_is_tampering() -> None:
    keyring = Keyring(Ed25519PrivateKey.generate())
    body = "<!-- steward:debug-board:5 -->\nsomeone's notes\n"
    assert (await read(keyring, body)).outcome == "missing"
    assert (await read(keyring, body, expect_data=True)).outcome == "tampered"


def test_keys_load_from_pem_text_and_files(tmp_path: object) -> None:
    key = Ed25519PrivateKey.generate()
    pem = private_pem(key)
    path = __import__("pathlib").Path(str(tmp_path)) / "k.pem"
    path.write_text(pem)
    assert key_id(load_private(pem).public_key()) == key_id(key.public_key())
    assert key_id(load_private(str(path)).public_key()) == key_id(key.public_key())
    assert key_id(load_public(public_pem(key.public_key()))) == key_id(key.public_key())


_KEY = Keyring(Ed25519PrivateKey.generate())


@given(
    data=st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=20), max_size=4),
    other=st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=20), max_size=4),
)
async def test_no_other_data_verifies_under_a_signature(
    data: dict[str, object], other: dict[str, object]
) -> None:
    body = signed(_KEY, data)
    assert (await read(_KEY, body, remember=False)).trusted == data
    if other != data:
        swapped = body.replace(sticky.encode_data(data), sticky.encode_data(other))
        assert (await read(_KEY, swapped, remember=False)).trusted is None


@given(st.text(max_size=400))
def test_reading_any_body_never_fails(body: str) -> None:
    assert parse_signature(body) is None or parse_signature(body) is not None
    assert sticky.marker_of(body) is None or isinstance(sticky.marker_of(body), tuple)


@given(
    kid=st.from_regex(r"[0-9a-f]{16}", fullmatch=True),
    seq=st.integers(0, 10**19),
    sig=st.binary(min_size=64, max_size=64),
)
def test_a_signature_line_reads_back(kid: str, seq: int, sig: bytes) -> None:
    line = Signature(kid, seq, sig).line()
    assert parse_signature(f"<!-- steward:x:y -->\n{line}\ntext") == Signature(kid, seq, sig)


def test_the_kinds_always_written_with_a_block_are_the_handlers_own() -> None:
    """`steward verify` counts a comment of these kinds without a block as tampered (issue 35 item 11): the
    list names the handlers' record kinds, and no kind that is sometimes written without data."""
    from handlers.backlog.effects import KIND_INTERVIEW, KIND_SPEC
    from handlers.bug_refinement.effects import VERDICT_KIND
    from handlers.bugfix.record import RECORD_KIND as BUGFIX
    from handlers.debug.effects import BOARD_KIND
    from handlers.forks.render import KIND as FORKS
    from handlers.milestones.plan import KIND as DASHBOARD
    from handlers.milestones.ratifications import RECORD_KIND as RATIFICATION
    from handlers.triage.overview import KIND as OVERVIEW

    expected = {KIND_INTERVIEW, KIND_SPEC, VERDICT_KIND, BUGFIX, BOARD_KIND, FORKS, DASHBOARD, RATIFICATION}
    assert expected | {OVERVIEW} == sticky.DATA_KINDS


async def test_an_earlier_key_past_its_end_date_is_no_longer_trusted(tmp_path: object) -> None:
    """Issue 35, "Also": each STEWARD_VERIFY_KEYS entry may carry `;until=<time>`; after it, what that key
    signed reads as signed by an unknown key (re-derived and re-signed quietly on its next event)."""
    from pathlib import Path

    from bot.records.signing import private_pem, verify_key

    old = Ed25519PrivateKey.generate()
    body = signed(Keyring(old), {"x": 1})
    path = Path(str(tmp_path)) / "old.pem"
    path.write_text(private_pem(old))
    key, until = verify_key(f"{path};until=2020-01-01T00:00:00Z")
    assert until is not None and until < time.time()
    keyring = Keyring(Ed25519PrivateKey.generate(), [key])
    assert (await read(keyring, body)).outcome == "verified"
    keyring.until = {signing.key_id(key): until}
    record = await read(keyring, body)
    assert record.outcome == "unknown-key" and record.quiet
    keyring.until = {signing.key_id(key): time.time() + 3600}
    assert (await read(keyring, body)).outcome == "verified"
    assert verify_key(str(path))[1] is None


async def test_a_retired_key_s_end_date_is_read_on_the_clock_not_from_the_sequence_it_signed() -> None:
    """After its end date nothing a retired key signed is trusted, whatever sequence number the signature
    carries: the number is the signer's to choose, and whoever holds a leaked retired key could write one
    from before the end date."""
    old = Ed25519PrivateKey.generate()
    until = time.time() - 60
    seq = int((until - 3600) * 1_000_000)  # "signed" an hour before the end
    data = {"x": 1}
    signed_text = sticky.encode_data(data).removeprefix("<!-- steward:data ").removesuffix(" -->")
    kid = key_id(old.public_key())
    signature = Signature(kid, seq, old.sign(signing.message(PLACE, signed_text, seq, kid)))
    body = sticky.fit(PLACE.kind, PLACE.key, "the board", data, signature=signature.line())
    assert (await read(Keyring(None, [old.public_key()]), body)).outcome == "verified", "a valid signature"
    keyring = Keyring(Ed25519PrivateKey.generate(), [old.public_key()])
    keyring.until = {key_id(old.public_key()): until}
    assert (await read(keyring, body)).outcome == "unknown-key"


async def test_the_verifier_the_operator_s_settings_give_keeps_the_end_dates(tmp_path: object) -> None:
    """`steward verify`, `steward forks` and the debug report build their keyring from the settings
    (`verifying_keyring`): a key past its end date verifies nothing there either, as in the workers."""
    from pathlib import Path
    from types import SimpleNamespace

    from pydantic import SecretStr

    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    path = Path(str(tmp_path)) / "old.pub"
    path.write_text(public_pem(old.public_key()))
    body = signed(Keyring(old), {"x": 1})
    for until, outcome in (("2020-01-01T00:00:00Z", "unknown-key"), ("2999-01-01T00:00:00Z", "verified")):
        settings = SimpleNamespace(
            verify_keys=[f"{path};until={until}"], signing_key=SecretStr(private_pem(new))
        )
        keyring = await signing.verifying_keyring(settings)
        assert keyring.private is None and (await read(keyring, body)).outcome == outcome


async def test_the_verifier_knows_when_signing_started_from_the_operator_s_setting() -> None:
    """`steward verify` with `STEWARD_SIGNING_SINCE`: an unsigned block in a place created after it was
    tampered with; without the setting (or with one that is no time) it cannot tell, and says legacy."""
    from types import SimpleNamespace

    unsigned = sticky.fit("debug-board", "5", "the board", {"log": []})
    for since, outcome in (("2026-01-01T00:00:00Z", "tampered"), (None, "legacy"), ("soon", "legacy")):
        settings = SimpleNamespace(verify_keys=[], signing_key=None, signing_since=since)
        keyring = await signing.verifying_keyring(settings, public_key_file=None)
        assert (await read(keyring, unsigned, created_at="2026-06-01T00:00:00Z")).outcome == outcome
        assert (await read(keyring, unsigned, created_at="2025-06-01T00:00:00Z")).outcome == "legacy"
