"""The texts the demo's people write: a casual bug report, a complete RA9 one, a backlog item."""

from __future__ import annotations

CASUAL_BUG = "App crashes when I open it"

APPROVED_BUG = """**Status:** Pendente
**Severity:** high
**Scope:** cart

## 1. Vision
Shoppers who switch currency lose their discount and pay the full price.

## 2. Persona & Usage Scenario
A returning customer applies `LOYAL15`, then switches the currency to EUR before paying.

## 3. Value Delivery
Customers pay the price they were promised.

## 4. Acceptance Criteria
Given a cart worth 100.00 USD with LOYAL15 applied
When the customer switches the currency to EUR
Then the cart total is 76.50 EUR

## 5. Reproduction Recipe
### 5.1 Environment
shop-web 4.18.2 on Firefox 133
### 5.2 Steps to Reproduce
1. Add a product worth 100.00 USD and apply `LOYAL15`.
2. Switch the currency to EUR.
### 5.3 Observed vs Expected
Observed: the total is 90.00 EUR and the discount is gone.
Expected: the total is 76.50 EUR.
### 5.4 Artifacts
Log: `logs/checkout.log`, lines 4410-4432

## 6. Root-Cause Hypothesis
`switch_currency()` rebuilds the cart without its promotions (`src/cart.py:42`).

## 7. Regression Test Slot
`tests/test_cart.py`

```python
def test_discount_survives_a_currency_switch():
    cart = Cart(total=100, currency="USD", code="LOYAL15")
    cart.switch_currency("EUR", rate=0.9)
    assert cart.total == 76.5
```

## 8. Dependencies
**Blocked By:** —

## 9. Decision History
- 2026-11-30: keep promotions on a currency switch — the promised price is the contract.
"""

BACKLOG_ITEM = """Shoppers want to export their orders as a CSV file.

## Why
Accountants re-type order totals by hand every month.
"""


# The code the scene's evidence points at: Steward checks every `path:line` against the repository.
CART_CODE = {
    "cart/total.py": "".join(f"# total {i}\n" for i in range(1, 42)) + "total = round(subtotal) - discount\n",
    "cart/cart.py": "".join(f"# cart {i}\n" for i in range(1, 88))
    + "return Cart(items=list(self.items))  # discount is not copied\n# end\n",
    "cart/rates.py": "def convert(total, rate):\n    return round(total * rate, 2)\n",
}
