"""Pure rules of the welcome (issue 39): who may be a first-time contributor, and the words.

"First-time" is the forge's answer, never Steward's memory (a Redis flush or a restart must not welcome anyone
twice): GitHub's `author_association` rules out owners, members, collaborators and past contributors at once;
then the forge's listing of what the person opened here (``Forge.opened_before``) must hold nothing older. The
welcome is a sticky comment keyed by the person, so a replayed delivery finds it and writes nothing.
"""

from __future__ import annotations

from typing import Final

from bot.records.neutralise import inert

# GitHub's associations that mean the person has been here before (docs: "author_association": OWNER, MEMBER,
# COLLABORATOR, CONTRIBUTOR — "has previously committed to the repository"); FIRST_TIME_CONTRIBUTOR,
# FIRST_TIMER, NONE and MANNEQUIN leave the question to the listing.
KNOWN_HERE: Final = frozenset({"OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR"})
TEXT_LIMIT: Final = 2000


def may_be_first_time(author: str, association: str, *, owner: str, bot_login: str) -> bool:
    """Whether the author of a new issue or pull request may be new here (the listing decides the rest)."""
    folded = author.casefold()
    if not folded or folded in (owner.casefold(), bot_login.casefold()) or folded.endswith("[bot]"):
        return False
    return association.upper() not in KNOWN_HERE


def welcome_text(author: str, text: str) -> str:
    """The configured words, quoted inert (they come from a file people edit), after the one mention
    Steward adds itself: the newcomer's."""
    return f"@{author}: {inert(text.strip()[:TEXT_LIMIT])}"
