"""Decision provenance: design forks listed on issues and pull requests, recorded with `/decide`, checked
by a pure juror, shown in one reconciliation comment per issue.

``parse`` (the forks a body lists, the commands' arguments), ``juror`` (``fork_status``: which forks a
checked record resolves), ``render`` (the reconciliation comment) are pure; ``effects`` reads the forge and
writes the difference; ``bot`` registers the events, commands and reconciler; ``api`` is what other
capabilities ask (``unresolved_forks``); ``cli`` is `steward forks`.
"""
