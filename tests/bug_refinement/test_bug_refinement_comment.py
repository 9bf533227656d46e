"""What the RA9 bot writes, as pure rules: the verdict comment (action first, machine data folded), the
notice that mentions the author, the pre-filled template, section names in one order, and which issues
may be refined as stories."""

from __future__ import annotations

import re

import pytest

from bot.forge import Issue
from handlers.bug_refinement.plan import select_stories
from handlers.bug_refinement.render import (
    StoryNote,
    notice_text,
    render_bug_comment,
    template,
    verdict_notice_line,
)
from handlers.bug_refinement.rules import read_verdict_block, refine_bug

AT = "2026-01-02T03:04:05Z"
CASUAL = "App crashes when I open it"


def _headings(text: str) -> list[tuple[int, str]]:
    return [(len(m.group(1)), m.group(2)) for m in re.finditer(r"^(#{1,6}) (.*)$", text, re.M)]


def test_a_rejection_asks_the_reporter_in_plain_words_and_folds_the_rest() -> None:
    """Issue 34 §2: questions named in plain words, no headings, section numbers or codes for the reporter;
    the maintainers' list, the template and the record folded."""
    verdict = refine_bug(CASUAL, bug_id="o/r#1", refined_at=AT)
    text = render_bug_comment(verdict, template_text=template(CASUAL), reporter="octocat")
    lines = text.splitlines()
    assert lines[0] == "## Waiting for @octocat: 4 questions"
    assert lines[2].startswith("Thank you for the report. Before work on it can start, please answer")
    assert lines[4:8] == [
        "1. Which version were you on, and on which system (operating system, browser or runtime)?",
        "2. What did you do, step by step, to make it happen?",
        "3. What did you expect to happen instead?",
        "4. Can you add a screenshot, a log or a link that shows it?",
    ]
    visible = text[: text.index("<details>")]
    for word in ("heading", "`#", "MISSING_", "RECIPE_", "front matter", "5.1", "❌"):
        assert word not in visible, word
    assert "<details><summary>For the maintainers: 8 things to add once the reporter has answered" in text
    record_at = text.index("## Refinement Verdict")
    assert text.rfind("<details><summary>Verdict record", 0, record_at) > text.index("For the maintainers")
    recorded = read_verdict_block(text)
    assert recorded is not None and recorded.status == "rejected"
    assert recorded.blockers == verdict.blocker_codes
    [missing] = [ln for ln in lines if ln.startswith("- **Missing sections** — ")]
    assert all(f"`## {n}. " in missing and f"`MISSING_SECTION_{n}`" in missing for n in (2, 3, 4, 6, 7, 8, 9))
    for blocker in verdict.blockers:
        line = next(ln for ln in lines if blocker.code in ln)
        if not blocker.code.startswith("MISSING_SECTION_"):
            assert line.index(blocker.message) < line.index(blocker.code), "the words come before the code"


def test_a_report_with_its_sections_is_asked_only_what_it_lacks() -> None:
    from bot.demo.texts import APPROVED_BUG

    vision = "Shoppers who switch currency lose their discount and pay the full price."
    body = APPROVED_BUG.replace(vision, "")
    verdict = refine_bug(body, bug_id="o/r#1", refined_at=AT)
    assert verdict.blocker_codes == ("VISION_EMPTY",) and verdict.asks == ("1",)
    text = render_bug_comment(verdict, template_text=template(body))
    assert text.splitlines()[0] == "## Waiting for the reporter: 1 question"
    assert "1. What goes wrong, and for whom?" in text.splitlines()
    line = next(ln for ln in text.splitlines() if "`VISION_EMPTY`" in ln)
    assert line.startswith("- **1. Vision** — Under `## 1. Vision`, write at least one line"), "maintainers'"


def test_an_approval_says_there_is_nothing_to_do() -> None:
    from tests.e2e.test_bug_refinement_e2e import APPROVED

    verdict = refine_bug(APPROVED, bug_id="o/r#1", refined_at=AT)
    text = render_bug_comment(verdict, stories=[StoryNote(12, verdict="approved")])
    assert text.splitlines()[0] == "## ✅ Refined"
    assert "Nothing to do" in text.splitlines()[2]
    assert "- #12: ✅ approved" in text
    assert read_verdict_block(text) is not None


def test_the_notice_mentions_the_author_and_links_the_verdict() -> None:
    verdict = refine_bug(CASUAL, bug_id="o/r#1", refined_at=AT)
    text = notice_text("octocat", verdict, "https://forge/o/r/issues/1#issuecomment-9")
    assert text.startswith("@octocat: thank you for the report — 4 questions for you in [the refinement ")
    assert "(https://forge/o/r/issues/1#issuecomment-9)" in text and len(text) < 400


def test_the_ask_in_a_new_verdict_is_the_notice_in_the_same_words() -> None:
    verdict = refine_bug(CASUAL, bug_id="o/r#1", refined_at=AT)
    line = verdict_notice_line("octocat", verdict)
    notice = notice_text("octocat", verdict, "https://forge/o/r/issues/1#issuecomment-9")
    assert line.startswith("@octocat: thank you for the report — 4 questions") and "\n" not in line
    assert line.replace("below", "") == notice.replace(
        "in [the refinement verdict](https://forge/o/r/issues/1#issuecomment-9)", ""
    )


def test_a_casual_report_gets_a_template_prefilled_with_what_it_says() -> None:
    text = template(CASUAL, "Crash on start")
    assert "## 1. Vision\nApp crashes when I open it" in text
    for n in range(1, 10):
        assert re.search(rf"^## {n}\. ", text, re.M)
    for key in ("5.1", "5.2", "5.3", "5.4"):
        assert f"### {key} " in text
    pasted = refine_bug(text, bug_id="o/r#1", refined_at=AT)
    assert not [c for c in pasted.blocker_codes if c.startswith("MISSING_SECTION_")]
    assert "STATUS_LINE_MISSING" not in pasted.blocker_codes


def test_the_template_keeps_the_sections_already_written_in_their_language() -> None:
    body = "## 1. Visão\nO app fecha.\n\n## 5. Receita de Reprodução\n### 5.1 Ambiente\nAndroid 14\n"
    text = template(body)
    assert "## 1. Visão\nO app fecha." in text and "### 5.1 Ambiente\nAndroid 14" in text
    assert "## 6. Hipótese de Causa Raiz" in text and "Observado:" in text


def test_the_template_is_bounded_however_long_the_report() -> None:
    text = template("x " * 100_000)
    assert len(text) < 20_000


def test_messages_name_sections_english_first_with_the_portuguese_beside_them() -> None:
    verdict = refine_bug("", bug_id="o/r#1", refined_at=AT)
    messages = {b.code: b.message for b in verdict.blockers}
    for n, (en, pt) in {1: ("Vision", "Visão"), 5: ("Reproduction Recipe", "Receita de Reprodução")}.items():
        wanted = f"Add a level-2 heading `## {n}. {en}` (or `{pt}`) and fill it in."
        assert messages[f"MISSING_SECTION_{n}"] == wanted
    assert "`## 7. Regression Test Slot` (or `Slot de Teste de Regressão`)" in messages["MISSING_SECTION_7"]


def test_a_portuguese_report_is_answered_in_portuguese_with_its_own_section_names() -> None:
    body = (
        "## 1. Visão\n\n## 4. Critérios de Aceite\nnada\n\n## 5. Receita de Reprodução\n\n"
        "## 6. Hipótese de Causa Raiz\nx\n"
    )
    verdict = refine_bug(body, bug_id="o/r#1", refined_at=AT)
    messages = {b.code: b.message for b in verdict.blockers}
    assert messages["VISION_EMPTY"].startswith("Em `## 1. Visão`")
    assert messages["RECIPE_MISSING_ENV"] == (
        "Em `## 5. Receita de Reprodução`, acrescente `### 5.1 Ambiente` com a versão, o sistema e o "
        "ambiente."
    )
    text = render_bug_comment(verdict, reporter="ana")
    assert text.splitlines()[0] == "## Aguardando @ana: 6 perguntas"
    assert "Which" not in text and "Thank" not in text and "For the maintainers" not in text


def _issue(number: int, author: str, *, pr: bool = False) -> Issue:
    return Issue(number, f"#{number}", "", "open", author, is_pull_request=pr)


def test_only_sub_issues_and_the_bug_authors_own_issues_are_refined_as_stories() -> None:
    bug = _issue(1, "outsider")
    subs = [_issue(2, "maintainer")]
    found = {3: _issue(3, "outsider"), 4: _issue(4, "maintainer"), 5: _issue(5, "outsider", pr=True), 6: None}
    chosen, skipped = select_stories(bug, subs, [2, 3, 4, 5, 6, 1], found, limit=20)
    assert [s.number for s in chosen] == [2, 3]
    assert [note.line() for note in skipped] == [
        "- #4 was not refined as a story: it is not a sub-issue and was opened by someone else.",
        "- #5 was not refined as a story: it is a pull request, not an issue.",
        "- #6 was not refined as a story: there is no such issue in this repository.",
    ]


def test_a_sub_issue_in_another_repository_is_no_story_here() -> None:
    """GitHub lets a sub-issue be in another repository of the same owner: its number names another issue
    here, so it is left out of the bug's stories (``plan.in_repo``, by the page the listing gives)."""
    from dataclasses import replace

    from bot.forge import RepoRef
    from handlers.bug_refinement.plan import in_repo

    here = RepoRef("Octo", "Shop")
    assert in_repo(replace(_issue(7, "a"), html_url="https://github.com/octo/shop/issues/7"), here)
    assert not in_repo(replace(_issue(7, "a"), html_url="https://github.com/octo/api/issues/7"), here)
    assert not in_repo(replace(_issue(7, "a"), html_url="https://github.com/octo/shop/issues/8"), here)
    assert in_repo(_issue(7, "a"), here), "no page given: counted as here"


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_stories_are_capped(limit: int) -> None:
    bug = _issue(1, "a")
    found = {n: _issue(n, "a") for n in range(2, 10)}
    chosen, skipped = select_stories(bug, [], list(found), found, limit=limit)
    assert len(chosen) == limit and len(skipped) == 8 - limit
    assert all("the most I refine" in (note.skipped or "") for note in skipped)


def test_the_notices_speak_the_reports_language() -> None:
    """Issue 34 §2: one language per verdict, its notices included."""
    from handlers.bug_refinement.render import ready_text, resolved_text

    relato = "O app fecha quando eu abro.\n"
    verdict = refine_bug(relato, bug_id="o/r#1", refined_at=AT)
    assert verdict.language == "pt"
    notice = notice_text("ana", verdict, "https://forge/o/r/issues/1#c")
    assert notice.startswith("@ana: obrigado pelo relato — ")
    assert verdict_notice_line("ana", verdict).endswith("abaixo, antes de começarmos.")
    assert ready_text("ana", verdict).startswith("@ana: obrigado — ")
    assert ready_text("ana", None, "pt").startswith("@ana: obrigado — ")
    assert resolved_text("pt").startswith("✅ Resolvido")


STORY_EN = "## 1. Vision\n\nMake it work.\n"
STORY_PT = "## 1. Visão\n\nManter o desconto quando a moeda muda.\n"


def test_a_story_that_waits_on_the_maintainers_says_so_in_english_with_no_red() -> None:
    """Issue 34 §2-§3, as the bug verdict: the heading says who acts next (a story's sections are the
    maintainers' to write; its label is `needs-triage`), never ❌ or "not ready"; their list is folded under
    one line, each blocker's code after its words, the story's own section names. Before: "## ❌ Story not
    ready: 3 thing(s) to fix" and the list in the open."""
    from handlers.bug_refinement.render import render_story_comment
    from handlers.bug_refinement.rules import refine_story

    verdict = refine_story(STORY_EN, bug_id="o/r#1", story="#2", refined_at=AT)
    assert verdict.language == "en" and len(verdict.blockers) == 3
    text = render_story_comment(verdict, "#1")
    lines = text.splitlines()
    assert lines[0] == "## Waiting for the maintainers: 3 things"
    assert lines[2].startswith("This issue is a story of the approved bug #1: before work on it starts, the ")
    for word in ("❌", "not ready", "thing(s)"):
        assert word not in text, word
    assert "STORY_" not in text[: text.index("<details>")], "codes only in the fold"
    assert "<details><summary>For the maintainers: 3 things to add before work on this story starts" in text
    deps = next(line for line in lines if "STORY_DEPS_MISSING" in line)
    assert deps.startswith("- **7. Dependencies** — In the story, add `## 7. Dependencies`"), deps
    assert deps.index("**Blocked By:**") < deps.index("`STORY_DEPS_MISSING`"), "the words before the code"
    assert "<details><summary>Verdict record (refined at " in text
    recorded = read_verdict_block(text)
    assert recorded is not None and recorded.status == "rejected"
    assert recorded.blockers == verdict.blocker_codes


def test_a_portuguese_story_is_answered_in_portuguese_whatever_its_state() -> None:
    """Issue 34 §2: one language per verdict, the story's by its words — the heading, the framing, the fold,
    the blockers' words and the record. Before: English framing around Portuguese section names."""
    from handlers.bug_refinement.render import StoryNote, render_story_comment
    from handlers.bug_refinement.rules import refine_story, story_verdict_hash
    from handlers.bug_refinement.verdict import StoryVerdict

    verdict = refine_story(STORY_PT, bug_id="o/r#1", story="#2", refined_at=AT)
    assert verdict.language == "pt"
    text = render_story_comment(verdict, "#1")
    lines = text.splitlines()
    assert lines[0] == "## Aguardando os mantenedores: 3 itens"
    assert lines[2].startswith("Esta issue é uma história do bug aprovado #1: antes de começar o trabalho")
    assert "<summary>Para os mantenedores: 3 itens a acrescentar antes de começar o trabalho nesta " in text
    deps = next(line for line in lines if "STORY_DEPS_MISSING" in line)
    assert deps.startswith("- **7. Dependências** — Na história, acrescente `## 7. Dependências`"), deps
    assert "**Bloqueado Por:**" in deps
    assert "<details><summary>Registro do veredito (refinado em " in text
    for english in ("Waiting", "story of", "For the maintainers", "In the story", "Verdict record", "❌"):
        assert english not in text, english

    hashed = story_verdict_hash("o/r#1", "#2", "pending", AT)
    pending = StoryVerdict("o/r#1", "#2", "pending", hashed, AT, (), language="pt")
    stamp = render_story_comment(pending, "#1")
    assert stamp.startswith("## ⏳ História aguardando seu bug\n") and "**Status:** Pendente." in stamp
    assert "this issue is a story" not in stamp
    approved = StoryVerdict("o/r#1", "#2", "approved", "h", AT, (), language="pt")
    assert render_story_comment(approved, "#1").startswith("## ✅ Refinado\n\nNada a fazer: esta história")
    assert "**Status:** Refinada." in render_story_comment(approved, "#1")
    # The bug's verdict lists its stories in its language, with no ❌ for one that waits on the maintainers.
    waiting = StoryNote(2, verdict="rejected")
    assert waiting.line("pt") == "- #2: aguardando os mantenedores (veja o comentário dela)"
    assert waiting.line() == "- #2: waiting for the maintainers (see its comment)"
