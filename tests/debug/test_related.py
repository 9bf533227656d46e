"""Seed 004's related sessions match on the symptom (issue 36 §3): what each report says happened — its
observed behaviour, read by bug refinement's report parser — and the files it cites, not its title. Before,
two reports of one failure under different titles were not linked, and two different failures under the same
title were."""

from __future__ import annotations

from bot.forge import Issue
from handlers.bug_refinement.api import observed_text, report_of
from handlers.debug.related import MAX_READ, SYMPTOM_CHARS, related, symptom_words


def observed(body: str) -> str:
    return observed_text(report_of(body))


def _bug(number: int, title: str, body: str, state: str = "closed") -> Issue:
    return Issue(number, title, body, "open" if state == "open" else "closed", "reporter")


# An RA9 report, the kind Steward refines.
RA9 = """## 1. Vision

Switching the currency must keep the applied promotions.

## 5. Reproduction Recipe

### 5.1 Environment

shop-web 4.18.2, Firefox 133.

### 5.2 Steps

1. Apply the code LOYAL15 to a cart of 100.00 USD.
2. Switch the currency to EUR.

### 5.3 Observed vs Expected

**Observed:** {observed}
**Expected:** the total shows 76.50 EUR with the discount line kept.
"""

# GitHub's default bug report template, as people fill it in.
GITHUB = """**Describe the bug**
{summary}

**To Reproduce**
Steps to reproduce the behavior:
1. Go to the cart
2. Click on 'Checkout'

**Expected behavior**
The order is placed with the discount.

**Actual behavior**
{observed}

**Desktop (please complete the following information):**
 - OS: macOS 14
 - Browser: Safari 17
"""

DROPPED = "the discount line disappears and the total shows the full price in the new currency."


def test_titles_differ_but_the_symptom_is_the_same() -> None:
    bug = _bug(40, "Total is wrong after switching to EUR", RA9.format(observed=DROPPED), "open")
    earlier = _bug(
        12,
        "Promo code LOYAL15 ignored on checkout",
        GITHUB.format(
            summary="The promo is gone.",
            observed="The discount line disappears; the total shows the full price.",
        ),
    )
    [found] = related(bug, (), [earlier], observed)
    assert found.number == 12
    assert (
        found.why.startswith("a similar symptom: ") and "discount" in found.why and "disappears" in found.why
    )


def test_titles_match_but_the_symptoms_differ() -> None:
    bug = _bug(
        41,
        "Checkout page is broken",
        GITHUB.format(summary="Cannot pay.", observed="The pay button stays grey and cannot be clicked."),
        "open",
    )
    other = _bug(
        13,
        "Checkout page is broken",
        GITHUB.format(summary="Looks odd.", observed="The page renders without any styles in Safari."),
    )
    assert related(bug, (), [other], observed) == ()


def test_the_symptom_is_the_observed_behaviour_else_the_title() -> None:
    ra9 = _bug(1, "Title words only", RA9.format(observed=DROPPED))
    assert {"discount", "disappears", "currency"} <= symptom_words(ra9, observed)
    assert "title" not in symptom_words(ra9, observed), "the title is not the symptom when one is given"
    assert "expected" not in symptom_words(ra9, observed) and "observed" not in symptom_words(ra9, observed)
    bare = _bug(2, "Discount disappears from receipts", "It happens every time.")
    assert symptom_words(bare, observed) == {"discount", "disappears", "receipts"}


def test_the_read_is_bounded() -> None:
    """Each report is read up to ``SYMPTOM_CHARS`` (an observed line past a long pasted log is not read),
    and at most ``MAX_READ`` candidates, newest first."""
    late = _bug(3, "Unrelated title", "x" * SYMPTOM_CHARS + "\n\n" + RA9.format(observed=DROPPED))
    assert symptom_words(late, observed) == {"unrelated", "title"}
    bug = _bug(10_000, "Total is wrong after switching to EUR", RA9.format(observed=DROPPED), "open")
    same = RA9.format(observed=DROPPED)
    many = [_bug(n, f"Report {n}", same) for n in range(1, MAX_READ + 50)]
    reads: list[int] = []

    def counted(body: str) -> str:
        reads.append(1)
        return observed(body)

    found = related(bug, (), many, counted)
    assert [r.number for r in found] == [MAX_READ + 49 - n for n in range(5)], "newest first, five at most"
    assert len(reads) <= MAX_READ + 1
    old_only = [_bug(n, f"Report {n}", "CSS.") for n in range(1, MAX_READ + 2)] + [_bug(0, "Old", same)]
    assert related(bug, (), old_only, observed) == (), "the oldest is past the bound"


def test_a_cited_file_still_links_whatever_the_words() -> None:
    bug = _bug(50, "Session survives logout", "The store in src/auth/cache.py:88 never forgets.", "open")
    other = _bug(7, "Tokens outlive their user", "See src/auth/cache.py.")
    [found] = related(bug, (), [other], observed)
    assert found.why == "cites `src/auth/cache.py`"
