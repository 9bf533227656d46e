"""Catching up after downtime: commands written while nobody listened (``comments``), the level-triggered
re-derivation of every open issue Steward keeps state on (``reconcile``), and the forge that only says what
it would write (``dry_run``, for ``steward reconcile --dry-run``).
"""
