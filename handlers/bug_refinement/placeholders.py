"""A template's placeholder and example text, which is never an answer (issue 34 §1). Pure.

GitHub's default bug template (and its translations), GitHub's issue-form example and Steward's own template
leave text in a report that the reporter did not write: "A clear and concise description…", `Go to '...'`,
`[e.g. iOS]`, a form's default "A bug happened!", `_No response_`. ``strip_placeholders`` takes them out
(never inside code), so what is left is what the reporter wrote.
"""

from __future__ import annotations

import re
from typing import Final

from .text import fold

__all__ = ["LIST_MARK", "strip_placeholders"]

# Template text that is not an answer, folded and without its trailing punctuation: GitHub's default bug
# template (and its Portuguese translations), GitHub's issue-form example, Steward's own hints.
_PLACEHOLDER_LINES: Final = frozenset(
    fold(line).strip(" .:!")
    for line in (
        "A clear and concise description of what the bug is.",
        "A clear and concise description of what you expected to happen.",
        "A clear and concise description of what actually happened.",
        "Steps to reproduce the behavior:",
        "Steps to reproduce the behaviour:",
        "Go to '...'",
        "Click on '....'",
        "Click on '...'",
        "Scroll down to '....'",
        "Scroll down to '...'",
        "See error",
        "If applicable, add screenshots to help explain your problem.",
        "Add any other context about the problem here.",
        "A bug happened!",
        "Tell us what you see!",
        "Tell us what you expected to happen.",
        "What goes wrong, and for whom?",
        "Version, operating system, browser or runtime.",
        "A log path, a link, a screenshot or an attachment.",
        "Descreva o bug de forma clara e concisa.",
        "Uma descrição clara e concisa do que é o bug.",
        "Uma descrição clara e concisa do que você esperava que acontecesse.",
        "Passos para reproduzir o comportamento:",
        "Vá para '...'",
        "Clique em '....'",
        "Role até '....'",
        "Veja o erro",
        "Se possível, adicione capturas de tela.",
        "Se aplicável, adicione capturas de tela para ajudar a explicar o problema.",
        "Adicione qualquer outro contexto sobre o problema aqui.",
        "O que dá errado, e para quem?",
        "Versão, sistema operacional, navegador ou ambiente.",
        "Um caminho de log, um link, uma captura de tela ou um anexo.",
        "_No response_",
    )
)
_EXAMPLE: Final = re.compile(r"\[\s*+(?:e\.?\s?g\.?|ex\.?|por exemplo|for example)[^\]\n]{0,80}\]", re.I)
LIST_MARK: Final = re.compile(r"^[ \t]*+(?:[-*+]|\d{1,9}[.)])?[ \t]*+")
_FENCE_LINE: Final = re.compile(r"^ {0,3}(?:`{3,}|~{3,})")


def _placeholder(line: str) -> bool:
    text = fold(LIST_MARK.sub("", line)).strip(" .:!*_")
    return text in _PLACEHOLDER_LINES


def strip_placeholders(text: str) -> str:
    """``text`` without a template's placeholder lines and `[e.g. …]` examples (outside code): what is left is
    what the reporter wrote."""
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE_LINE.match(line):
            fenced = not fenced
            out.append(line)
            continue
        if fenced:
            out.append(line)
            continue
        if _placeholder(line):
            continue
        if "[" in line:
            kept = _EXAMPLE.sub("", line)
            if kept != line:
                rest = LIST_MARK.sub("", kept).strip()
                if not rest or rest.endswith(":") or (":" not in rest and len(rest.split()) <= 4):
                    continue  # `- OS: [e.g. iOS]`, `- Browser [e.g. chrome]`: a field left as it was
            line = kept
        out.append(line)
    return "\n".join(out)
