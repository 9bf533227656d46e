"""The onboarding pull request's pure parts: the configuration file, the issue templates, the labels, its
text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.config.repo_file import merge, parse
from bot.config.settings import PRESETS, HandlerSettings
from bot.forge import Issue
from handlers import build_registry
from handlers.bug_refinement.forms import from_issue_form
from handlers.bug_refinement.rules import blockers_for, refine_bug
from handlers.onboarding.config_file import config_text
from handlers.onboarding.plan import (
    capabilities,
    issue_language,
    labels_for,
    preview,
    proposal,
    pull_body,
)
from handlers.onboarding.templates import backlog_markdown, bug_form, bug_markdown
from tests.onboarding.forms import fill_markdown, markdown_template, render_form

# The registry `steward run` builds, fresh for this module.
registry = build_registry()

AT = "2026-01-01T00:00:00Z"
FILLED = {
    "section-1": "The cart loses items when a second one is added.",
    "section-2": "A shopper adding two items to the cart.",
    "section-3": "They can buy what they chose.",
    "section-4": "Given a cart with one item\nWhen I add another\nThen the cart has two items",
    "section-5-1": "v1.2 on Linux, Python 3.13",
    "section-5-2": "1. Open the cart\n2. Add an item",
    "section-5-3": "Observed: one item\nExpected: two items",
    "section-5-4": "logs/cart.log",
    "section-6": "The cart is overwritten instead of appended to.",
    "section-7": "tests/test_cart.py",
    "section-8": "none",
    "section-9": "none yet",
    "severity": "high",
    "scope": "checkout",
}


def _commands() -> dict[str, str]:
    return {name: spec.permission for name, spec in registry.commands.items()}


@pytest.mark.parametrize("kind", ["github", "gitea"])
def test_the_proposed_configuration_validates_and_uncommented_sets_exactly_the_defaults(kind: str) -> None:
    plan = proposal(kind, registry, HandlerSettings(), "en")  # type: ignore[arg-type]
    path = ".gitea/steward.yml" if kind == "gitea" else ".github/steward.yml"
    assert plan.config_path == path
    text = plan.files[path]
    parsed = parse(text, registry.configurable)
    assert parsed.valid, parsed.errors
    # One live line: the light preset (issue 37 §4), so day one reopens no milestone and starts no interview.
    running = [c.section for c in capabilities(registry, HandlerSettings())]
    assert parsed.data == {"preset": "refine-and-bugfix"}
    proposed = merge(HandlerSettings(), parsed.data)
    assert [c.section for c in capabilities(registry, proposed) if c.enabled] == [
        "bug_refinement",
        "bugfix",
        "debug",
        "triage",
    ]
    for preset, on in PRESETS.items():
        chosen = merge(HandlerSettings(), {"preset": preset})
        assert {c.section for c in capabilities(registry, chosen) if c.enabled} == on
    # A section's own switch overrides the preset.
    mixed = merge(HandlerSettings(), {"preset": "refine-bugs", "milestones": {"enabled": True}})
    assert mixed.milestones.enabled and not mixed.backlog.enabled and mixed.bug_refinement.enabled
    live = config_text(
        commands=_commands(),  # type: ignore[arg-type]
        switches=[(s, s) for s in running],
        path=path,
        live=True,
    )
    every = parse(live, registry.configurable)
    assert every.valid, every.errors
    assert every.data is not None
    data = dict(every.data)
    commands = data.pop("commands")
    assert merge(HandlerSettings(), data) == HandlerSettings()
    assert {name: c["permission"] for name, c in commands.items()} == _commands()
    for section in HandlerSettings.model_fields:
        assert f"\n# {section}:" in text or f"\n{section}:" in text
    assert "Which capabilities run: `preset` below" in text.split("\n\n")[0]
    for section in running:
        assert f"#   {section}.enabled" in text.split("\n\n")[0]


def _maintainers_part(language: str) -> str:
    """What the maintainers add below a report from Steward's templates (issue 34 §4: not in the form)."""
    from handlers.bug_refinement.api import sections

    status = "Pendente" if language == "pt" else "Pending"
    parts = [f"\n\n**Status:** {status}\n"]
    for n, key in ((2, "section-2"), (3, "section-3"), (4, "section-4"), (6, "section-6"), (7, "section-7")):
        parts.append(f"{sections.heading(n, language)}\n{FILLED[key]}\n")  # type: ignore[arg-type]
    for n, key in ((8, "section-8"), (9, "section-9")):
        parts.append(f"{sections.heading(n, language)}\n{FILLED[key]}\n")  # type: ignore[arg-type]
    return "\n".join(parts)


def test_a_bug_opened_from_the_github_form_is_approved_once_the_maintainers_add_their_part() -> None:
    """GitHub renders form fields as `### <label>` sections; RA9 reads them as its numbered sections. The
    form asks the reporter only for sections 1 and 5; once filled in, nothing is asked of them, and the bug is
    approved when the maintainers add their sections."""
    for language in ("en", "pt"):
        body, labels = render_form(bug_form(language), FILLED)  # type: ignore[arg-type]
        assert labels == ["bug", "refine"]
        verdict = refine_bug(body, bug_id="o/r#1", refined_at=AT)
        assert blockers_for(verdict, "reporter") == () and verdict.verdict == "rejected"
        done = refine_bug(body + _maintainers_part(language), bug_id="o/r#1", refined_at=AT)
        assert (done.verdict, done.blocker_codes, done.warning_codes) == ("approved", (), ())
        empty, _ = render_form(bug_form(language), {})  # type: ignore[arg-type]
        rejected = refine_bug(empty, bug_id="o/r#1", refined_at=AT)
        codes = rejected.blocker_codes
        assert "VISION_EMPTY" in codes and "MISSING_SECTION_7" in codes
        assert "MISSING_SECTION_5" not in codes


def test_a_bug_opened_from_the_gitea_markdown_template_is_approved_once_the_maintainers_add_their_part() -> (
    None
):
    answers = {
        "1. Vision": FILLED["section-1"],
        "5.1 Environment": FILLED["section-5-1"],
        "5.2 Steps to Reproduce": FILLED["section-5-2"],
        "5.3 Observed vs Expected": FILLED["section-5-3"],
        "5.4 Artifacts": FILLED["section-5-4"],
    }
    body, labels = markdown_template(bug_markdown("en"))
    assert labels == ["bug", "refine"]
    assert refine_bug(body, bug_id="o/r#1", refined_at=AT).verdict == "rejected"
    filled = fill_markdown(body.replace("1. \n2. ", "").replace("Observed: \nExpected: ", ""), answers)
    verdict = refine_bug(filled, bug_id="o/r#1", refined_at=AT)
    assert blockers_for(verdict, "reporter") == ()
    done = refine_bug(
        filled + _maintainers_part("en").replace("**Status:** Pending\n", ""), bug_id="o/r#1", refined_at=AT
    )
    assert (done.verdict, done.blocker_codes) == ("approved", ())
    pt_body, _ = markdown_template(bug_markdown("pt"))
    assert "## 1. Visão" in pt_body and "### 5.1 Ambiente" in pt_body


PT_BACKLOG = ["O que", "Por que", "Escopo", "Critérios de aceite", "Restrições", "Casos de borda"]
PT_BACKLOG.append("Dependências")


def test_the_backlog_template_has_the_gap_ledgers_headings() -> None:
    for language, headings in (
        ("en", ["What", "Why", "Scope", "Acceptance criteria", "Constraints", "Edge cases", "Dependencies"]),
        ("pt", PT_BACKLOG),
    ):
        body, labels = markdown_template(backlog_markdown(language))  # type: ignore[arg-type]
        assert [line[3:] for line in body.split("\n") if line.startswith("## ")] == headings
        assert labels == ["refine"]


def test_the_issues_language_is_portuguese_when_most_ra9_issues_use_portuguese_headings() -> None:
    pt = "## 1. Visão\nx\n## 4. Critérios de Aceite\ny"
    en = "## 1. Vision\nx\n## 4. Acceptance Criteria\ny"
    assert issue_language([pt, pt, en, "no headings at all"]) == "pt"
    assert issue_language([pt, en]) == "en"
    assert issue_language([]) == "en"


def test_labels_follow_the_settings_and_skip_switched_off_capabilities() -> None:
    settings = HandlerSettings.model_validate(
        {
            "bug_refinement": {"approved_label": "ok", "approved_color": "00ff00"},
            "milestones": {"enabled": False},
        }
    )
    running = [c.section for c in capabilities(registry, settings)]
    labels = {label.name: label for label in labels_for(settings, running)}
    assert labels["ok"].color == "00ff00"
    wanted = {"bug", "refine", "refinement:pending", "refinement:needs-info", "refinement:needs-triage"}
    assert wanted <= set(labels)
    assert "milestone-dashboard" not in labels
    assert len(labels) == len({name.casefold() for name in labels})


def test_the_pull_request_says_what_steward_will_do_and_previews_the_latest_bug() -> None:
    settings = HandlerSettings()
    plan = proposal("github", registry, settings, "en")
    bugs = [
        Issue(3, "Old crash", "nothing", "open", "ann", ("bug",)),
        Issue(7, "Cart loses items", "The cart loses items.", "open", "bob", ("bug",)),
    ]
    body = pull_body(
        plan,
        kind="github",
        registry=registry,
        settings=settings,
        found=preview(bugs, repo="o/r", refined_at=AT),
        fingerprint="ed25519:0123456789abcdef",
    )
    assert body.index("**Next step:**") < body.index("## What Steward will do")
    assert "signs every record it keeps in a comment with the key `ed25519:0123456789abcdef`" in body
    assert "RA9 bug refinement** — on" in body
    assert "| `refinement:approved` | `#0e8a16` |" in body
    assert "| `/steward init [--labels]` |" in body and "admin" in body
    # Issue 34 §4: the preview shows what the real verdict asks the reporter — its questions only.
    assert "On #7 (Cart loses items)" in body
    assert "I would ask its author 4 questions, as the verdict would" in body
    assert "1. Which version were you on" in body and "MISSING_SECTION" not in body and "❌" not in body
    assert len(body) < 60_000
    none = pull_body(
        plan, kind="gitea", registry=registry, settings=settings, found=preview([], repo="o/r", refined_at=AT)
    )
    assert "no open issue labelled `bug`" in none


@given(st.text())
def test_a_body_that_is_not_a_form_is_read_as_written(text: str) -> None:
    rewritten = from_issue_form(text)
    if "### " not in text:
        assert rewritten == text


@given(
    st.lists(
        st.sampled_from(
            [
                "### 1. Vision",
                "### 4. Acceptance Criteria",
                "_No response_",
                "### Status",
                "Pendente",
                "```",
                "text",
                "",
                "## 2. Persona",
            ]
        ),
        max_size=30,
    )
)
def test_the_form_reading_never_fails_and_is_stable(lines: list[str]) -> None:
    text = "\n".join(lines)
    once = from_issue_form(text)
    assert from_issue_form(once) == once


def test_a_fence_after_a_status_field_is_not_read_as_its_value() -> None:
    """Found by the property above: `### Status` followed by a fence took the fence as the status, and the
    second reading then saw different code blocks."""
    lines = ["### Status", "```", "### 1. Vision", "### 4. Acceptance Criteria", "```", "### 1. Vision"]
    text = "\n".join(lines)
    once = from_issue_form(text)
    assert "**Status:** ```" not in once
    assert from_issue_form(once) == once
