"""GitHub's global node ids, as the sandbox makes them."""

from __future__ import annotations

import base64


def node_id(kind: str, ident: int | str) -> str:
    return base64.b64encode(f"0:{kind}{ident}".encode()).decode()
