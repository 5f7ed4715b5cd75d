"""The ``kvlint verify`` command (registered on the main group by :mod:`kvlint.cli`)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from kvlint.report.escape import inert_json, inert_line, printable

__all__ = ["verify"]


def _same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one existing file (a link to it, another spelling of its path)."""
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:  # either does not exist (yet): not the same file
        return False


@click.command(context_settings={"allow_interspersed_args": True})
@click.argument("log", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--model", "model_ref", metavar="REF", help="Model when the log names none or a local path.")
@click.option(
    "--accelerator", metavar="ID", help="GPU type the log ran on (catalogue id or alias, e.g. h100, l4)."
)
@click.option(
    "--gpu-memory",
    metavar="QTY",
    help="Device total (e.g. 79.19GiB); default: the log's, else the catalogue's.",
)
@click.option("--engine-version", metavar="V", help="Engine version when the log prints none (e.g. 0.9.2).")
@click.option(
    "--model-dir",
    multiple=True,
    type=click.Path(file_okay=False, exists=True),
    help="Directory of <org>--<name>/config.json model configs (repeatable).",
)
@click.option("--offline", is_flag=True, help="Never ask the Hugging Face Hub.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option(
    "--record",
    metavar="FILE",
    help="Write the start-up as a ground-truth case (YAML list, the format of groundtruth/cases.yaml); - = stdout. "
    "Not written when the log cannot be replayed (exit status 2).",
)
@click.argument("engine_args", nargs=-1, type=click.UNPROCESSED)
def verify(
    log: str | None,
    model_ref: str | None,
    fmt: str,
    record: str | None,
    engine_args: tuple[str, ...],
    **kw: Any,
) -> None:
    """Compare an engine's start-up log with kvlint's plan for the same settings.

    Reads a vLLM (V0 or V1), TGI or SGLang start-up log from LOG, stdin (- or no LOG) or `kubectl logs`
    output, extracts the configuration it printed (non-default args, version, TP, GPU total) and the figures
    (weights, activation, non-torch, CUDA graphs, KV GiB, tokens, blocks, concurrency; TGI/SGLang tokens),
    replays kvlint's plan and prints predicted vs reported with the error and whether it falls inside the band.
    Engine flags the log does not show go after `--` (`kvlint verify LOG [OPTIONS] -- --max-num-seqs 8`).

    \b
    kubectl logs deploy/vllm | kvlint verify --accelerator h100 -
    kvlint verify vllm.log --model Qwen/Qwen2-7B-Instruct --accelerator a100-80gb --format json
    kvlint verify v0.log --model Qwen/Qwen3-0.6B --accelerator h100 --engine-version 0.9.2 -- --max-num-seqs 8

    Exit codes: 0 every KV figure inside kvlint's band, 1 a KV figure outside it (or a start-up failure kvlint
    calls ok), 2 the log cannot be read or replayed, or it shows no KV figure and no failure (it ends before
    the engine sized its KV cache).
    """
    from kvlint.capacity.cli import _make_options
    from kvlint.memory.versions import parse_pep440
    from kvlint.verify import VerifyError, parse_log, record_case, verify_log
    from kvlint.verify.logparse import MAX_LOG_CHARS, MAX_LOG_LINES

    if kw.get("engine_version") and parse_pep440(kw["engine_version"]) is None:
        raise click.BadParameter(
            f"'{kw['engine_version']}' is not a release number such as 0.11.0", param_hint="--engine-version"
        )
    if log and log.startswith("--"):  # `kvlint verify -- --max-num-seqs 8` reads stdin
        engine_args, log = (log, *engine_args), None
    extra = tuple(a for a in engine_args if a != "--")
    if record == "-" and fmt == "json":
        # both would go to stdout, one YAML document after the other (neither a JSON nor a YAML reader takes that)
        raise click.UsageError("--record - and --format json both write to stdout; give --record FILE")
    if record and record != "-" and log not in (None, "-") and _same_file(record, log):
        # writing the case there would destroy the log it was read from
        raise click.UsageError(f"--record {record} is the log being read; write the case to another file")
    try:
        # one character past the parser's bound, so that it knows the log went on; the rest is never read
        if log in (None, "-"):
            text = sys.stdin.read(MAX_LOG_CHARS + 1)
        else:
            with open(log, encoding="utf-8", errors="replace") as fh:
                text = fh.read(MAX_LOG_CHARS + 1)
    except OSError as exc:
        raise click.UsageError(f"cannot read {log}: {exc.strerror or exc}") from exc
    parsed = parse_log(text)
    if parsed.truncated:
        click.echo(
            f"kvlint verify: read the first {MAX_LOG_LINES:,} lines ({MAX_LOG_CHARS >> 20} MiB at most) of the log; "
            "the start-up lines come first, the rest was not read",
            err=True,
        )
    if parsed.engine is None:
        click.echo("kvlint verify: no vLLM, TGI or SGLang start-up lines found", err=True)
        sys.exit(2)
    options = _make_options(
        kw.get("accelerator"),
        kw.get("gpu_memory"),
        kw.get("engine_version"),
        kw.get("model_dir") or (),
        kw["offline"],
    )
    result = None
    error = None
    try:
        result = verify_log(parsed, options, model=model_ref, extra_args=extra)
    except VerifyError as exc:
        error = str(exc)
    if record and result is None:
        # exit 2: nothing was replayed (the log names no model, no GPU is known ...), so there is no case "ready
        # to contribute" (README "Checking kvlint against your own start-up"); a file the user named is not
        # written (nor replaced) with a case that lacks what the replay needs
        where = "to stdout" if record == "-" else f"to {record}"
        click.echo(
            f"kvlint verify: --record: no case written {where}: the log could not be replayed"
            + (" (the JSON's error says why)" if fmt == "json" else ""),
            err=True,
        )
    elif record and result is not None and result.incomplete:
        # exit 2 as well: the log ends before the engine sized its KV cache (a pod still loading, a log cut short),
        # so the case would hold no KV figure and no failure (`figures: null` for a TGI log cut before its warmup),
        # and its outcome would say the start-up went well when the log does not show it
        where = "to stdout" if record == "-" else f"to {record}"
        click.echo(
            f"kvlint verify: --record: no case written {where}: the log shows no KV-cache figure and no start-up "
            "failure (it ends before the engine sized its KV cache); record the whole start-up log",
            err=True,
        )
    elif record:
        import yaml

        case = record_case(
            result,
            parsed,
            source=None if log in (None, "-") else log,
            engine_version=options.engine_version,
            extra_args=extra,
        )
        text_out = yaml.safe_dump([case], sort_keys=False, allow_unicode=True, width=110)
        if record == "-":
            click.echo(text_out, nl=False)
        else:
            try:
                with open(record, "w", encoding="utf-8") as fh:
                    fh.write(text_out)
            except OSError as exc:  # a directory, a missing directory, no permission: said, as check says it
                click.echo(
                    f"kvlint verify: --record: cannot write the case to {printable(record)}: "
                    f"{exc.strerror or exc}",
                    err=True,
                )
                sys.exit(2)
    if result is None:
        if fmt == "json":
            click.echo(
                inert_json(
                    json.dumps({"engine": parsed.engine, "figures": parsed.figures, "error": error}, indent=2)
                )
            )
        else:
            # what was read, so the user sees the log was understood before being asked for what it lacks
            read = ", ".join(f"{k} {v}" for k, v in parsed.figures.items())
            click.echo(
                f"read from the log, not compared (see below): {read}"
                if read
                else "read from the log: no figure kvlint compares (KV-cache memory, blocks or tokens)"
            )
            # the JSON document carries the error already: said once, on stderr, only beside the text
            click.echo(inert_line(f"kvlint verify: {printable(error or '')}"), err=True)
        sys.exit(2)
    if fmt == "json":
        click.echo(inert_json(json.dumps(result.as_dict(), indent=2)))  # the log's lines, no "##[" command
    elif record != "-":
        click.echo(result.render_text(), nl=False)
    sys.exit(result.exit_code)
