"""Onboarding: a "Configure Steward" pull request with the configuration, the issue templates and the labels a
repository needs.

The pure parts: ``config_file`` (the commented configuration, from the settings models), ``templates`` (the
RA9 bug report and the backlog item, per forge and language), ``plan`` (capabilities, labels, the pull
request's text); ``bot`` registers the installation events, the pull request's end and ``/steward init``.
"""
