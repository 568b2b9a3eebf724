# syntax=docker/dockerfile:1
# Reviewer's container image (docs/deploy.md). Two stages: the first builds Reviewer's wheel and the
# wheels of everything it depends on; the second installs them, with no compiler and no source tree.
#   docker build -t reviewer .
#   docker run -p 8080:8080 -v "$PWD/secrets:/etc/reviewer/secrets:ro" reviewer            # serve
#   docker run ... reviewer serve --no-workers   |   reviewer worker   |   reviewer setup --public-url URL
# Nothing secret goes into a layer: the settings come from the environment at run time and the
# GitHub App's credentials from the mounted secret store.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
# Only what the package is built from (.dockerignore keeps the rest out of the context).
COPY pyproject.toml README.md ./
COPY bot ./bot
# The same command as tests/test_image_wheel.py: Reviewer's wheel, then every dependency's, from PyPI.
RUN python -m pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
ARG VERSION=unknown
LABEL org.opencontainers.image.title="Reviewer" \
      org.opencontainers.image.description="A GitHub App that reviews pull requests as the repository's .reviewer.yaml says" \
      org.opencontainers.image.version="${VERSION}"
# xmlsec1: SAML signatures (pysaml2 runs it); git: `reviewer plan` and `reviewer context` read checkouts.
# Debian's archive keeps only the current build of a package, so versions are not pinned here: a
# rebuild takes the security updates.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends xmlsec1 git \
    && rm -rf /var/lib/apt/lists/*
# The wheels of the first stage, mounted for this step only: no layer keeps them.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    python -m pip install --no-cache-dir --no-index --find-links=/wheels /wheels/*.whl
# A user of its own, by number, so that Kubernetes' runAsNonRoot can check it. Its home holds the
# SQLite database of the one-machine deployment (mount a volume there to keep it).
RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/reviewer --create-home reviewer \
    && mkdir -p /etc/reviewer/secrets && chown 10001:10001 /etc/reviewer/secrets && chmod 0700 /etc/reviewer/secrets
USER 10001:10001
WORKDIR /var/lib/reviewer
# REVIEWER_SECRETS_DIR is where the secret store is mounted, a path: no secret is set here.
# hadolint ignore=DL3064
ENV PYTHONUNBUFFERED=1 \
    PORT=8080 \
    REVIEWER_DATABASE_URL=sqlite:////var/lib/reviewer/reviewer.db \
    REVIEWER_SECRETS_DIR=/etc/reviewer/secrets
VOLUME ["/var/lib/reviewer"]
# The webhook, the console and the APIs (serve); the probes and /metrics (serve and worker).
EXPOSE 8080
# Ready: started, the store reachable, the database at this release's schema (GET /readyz).
# Kubernetes asks /livez and /readyz itself (deploy/kubernetes/) and ignores this.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PORT', '8080') + '/readyz', timeout=4)"]
ENTRYPOINT ["reviewer"]
CMD ["serve"]
