"""The forge-neutral ``Event`` a webhook becomes (``event``), and the normalisers that build it from GitHub's
(``github``) and Gitea's (``gitea``) payloads, with what both read alike (``payload``).
"""
