"""What other capabilities ask of backlog refinement: the word folding that the bug-or-backlog rule
(``handlers.bug_refinement.bug_kind``) shares with it, so both read a heading alike. (``/refine`` reaches
the backlog's engine through the router, ``handlers.core.refine``, which imports it as the registry list
does.)"""

from __future__ import annotations

from handlers.backlog.text import fold as fold
from handlers.backlog.text import words as words
