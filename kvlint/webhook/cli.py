"""``kvlint webhook`` click group: ``kvlint webhook serve``.

This module imports only click and kvlint's light modules, so ``kvlint --help`` and
``kvlint webhook --help`` work without the server libraries; ``serve`` checks for them first and exits
with status 1 and the command that installs them (:func:`kvlint.webhook.install_hint`: ``pip install
'kvlint-k8s[webhook]'``, or ``pip install -e 'DIR[webhook]'`` for a source checkout) when they are missing.
"""

from __future__ import annotations

import math
import re
from typing import Any

import click

from kvlint.webhook import install_hint, missing_server_deps
from kvlint.webhook.request_options import MAX_REVIEW_SIZE, MAX_REVIEW_SIZE_LIMIT, MIN_REVIEW_SIZE


def tls_hint(cert: str, key: str, exc: BaseException) -> str:
    """What OpenSSL's terse error means for these files, as ``" (...)"``, or ``""``.

    ``ssl.SSLContext.load_cert_chain`` reports a file that holds no PEM block of the expected kind as
    "[SSL] PEM lib" and a key of another certificate as "KEY_VALUES_MISMATCH", without saying which file is at
    fault; this reads the start of each file (at most 64 KiB) to name it. Never raises."""
    text = str(exc)
    if "KEY_VALUES_MISMATCH" in text:
        return f" (the private key in {key} does not belong to the certificate in {cert})"
    if "PEM lib" not in text and "NO_START_LINE" not in text:
        return ""

    def head(path: str) -> str:
        try:
            with open(path, "rb") as fh:
                return fh.read(65536).decode("ascii", "replace")
        except OSError:
            return ""

    if "-----BEGIN CERTIFICATE-----" not in head(cert):
        return f" ({cert} holds no PEM certificate: a '-----BEGIN CERTIFICATE-----' block)"
    if not re.search(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----", head(key)):
        return f" ({key} holds no PEM private key: a '-----BEGIN PRIVATE KEY-----' block, or RSA/EC)"
    return ""


#: A size as the server reads one (:func:`_parse_size`): an ASCII decimal number, an optional exponent of one or two
#: digits (``5.36870912e+08``, as a number in the chart's values renders), a unit ``ki``, ``mi``, ``gi``, ``k``,
#: ``m`` (mega here; a lower-case ``m`` alone is refused before) or ``g`` in any case, and an optional ``B``. The
#: chart's ``kvlint.bytes`` reads the same grammar (``kube`` false), so the two refuse the same spellings. A leading
#: ``-`` is read, so that :class:`~kvlint.webhook.review.WebhookSettings` refuses a negative size naming it.
_SIZE_RE = re.compile(r"(-?[0-9]+\.?[0-9]*|-?\.[0-9]+)([eE][-+]?[0-9]{1,2})?([kKmMgG][iI]?)?[bB]?")
_SIZE_UNITS = {"ki": 2**10, "mi": 2**20, "gi": 2**30, "k": 10**3, "m": 10**6, "g": 10**9}


def _parse_size(value: str, option: str | None = None) -> int:
    """``4194304``, ``4Mi``, ``3MiB``, ``2M``, ``5.36870912e+08`` -> bytes (:data:`_SIZE_RE`; surrounding
    whitespace ignored). Raises click.BadParameter (naming ``option``, the flag, when given) for anything else:
    what is not a finite size (``inf``, ``nan``, ``1e400``; a negative one is left to
    :class:`~kvlint.webhook.review.WebhookSettings`, which names the setting), and what only Python's own number syntax read
    (``1_024Mi``, ``+512Mi``, another script's digits such as Arabic-Indic ``\u0665\u0661\u0662``, which the chart
    and Kubernetes do not). A lower-case ``m`` unit, with or without a ``B`` (``512m``, ``512mb``), is refused with
    its own message: in a Kubernetes quantity (apimachinery ``resource.Quantity``, the form a pod's ``memory:
    512Mi`` is written in) ``m`` is milli, a thousandth, and Docker reads ``512m`` as MiB, so the value is read as
    none of them; the error says to write ``512Mi`` or ``512M``."""
    text = value.strip()
    unit = text[:-1] if text[-1:] in ("b", "B") else text
    if unit.endswith("m"):
        num = unit[:-1].strip()
        raise click.BadParameter(
            f"{value!r}: in a Kubernetes quantity 'm' is milli (a thousandth), not mega: write {num or 'N'}Mi "
            f"(MiB, 2^20 bytes) or {num or 'N'}M (10^6 bytes)",
            param_hint=option,
        )
    match = _SIZE_RE.fullmatch(text)
    if match is None:
        raise click.BadParameter(f"not a size: {value!r} (e.g. 3Mi, 4194304)", param_hint=option)
    number, exponent, suffix = match.groups()
    n = float(number + (exponent or "")) * _SIZE_UNITS.get((suffix or "").lower(), 1)
    if not math.isfinite(n):  # pragma: no cover - two exponent digits and a Gi stay finite
        raise click.BadParameter(f"not a size: {value!r} (e.g. 3Mi, 4194304)", param_hint=option)
    return int(n)


def _given(kw: dict[str, Any], name: str, default: Any) -> Any:
    value = kw.get(name)
    return default if value is None else value


def build_settings(**kw: Any) -> Any:
    """:class:`~kvlint.webhook.review.WebhookSettings` from ``serve``'s options.

    Reads ``--config`` (a ``.kvlint.yaml``, e.g. mounted from a ConfigMap) when given; flags win over
    the file. Raises click.BadParameter / click.UsageError with the reason on invalid input.
    """
    from kvlint.webhook.review import DEFAULT_TRUSTED_CONTROLLERS, WebhookSettings, webhook_options

    options = webhook_options()
    if kw.get("config"):
        try:
            from kvlint.config import apply_config, load_config
        except ImportError:  # pragma: no cover - depends on the config module being present
            raise click.UsageError("--config needs kvlint.config, which this kvlint does not have") from None
        try:
            options = apply_config(options, load_config(kw["config"]))
        except (ValueError, OSError) as exc:
            raise click.UsageError(str(exc)) from None
    overrides: dict[str, Any] = {}
    if kw.get("model_dir"):
        overrides["model_dirs"] = tuple(options.model_dirs) + tuple(kw["model_dir"])
    if kw.get("default_accelerator"):
        from kvlint.accelerators import did_you_mean, lookup

        if lookup(kw["default_accelerator"]) is None:
            raise click.BadParameter(
                f"unknown accelerator {kw['default_accelerator']!r}{did_you_mean(kw['default_accelerator'])}; "
                "`kvlint accelerators` lists them",
                param_hint="--default-accelerator",
            )
        overrides["default_accelerator"] = kw["default_accelerator"]
    if kw.get("engine_version"):
        from kvlint.memory.versions import engine_version_option

        try:  # the form kvlint check takes it in (v0.11.0 -> 0.11.0), so parser and plan read one release
            overrides["engine_version"] = engine_version_option(kw["engine_version"])
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--engine-version") from None
    if kw.get("max_review_size") is not None:
        overrides["max_review_size"] = kw["max_review_size"]
    if kw.get("exemptions") is not None:
        overrides["exemptions_allowed"] = kw["exemptions"] and getattr(options, "exemptions_allowed", True)
    options = webhook_options(options, **overrides)
    try:
        return WebhookSettings(
            mode=kw.get("mode") or "enforce",
            failure_mode=kw.get("failure_mode") or "open",
            timeout_seconds=_given(kw, "timeout", 2.0),
            max_request_bytes=_parse_size(kw.get("max_request_bytes") or "3Mi", "--max-request-bytes"),
            workers=_given(kw, "workers", 2),
            exempt_namespaces=tuple(kw.get("exempt_namespace") or ("kube-system",)),
            trusted_controllers=(
                tuple(p for p in kw["trusted_controller"] if p)
                if kw.get("trusted_controller")
                else DEFAULT_TRUSTED_CONTROLLERS
            ),
            options=options,
            worker_memory_bytes=_parse_size(kw.get("worker_memory") or "512Mi", "--worker-memory") or None,
            header_timeout_seconds=_given(kw, "header_timeout", 5.0),
            body_timeout_seconds=_given(kw, "body_timeout", 10.0),
            max_inflight=_given(kw, "max_inflight_reviews", 0),
            allow_existing_violations=kw.get("allow_existing_violations", True) is not False,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


@click.group()
def webhook() -> None:
    """Validating admission webhook: the `kvlint check` pipeline at `kubectl apply` time.

    Exit codes: those of `kvlint webhook serve` (see its --help); 2 usage error.
    """


@webhook.command()
@click.option("--host", default="0.0.0.0", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8443, show_default=True)
@click.option("--tls-cert", required=True, type=click.Path(dir_okay=False), help="PEM certificate chain.")
@click.option("--tls-key", required=True, type=click.Path(dir_okay=False), help="PEM private key.")
@click.option(
    "--mode",
    type=click.Choice(["enforce", "warn", "audit"]),
    default="enforce",
    show_default=True,
    help="enforce: deny on errors; warn: never deny, errors become warnings; audit: log only.",
)
@click.option(
    "--failure-mode",
    type=click.Choice(["open", "closed"]),
    default="open",
    show_default=True,
    help="When a review overruns --timeout or kvlint fails: open allows with a warning, closed denies.",
)
@click.option(
    "--allow-existing-violations",
    type=click.BOOL,
    default=True,
    show_default=True,
    help="enforce mode: an UPDATE is denied only for errors its old object did not already have (the "
    "others become warnings), as Kyverno's allowExistingViolations; false: any error denies an UPDATE.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0, 30, min_open=True),
    default=2.0,
    show_default=True,
    help="Per-review budget, seconds (enforced: an overrunning worker is killed and replaced).",
)
@click.option(
    "--max-request-bytes",
    default="3Mi",
    show_default=True,
    help="Larger bodies are not decoded: answered per --failure-mode when their head names the uid, else HTTP 413.",
)
@click.option(
    "--workers", type=click.IntRange(1, 64), default=2, show_default=True, help="Review worker processes."
)
@click.option(
    "--max-inflight-reviews",
    type=click.IntRange(0, 1024),
    default=0,
    show_default=True,
    help="Reviews decoded and linted at once in the server (0: workers + 2); bounds its memory. A review "
    "takes a slot once its body is in; others wait for one within their budget, then are answered per "
    "--failure-mode.",
)
@click.option(
    "--max-review-size",
    type=click.IntRange(MIN_REVIEW_SIZE, MAX_REVIEW_SIZE_LIMIT),
    default=MAX_REVIEW_SIZE,
    show_default=True,
    help="Most pod templates, and containers in them, reviewed in one object; a larger object gets one KV001 "
    f"error (too large to review) without being analysed. {MIN_REVIEW_SIZE} to {MAX_REVIEW_SIZE_LIMIT}.",
)
@click.option(
    "--worker-memory",
    default="512Mi",
    show_default=True,
    help="Address-space cap of each worker process (RLIMIT_AS); 0 for none.",
)
@click.option(
    "--header-timeout",
    type=click.FloatRange(0, 300, min_open=True),
    default=5.0,
    show_default=True,
    help="Seconds a request's headers may take; slower connections are closed.",
)
@click.option(
    "--body-timeout",
    type=click.FloatRange(0, 300, min_open=True),
    default=10.0,
    show_default=True,
    help="Seconds a request's body may take after its headers (HTTP 408).",
)
@click.option(
    "--max-connections",
    type=click.IntRange(1, 100_000),
    default=1000,
    show_default=True,
    help="Connections and requests at once on the review port; more get HTTP 503.",
)
@click.option(
    "--probe-port",
    type=click.IntRange(0, 65535),
    default=8080,
    show_default=True,
    help="Plain-HTTP port for /healthz, /readyz and /metrics, served apart from reviews; 0: none.",
)
@click.option(
    "--exempt-namespace", multiple=True, help="Never lint this namespace (repeatable; default kube-system)."
)
@click.option(
    "--trusted-controller",
    multiple=True,
    metavar="USER",
    help="A requester (userInfo.username; a trailing * matches a prefix) whose writes of an object controlled "
    "by a reviewed owner are not reviewed again (repeatable; replaces the default: "
    "system:kube-controller-manager and the built-in controllers' service accounts in kube-system "
    "(deployment-, replicaset-, statefulset-, job-controller...), no operator; an empty value alone: none, "
    "every object is reviewed).",
)
@click.option(
    "--exemptions/--no-exemptions",
    default=None,
    help="Whether kvlint.io/ignore annotations may suppress findings (admin switch; default: allowed).",
)
@click.option(
    "--config", type=click.Path(dir_okay=False), help=".kvlint.yaml with rules, thresholds, model paths."
)
@click.option(
    "--model-dir", multiple=True, type=click.Path(file_okay=False), help="Mounted model-config cache."
)
@click.option("--default-accelerator", metavar="ID", help="GPU assumed when a manifest does not say.")
@click.option(
    "--engine-version",
    metavar="V",
    help="Engine version when the image tag does not say, or the image is not one kvlint knows as the engine's "
    "release image (e.g. 0.11.0), as for kvlint check.",
)
@click.option(
    "--cluster",
    is_flag=True,
    help="Resolve GPUs from a node-label cache kept by a LIST + WATCH of nodes (RBAC: list, watch nodes).",
)
@click.option("--kubeconfig", type=click.Path(dir_okay=False), help="With --cluster; default: in-cluster.")
@click.option("--context", "kube_context", help="With --cluster: kubeconfig context.")
@click.option(
    "--cert-reload-interval",
    type=float,
    default=10.0,
    show_default=True,
    help="Seconds between checks of --tls-cert/--tls-key for a rotated certificate (loaded without a restart).",
)
@click.option(
    "--drain-seconds",
    type=float,
    default=5.0,
    show_default=True,
    help="On SIGTERM, seconds to keep answering reviews while /readyz reports not ready, before the server stops "
    "accepting connections (a second signal skips it).",
)
@click.option(
    "--graceful-seconds",
    type=float,
    default=10.0,
    show_default=True,
    help="After the drain, seconds the reviews in flight get to finish before the server exits.",
)
@click.option(
    "--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default="info", show_default=True
)
def serve(**kw: Any) -> None:
    """Serve admission.k8s.io/v1 AdmissionReviews on https://HOST:PORT/validate.

    \b
    Also /healthz, /readyz and /metrics (Prometheus), and the same on http://HOST:PROBE_PORT,
    a listener reviews cannot starve. Logs are JSON lines on stderr.
    Each review runs in a worker process within --timeout; model configs come only from the
    bundled catalogue, --model-dir and --config model paths: no network call is made and no
    path from a manifest is looked up on this server's disk while the API server waits.

    \b
    Exit codes: 0 stopped by a signal (SIGTERM, after --drain-seconds and --graceful-seconds),
    1 cannot start (TLS certificate or key unreadable, a port taken, server dependencies missing),
    2 usage or configuration error.
    """
    missing = missing_server_deps()
    if missing:
        raise click.ClickException(f"missing {', '.join(missing)}: {install_hint()}")
    settings = build_settings(**kw)

    import os
    import ssl
    import sys

    from kvlint.webhook.app import create_app
    from kvlint.webhook.logs import configure_logging
    from kvlint.webhook.metrics import WebhookMetrics
    from kvlint.webhook.review import exemptions_enforceable, trust_pattern_warnings
    from kvlint.webhook.server import (
        build_server,
        container_memory_limit,
        make_reloader,
        memory_limit_warning,
        serve_forever,
    )

    # The review event loop shares the GIL with the probe listener's thread and the watchers (the pipeline
    # runs in worker processes); CPython hands the GIL over every 5 ms by default, 1 ms keeps p99 low.
    sys.setswitchinterval(float(os.environ.get("KVLINT_WEBHOOK_SWITCH_INTERVAL", "0.001")))
    logger = configure_logging(kw["log_level"])
    metrics = WebhookMetrics()
    try:
        reloader = make_reloader(
            kw["tls_cert"], kw["tls_key"], metrics, logger, interval=kw["cert_reload_interval"]
        )
    except (OSError, ssl.SSLError) as exc:
        raise click.ClickException(
            f"cannot load TLS certificate {kw['tls_cert']} / key {kw['tls_key']}: {exc}"
            + tls_hint(kw["tls_cert"], kw["tls_key"], exc)
        ) from None
    for warning in trust_pattern_warnings(settings.trusted_controllers):
        logger.warning(warning)
    too_little = memory_limit_warning(settings, kw.get("max_connections") or 1000, container_memory_limit())
    if too_little:
        logger.warning(too_little)
    if kw.get("exemptions") is False and not exemptions_enforceable(settings.options):
        logger.warning("--no-exemptions requested but this kvlint's pipeline cannot switch exemptions off")
    background: list[Any] = [reloader]
    readiness: list[Any] = []
    options_hook = None
    if kw.get("cluster"):
        from kvlint.webhook.inventory import NodeWatchCache

        nodes = NodeWatchCache(kw.get("kubeconfig"), kw.get("kube_context"), metrics=metrics, logger=logger)
        background.append(nodes)
        readiness.append(nodes.not_ready_reason)
        options_hook = nodes.options_for
    app = create_app(
        settings,
        metrics=metrics,
        logger=logger,
        background=background,
        readiness=readiness,
        options_hook=options_hook,
        freeze_gc=True,
    )
    server = build_server(
        app,
        reloader,
        host=kw["host"],
        port=kw["port"],
        drain_seconds=kw["drain_seconds"],
        graceful_seconds=kw["graceful_seconds"],
        limit_concurrency=kw.get("max_connections") or 1000,
    )
    probes = None
    if kw.get("probe_port"):
        from kvlint.webhook.server import ProbeServer

        try:
            probes = ProbeServer(app.state.webhook, kw["host"], kw["probe_port"]).start()
        except OSError as exc:  # the port is taken or the address not ours: a sentence, not a traceback
            raise click.ClickException(
                f"cannot listen for probes on {kw['host']}:{kw['probe_port']} (--probe-port): {exc.strerror or exc}"
            ) from None
    try:
        serve_forever(server)
    finally:
        if probes is not None:
            probes.stop()


__all__ = ["build_settings", "serve", "webhook"]


if __name__ == "__main__":  # python -m kvlint.webhook.cli serve ... (bench/webhook.py)
    webhook()
