"""What Steward's processes share through Redis (DESIGN §3.1: the queue, dedupe keys, locks, budgets and
caches — never a decision): the job queue and its dedupe (``jobs``), what one person may cost (``budgets``),
work for later (``deferred``), parked jobs (``dead_letters``), per-issue locks (``locks``), effects done once
across every worker (``once_across_workers``) and the gauges read from all of it (``gauges``). The receiver
and the worker meet here and nowhere else.
"""
