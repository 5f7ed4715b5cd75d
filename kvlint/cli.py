"""Command-line interface: a thin shell over :mod:`kvlint.pipeline`.

Heavy modules (huggingface_hub, kubernetes, jsonschema) are imported inside the commands so that
``kvlint --help`` starts quickly. Exit codes: 0 clean (or findings below ``--fail-on``), 1 findings at or
above ``--fail-on``, 2 usage or configuration error (bad flag, unreadable or invalid ``.kvlint.yaml``,
missing path, unwritable ``--format NAME=PATH`` file).

Precedence for ``kvlint check``: command-line flags > ``.kvlint.yaml`` (``--config`` or found upward
from the first linted path) > rule catalogue defaults.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from kvlint import __version__

FORMATS = ("text", "json")
CHECK_FORMATS = ("text", "json", "sarif", "github", "junit", "markdown")
FAIL_ON = ("error", "warning", "info", "never", "none")


def _config_fail(message: str) -> None:
    """Print a configuration error to stderr and exit with status 2."""
    click.echo(f"kvlint: configuration error: {message}", err=True)
    sys.exit(2)


def _parse_formats(values: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """``--format`` values ``NAME`` or ``NAME=PATH`` -> [(name, path or None for stdout)]."""
    out: list[tuple[str, str | None]] = []
    for v in values or ("text",):
        name, sep, path = v.partition("=")
        name = name.strip().lower()
        if name not in CHECK_FORMATS:
            raise click.BadParameter(
                f"unknown format {name!r}; choose from {', '.join(CHECK_FORMATS)} (optionally NAME=PATH)",
                param_hint="--format",
            )
        if sep and not path:
            raise click.BadParameter(f"{v!r}: missing file name after '='", param_hint="--format")
        if path in ("-", "/dev/stdout"):
            path = ""  # standard output, however it is spelled
        out.append((name, path or None))
    to_stdout = [n for n, p in out if p is None]
    if len(to_stdout) > 1:
        raise click.BadParameter(
            f"{' and '.join(to_stdout)} would both be written to standard output, one after the other; give all "
            "but one a file (NAME=PATH)",
            param_hint="--format",
        )
    import os

    files = [p for _, p in out if p is not None]
    real = [os.path.realpath(p) for p in files]
    for p, r in zip(files, real, strict=True):
        if real.count(r) > 1:
            raise click.BadParameter(
                f"two reports would be written to {p}; give each its own file", param_hint="--format"
            )
    return out


def _split_ids(values: tuple[str, ...]) -> list[str]:
    return [x.strip() for v in values for x in v.split(",") if x.strip()]


def _parse_memory(value: str | None) -> int | None:
    if not value:
        return None
    from kvlint.accelerators import parse_quantity

    try:
        n = parse_quantity(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    if n <= 0:
        raise click.BadParameter(f"'{value}': the GPU memory total must be positive, e.g. 79.19GiB")
    if not any(ch.isalpha() for ch in value):
        raise click.BadParameter(
            f"'{value}' has no unit; give the device total with one, e.g. {value}GiB (as CUDA reports it) or {value}GB"
        )
    if n < 2**30 or n > 16 * 2**40:
        raise click.BadParameter(f"'{value}' is not a plausible GPU memory total (1 GiB to 16 TiB)")
    return n


def _check_version(value: str | None) -> str | None:
    """``--engine-version``: a release number such as ``0.11.0`` or ``v0.8.5.post1``."""
    if not value:
        return None
    import re

    v = value.strip().lstrip("vV")
    if not re.match(r"^\d+\.\d+(\.\d+)?([.-]?(post|rc|dev)\d*)?$", v):
        raise click.BadParameter(f"'{value}' is not a release number such as 0.11.0")
    return v


def _check_accelerator(value: str | None) -> str | None:
    if not value:
        return None
    from kvlint.accelerators import lookup

    if lookup(value) is None:
        raise click.BadParameter(
            f"unknown accelerator '{value}'; `kvlint accelerators` lists the ids and aliases"
        )
    return value


def _with_found_catalogue(options: Any, paths: tuple[str, ...] | list[str], config: bool = False) -> Any:
    """``options`` reading the pulled model catalogue (``kvlint models pull``) that applies to ``paths``: with
    ``config``, the one of the ``.kvlint.yaml`` found from there (an invalid file is skipped with a warning);
    else a ``.kvlint/models`` found upward."""
    from dataclasses import replace

    from kvlint.models.pulled import find_catalogue

    found: str | None = None
    if config:
        from kvlint.config import ConfigError, catalogue_dir, find_config, load_config

        path = find_config(list(paths))
        if path:
            try:
                found = catalogue_dir(load_config(path))
            except ConfigError as exc:
                click.echo(f"kvlint: warning: {exc}; its model catalogue is not read", err=True)
    found = found or find_catalogue(list(paths))
    if not found or found in options.model_catalogues:
        return options
    return replace(options, model_catalogues=(*options.model_catalogues, found))


def _options(**kw: Any) -> Any:
    from kvlint.options import Options

    return Options(
        accelerator=_check_accelerator(kw.get("accelerator")),
        gpu_memory_bytes=_parse_memory(kw.get("gpu_memory")),
        engine_version=kw.get("engine_version"),
        model_dirs=tuple(kw.get("model_dir") or ()),
        allow_hub=not kw.get("offline", False),
        min_concurrency=kw.get("min_concurrency"),
    )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kvlint")
def main() -> None:
    """kvlint: prove before deploy that an LLM serving workload fits its GPUs.

    \b
    kvlint check deploy/                 lint manifests (files, directories, - for stdin)
    kvlint plan -- vllm serve MODEL ...  per-GPU memory plan for one engine command line
    kvlint rules / kvlint explain KV103  the rule catalogue
    """


_common = [
    click.option(
        "--accelerator", metavar="ID", help="Force the GPU type (catalogue id or alias, e.g. h100, l4)."
    ),
    click.option("--gpu-memory", metavar="QTY", help="Device total as CUDA reports it, e.g. 79.19GiB."),
    click.option(
        "--engine-version",
        metavar="V",
        callback=lambda ctx, param, value: _check_version(value),
        help="Engine version when the image tag does not say (e.g. 0.11.0).",
    ),
    click.option(
        "--model-dir",
        multiple=True,
        type=click.Path(file_okay=False, exists=True),
        help="Directory of <org>--<name>/config.json model configs (repeatable).",
    ),
    click.option(
        "--offline",
        is_flag=True,
        help="Never ask the Hugging Face Hub (bundled catalogue and local dirs only).",
    ),
]


def _add_common(f: Any) -> Any:
    for opt in reversed(_common):
        f = opt(f)
    return f


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--format",
    "formats",
    multiple=True,
    metavar="NAME[=PATH]",
    help=f"Report format, repeatable: {', '.join(CHECK_FORMATS)}; NAME=PATH writes that report to a file "
    "(e.g. --format sarif=kvlint.sarif --format text). Default: text to stdout.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default=None,
    help="Exit 1 when a finding of this severity or higher is reported (default: .kvlint.yaml fail_on, "
    "else error; never/none: always exit 0 unless the run itself fails).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Configuration file (default: .kvlint.yaml found upward from the first path).",
)
@click.option("--no-config", is_flag=True, help="Do not read any .kvlint.yaml.")
@click.option(
    "--select", multiple=True, metavar="IDS", help="Only these rule ids/prefixes (comma-separated)."
)
@click.option("--ignore", multiple=True, metavar="IDS", help="Never report these rule ids/prefixes.")
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="Do not read files or directories matching this fnmatch glob (path or base name), repeatable; added "
    "to .kvlint.yaml exclude.",
)
@click.option(
    "--no-exemptions",
    is_flag=True,
    help="Disallow kvlint.io/ignore annotations: report every finding.",
)
@click.option(
    "--default-accelerator",
    metavar="ID",
    help="GPU type for manifests that do not say which GPU they land on.",
)
@click.option(
    "--min-concurrency",
    type=click.FloatRange(min=0, min_open=True, max=1e6),
    default=None,
    help="KV104 threshold (default: config, else 2).",
)
@click.option(
    "--max-file-bytes",
    type=click.IntRange(min=1),
    default=None,
    help="Skip (with KV001) files larger than this many bytes (default 16 MiB).",
)
@click.option(
    "--helm-values",
    multiple=True,
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Values file for chart directories in PATHS (helm template -f), repeatable.",
)
@click.option(
    "--helm-set",
    multiple=True,
    metavar="KEY=VALUE",
    help="helm template --set for chart directories, repeatable.",
)
@click.option(
    "--cluster",
    is_flag=True,
    help="Read the live nodes (kubeconfig or in-cluster) and take the GPU from the nodes each pod can land on.",
)
@click.option("--kubeconfig", type=click.Path(dir_okay=False), help="kubeconfig for --cluster.")
@click.option("--context", "kube_context", metavar="NAME", help="kubeconfig context for --cluster.")
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the text report (default: on a terminal, unless NO_COLOR).",
)
@_add_common
def check(
    paths: tuple[str, ...],
    formats: tuple[str, ...],
    fail_on: str | None,
    config_path: str | None,
    no_config: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    no_exemptions: bool,
    default_accelerator: str | None,
    color: bool | None,
    helm_values: tuple[str, ...],
    helm_set: tuple[str, ...],
    max_file_bytes: int | None,
    cluster: bool,
    kubeconfig: str | None,
    kube_context: str | None,
    **kw: Any,
) -> None:
    """Lint Kubernetes manifests that deploy LLM serving engines.

    \b
    kvlint check deploy/
    kvlint check --format sarif=kvlint.sarif --format text deploy/
    helm template serving ./chart | kvlint check -
    """
    from dataclasses import replace

    from kvlint.config import ConfigError, apply_config, find_config, load_config, validate_selectors
    from kvlint.pipeline import run_check
    from kvlint.render import RenderError
    from kvlint.report import render
    from kvlint.types import SEVERITY_ORDER

    outputs = _parse_formats(formats)
    options = _options(**kw)
    try:
        options = replace(
            options,
            default_accelerator=_check_accelerator(default_accelerator),
            select=validate_selectors(_split_ids(select), "--select"),
            ignore=validate_selectors(_split_ids(ignore), "--ignore"),
            exemptions_allowed=not no_exemptions,
            helm_values=tuple(helm_values),
            helm_set=tuple(helm_set),
            exclude=tuple(options.exclude) + tuple(exclude),
        )
        if max_file_bytes:
            options = replace(options, max_file_bytes=max_file_bytes)
        config = None
        if not no_config:
            path = config_path or find_config(paths)
            if config_path and not __import__("os").path.isfile(config_path):
                raise ConfigError(f"{config_path}: no such configuration file")
            if path:
                config = load_config(path)
        if config is not None:
            options = apply_config(options, config)
        elif not no_config:
            options = _with_found_catalogue(options, paths)
    except ConfigError as exc:
        _config_fail(str(exc))
        return
    if cluster or kubeconfig or kube_context:
        from kvlint.cluster import ClusterUnavailable, load_inventory

        try:
            options = replace(options, cluster_inventory=load_inventory(kubeconfig, kube_context))
        except ClusterUnavailable as exc:
            _config_fail(f"--cluster: {exc}")
            return
    threshold_name = fail_on or (config.fail_on if config and config.fail_on else "error")
    try:
        result = run_check(paths, options, stdin=sys.stdin.buffer if "-" in paths else None)
    except FileNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc
    except RenderError as exc:
        raise click.UsageError(str(exc)) from exc
    if result.files == 0:
        click.echo(f"kvlint: warning: no .yaml, .yml or .json files found in {', '.join(paths)}", err=True)
    for name, out_path in outputs:
        if out_path is None:
            use = False
            if name == "text":
                from kvlint.report.text import use_color

                use = use_color(sys.stdout, color)
            click.echo(render(name, result, color=use), nl=False, color=use or None)
            continue
        text = render(name, result, color=bool(color) and name == "text")
        try:
            with open(out_path, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            click.echo(f"kvlint: cannot write {name} report to {out_path}: {exc.strerror or exc}", err=True)
            sys.exit(2)
    if threshold_name not in ("none", "never"):
        threshold = SEVERITY_ORDER[threshold_name]
        if any(SEVERITY_ORDER.get(d.severity, 0) >= threshold for d in result.diagnostics):
            sys.exit(1)


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--gpus", type=click.IntRange(min=1), help="GPUs per replica (checked against TP x PP).")
@click.option("--format", "fmt", type=click.Choice((*FORMATS, "markdown")), default="text", show_default=True)
@click.option(
    "--compare",
    is_flag=True,
    help="Table over accelerators x TP sizes x KV dtypes: fits, weights and KV per GPU, KV tokens, "
    "concurrency, largest max-model-len, GPUs per replica.",
)
@click.option("--accelerators", metavar="IDS", help="Comma-separated accelerator ids/aliases for --compare.")
@click.option(
    "--sweep",
    multiple=True,
    metavar="NAME=SPEC",
    help="Sensitivity, e.g. max-model-len=8k..128k, gpu-memory-utilization=0.8..0.95, max-num-seqs=64..512, "
    "max-num-batched-tokens=2k..16k, kv-cache-dtype=auto,fp8 (repeatable; needs --accelerator).",
)
@click.option("--plot", metavar="FILE", help="Write a chart (.png/.svg; needs the 'plot' extra: matplotlib).")
@_add_common
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def plan(
    command: tuple[str, ...],
    gpus: int | None,
    fmt: str,
    compare: bool,
    accelerators: str | None,
    sweep: tuple[str, ...],
    plot: str | None,
    **kw: Any,
) -> None:
    """Per-GPU memory plan for an engine command line, exactly as typed after `--`.

    \b
    kvlint plan --accelerator h100 -- vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32k
    kvlint plan --compare --accelerators l4,a100-80gb,h100 -- vllm serve meta-llama/Llama-3.1-8B-Instruct
    kvlint plan --accelerator h100 --sweep max-model-len=8k..128k -- vllm serve meta-llama/Llama-3.1-8B-Instruct

    Exit codes: 0 ok/risky, 1 fail, 2 usage error or nothing could be sized (verdict unknown).
    """
    from kvlint.capacity.plan_command import PlanRequestError, plan_command

    options = _with_found_catalogue(_options(**kw), [], config=True)
    if compare or sweep or plot or fmt == "markdown" or accelerators:
        from kvlint.capacity.cli import run_plan_extras

        try:
            text = run_plan_extras(
                list(command),
                options,
                compare=compare or bool(accelerators),
                accelerators=[a.strip() for a in accelerators.split(",") if a.strip()]
                if accelerators
                else None,
                sweep=list(sweep),
                fmt=fmt,
                plot=plot,
            )
        except (ValueError, PlanRequestError) as exc:
            raise click.UsageError(str(exc)) from exc
        click.echo(text, nl=not text.endswith("\n"))
        return
    try:
        out = plan_command(list(command), options, gpus=gpus)
    except PlanRequestError as exc:
        raise click.UsageError(str(exc)) from exc
    if fmt == "json":
        import json

        click.echo(json.dumps(out.as_dict(), indent=2))
    else:
        click.echo(out.render_text(), nl=False)
    if out.verdict == "fail":
        sys.exit(1)
    if out.verdict == "unknown":
        sys.exit(2)


@main.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
def rules(fmt: str) -> None:
    """List the rule catalogue."""
    from kvlint.rules.catalog import load_catalog
    from kvlint.rules.registry import implemented

    cat = load_catalog()
    done = implemented()
    if fmt == "json":
        import json

        click.echo(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "name": r.name,
                        "severity": r.severity,
                        "summary": r.summary,
                        "engines": list(r.engines),
                        "category": r.category,
                        "phase": r.phase,
                        "consumes": list(r.consumes),
                        "implemented": r.id in done,
                    }
                    for r in cat.values()
                ],
                indent=2,
            )
        )
        return
    for r in cat.values():
        mark = "" if r.id in done else "  (not yet checked)"
        click.echo(f"{r.id}  {r.severity:<7}  {r.name:<36}  {r.summary}{mark}")


@main.command()
@click.argument("rule_id")
def explain(rule_id: str) -> None:
    """Explain one rule: what it checks, why, how to fix it (like `ruff rule`)."""
    from kvlint.rules.catalog import get_rule, render_rule_text

    try:
        info = get_rule(rule_id.upper())
    except KeyError as exc:
        raise click.UsageError(f"unknown rule '{rule_id}'; `kvlint rules` lists them") from exc
    click.echo(render_rule_text(info))


@main.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
def accelerators(fmt: str) -> None:
    """List the accelerator catalogue (ids, memory as CUDA reports it, compute capability)."""
    from kvlint.accelerators import aliases, catalogue

    cat = catalogue()
    al: dict[str, list[str]] = {}
    for alias, target in aliases().items():
        al.setdefault(target, []).append(alias)
    if fmt == "json":
        import json

        click.echo(
            json.dumps(
                [
                    {
                        "id": a.id,
                        "name": a.name,
                        "vendor": a.vendor,
                        "memory_bytes": a.memory_bytes,
                        "memory_source": a.memory_source,
                        "compute_capability": a.compute_capability,
                        "bf16": a.bf16,
                        "fp8": a.fp8,
                        "aliases": sorted(al.get(a.id, [])),
                    }
                    for a in cat.values()
                ],
                indent=2,
            )
        )
        return
    for a in cat.values():
        gib_total = a.memory_bytes / 2**30 if a.memory_bytes else 0
        click.echo(
            f"{a.id:<34} {gib_total:7.2f} GiB  CC {a.compute_capability or '-':<4}  "
            f"{'bf16' if a.bf16 else '    '} {'fp8' if a.fp8 else '   '}  {', '.join(sorted(al.get(a.id, [])))}"
        )


@main.group(invoke_without_command=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.pass_context
def models(ctx: click.Context, fmt: str) -> None:
    """List the bundled model catalogue (`kvlint models show ID` for one model's facts)."""
    if ctx.invoked_subcommand is not None:
        return
    from kvlint.models.catalogue import list_entries, list_index

    if fmt == "json":
        import json

        click.echo(json.dumps([_entry_dict(e) for e in list_entries()], indent=2))
        return
    rows = list_index()  # index.yaml only: no entry.json is read for the listing
    click.echo(f"{'model id':<52} {'checkpoint':>12}  variants")
    for r in rows:
        size = f"{r.weight_bytes / 2**30:8.2f} GiB" if r.weight_bytes else "  (estimated)"
        click.echo(f"{r.id:<52} {size}  {len(r.variants) or ''}")
    n_var = sum(len(r.variants) for r in rows)
    click.echo(
        f"{len(rows)} configs and {n_var} cited variants (`kvlint models show ID`); quantized builds named "
        "<catalogued name>-AWQ/-GPTQ-Int4/-FP8/-bnb-4bit/... are derived from the name as a stated assumption"
    )


def _entry_dict(e: Any) -> dict[str, Any]:
    from dataclasses import asdict, is_dataclass

    if is_dataclass(e) and not isinstance(e, type):
        return asdict(e)
    return dict(e)


@models.command("show")
@click.argument("model_id")
@click.option("--offline", is_flag=True, help="Never ask the Hugging Face Hub.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
def models_show(model_id: str, offline: bool, fmt: str) -> None:
    """Architecture facts kvlint uses for one model (layers, heads, KV heads, head size, layer types,
    KV bytes per token, weights and their source)."""
    from kvlint.models import describe, resolve_model
    from kvlint.types import ModelUnavailable

    options = _with_found_catalogue(_options(offline=offline), [], config=True)
    try:
        m = resolve_model(model_id, allow_hub=not offline, catalogues=options.model_catalogues)
    except ModelUnavailable as exc:
        raise click.UsageError(str(exc)) from exc
    rows = describe(m)
    if fmt == "json":
        import json

        click.echo(json.dumps(dict(rows), indent=2))
        return
    width = max(len(k) for k, _ in rows) + 2
    for k, v in rows:
        click.echo(f"{k:<{width}} {v}")


def _add_optional_commands() -> None:
    """Commands whose modules keep heavy imports inside them (webhook: starlette/uvicorn; simulate)."""
    from kvlint.capacity.cli import simulate
    from kvlint.models.pull_cli import pull
    from kvlint.webhook.cli import webhook

    main.add_command(simulate)
    main.add_command(webhook)
    models.add_command(pull)


_add_optional_commands()


if __name__ == "__main__":  # pragma: no cover
    main()
