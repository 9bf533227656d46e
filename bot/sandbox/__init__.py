"""The sandbox forge: an in-memory GitHub (and later Gitea) that the bot's real clients talk to over HTTP.

- `app.create_app(users, state_file)` builds the Starlette app (`app.state.forge` is the `SandboxState`,
  `app.state.sandbox` the runtime: deliveries, faults, request log).
- `server.run(...)` serves it for `steward sandbox`; `server.SandboxServer` serves it from a thread for tests.
- `state` / `gitmodel` hold forge-neutral data; `github*` modules speak GitHub's REST API and payloads;
  `hooks` delivers webhooks; `admin` is the unauthenticated `/_sandbox/` API.
"""
