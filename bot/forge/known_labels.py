"""Labels known to exist, per repository, so that ``ensure_label`` costs no request in the steady state.

Process-local and bounded: one map per adapter family (the token's forge, or every installation of one
GitHub App; Gitea's single adapter). An entry is what Steward ensured (the colour and description it
asked for), so a label deleted by a person can be recreated as Steward would have made it. Entries age
out after ``ttl`` seconds, so a label deleted while nobody adds it is found missing within that time;
the adapters also forget (and repair) an entry as soon as the forge shows it is gone:

- GitHub: adding a label the repository lacks creates it, grey (``ededed``) with no description
  (docs.github.com "Add labels to an issue": "the label is created"); the adapter then gives it back the
  colour and description Steward ensured.
- Gitea: adding a label id that no longer exists is refused (422/404); the adapter re-reads the
  repository's labels and recreates the missing one with the ensured colour and description.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from bot.forge import Label

_Key = tuple[str, str]


class KnownLabels:
    """``(repository, label name)`` → the label Steward ensured, with an age; bounded (LRU)."""

    def __init__(self, *, ttl: float = 3600.0, maxsize: int = 8192) -> None:
        self.ttl = ttl
        self.maxsize = maxsize
        self._entries: OrderedDict[_Key, tuple[Label, float]] = OrderedDict()

    @staticmethod
    def _key(repo: str, name: str) -> _Key:
        return repo.casefold(), name.casefold()

    def get(self, repo: str, name: str) -> Label | None:
        key = self._key(repo, name)
        entry = self._entries.get(key)
        if entry is None:
            return None
        if time.monotonic() - entry[1] > self.ttl:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def remember(self, repo: str, label: Label) -> None:
        key = self._key(repo, label.name)
        self._entries[key] = (label, time.monotonic())
        self._entries.move_to_end(key)
        while len(self._entries) > self.maxsize:
            self._entries.popitem(last=False)

    def forget(self, repo: str, name: str) -> None:
        self._entries.pop(self._key(repo, name), None)
