"""Gitea's API v1 over the sandbox state, with Gitea's shapes and wording, and the webhooks a repository
sends in its forge's flavour (``webhooks``).
"""
