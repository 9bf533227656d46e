"""The sandbox forge: an in-memory GitHub and Gitea that Steward's real clients talk to over HTTP.

- `app.create_app(users, state_file)` builds the Starlette app (`app.state.forge` is the `SandboxState`,
  `app.state.sandbox` the runtime: deliveries, faults, request log).
- `server.run(...)` serves it for `steward sandbox`; `server.SandboxServer` serves it from a thread for tests.
- `shared/` holds what both forges share (the state, the git model, the forge-neutral operations, webhook
  delivery); `github/` speaks GitHub's REST and GraphQL APIs and payloads, `gitea/` Gitea's; `admin` is the
  unauthenticated `/_sandbox/` API.
"""
