"""The `steward demo` scene of root-cause discipline: hypotheses on a refined bug, a confirmation refused
without a `path:line`, three failures escalated to a human, `/resume-debug`, a confirmation refused for a line
the file does not have, then a root cause evidenced with the line it points at."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.demo.stage import put_cart_code
from bot.demo.texts import APPROVED_BUG

if TYPE_CHECKING:
    from bot.demo.stage import Stage


def _say(text: str) -> None:
    print(text, flush=True)


def debug_scene(stage: Stage) -> None:
    _say("\n▶ Root-cause discipline: a hypotheses board, evidence that points at code, escalation")
    put_cart_code(stage)
    number = stage.issue(stage.outsider, "Discount lost when the currency changes", APPROVED_BUG)
    stage.label(number, ["bug", "refine"])
    stage.settle()
    stage.comment(
        stage.maintainer,
        number,
        "/steward hypothesis Rounding: cart/total.py:42 rounds before the discount is applied\n\n"
        "/steward hypothesis Stale rate: the exchange rate is cached per session\n\n"
        "/steward hypothesis Wrong currency: the discount is stored in the old currency\n\n"
        "/steward rank H2 1",
    )
    _say("  @maintainer put three hypotheses on the board of a refined bug and ranked H2 most likely.")
    stage.settle()
    stage.show(number, max_lines=12)
    stage.comment(stage.maintainer, number, "/steward confirm H1 I'm sure it is the rounding")
    _say("\n  @maintainer tried to confirm H1 without evidence that points at code.")
    stage.settle()
    stage.show(number, max_lines=4)
    stage.comment(
        stage.maintainer,
        number,
        "/steward refute H1 cart/total.py:42 rounds after the discount; the test passes\n\n"
        "/steward refute H2 the rate is read on every request (cart/rates.py:10)\n\n"
        "/steward inconclusive H3 cannot reproduce with stored discounts",
    )
    _say("\n  @maintainer refuted two hypotheses and found the third inconclusive: Steward asks a human.")
    stage.settle()
    stage.show(number, max_lines=10)
    stage.comment(
        stage.maintainer,
        number,
        "/steward resume-debug the cart is rebuilt on currency change: look at how it is copied\n\n"
        "/steward hypothesis Lost on copy: cart/cart.py:88 copies the items but not the discount",
    )
    stage.settle()
    stage.comment(stage.maintainer, number, "/steward confirm H4 cart/cart.py:880 `copy()` drops `discount`")
    _say(
        "\n  @maintainer resumed with guidance, added H4 and tried to confirm it at `cart/cart.py:880` — "
        "a line the file does not have."
    )
    stage.settle()
    stage.show(number, max_lines=4)
    stage.comment(stage.maintainer, number, "/steward confirm H4 cart/cart.py:88 `copy()` drops `discount`")
    _say("\n  @maintainer confirmed H4 at the line Steward found; the board shows what that line says.")
    stage.settle()
    stage.show(number, max_lines=16)
