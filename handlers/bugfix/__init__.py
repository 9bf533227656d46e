"""Regression-first bugfix branches (issue 13): `/bugfix` opens a branch whose first commit is the failing
regression test, the `steward/regression-first` status reports the order and the proof (the forge enforces it
only where it is a required check), and a review ledger keeps a budget that a new pull request or an edited
comment does not reset.

Pure rules: ``regression_slot`` (section 7 of the bug: the test's path and code, the digest, test globs and
test case names), ``gate`` (`/bugfix`'s refusals, its arguments, the names it gives), ``ledger`` (review
rounds, dispositions, gaps and budgets as a state machine), ``native_reviews`` (native reviews and reviewers
in conflict) and ``status`` (the commit status as a function of commits, CI and the ledger).
``other_capabilities`` reads what other capabilities decide (open forks, the root cause).
"""
