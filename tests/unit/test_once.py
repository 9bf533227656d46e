"""Writes that must happen once (bot.forge.write_once.once): look, write, and look again when the write is
lost."""

from __future__ import annotations

import pytest

from bot.forge import ForgeUnavailable, ValidationFailed
from bot.forge.write_once import once


class Forge:
    def __init__(self, there: str | None = None, fail: Exception | None = None, applies: bool = True) -> None:
        self.there, self.fail, self.applies, self.writes = there, fail, applies, 0

    async def find(self) -> str | None:
        return self.there

    async def write(self) -> str:
        self.writes += 1
        if self.applies:
            self.there = "made"
        if self.fail is not None:
            raise self.fail
        return "made"


async def test_what_is_there_is_not_written_again() -> None:
    forge = Forge(there="earlier")
    assert await once(forge.find, forge.write) == "earlier" and forge.writes == 0


async def test_a_write_lost_after_it_was_applied_is_found() -> None:
    forge = Forge(fail=ForgeUnavailable("502"))
    assert await once(forge.find, forge.write) == "made" and forge.writes == 1


async def test_a_write_lost_before_it_was_applied_fails_as_it_failed() -> None:
    forge = Forge(fail=ForgeUnavailable("502"), applies=False)
    with pytest.raises(ForgeUnavailable, match="502"):
        await once(forge.find, forge.write)
    assert forge.writes == 1, "never resent"


async def test_a_refusal_is_a_look_only_when_it_says_another_run_made_it() -> None:
    taken = Forge(fail=ValidationFailed("already exists", status=422))
    assert await once(taken.find, taken.write, taken=lambda exc: "already" in str(exc)) == "made"
    other = Forge(fail=ValidationFailed("bad title", status=422))
    with pytest.raises(ValidationFailed, match="bad title"):
        await once(other.find, other.write, taken=lambda exc: "already" in str(exc))
