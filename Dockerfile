# Image of the admission webhook, run by the Helm chart in deploy/helm/kvlint-webhook (`kvlint webhook
# serve ...`) and published by .github/workflows/webhook-image.yml as ghcr.io/kvlint/kvlint:<version>.
# Build from this checkout:           docker build -t ghcr.io/kvlint/kvlint:0.1.0 .
# Or from a release on PyPI instead:  docker build --build-arg KVLINT_VERSION=0.1.0 -t ... .
# The distribution is `kvlint-k8s` (the PyPI project named `kvlint` is an unrelated tool); the command is `kvlint`.
FROM python:3.12-slim
ARG KVLINT_VERSION=""
WORKDIR /src
COPY pyproject.toml README.md ./
COPY kvlint ./kvlint
COPY rules ./rules
RUN if [ -n "$KVLINT_VERSION" ]; then \
      pip install --no-cache-dir "kvlint-k8s[webhook]==$KVLINT_VERSION"; \
    else \
      pip install --no-cache-dir '.[webhook]'; \
    fi && rm -rf /src
WORKDIR /
# Model configs come from the bundled catalogue; mount more at a path given to --model-dir.
ENV HF_HUB_OFFLINE=1 PYTHONDONTWRITEBYTECODE=1
USER 65532:65532
ENTRYPOINT ["kvlint"]
CMD ["webhook", "serve", "--help"]
