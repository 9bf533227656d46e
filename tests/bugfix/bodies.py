"""Bug bodies for the bugfix tests: the approved RA9 bug of the e2e data, with section 7 rewritten."""

from __future__ import annotations

from pathlib import Path

APPROVED = (Path(__file__).parent.parent / "e2e" / "data" / "bug-approved.md").read_text()
_SLOT_START = APPROVED.index("## 7. Regression Test Slot")
_SLOT_END = APPROVED.index("## 8. Dependencies")

TEST_CODE = "def test_discount_survives_currency_switch():\n    assert total_after_switch() == 76.5\n"


def with_slot(slot: str) -> str:
    """The approved bug with ``slot`` as the body of section 7."""
    return (
        APPROVED[:_SLOT_START]
        + "## 7. Regression Test Slot\n\n"
        + slot.strip()
        + "\n\n---\n\n"
        + APPROVED[_SLOT_END:]
    )


def python_slot(path: str = "tests/test_currency_switch.py", code: str = TEST_CODE) -> str:
    return with_slot(f"- Test: `{path}`\n\n```python\n{code.rstrip()}\n```\n")


BUG = python_slot()
