"""The ``steward`` command (``main``) and the subcommands that are more than a line there: ``verify``, the
operator's ``config-schema``/``check-config``/``reconcile`` (``operator``), and what read-only checks share
(``args``). ``python -m bot.cli`` runs it.
"""
