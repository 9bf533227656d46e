"""Steward's settings: the process's (``settings``, from ``STEWARD_*``), a repository's file and its schema
(``repo_file``), and each repository's effective settings, cached (``repo_settings``).
"""
