"""Root-cause discipline on bug issues: a hypotheses board, evidence with `path:line`, no fix without
root-cause evidence, and escalation to a human.

Pure rules: ``locations`` (the `path:line` recogniser), ``board`` (the log and its state machine), ``render``
(the board, the escalation, the report). Effects: ``effects`` (read, withdraw, record, escalate, labels, fix
rows). ``bot`` registers the commands and events; ``api.root_cause`` is what `/bugfix` asks; ``cli`` is
`steward debug-report`.
"""
