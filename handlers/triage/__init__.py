"""The everyday commands a team expects from a bot (issue 39): assign, claim, label — and, beside them, the
others of the `triage` settings section.

``rules`` holds the pure decisions (which labels a person may set, who may be assigned), ``render`` the
replies and notes, ``effects`` the forge reads and writes, ``bot`` registers the commands (their short forms
run only where `triage.short_commands` is on), ``api`` is what other capabilities ask.
"""
