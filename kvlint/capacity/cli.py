"""Command-line entry points of the capacity tools.

* :data:`simulate` -- the click command ``kvlint simulate [options] -- <engine command line>`` (register it with
  ``main.add_command(simulate)``).
* :func:`run_plan_extras` -- what ``kvlint plan --compare/--sweep/--accelerators/--plot/--format markdown`` prints.

Bad input (unknown accelerator, unreadable trace, bad distribution, unknown model) exits with click's usage error
(exit 2) and a one-line message, never a traceback.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import TYPE_CHECKING, Any

import click

from kvlint.capacity.workload import MAX_REQUESTS

if TYPE_CHECKING:
    from kvlint.options import Options


def _make_options(
    accelerator: str | None,
    gpu_memory: str | None,
    engine_version: str | None,
    model_dir: tuple[str, ...],
    offline: bool,
) -> Options:
    from kvlint.accelerators import did_you_mean, lookup
    from kvlint.memory.versions import engine_version_option
    from kvlint.options import Options

    try:  # the form kvlint check takes it in (v0.11.0 -> 0.11.0), so parser and plan read one release
        engine_version = engine_version_option(engine_version)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--engine-version") from None
    if accelerator and lookup(accelerator) is None:
        raise click.BadParameter(
            f"unknown accelerator '{accelerator}'{did_you_mean(accelerator)}; `kvlint accelerators` lists the ids "
            "and aliases",
            param_hint="--accelerator",
        )
    # the checks kvlint check and kvlint plan make: a unit, and a plausible device total (1 GiB to 16 TiB)
    from kvlint.accelerators.quantity import parse_gpu_memory

    mem = None
    if gpu_memory:
        try:
            mem, note = parse_gpu_memory(gpu_memory)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--gpu-memory") from None
        if note:
            click.echo(f"note: {note}", err=True)
    return Options(
        accelerator=accelerator,
        gpu_memory_bytes=mem,
        engine_version=engine_version,
        model_dirs=tuple(model_dir),
        allow_hub=not offline,
    )


def run_plan_extras(
    argv: list[str],
    options: Options,
    *,
    compare: bool,
    accelerators: list[str] | None,
    sweep: list[str],
    fmt: str,
    plot: str | None,
) -> str:
    """Text (or Markdown with ``fmt="markdown"``, JSON with ``fmt="json"``) for ``kvlint plan``'s capacity options.

    ``compare``: the accelerator x TP x KV-dtype table over ``accelerators`` (ids or aliases), by default the
    fleet: ``options.site``'s, else that of the ``.kvlint.yaml`` found from the current directory, else kvlint's
    default fleet. Each heading names the engine release the numbers are for. ``sweep``:
    ``NAME=SPEC`` strings, each re-planned on ``options.accelerator`` (required for sweeps). ``plot``: write a
    PNG/SVG (memory breakdown, sweep curve) when matplotlib is installed; otherwise a note is appended and the text
    charts stand. Raises ValueError (``CapacityError``, ``SweepError``) with a user-facing message.

    A TGI or SGLang command goes to :func:`_engine_extras` (the same tables in the engine's terms).

    JSON: ``engine``, ``engine_version`` (``engine_version_assumed`` when the command names none), ``model``;
    ``compare`` (with --compare/--accelerators): ``fleet`` in words and ``rows``, each a
    :class:`~kvlint.capacity.compare.CompareRow` (bytes per GPU, tokens, ``concurrency`` at max_model_len, ``fits``,
    ``verdict``, ``reason``...); ``sweeps``: per --sweep the ``setting`` (flag name), ``accelerator`` and
    ``points``, each a :class:`~kvlint.capacity.sweep.SweepPoint`; ``plot``: the plot line, with --plot.
    """
    from kvlint.capacity import render as R
    from kvlint.capacity.compare import compare as do_compare
    from kvlint.capacity.compare import render_compare
    from kvlint.capacity.context import CapacityError, resolve
    from kvlint.capacity.engines import command_engine
    from kvlint.capacity.sweep import render_sweep
    from kvlint.capacity.sweep import sweep as do_sweep

    if command_engine(argv, options) in ("tgi", "sglang"):
        return _engine_extras(
            argv, options, compare=compare, accelerators=accelerators, sweep=sweep, fmt=fmt, plot=plot
        )
    asked = "kvlint plan --sweep" if sweep and not (compare or accelerators) else "kvlint plan --compare"
    # the command's --config FILE is the user's own, read from this machine as kvlint plan reads it
    ctx = resolve(argv, options, what=asked, local_config=True)
    out: list[str] = []
    doc: dict[str, Any] = {
        "engine": "vllm",
        "engine_version": ctx.settings.version,
        "engine_version_assumed": bool(ctx.settings.version_assumed),
        "model": ctx.model.id,
    }
    if compare or accelerators:
        from kvlint.capacity.compare import fleet_description

        site = options.site or _found_site()
        rows = do_compare(ctx, accelerators or None, site=site)
        fleet = fleet_description(accelerators or None, site)
        doc["compare"] = {"fleet": fleet, "rows": [dataclasses.asdict(r) for r in rows]}
        out.append(R.heading(f"Accelerators x TP x KV dtype for {ctx.model.id} on {ctx.engine_label}", fmt))
        preamble = (
            f"Every row is the {ctx.engine_label} memory plan of this command with --tensor-parallel-size and "
            f"--kv-cache-dtype replaced, over {fleet}. {ctx.version_note}"
        )
        out.append(preamble.rstrip())
        out.append(render_compare(rows, fmt))
    sweep_plot = None
    for spec in sweep:
        if ctx.accelerator is None:
            raise CapacityError(
                "--sweep needs a GPU to re-plan on: --accelerator ID (`kvlint accelerators` lists them) or --gpu-memory QTY"
            )
        dest, pts = do_sweep(ctx, ctx.accelerator, spec)
        doc.setdefault("sweeps", []).append(
            {
                "setting": dest.replace("_", "-"),
                "accelerator": ctx.accelerator.id,
                "points": [dataclasses.asdict(p) for p in pts],
            }
        )
        out.append(
            R.heading(
                f"Sweep of {dest.replace('_', '-')} on {ctx.accelerator.name} with {ctx.engine_label}", fmt
            )
        )
        if ctx.version_note:
            out.append(ctx.version_note)
        out.append(render_sweep(dest, pts, fmt))
        sweep_plot = (dest, [p.value for p in pts], [p.concurrency for p in pts])
    if plot:
        out.append(plot_note(plot, plan=ctx.plan, sweep=sweep_plot))
        doc["plot"] = out[-1]
    if fmt == "json":
        import json

        return json.dumps(doc, indent=2) + "\n"
    return "\n\n".join(out) + "\n"


def _engine_extras(
    argv: list[str],
    options: Options,
    *,
    compare: bool,
    accelerators: list[str] | None,
    sweep: list[str],
    fmt: str,
    plot: str | None,
) -> str:
    """:func:`run_plan_extras` for a TGI or SGLang command (:mod:`kvlint.capacity.engines`): the same tables,
    headings and JSON fields, every cell ``kvlint plan`` of the command with the engine's own settings changed."""
    from kvlint.capacity import engines as E
    from kvlint.capacity import render as R
    from kvlint.capacity.compare import fleet_description, render_compare
    from kvlint.capacity.context import CapacityError
    from kvlint.capacity.sweep import render_sweep
    from kvlint.types import ENGINE_NAMES

    ctx = E.resolve_command(argv, options, local_config=True)
    name = ENGINE_NAMES[ctx.engine]
    model_id = ctx.out.result.model.id if ctx.out.result.model else "?"
    out: list[str] = []
    doc: dict[str, Any] = {
        "engine": ctx.engine,
        "engine_version": ctx.release,
        "engine_version_assumed": ctx.version_assumed,
        "model": model_id,
    }
    if compare or accelerators:
        site = options.site or _found_site()
        rows = E.compare(ctx, accelerators or None, site=site)
        fleet = fleet_description(accelerators or None, site)
        doc["compare"] = {"fleet": fleet, "rows": [dataclasses.asdict(r) for r in rows]}
        out.append(R.heading(f"Accelerators x TP x KV dtype for {model_id} on {ctx.engine_label}", fmt))
        tp_flag = "--num-shard" if ctx.engine == "tgi" else "--tp-size"
        preamble = (
            f"Every row is `kvlint plan` of this command ({ctx.engine_label}) with {tp_flag} and --kv-cache-dtype "
            f"replaced (auto: {name}'s default, the model's dtype), over "
            f"{fleet}. {ctx.version_note}"
        )
        out.append(preamble.rstrip())
        out.append(render_compare(rows, fmt, engine=ctx.engine))
    sweep_plot = None
    acc = ctx.accelerator
    for spec in sweep:
        if acc is None:
            raise CapacityError(
                "--sweep needs a GPU to re-plan on: --accelerator ID (`kvlint accelerators` lists them) or --gpu-memory QTY"
            )
        dest, pts = E.sweep(ctx, acc, spec)
        doc.setdefault("sweeps", []).append(
            {
                "setting": dest.replace("_", "-"),
                "accelerator": acc.id,
                "points": [dataclasses.asdict(p) for p in pts],
            }
        )
        out.append(R.heading(f"Sweep of {dest.replace('_', '-')} on {acc.name} with {ctx.engine_label}", fmt))
        if ctx.version_note:
            out.append(ctx.version_note)
        out.append(render_sweep(dest, pts, fmt, engine=ctx.engine))
        sweep_plot = (dest, [p.value for p in pts], [p.concurrency for p in pts])
    if plot:
        out.append(plot_note(plot, plan=ctx.out.result.plan, sweep=sweep_plot))
        doc["plot"] = out[-1]
    if fmt == "json":
        import json

        return json.dumps(doc, indent=2) + "\n"
    return "\n\n".join(out) + "\n"


def plot_note(path: str, **figure: Any) -> str:
    """Write :func:`kvlint.capacity.plot.plot_figure` ``figure`` to ``path``; the line saying so, or why not."""
    from kvlint.capacity.plot import PlotError, plot_figure

    try:
        plot_figure(path, **figure)
    except PlotError as exc:
        return f"note: {exc}"
    return f"plot written to {path}"


def _found_site() -> Any:
    """The ``accelerators``/``fleet`` site of the ``.kvlint.yaml`` found from the current directory (as ``kvlint
    plan`` finds its model catalogue), or None (none found, none declared, or the file is invalid: ``kvlint
    plan`` already warned)."""
    from kvlint.config import ConfigError, find_config, load_config

    path = find_config([])
    if not path:
        return None
    try:
        return load_config(path, discovered=True).site
    except ConfigError:
        return None


class FiniteFloat(click.ParamType):
    """A finite float (``nan``/``inf`` rejected) within ``[low, high]``; ``low_open`` makes the lower bound
    exclusive (``> 0``). Errors are click usage errors naming the option (exit 2), never tracebacks."""

    name = "number"

    def __init__(
        self, low: float | None = None, high: float | None = None, *, low_open: bool = False
    ) -> None:
        self.low, self.high, self.low_open = low, high, low_open

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        """``value`` as a float, or :meth:`fail` with the allowed range."""
        if isinstance(value, float) and math.isfinite(value):
            v = value
        else:
            try:
                v = float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(v):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if self.low is not None and (v <= self.low if self.low_open else v < self.low):
            self.fail(f"{value!r} must be {'>' if self.low_open else '>='} {self.low:g}", param, ctx)
        if self.high is not None and v > self.high:
            self.fail(f"{value!r} must be <= {self.high:g}", param, ctx)
        return v


_POSITIVE_INT = click.IntRange(min=1)
_COUNT = click.IntRange(min=0)
_SHARE = FiniteFloat(0.0, 1.0)
_POSITIVE = FiniteFloat(0.0, low_open=True)


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "--accelerator",
    metavar="ID",
    help="GPU type (catalogue id or alias, e.g. h100); this or --gpu-memory is required.",
)
@click.option(
    "--gpu-memory",
    metavar="QTY",
    help="Device total as CUDA reports it, e.g. 79.19GiB (alone: a GPU of that size).",
)
@click.option("--engine-version", metavar="V", help="Engine version when the command does not say.")
@click.option("--model-dir", multiple=True, type=click.Path(file_okay=False), help="Model config directory.")
@click.option("--offline", is_flag=True, help="Never ask the Hugging Face Hub.")
@click.option(
    "--seed", type=_COUNT, default=0, show_default=True, help="Random seed (same seed, same result)."
)
@click.option(
    "--requests",
    type=click.IntRange(1, MAX_REQUESTS),
    default=None,
    help=f"Requests to simulate, at most {MAX_REQUESTS:,} [default: 2000, or the trace rows].",
)
@click.option(
    "--rate", type=_POSITIVE, default=10.0, show_default=True, help="Poisson arrival rate, requests/s."
)
@click.option(
    "--burst-size", type=_POSITIVE_INT, default=None, help="Arrive in bursts of this many requests instead."
)
@click.option(
    "--burst-every", type=_POSITIVE_INT, default=200, show_default=True, help="Steps between bursts."
)
@click.option(
    "--trace", type=click.Path(dir_okay=False), help="CSV/JSONL of prompt_tokens,output_tokens[,arrival_s]."
)
@click.option(
    "--prompt",
    "prompt_dist",
    default="lognormal:512,2048",
    show_default=True,
    help="Prompt lengths in tokens: fixed:N, uniform:MIN,MAX or lognormal:P50,P95 (2k = 2000, 2K = 2048).",
)
@click.option(
    "--output",
    "output_dist",
    default="lognormal:128,512",
    show_default=True,
    help="Output lengths in tokens (generated per request), same forms as --prompt.",
)
@click.option(
    "--cancel-prob", type=_SHARE, default=0.0, show_default=True, help="Share of requests cancelled."
)
@click.option(
    "--cancel-lag", type=_COUNT, default=0, show_default=True, help="Steps before a cancel frees blocks."
)
@click.option(
    "--prefix-groups", type=_COUNT, default=0, show_default=True, help="Number of shared prompt prefixes."
)
@click.option("--prefix-tokens", type=_COUNT, default=0, show_default=True, help="Tokens per shared prefix.")
@click.option(
    "--prefix-share", type=_SHARE, default=0.0, show_default=True, help="Share of requests with a prefix."
)
@click.option(
    "--step-ms", type=_POSITIVE, default=30.0, show_default=True, help="Assumed wall time of one step."
)
@click.option("--no-sensitivity", is_flag=True, help="Skip the p95-output sensitivity runs.")
@click.option("--format", "fmt", type=click.Choice(("text", "markdown")), default="text", show_default=True)
@click.option("--plot", metavar="FILE", help="Also write a PNG/SVG (needs matplotlib).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def simulate(command: tuple[str, ...], **kw: Any) -> None:
    """Simulate a paged KV cache (vLLM V1 scheduler) under request shapes, exactly as typed after `--`.

    \b
    kvlint simulate --accelerator h100 --rate 20 --seed 1 -- vllm serve meta-llama/Llama-3.1-8B-Instruct

    The GPU: --accelerator ID, or --gpu-memory QTY alone for a GPU of that size (as kvlint plan takes it).
    vLLM commands only: the simulation is vLLM V1's scheduler, which TGI's router and SGLang's scheduler do not
    share (their plans, tables and sweeps: kvlint plan). Exit codes: 0 report printed, 2 usage error (no GPU
    given, unknown accelerator, unreadable trace, bad length distribution, a command that cannot be planned or
    is not vLLM's).
    """
    from kvlint.capacity.context import CapacityError, resolve
    from kvlint.capacity.report import build_report
    from kvlint.capacity.workload import (
        WorkloadError,
        WorkloadSpec,
        empirical_from_trace,
        load_trace,
        parse_length_dist,
    )
    from kvlint.manifest_word import manifest_word

    manifest = manifest_word(command, "simulate")
    if manifest is not None:
        raise click.UsageError(manifest)
    if not kw["accelerator"] and not kw["gpu_memory"]:
        raise click.UsageError(
            "simulate needs a GPU to plan on: --accelerator ID (`kvlint accelerators` lists them) or "
            "--gpu-memory QTY (a GPU of that size)"
        )
    options = _make_options(
        kw["accelerator"], kw["gpu_memory"], kw["engine_version"], kw["model_dir"], kw["offline"]
    )
    try:
        rows = load_trace(kw["trace"]) if kw["trace"] else []
        if rows:
            prompt, output = empirical_from_trace(rows)
            arrivals = "trace" if all(r.arrival_s is not None for r in rows) else "poisson"
        else:
            prompt, output = parse_length_dist(kw["prompt_dist"]), parse_length_dist(kw["output_dist"])
            arrivals = "poisson"
        if kw["burst_size"] is not None:
            arrivals = "burst"
        spec = WorkloadSpec(
            requests=kw["requests"] if kw["requests"] is not None else (len(rows) if rows else 2000),
            prompt=prompt,
            output=output,
            arrivals=arrivals,
            rate=kw["rate"],
            burst_size=kw["burst_size"] if kw["burst_size"] is not None else 64,
            burst_every=kw["burst_every"],
            step_ms=kw["step_ms"],
            cancel_prob=kw["cancel_prob"],
            cancel_lag_steps=kw["cancel_lag"],
            prefix_groups=kw["prefix_groups"],
            prefix_tokens=kw["prefix_tokens"],
            prefix_share=kw["prefix_share"],
            trace=tuple(rows),
            trace_name=str(kw["trace"] or ""),
            seed=kw["seed"],
        )
        # the command's --config FILE is the user's own, read from this machine as kvlint plan reads it
        ctx = resolve(list(command), options, what="kvlint simulate (vLLM's V1 scheduler)", local_config=True)
        rep = build_report(ctx, spec, sensitivity=not kw["no_sensitivity"])
    except (WorkloadError, CapacityError, ValueError) as exc:
        raise click.UsageError(str(exc)) from exc
    text = rep.render(kw["fmt"])
    if kw["plot"]:
        from kvlint.capacity.plot import PlotError, plot_figure

        try:
            plot_figure(
                kw["plot"],
                plan=rep.plan,
                occupancy=(rep.paged.occ_steps, rep.paged.occupancy, rep.config.num_blocks),
            )
            text += f"\nplot written to {kw['plot']}\n"
        except PlotError as exc:
            text += f"\nnote: {exc}\n"
    click.echo(text, nl=False)
    sys.stdout.flush()
