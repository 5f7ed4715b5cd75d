"""``kvlint models pull`` (the command; the work is in :mod:`kvlint.models.pull`).

Exit codes: 0 every model pulled or up to date (``--check``: the catalogue is complete and intact), 1 a model
could not be pulled (``--check``: a model is missing or an entry was edited), or a serving container's model is
a reference kvlint can neither pull nor size (an unmapped path inside the container, a bare name, a KAITO
preset or a local directory without config.json: listed as ``unsized``, the workload is "model unknown" for
``kvlint check --require-sizing`` too), each named with the reason and the fix; 2 usage or configuration error (no target, an argument that is neither a path nor a model id,
``HF_HUB_OFFLINE`` set, invalid ``.kvlint.yaml``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click


def _shown(path: str) -> str:
    """``path`` relative to the current directory when below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _say(line: str) -> None:
    """One line of the text report. What it quotes comes from the manifests (a model reference, a file or object
    name), an entry's provenance.json or the Hub (file names, error text): escaped as a report escapes file names
    (:func:`kvlint.report.escape.printable`), so a NUL, a terminal escape or a bidi override is shown, not acted on,
    and no line is a GitHub workflow command (:func:`kvlint.report.escape.inert_line`: ``::`` at its start, ``##[``).
    The JSON report keeps the text (JSON escapes it)."""
    from kvlint.report.escape import inert_line, printable

    click.echo(inert_line(printable(line)))


def _catalogue(explicit: str | None, config: Any, paths: list[str]) -> str:
    """Where the catalogue is: ``--catalogue``, the configuration's (``model_catalogue`` or ``.kvlint/models``
    beside it), a ``.kvlint/models`` found upward, else ``.kvlint/models`` in the current directory."""
    from kvlint.config import catalogue_dir
    from kvlint.models.pulled import DEFAULT_DIR, find_catalogue

    if explicit:
        return os.path.abspath(explicit)
    if config is not None:
        found = catalogue_dir(config)
        if found:
            return found
    return find_catalogue(paths) or os.path.abspath(DEFAULT_DIR)


@click.command("pull")
@click.argument("targets", nargs=-1)
@click.option(
    "--revision",
    metavar="REV",
    help="Branch, tag or commit sha for the model ids given (manifests carry their own --revision; "
    "org/name@REV works too).",
)
@click.option(
    "--catalogue",
    "catalogue_opt",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Catalogue directory (default: .kvlint.yaml model_catalogue, else .kvlint/models beside the "
    ".kvlint.yaml, else .kvlint/models found upward or in the current directory).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Offline: verify that the catalogue has every model (at its revision) and that no file changed since "
    "the pull; exit 1 naming the missing ones, and naming each workload whose model can be neither pulled nor "
    "sized (an unmapped path inside the container kvlint has no config.json for: 'unsized'). With no target, "
    "verify every entry.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Configuration file (default: .kvlint.yaml found upward from the first path).",
)
@click.option("--no-config", is_flag=True, help="Do not read any .kvlint.yaml.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
def pull(
    targets: tuple[str, ...],
    revision: str | None,
    catalogue_opt: str | None,
    check: bool,
    config_path: str | None,
    no_config: bool,
    fmt: str,
) -> None:
    """Fetch config.json, quantization configs and safetensors headers (never weights) of Hub models into the
    repository's model catalogue, so that kvlint check, kvlint plan and the webhook size them offline.

    TARGETS are model ids (org/name, org/name@revision) or manifest files and directories (- for stdin): then
    every hub model they serve is pulled, found as kvlint check finds it (engine model argument, kvlint.io/model
    annotation, .kvlint.yaml model_paths, --revision, speculative-decoding draft models). A reference that is
    not a hub id (a path inside the container, a local directory, a KAITO preset) is listed as 'skipped' when
    kvlint check sizes it anyway (e.g. from a catalogued name, KV505), and as 'unsized' when it cannot: then
    nothing can be pulled or checked for it and the command exits 1 (map the path in model_paths or annotate
    the workload with kvlint.io/model).

    \b
    kvlint models pull deploy/                     every model the manifests name
    kvlint models pull Qwen/Qwen2.5-7B-Instruct --revision a09a3545
    kvlint models pull --check deploy/             CI: offline, exit 1 when a model is missing or unsized
    HF_TOKEN=hf_... kvlint models pull meta-llama/Llama-3.1-8B-Instruct   gated models

    \b
    Exit codes: 0 every model pulled (--check: available offline), 1 a model failed to pull (--check: missing
    or changed) or a workload's model can be neither pulled nor sized, 2 usage or configuration error
    (HF_HUB_OFFLINE set without --check included).
    """
    from dataclasses import replace

    from kvlint.config import ConfigError, apply_config, find_config, load_config
    from kvlint.models.pull import (
        ModelRequest,
        check_catalogue,
        collect_from_manifests,
        parse_model_arg,
        pull_models,
    )
    from kvlint.options import Options

    if not targets and not check:
        raise click.UsageError("name model ids (org/name) or manifest paths to pull; see --help")
    paths = [t for t in targets if t == "-" or os.path.exists(t)]
    requests: list[ModelRequest] = []
    for t in targets:
        if t in paths:
            continue
        try:
            requests.append(parse_model_arg(t, revision))
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    if revision and not requests:
        raise click.UsageError("--revision applies to model ids; manifests carry their own --revision")

    config = None
    options = Options(allow_hub=False)
    try:
        if not no_config:
            if config_path and not os.path.isfile(config_path):
                raise ConfigError(f"{config_path}: no such configuration file")
            found = config_path or find_config(paths)
            if found:
                config = load_config(found, discovered=not config_path)
                options = apply_config(options, config)
    except ConfigError as exc:
        click.echo(f"kvlint: configuration error: {exc}", err=True)
        sys.exit(2)
    catalogue = _catalogue(catalogue_opt, config, paths)
    options = replace(options, model_catalogues=(catalogue,))

    skipped: list[Any] = []
    if paths:
        from kvlint.render import RenderError

        try:
            found_requests, skipped = collect_from_manifests(
                paths, options, stdin=sys.stdin.buffer if "-" in paths else None
            )
        except (FileNotFoundError, RenderError) as exc:
            raise click.UsageError(str(exc)) from exc
        requests += found_requests

    unsized = [s for s in skipped if s.unsized]

    def _skipped_lines(width: int) -> None:
        for s in skipped:
            _say(f"{'unsized' if s.unsized else 'skipped':<{width}} {s.ref} ({s.where}): {s.why}")

    def _unsized_line() -> None:
        if unsized:
            refs = ", ".join(dict.fromkeys(s.ref for s in unsized))
            n = len(unsized)
            _say(
                f"{n} serving container{'' if n == 1 else 's'} name{'s' if n == 1 else ''} a model that cannot be "
                f"pulled or checked ({refs}): kvlint has no config.json for {'it' if n == 1 else 'them'}, so "
                f"kvlint check cannot size {'that workload' if n == 1 else 'those workloads'}; map "
                f"{'it' if n == 1 else 'each'} to a hub id in .kvlint.yaml model_paths or annotate the workload "
                "with kvlint.io/model"
            )

    if check:
        checked = check_catalogue(requests, catalogue)
        bad = [c for c in checked if c.status not in ("ok", "bundled")]
        if fmt == "json":
            _json_report(catalogue, [c.as_dict() for c in checked], skipped)
        else:
            for c in checked:
                where = (
                    f"  (named at {'; '.join(c.request.where)})"
                    if c.request.where and c.status not in ("ok", "bundled")
                    else ""
                )
                _say(f"{c.status:<8} {c.request.label}: {c.message}{where}")
            _skipped_lines(8)
            if not checked and not requests:
                _say(f"no pulled models in {_shown(catalogue)}")
            if bad:
                again = " ".join(targets) or "<model ids or manifests>"
                _say(
                    f"{len(bad)} of {len(checked)} models missing or changed in {_shown(catalogue)}: "
                    f"{', '.join(c.request.label for c in bad)}; run `kvlint models pull {again}` with "
                    "network and commit the directory"
                )
            else:
                n_bundled = sum(c.status == "bundled" for c in checked)
                also = f" ({n_bundled} from kvlint's bundled catalogue)" if n_bundled else ""
                _say(
                    f"{len(checked)} model{'' if len(checked) == 1 else 's'} available offline{also}; "
                    f"{_shown(catalogue)} is complete"
                )
            _unsized_line()
        sys.exit(1 if bad or unsized else 0)

    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        click.echo(
            "kvlint: HF_HUB_OFFLINE is set: pulling needs the network; unset it for `kvlint models pull` "
            "(`kvlint models pull --check` works offline)",
            err=True,
        )
        sys.exit(2)
    outcomes = pull_models(requests, catalogue) if requests else []
    failed = [o for o in outcomes if o.status == "failed"]
    if fmt == "json":
        _json_report(catalogue, [o.as_dict() for o in outcomes], skipped)
    else:
        for o in outcomes:
            if o.status == "failed":
                _say(f"failed    {o.message}")
                continue
            size = f"; checkpoint {o.checkpoint_bytes / 2**30:.2f} GiB" if o.checkpoint_bytes else ""
            extra = f"; {o.message}" if o.message else ""
            _say(
                f"{o.status:<9} {o.request.label} commit {(o.commit or '?')[:12]} -> {_shown(o.path or '')}: "
                f"{', '.join(o.files)}{size}{extra}"
            )
            for w in o.warnings:
                _say(f"  warning: {w}")
        _skipped_lines(9)
        if not outcomes:
            _say("no Hugging Face model ids found to pull")
        else:
            counts = {
                k: sum(1 for o in outcomes if o.status == k)
                for k in ("pulled", "updated", "unchanged", "failed")
            }
            summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
            _say(f"{summary} in {_shown(catalogue)}")
        _unsized_line()
    sys.exit(1 if failed or unsized else 0)


def _json_report(catalogue: str, models: list[dict[str, Any]], skipped: Sequence[Any]) -> None:
    """``kvlint models pull [--check] --format json``: the catalogue, one entry per model, the skipped workloads."""
    import json

    payload = {"catalogue": catalogue, "models": models, "skipped": [s.__dict__ for s in skipped]}
    click.echo(json.dumps(payload, indent=2))
