# syntax=docker/dockerfile:1
# Steward's image: the webhook receiver by default (`steward serve`), a worker with `steward worker`.
#
#   docker build -t steward .
#   docker run --read-only --tmpfs /tmp -p 8000:8000 --env-file steward.env steward
#   docker run --read-only --tmpfs /tmp --env-file steward.env steward worker
#
# It runs as an unprivileged user (10001) and writes nothing outside /tmp, so it works with a
# read-only root filesystem. See docs/deploy.md.

ARG PYTHON_IMAGE=python:3.13-slim

# --- builder: a virtualenv with the locked dependencies and Steward itself -----------------------
FROM ${PYTHON_IMAGE} AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# The same path as in the final image: a virtualenv's scripts name their interpreter by path.
RUN python -m venv /opt/steward

# Dependencies first, exactly the tested versions (requirements.lock, `make lock`): this layer is
# rebuilt only when the lock changes.
COPY requirements.lock /src/requirements.lock
RUN /opt/steward/bin/pip install --no-deps --requirement /src/requirements.lock

# Then Steward, without resolving anything again; pip check proves the lock is complete.
COPY pyproject.toml README.md LICENSE /src/
COPY bot /src/bot
COPY handlers /src/handlers
RUN /opt/steward/bin/pip install --no-deps /src \
    && /opt/steward/bin/pip check

# --- runtime ---------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE}

LABEL org.opencontainers.image.title="steward" \
      org.opencontainers.image.description="A GitHub and Gitea/Forgejo bot for a disciplined issue-to-fix workflow" \
      org.opencontainers.image.licenses="MIT"

# A fixed UID/GID so that Kubernetes' runAsNonRoot can check it and volumes can be owned by it.
RUN groupadd --system --gid 10001 steward \
    && useradd --system --uid 10001 --gid 10001 --home-dir /tmp --no-create-home \
       --shell /usr/sbin/nologin steward

COPY --from=builder /opt/steward /opt/steward
COPY deploy/docker/healthcheck.py /opt/steward/healthcheck.py

# In a container: listen on every interface, log JSON lines, write no bytecode (the root filesystem
# may be read-only; the bytecode was compiled at build time) and keep HOME in the writable /tmp.
ENV PATH="/opt/steward/bin:${PATH}" \
    HOME=/tmp \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    STEWARD_HOST=0.0.0.0 \
    STEWARD_LOG_FORMAT=json

USER 10001:10001
WORKDIR /tmp

EXPOSE 8000

# The receiver must answer /healthz; a worker its metrics port when it has one (healthcheck.py).
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["python", "/opt/steward/healthcheck.py"]

# SIGTERM drains: the receiver finishes requests (up to 20 s), a worker finishes or re-queues its jobs.
STOPSIGNAL SIGTERM
ENTRYPOINT ["steward"]
CMD ["serve"]
