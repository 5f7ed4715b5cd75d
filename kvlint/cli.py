"""Command-line interface: a thin shell over :mod:`kvlint.pipeline`.

Heavy modules (huggingface_hub, kubernetes, jsonschema) are imported inside the commands so that
``kvlint --help`` starts quickly. Exit codes: 0 clean (or findings below ``--fail-on``), 1 findings at or
above ``--fail-on``, 2 usage or configuration error.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from kvlint import __version__

FORMATS = ("text", "json")
FAIL_ON = ("error", "warning", "info", "none")


def _parse_memory(value: str | None) -> int | None:
    if not value:
        return None
    from kvlint.accelerators import parse_quantity

    try:
        return parse_quantity(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


def _check_accelerator(value: str | None) -> str | None:
    if not value:
        return None
    from kvlint.accelerators import lookup

    if lookup(value) is None:
        raise click.BadParameter(
            f"unknown accelerator '{value}'; `kvlint accelerators` lists the ids and aliases"
        )
    return value


def _options(**kw: Any) -> Any:
    from kvlint.pipeline import Options

    return Options(
        accelerator=_check_accelerator(kw.get("accelerator")),
        gpu_memory_bytes=_parse_memory(kw.get("gpu_memory")),
        engine_version=kw.get("engine_version"),
        model_dirs=tuple(kw.get("model_dir") or ()),
        allow_hub=not kw.get("offline", False),
        min_concurrency=kw.get("min_concurrency") or 2.0,
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
    click.option("--engine-version", metavar="V", help="Engine version when the image tag does not say."),
    click.option(
        "--model-dir",
        multiple=True,
        type=click.Path(file_okay=False),
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
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="error",
    show_default=True,
    help="Exit 1 when a finding of this severity or higher is reported.",
)
@click.option("--min-concurrency", type=float, default=2.0, show_default=True, help="KV104 threshold.")
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the text report (default: on a terminal, unless NO_COLOR).",
)
@_add_common
def check(paths: tuple[str, ...], fmt: str, fail_on: str, color: bool | None, **kw: Any) -> None:
    """Lint Kubernetes manifests that deploy LLM serving engines."""
    from kvlint.pipeline import run_check
    from kvlint.types import SEVERITY_ORDER

    options = _options(**kw)
    try:
        result = run_check(paths, options, stdin=sys.stdin.buffer if "-" in paths else None)
    except FileNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc
    if fmt == "json":
        from kvlint.report.jsonout import render_json

        click.echo(render_json(result), nl=False)
    else:
        from kvlint.report.text import render_text, use_color

        click.echo(render_text(result, color=use_color(sys.stdout, color)), nl=False)
    if fail_on != "none":
        threshold = SEVERITY_ORDER[fail_on]
        if any(SEVERITY_ORDER.get(d.severity, 0) >= threshold for d in result.diagnostics):
            sys.exit(1)


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--gpus", type=int, help="GPUs per replica (checked against TP x PP).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@_add_common
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def plan(command: tuple[str, ...], gpus: int | None, fmt: str, **kw: Any) -> None:
    """Per-GPU memory plan for an engine command line, exactly as typed after `--`.

    \b
    kvlint plan --accelerator h100 -- vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32k
    """
    from kvlint.planning import PlanRequestError, plan_command

    options = _options(**kw)
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


@main.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
def rules(fmt: str) -> None:
    """List the rule catalogue."""
    from kvlint.rules import IMPLEMENTED
    from kvlint.rules.catalog import load_catalog

    cat = load_catalog()
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
                        "implemented": r.id in IMPLEMENTED,
                    }
                    for r in cat.values()
                ],
                indent=2,
            )
        )
        return
    for r in cat.values():
        mark = "" if r.id in IMPLEMENTED else "  (not yet checked)"
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
    from kvlint.models.catalogue import list_entries

    entries = list_entries()
    if fmt == "json":
        import json

        click.echo(json.dumps([_entry_dict(e) for e in entries], indent=2))
        return
    for e in entries:
        d = _entry_dict(e)
        wb = d.get("weight_bytes")
        size = f"{wb / 2**30:8.2f} GiB" if wb else "        -   "
        click.echo(f"{d['id']:<52} {size}")


def _entry_dict(e: Any) -> dict[str, Any]:
    from dataclasses import asdict, is_dataclass

    if is_dataclass(e) and not isinstance(e, type):
        return asdict(e)
    return dict(e)


@models.command("show")
@click.argument("model_id")
@click.option("--offline", is_flag=True)
def models_show(model_id: str, offline: bool) -> None:
    """Architecture facts kvlint uses for one model."""
    from kvlint.models import resolve_model
    from kvlint.plan.kv import kv_bytes_per_token
    from kvlint.types import ModelUnavailable

    try:
        m = resolve_model(model_id, allow_hub=not offline)
    except ModelUnavailable as exc:
        raise click.UsageError(str(exc)) from exc
    kinds: dict[str, int] = {}
    for layer in m.layers:
        kinds[layer.kind] = kinds.get(layer.kind, 0) + 1
    rows = [
        ("id", m.id),
        ("source", m.source),
        ("model_type", m.model_type),
        ("layers", m.num_layers),
        ("layer kinds", ", ".join(f"{k} x{v}" for k, v in kinds.items())),
        ("attention heads", m.num_attention_heads),
        ("KV heads", m.num_kv_heads),
        ("head size", m.head_size),
        ("hidden size", m.hidden_size),
        ("vocab size", m.vocab_size),
        ("max_position_embeddings", m.max_position_embeddings),
        ("dtype", m.torch_dtype),
        ("quantization", m.quant_method or "-"),
        ("MLA", m.is_mla),
        ("KV bytes/token (16-bit, TP 1)", f"{kv_bytes_per_token(m, 1, 'auto'):,}"),
        ("weight bytes", f"{m.weight_bytes:,} ({m.weight_bytes_source})" if m.weight_bytes else "-"),
    ]
    for k, v in rows:
        click.echo(f"{k:<30} {v}")


if __name__ == "__main__":  # pragma: no cover
    main()
