"""Backlog refinement: a gap-ledger interview in the issue thread that ends in a versioned spec.

The pure rules live in small modules (``gaps``, ``probe``, ``ledger``, ``selection``, ``gate``,
``interview``, ``spec``, ``level``, ``deps``, ``render``); ``bot`` holds the forge effects and registers
the label handler and the commands; ``cli`` is ``steward ledger verdict``.
"""
