"""What Steward's own labels say, in each language a repository may choose (the top-level ``language``
setting): label descriptions belong to the repository, so they follow its configured language, while a verdict
speaks its report's (issue 34 §2). Steward replaces a description of its own in another language, never one
the team wrote (``handlers.bug_refinement.labels``)."""

from __future__ import annotations

from typing import Final

LABEL_DESCRIPTIONS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "pending": "Steward: this bug report awaits refinement",
        "needs-info": "Steward: waiting for the reporter to answer the questions in the verdict",
        "needs-triage": "Steward: the reporter's part is complete; waiting for the maintainers",
        "approved": "Steward: refinement approved",
        "refine": "Steward: refine this issue",
    },
    "pt": {
        "pending": "Steward: este relato de bug aguarda o refinamento",
        "needs-info": "Steward: aguardando o autor do relato responder às perguntas do veredito",
        "needs-triage": "Steward: a parte do autor do relato está completa; aguardando os mantenedores",
        "approved": "Steward: refinamento aprovado",
        "refine": "Steward: refinar esta issue",
    },
}
