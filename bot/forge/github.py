"""The GitHub adapter: the Forge port over gidgethub (``github_transport``). ``GitHubForge``
(``github_forge``) is the port for one token or App installation, in parts — issues (``github_issues``),
pins (``github_pins``, GraphQL), git, pull requests and CI (``github_code``), webhook deliveries
(``github_deliveries``), records (``github_records``); ``GitHubForges`` (``github_apps``) builds one per token
or App installation.

Every call goes through the retry policy and every write through the shared write budget.
"""

from __future__ import annotations

from bot.forge.github_apps import GitHubForges
from bot.forge.github_forge import GitHubForge

__all__ = ["GitHubForge", "GitHubForges"]
