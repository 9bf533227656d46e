"""Webhook signature checks, constant time, against every configured secret (rotation)."""

from __future__ import annotations

import hmac
from collections.abc import Iterable


def sign_sha256(secret: str, body: bytes) -> str:
    # hmac.digest is OpenSSL's one-shot HMAC: the same bytes as hmac.new(...).hexdigest() without the
    # Python HMAC object (this runs for every delivery and every configured secret).
    return hmac.digest(secret.encode(), body, "sha256").hex()


def verify_github(body: bytes, header: str | None, secrets: Iterable[str]) -> bool:
    """``X-Hub-Signature-256: sha256=<hex>``; true when any secret matches."""
    if not header or not header.startswith("sha256="):
        return False
    return _matches(body, header[len("sha256=") :], secrets)


def verify_gitea(body: bytes, header: str | None, secrets: Iterable[str]) -> bool:
    """``X-Gitea-Signature: <hex>`` (no prefix); true when any secret matches."""
    if not header:
        return False
    return _matches(body, header, secrets)


def _matches(body: bytes, given_hex: str, secrets: Iterable[str]) -> bool:
    given = given_hex.strip().lower().encode()
    matched = False
    for secret in secrets:
        expected = sign_sha256(secret, body).encode()
        # Compare against every secret so the time taken says nothing about which matched.
        matched |= hmac.compare_digest(expected, given)
    return matched
