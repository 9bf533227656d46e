"""GitHub's REST and GraphQL APIs over the sandbox state, with GitHub's shapes, wording and webhooks."""
