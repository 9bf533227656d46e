"""Text folding shared by the RA9 modules."""

from __future__ import annotations

import re
import unicodedata

_COMBINING = re.compile(r"[\u0300-\u036f]")


def fold(text: str) -> str:
    """Case- and accent-insensitive form of `text` (`Visão` and `VISAO` fold to the same string)."""
    if text.isascii():
        return text.lower()
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text)).casefold()
