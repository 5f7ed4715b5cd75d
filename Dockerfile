# Image of the admission webhook, run by the Helm chart in deploy/helm/kvlint-webhook (`kvlint webhook
# serve ...`) and published by .github/workflows/webhook-image.yml as ghcr.io/kvlint/kvlint:<version>.
# Build: docker build -t ghcr.io/kvlint/kvlint:0.1.0 .
FROM python:3.12-slim
WORKDIR /src
COPY pyproject.toml README.md ./
COPY kvlint ./kvlint
COPY rules ./rules
RUN pip install --no-cache-dir '.[webhook]' && rm -rf /src
WORKDIR /
# Model configs come from the bundled catalogue; mount more at a path given to --model-dir.
ENV HF_HUB_OFFLINE=1 PYTHONDONTWRITEBYTECODE=1
USER 65532:65532
ENTRYPOINT ["kvlint"]
CMD ["webhook", "serve", "--help"]
