"""Backlog refinement: a gap-ledger interview in the issue thread that ends in a versioned spec.

The pure rules live in small modules (``gaps``, ``probe``, ``ledger``, ``selection``, ``gate``,
``interview``, ``spec``, ``level``, ``deps``, ``render``, and ``plan``, the steps of the interview);
``effects`` reads and writes the thread on the forge; ``bot`` declares the label handler and the commands;
``cli`` is ``steward ledger verdict``.
"""
