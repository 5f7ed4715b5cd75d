# Image for the admission webhook (deploy/webhook/30-deployment.yaml runs `kvlint webhook serve ...`).
# Build: docker build -t ghcr.io/kvlint/kvlint:0.1.0 .
FROM python:3.12-slim
WORKDIR /src
COPY pyproject.toml README.md ./
COPY kvlint ./kvlint
COPY rules ./rules
RUN pip install --no-cache-dir '.[webhook]'
# Model configs come from the bundled catalogue; mount more at a path given to --model-dir.
ENV HF_HUB_OFFLINE=1
USER 65532:65532
ENTRYPOINT ["kvlint"]
CMD ["webhook", "serve", "--help"]
