"""``kvlint verify``: replay kvlint's plan for the settings a start-up log shows and compare figure by figure.

The command line is rebuilt from what the log printed (vLLM's ``non-default args`` and engine-config line, TGI's
``Args { … }``, SGLang's ``ServerArgs``), completed by the user's options (``--model`` when the log names a local
path, ``--accelerator``/``--gpu-memory`` since logs rarely name the GPU, ``--engine-version``, extra engine flags),
then planned exactly as ``kvlint plan`` plans it (:func:`kvlint.capacity.plan_command.plan_command`). Each printed
figure is set against kvlint's prediction and its band:

* KV cache GiB, tokens, blocks, concurrency, TGI's max batch total tokens, SGLang's pool tokens: the plan's band
  (``kv_cache_bytes_low``/``_high`` and what they give in tokens, blocks and concurrency);
* activation, non-torch, CUDA graphs: the plan's KV half-band (these terms are what the band stands for);
* weights: ±2 % (the weight model's accuracy over the replayed ground truth, ``bench/accuracy.py``);
* budget: ±0.01 GiB plus the engine's rounding.

A start-up failure in the log is set against kvlint's verdict (it should be ``fail`` or ``risky``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kvlint.report.escape import inert_line, printable
from kvlint.values import digits
from kvlint.verify.logparse import StartupLog

if TYPE_CHECKING:
    from kvlint.options import Options

__all__ = ["Figure", "VerifyResult", "verify_log", "VerifyError"]

GiB = 1 << 30

#: vLLM settings (argparse dests) that shape the memory plan, taken from the log's non-default args.
VLLM_DESTS = (
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "enable_expert_parallel",
    "max_model_len",
    "gpu_memory_utilization",
    "kv_cache_dtype",
    "dtype",
    "quantization",
    "max_num_seqs",
    "max_num_batched_tokens",
    "enable_chunked_prefill",
    "enforce_eager",
    "block_size",
    "cpu_offload_gb",
    "kv_cache_memory_bytes",
    "num_gpu_blocks_override",
    "disable_hybrid_kv_cache_manager",
    "disable_sliding_window",
    "limit_mm_per_prompt",
    "mm_processor_kwargs",
    "speculative_config",
    "hf_overrides",
    "performance_mode",
    "enable_extensible_kv_cache",
    "enable_elastic_ep",
)
#: Fields of vLLM's "Initializing … engine (vX) with config:" line used when the non-default args do not say.
_CONFIG_FIELDS = {
    "tensor_parallel_size": "tensor_parallel_size",
    "pipeline_parallel_size": "pipeline_parallel_size",
    "quantization": "quantization",
    "enforce_eager": "enforce_eager",
    "kv_cache_dtype": "kv_cache_dtype",
    "max_seq_len": "max_model_len",
}
_TGI_FIELDS = (
    "num_shard",
    "quantize",
    "dtype",
    "kv_cache_dtype",
    "max_input_tokens",
    "max_input_length",
    "max_total_tokens",
    "max_batch_prefill_tokens",
    "max_batch_size",
    "cuda_memory_fraction",
)
_SGLANG_FIELDS = (
    "tp_size",
    "dp_size",
    "pp_size",
    "mem_fraction_static",
    "context_length",
    "chunked_prefill_size",
    "kv_cache_dtype",
    "max_running_requests",
    "max_total_tokens",
    "page_size",
    "quantization",
    "dtype",
)
#: figures whose being outside the band makes ``kvlint verify`` exit 1
KV_FIGURES = (
    "kv_cache_gib",
    "kv_tokens",
    "gpu_blocks",
    "max_concurrency",
    "max_batch_total_tokens",
    "kv_cache_blocks",
)


class VerifyError(ValueError):
    """The log cannot be replayed (no engine recognised, no model, no GPU) -- exit status 2."""


@dataclass
class Figure:
    """One printed figure against kvlint's prediction.

    ``key`` the ground-truth figure name; ``label`` what the log calls it; ``unit`` GiB | tokens | blocks | x;
    ``reported`` as printed; ``predicted`` kvlint's value; ``low``/``high`` its band; ``line`` where the log printed
    it; ``note`` how the prediction was made when not obvious; ``quote`` the log's own text of that line.
    """

    key: str
    label: str
    unit: str
    reported: float | None
    predicted: float | None
    low: float | None = None
    high: float | None = None
    line: int | None = None
    note: str = ""
    quote: str | None = None

    @property
    def error_pct(self) -> float | None:
        if self.reported in (None, 0) or self.predicted is None:
            return None
        assert self.reported is not None
        return (self.predicted - self.reported) / abs(self.reported) * 100

    @property
    def inside(self) -> bool | None:
        if self.reported is None or self.low is None or self.high is None:
            return None
        return self.low <= self.reported <= self.high

    def as_dict(self) -> dict[str, Any]:
        return {
            "figure": self.key,
            "label": self.label,
            "unit": self.unit,
            "reported": self.reported,
            "predicted": self.predicted,
            "error_pct": None if self.error_pct is None else round(self.error_pct, 2),
            "band": [self.low, self.high] if self.low is not None else None,
            "inside_band": self.inside,
            "log_line": self.line,
            "log_text": self.quote,
            "note": self.note or None,
        }


@dataclass
class VerifyResult:
    """What ``kvlint verify`` found: the parsed log, the command replayed, the settings' sources, the figures, the
    verdict kvlint gives and the outcome the log shows."""

    log: StartupLog
    command: list[str]
    env: dict[str, str]
    sources: dict[str, str]
    figures: list[Figure] = field(default_factory=list)
    verdict: str | None = None
    plan_error: str | None = None
    notes: list[str] = field(default_factory=list)
    accelerator: str | None = None
    gpu_total_gib: float | None = None
    plan: Any = None

    @property
    def failures_missed(self) -> bool:
        """The log shows a start-up failure kvlint's verdict calls ``ok``."""
        return self.log.outcome == "fail" and self.verdict == "ok"

    @property
    def outside(self) -> list[Figure]:
        """KV figures (:data:`KV_FIGURES`) outside kvlint's band."""
        return [f for f in self.figures if f.key in KV_FIGURES and f.inside is False]

    @property
    def incomplete(self) -> bool:
        """The log shows neither a start-up failure nor any KV figure (:data:`KV_FIGURES`): it ends before the
        engine sized its KV cache (a pod still loading, a log cut short), so nothing was verified."""
        return not self.log.failure and not any(f.key in KV_FIGURES for f in self.figures)

    @property
    def exit_code(self) -> int:
        """0 every KV figure inside the band (and no missed failure); 1 a KV figure outside it or a missed
        failure; 2 no KV figure and no failure to compare (:attr:`incomplete`)."""
        if self.outside or self.failures_missed:
            return 1
        return 2 if self.incomplete else 0

    def as_dict(self) -> dict[str, Any]:
        lg = self.log
        return {
            "engine": lg.engine,
            "engine_version": lg.version,
            "log_era": lg.era,
            "log_releases": lg.releases,
            "model": lg.model,
            "accelerator": self.accelerator,
            "gpu_total_gib": self.gpu_total_gib,
            "printed_args": {k: _jsonable(v) for k, v in lg.args.items()},
            "command": self.command,
            "env": self.env,
            "setting_sources": self.sources,
            "figures": [f.as_dict() for f in self.figures],
            "outcome": lg.outcome,
            "failure": lg.failure or None,
            "warnings": dict(lg.warnings) or None,
            "kvlint_verdict": self.verdict,
            "plan_error": self.plan_error,
            "outside_band": [f.key for f in self.outside],
            "incomplete": self.incomplete,
            "failure_missed": self.failures_missed,
            "notes": self.notes,
            "exit_code": self.exit_code,
        }

    def render_text(self) -> str:
        lg = self.log
        out = [
            f"log: {lg.engine or 'unknown engine'} {lg.version or '(version not printed)'}"
            + (f" ({lg.era.upper()} log format)" if lg.era else "")
            + (f" (lines TGI {lg.releases} prints)" if lg.releases and not lg.version else "")
            + f", model {lg.model or '(not printed)'}"
            + (f", GPU total {self.gpu_total_gib:.2f} GiB" if self.gpu_total_gib else ""),
            "replayed: "
            + " ".join(_quote(a) for a in self.command)
            + ("".join(f" [{k}={v}]" for k, v in self.env.items())),
        ]
        for k, v in self.sources.items():
            out.append(f"  {k}: {v}")
        if self.plan_error:
            out.append(f"no plan: {self.plan_error}")
        out.append("")
        out.append(f"{'figure':32} {'reported':>12} {'kvlint':>12} {'error':>8}  {'band':>25}  in band")
        for f in self.figures:
            band = "-" if f.low is None else f"[{_fmt(f.low, f.unit)}, {_fmt(f.high, f.unit)}]"
            err = "-" if f.error_pct is None else f"{f.error_pct:+.1f}%"
            ins = {True: "yes", False: "NO", None: "-"}[f.inside]
            out.append(
                f"{f.label[:32]:32} {_fmt(f.reported, f.unit):>12} {_fmt(f.predicted, f.unit):>12} {err:>8}  "
                f"{band:>25}  {ins}" + (f"   ({f.note})" if f.note else "")
            )
            if f.quote:
                out.append(f"    line {f.line}: {_clip(f.quote, f.label.split(' ')[0])}")
        out.append("")
        if lg.failure:
            out.append(
                f"the log shows a start-up failure ({lg.failure.get('kind')}); kvlint's verdict: {self.verdict}"
                + (" -- kvlint would not have warned" if self.failures_missed else "")
            )
        elif self.incomplete:
            out.append(
                "the log shows no KV-cache figure and no start-up failure (it ends before the engine sized its KV "
                f"cache): nothing to verify; kvlint's verdict: {self.verdict}"
            )
        else:
            out.append(f"the engine started; kvlint's verdict: {self.verdict}")
        for n in self.notes:
            out.append(f"note: {n}")
        if self.outside:
            out.append("outside the band: " + ", ".join(f.key for f in self.outside))
        # the log's own text (its quoted lines, the model it names, notes quoting it) is the log author's: an
        # escape sequence, a bidi override or a carriage return in it is shown escaped (kvlint.report.escape),
        # line by line so that kvlint's own line breaks stay; no line is a GitHub workflow command (a log line
        # holding "##[error]" was quoted as it is: kvlint.report.escape.inert_line)
        return "\n".join(inert_line(printable(line)) for line in "\n".join(out).split("\n")) + "\n"


def _jsonable(v: Any) -> Any:
    try:
        json.dumps(v)
        return v
    except TypeError:
        return str(v)


#: What precedes an engine's message on a log line: a ``docker compose`` service prefix (``tgi-1  | ``), an RFC 3339
#: timestamp, then vLLM's ``INFO 05-06 12:00:00 [file.py:123]``, TGI's ``INFO text_generation_router_v3:
#: backends/v3/src/lib.rs:137:`` or SGLang's ``[2025-01-01 12:00:00 TP0]``.
_LINE_HEAD = re.compile(
    r"^(?:[\w.-]+\s+\|\s+)?"
    r"(?:\d{4}-\d{2}-\d{2}T[\d:.]+(?:Z|[+-][\d:]+)\s+)?"
    r"(?:(?:\(\w+ pid=\d+\)\s+)?(?:INFO|WARNING|WARN|ERROR|DEBUG)\s+\d{2}-\d{2} [\d:.]+\s+\[[^\]]*\]\s+"
    r"|(?:INFO|WARNING|WARN|ERROR|DEBUG)\s+text_generation_\w+:\s+(?:[\w/.-]+\.rs:\d+:\s+)?"
    r"|\[\d{4}-\d{2}-\d{2} [\d:.]+[^\]]*\]\s+)?"
)


def _clip(text: str, focus: str = "", width: int = 110) -> str:
    """The engine's message on a log line (its prefix of service, time, level and source left out, see
    :data:`_LINE_HEAD`), shortened to ``width`` characters ("…" for what is left out): from its start, or around
    ``focus`` (the figure's name as the line prints it) when that comes later on a long line."""
    text = text[_LINE_HEAD.match(text).end() :] or text  # type: ignore[union-attr]
    if len(text) <= width:
        return f'"{text}"'
    at = text.find(focus) if focus else -1
    if at + len(focus) <= width - 1:
        return '"' + text[: width - 1] + '…"'
    start = max(0, at - 2)
    return '"…' + text[start : start + width - 2] + ("…" if start + width - 2 < len(text) else "") + '"'


def _quote(a: str) -> str:
    return a if re.fullmatch(r"[\w./:=,+@%-]+", a) else "'" + a.replace("'", "'\\''") + "'"


def _fmt(x: float | None, unit: str) -> str:
    if x is None:
        return "-"
    if unit == "GiB":
        return f"{x:.2f} GiB"
    if unit == "x":
        return f"{x:.2f}x"
    return f"{int(round(x)):,}"


def _flag_for(dest: str, version: str | None) -> tuple[str, str] | None:
    """The vLLM option string and kind for an argparse ``dest`` (from the generated flag table)."""
    from kvlint.engines import vllm_flags_data as data

    exact = "--" + dest.replace("_", "-")
    if exact in data.OPTIONS:
        return exact, data.OPTIONS[exact][1]
    best = None
    for opt, (d, kind, _mask) in data.OPTIONS.items():
        if d == dest and opt.startswith("--"):
            if best is None or len(opt) > len(best[0]):  # prefer the long spelling
                best = (opt, kind)
    return best


def _vllm_flags(value_of: dict[str, Any], version: str | None) -> list[str]:
    out: list[str] = []
    for dest, val in value_of.items():
        got = _flag_for(dest, version)
        if got is None or val is None:
            continue
        opt, kind = got
        if isinstance(val, bool):
            if val:
                out.append(opt)
            elif kind == "bool":
                out.append("--no-" + opt[2:])
            continue
        if isinstance(val, (dict, list)):
            out += [opt, json.dumps(val)]
        else:
            out += [opt, str(val)]
    return out


def _hub_like(ref: str | None) -> bool:
    return bool(ref) and re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", str(ref)) is not None


def build_command(
    log: StartupLog, *, model: str | None, engine_version: str | None, extra_args: tuple[str, ...] = ()
) -> tuple[list[str], dict[str, str], dict[str, str], list[str]]:
    """The engine command line, env and setting sources for the log's settings; raises :class:`VerifyError` when
    no engine was recognised or no model can be named."""
    notes: list[str] = []
    sources: dict[str, str] = {}
    env: dict[str, str] = {}
    # a local path goes to the plan as printed: kvlint plan resolves one whose last components name a catalogued
    # model (KV505), and an unresolvable one ends in "no plan to compare" below
    ref = model or log.model
    if ref is None:
        raise VerifyError("the log names no model; give --model <hub id or config directory>")
    sources["model"] = "--model" if model else "the log"
    if log.engine == "vllm":
        values: dict[str, Any] = {}
        for src, dest in _CONFIG_FIELDS.items():
            raw = log.config.get(src)
            if raw in (None, "None", ""):
                continue
            val: Any = raw
            if raw in ("True", "False"):
                val = raw == "True"
            elif raw.isdigit():
                # at most MAX_DIGITS ASCII digits, else kept as printed (5,000 digits made int() raise)
                val = raw if digits(raw) is None else digits(raw)
            if dest == "tensor_parallel_size" and val == 1 or dest == "pipeline_parallel_size" and val == 1:
                continue
            if dest == "enforce_eager" and val is False or dest == "kv_cache_dtype" and val == "auto":
                continue
            values[dest] = val
            sources[dest] = "the log's engine-config line"
        for dest in VLLM_DESTS:
            if dest in log.args:
                values[dest] = log.args[dest]
                sources[dest] = "the log's non-default args"
        if "max_model_len" not in values and "max_model_len" in log.figures:
            # "Using max model len N" (ModelConfig, V1 logs): the length the engine resolved, printed also when
            # the engine-config line and the non-default args are not in the excerpt
            values["max_model_len"] = log.figures["max_model_len"]
            sources["max_model_len"] = "the log's 'Using max model len' line"
        if "gpu_memory_utilization" not in values and "gpu_memory_utilization" in log.figures:
            values["gpu_memory_utilization"] = log.figures["gpu_memory_utilization"]
            sources["gpu_memory_utilization"] = "the log's memory-profiling line"
        if log.extensible_kv_cache is False and "enable_extensible_kv_cache" not in values:
            # vLLM >= 0.34.0 turned its extensible KV cache off at start-up for a reason kvlint cannot see (a
            # driver without virtual memory management, no IMEX channel for a connector): replay it off
            values["enable_extensible_kv_cache"] = False
            sources["enable_extensible_kv_cache"] = (
                f"the log: the extensible KV cache was off ({log.extensible_off_reason or 'reason not printed'})"
            )
        if log.flashinfer_sampler is not None:
            # the sampler the engine chose, from its own line: before 0.11.1 the choice hangs on whether the image
            # has the FlashInfer package, which no flag shows; VLLM_USE_FLASHINFER_SAMPLER is how kvlint's plan
            # takes a given sampler path (calibration.sampler_path)
            env["VLLM_USE_FLASHINFER_SAMPLER"] = "1" if log.flashinfer_sampler else "0"
            sources["top-k/top-p sampler"] = (
                f"the log's sampler line (line {log.sampler_line}: "
                + ("FlashInfer" if log.flashinfer_sampler else "PyTorch-native")
                + ")"
            )
        argv = ["vllm", "serve", ref, *_vllm_flags(values, engine_version), *extra_args]
        version = engine_version or log.version
        if log.era == "v0":
            from kvlint.memory.versions import resolve_version

            v, assumed = resolve_version(version)
            if version is None or assumed:
                notes.append(
                    "V0 log format without a printed version: planned as vLLM 0.7.3 (the last release with V0 by "
                    "default); give --engine-version to be exact"
                )
            elif v >= (0, 8, 0):
                env["VLLM_USE_V1"] = "0"
                notes.append("V0 log format on a release that defaults to V1: planned with VLLM_USE_V1=0")
    elif log.engine == "tgi":
        flags: list[str] = []
        for key in _TGI_FIELDS:
            if key in log.args:
                flags += ["--" + key.replace("_", "-"), str(log.args[key])]
                sources[key] = (
                    "the log's 'Sharding model on N processes' line"
                    if key == "num_shard" and "num_shard" in log.lines
                    else "the log's launcher Args"
                )
        argv = ["text-generation-launcher", "--model-id", ref, *flags, *extra_args]
    elif log.engine == "sglang":
        flags = []
        for key in _SGLANG_FIELDS:
            val = log.args.get(key)
            if val not in (None, "None", ""):
                flags += ["--" + key.replace("_", "-"), str(val)]
                sources[key] = "the log's ServerArgs"
        argv = ["python", "-m", "sglang.launch_server", "--model-path", ref, *flags, *extra_args]
    else:
        raise VerifyError("no vLLM, TGI or SGLang start-up lines found in the log")
    if extra_args:
        sources["extra engine flags"] = "the command line after --"
    return argv, env, sources, notes


def verify_log(
    log: StartupLog,
    options: Options,
    *,
    model: str | None = None,
    extra_args: tuple[str, ...] = (),
) -> VerifyResult:
    """Replay kvlint's plan for the log's settings (see the module docstring).

    ``options.accelerator`` names the GPU type; ``options.gpu_memory_bytes`` its total (else the total the log
    printed, else the catalogue's); ``options.engine_version`` the release when the log prints none.
    Raises :class:`VerifyError` when the log cannot be replayed.
    """
    import dataclasses

    from kvlint.capacity.plan_command import PlanRequestError, plan_command

    version = log.version or options.engine_version
    how = "the log" if log.version else "--engine-version" if options.engine_version else None
    if log.engine == "vllm" and log.era == "v0" and version is None:
        version, how = "0.7.3", "assumed (V0 log without a version)"
    tgi_assumed = log.engine == "tgi" and log.releases is not None and version is None
    if tgi_assumed and log.releases is not None:
        version = log.releases.split(" - ")[-1]
        how = f"assumed: launcher-default lines of TGI {log.releases}, no version printed"
    argv, env, sources, notes = build_command(log, model=model, engine_version=version, extra_args=extra_args)
    if tgi_assumed:
        notes.append(
            f"the launcher printed its token defaults (`Default `max_total_tokens` to N`), which only TGI "
            f"{log.releases} prints: planned as TGI {version}, the last of them; give --engine-version to be exact "
            "(the wiggle room on the free memory is 0.95 up to 2.3 and 0.90 in 2.4)"
        )
    if log.gpu_total_gib and not options.gpu_memory_bytes:
        options = dataclasses.replace(options, gpu_memory_bytes=int(log.gpu_total_gib * GiB))
        sources["GPU total"] = "the log"
    elif options.gpu_memory_bytes:
        sources["GPU total"] = "--gpu-memory"
    if options.accelerator:
        sources["GPU type"] = "--accelerator"
    if not options.accelerator and not options.gpu_memory_bytes:
        raise VerifyError("the log does not print the GPU total; give --accelerator (or --gpu-memory)")
    if version:
        options = dataclasses.replace(options, engine_version=version)
        sources["engine version"] = f"{version} ({how})"
    gpus = None
    if log.engine == "tgi" and isinstance(log.args.get("num_shard"), int):
        gpus = int(log.args["num_shard"])
    try:
        out = plan_command(argv, options, gpus=gpus, env=env)
    except PlanRequestError as exc:
        raise VerifyError(str(exc)) from exc
    cr = out.result
    shift = _sglang_preload_shift(log, cr.plan_detail) if log.engine == "sglang" else None
    if shift is not None and not sources.get("GPU total") == "--gpu-memory":
        # the log's free memory before loading is below what the card leaves once the CUDA context is up: another
        # process (a desktop, a second server) held the difference. SGLang sizes the pool from the free memory it
        # measured (sglang@0.4.2.post2 and 0.5.x: model_runner.py::ModelRunner.init_torch_distributed returns it
        # as total_gpu_memory, which profile_max_num_token multiplies by 1 - mem_fraction_static), so the replay
        # takes the card's total less that difference
        held, new_total = shift
        options = dataclasses.replace(options, gpu_memory_bytes=new_total)
        try:
            out = plan_command(argv, options, gpus=gpus, env=env)
        except PlanRequestError as exc:
            raise VerifyError(str(exc)) from exc
        cr = out.result
        sources["GPU total"] = (
            f"the card's total less the {held / GiB:.2f} GiB held before SGLang started (the log's 'Load weight "
            f"begin. avail mem={log.figures['free_before_weights_gb']} GB' against kvlint's pre-load usage)"
        )
        notes.append(
            f"line {log.lines['free_before_weights_gb']}: SGLang found {log.figures['free_before_weights_gb']} GiB "
            f"free before loading, {held / GiB:.2f} GiB less than the card leaves after the CUDA context (another "
            "process held it); SGLang sizes the pool from the memory it found free, so the replay does too"
        )
    if cr.plan_detail is None and cr.model is None and cr.model_error:
        # nothing to compare: without config.json there is no plan (kvlint plan's KV502), so say why and exit 2
        ref = str(model or log.model)
        # the reason only, not kvlint plan's fixes for a manifest
        why = cr.model_error.split("); ", 1)[0] + (")" if "); " in cr.model_error else "")
        how = (
            f"give --model-dir DIR holding {ref.replace('/', '--')}/config.json, or run `kvlint models pull {ref}` "
            "once with network"
            if _hub_like(ref)
            else f"the log printed '{ref}', not a hub id (a path or a served name): give --model <hub id or config "
            "directory>"
        )
        raise VerifyError(f"no plan to compare: {why}; {how}")
    # the model taken from its path (KV505): say so
    notes += [f"{d.rule}: {d.message}" for d in out.diagnostics if d.rule == "KV505"]
    graph_oom = log.warnings.get("tgi_decode_cuda_graph_warmup_failed")
    if graph_oom is not None:
        notes.append(tgi_graph_oom_note(graph_oom))
    acc = cr.placement.accelerator if cr.placement else None
    res = VerifyResult(
        log=log,
        command=argv,
        env=env,
        sources=sources,
        notes=notes,
        plan_error=cr.plan_error,
        accelerator=acc.id if acc else None,
        gpu_total_gib=(cr.placement.memory_bytes / GiB)
        if cr.placement and cr.placement.memory_bytes
        else None,
        plan=cr.plan_detail,
    )
    if cr.plan_detail is None:
        res.verdict = out.verdict
        return res
    if log.engine == "vllm":
        _vllm_figures(res, cr)
    elif log.engine == "tgi":
        _tgi_figures(res, cr.plan_detail)
    else:
        _sglang_figures(res, cr.plan_detail)
    return res


def tgi_graph_oom_note(line: int) -> str:
    """What TGI's "Decode cuda graph warmup failed" (at ``line`` of the log) means. ``FlashCausalLM.warmup``
    (tgi@v1.4.1 - v3.3.7:server/text_generation_server/models/flash_causal_lm.py) allocates the KV cache first,
    then captures a decode CUDA graph per ``CUDA_GRAPHS`` batch size (largest first) in the memory the wiggle room
    left, and catches ``torch.cuda.OutOfMemoryError``: the shard starts and serves, without the graphs not yet
    captured. kvlint sets no memory aside for TGI's graphs (:mod:`kvlint.memory.tgi`), so the KV figures stand."""
    return (
        f'line {line}: TGI\'s decode CUDA-graph capture ran out of memory ("Decode cuda graph warmup failed"); the '
        "shard started without the graphs it had not captured yet (the largest batch sizes first), so decoding "
        "runs slower. TGI captures them after the KV cache, in the memory its wiggle room leaves, and logs the "
        "error instead of stopping (FlashCausalLM.warmup); kvlint sets no memory aside for them. To leave more "
        "room: fewer or smaller --cuda-graphs sizes, or a lower TGI_WIGGLE_ROOM (TGI >= 2.3) or "
        "--cuda-memory-fraction"
    )


def _add(res: VerifyResult, key: str, label: str, unit: str, pred: float | None, low: float | None = None,
         high: float | None = None, note: str = "") -> None:  # fmt: skip
    rep = res.log.figures.get(key)
    if rep is None and key in ("kv_cache_gib",) and res.log.failure.get("kv_available_gib") is not None:
        rep = res.log.failure["kv_available_gib"]
    # V0's max-seq-len refusal prints the pool as tokens: block_size x num_gpu_blocks
    # (vllm@0.4.3:vllm/worker/worker.py::raise_if_cache_size_invalid; V0's worker still raises it in 0.8.x, gt-275)
    if rep is None and key == "kv_tokens" and res.log.failure.get("kv_capacity_tokens") is not None:
        rep = res.log.failure["kv_capacity_tokens"]
    # the hybrid refusal names the pool's block count: "exceeds available Mamba cache blocks (M)"
    if rep is None and key == "mamba_blocks" and res.log.failure.get("mamba_blocks") is not None:
        rep = res.log.failure["mamba_blocks"]
    # a log that prints only the profile's CUDA-graph estimate ("Estimated CUDA graph memory: X GiB total"): the
    # amount the releases deducting it took off the KV budget, which is what kvlint's figure stands for
    if rep is None and key == "cudagraph_gib":
        rep = res.log.figures.get("cudagraph_estimated_gib")
    if rep is None:
        return
    line = res.log.lines.get(key)
    quote = res.log.texts.get(line) if line is not None else None
    res.figures.append(Figure(key, label, unit, float(rep), pred, low, high, line, note, quote))


def _vllm_figures(res: VerifyResult, cr: Any) -> None:
    from kvlint.memory import calibration as cal
    from kvlint.memory.pooling import vllm_pooling
    from kvlint.memory.versions import printed_activation_includes_cudagraph, resolve_version
    from kvlint.memory.vllm import (
        VllmSettings,
        decode_query_len,
        effective_cudagraph_user,
        model_capture_size,
        model_facts,
    )

    d = cr.plan_detail
    p = d.plan
    res.verdict = d.verdict
    if d.mamba_refusal is not None and d.verdict != "fail":
        # the runner's Mamba-block check comes after the KV fit check (kvlint.memory.vllm.mamba_block_count, KV108)
        res.verdict = "fail"
        res.notes.append(f"kvlint predicts vLLM's refusal: {d.mamba_refusal.split('. Each', 1)[0]}")
    v, _ = resolve_version(p.engine_version)
    half = max(p.kv_cache_bytes - p.kv_cache_bytes_low, p.kv_cache_bytes_high - p.kv_cache_bytes) / GiB
    w = p.weights_bytes / GiB
    _add(res, "weights_gib", "weights (model loading)", "GiB", w, w * 0.98, w * 1.02)
    b = p.budget_bytes / GiB
    _add(res, "budget_gib", "budget (total x utilization)", "GiB", b, b - 0.015, b + 0.015)
    ext = _plans_extensible(cr, v)
    act = p.activation_bytes / GiB
    note = ""
    if p.era == "v1" and printed_activation_includes_cudagraph(v) and p.cudagraph_bytes and not ext:
        act += p.cudagraph_bytes / GiB
        note = "includes the CUDA-graph estimate, as this release prints it"
    elif ext:
        # vllm@0.34.0:vllm/v1/worker/gpu/model_runner.py::GPUModelRunner.profile_cudagraph_memory returns 0 with
        # the extensible KV cache, so Worker.determine_available_memory's peak_activation_memory is the profile's
        note = "the profiled activation alone: no CUDA-graph estimate is taken with the extensible KV cache"
    _add(res, "activation_gib", "activation peak", "GiB", act, max(0.0, act - half), act + half, note)
    nt = p.non_torch_bytes / GiB
    _add(res, "non_torch_gib", "non-torch memory", "GiB", nt, max(0.0, nt - half), nt + half)
    _add(res, "weights_plus_non_torch_gib", "weights + non-torch", "GiB", w + nt, w * 0.98 + nt - half,
         w * 1.02 + nt + half)  # fmt: skip
    model = cr.model
    if p.era == "v1" and model is not None:
        cg = cal.cudagraph_bytes(
            max(d.stage_layers),
            p.max_num_seqs,
            decode_query_len(cr.settings, v)
            if isinstance(getattr(cr, "settings", None), VllmSettings)
            else 1,
            p.max_num_batched_tokens,
            model_capture_size(model.architectures, v),
            v,
            effective_cudagraph_user(
                cr.settings.cudagraph_user,
                v,
                chunked=model_facts(model).chunked,
                pooling=vllm_pooling(
                    v,
                    model.architectures,
                    runner=cr.settings.runner,
                    task=cr.settings.task,
                    convert=cr.settings.convert,
                )[0],
            )
            if isinstance(getattr(cr, "settings", None), VllmSettings)
            else None,
        )
        cgh = cal.band_bytes(cg) / GiB
        cgg = cg / GiB
        cg_note = (
            "captured pool; resident when the extensible KV cache is sized after capture"
            if ext
            else "estimate; deducted from the KV budget"
            if p.cudagraph_bytes
            else "estimate; not deducted in this release"
        )
        _add(res, "cudagraph_gib", "CUDA graphs", "GiB", cgg, max(0.0, cgg - cgh), cgg + cgh, cg_note)
    kv, lo, hi = p.kv_cache_bytes / GiB, p.kv_cache_bytes_low / GiB, p.kv_cache_bytes_high / GiB
    kv_note = ""
    if res.log.extensible_kv_cache and "kv_reserved_gib" in res.log.figures:
        kv_note = (
            "committed after warm-up; the 'Available KV cache memory' of "
            f"{res.log.figures['kv_reserved_gib']:.2f} GiB is the pool reserved from the profile"
        )
    _add(res, "kv_cache_gib", "KV cache memory", "GiB", kv, lo, hi, kv_note)
    _extensible_notes(res, ext)
    if p.era == "v0":
        _add(res, "gpu_blocks", "GPU blocks", "blocks", p.num_blocks, p.num_blocks_low, p.num_blocks_high)
    _add(res, "kv_tokens", "KV cache size (tokens)", "tokens", p.capacity_tokens,
         d.capacity_tokens_for(p.kv_cache_bytes_low), d.capacity_tokens_for(p.kv_cache_bytes_high))  # fmt: skip
    note = ""
    clen = res.log.figures.get("concurrency_for_len")
    if clen and clen != p.max_model_len:
        note = f"the log's concurrency is for {clen:,} tokens, kvlint's for {p.max_model_len:,}"
    _add(res, "max_concurrency", "maximum concurrency", "x", p.max_concurrency, p.max_concurrency_low,
         p.max_concurrency_high, note)  # fmt: skip
    if d.mamba_blocks_high:
        _add(res, "mamba_blocks", "Mamba cache blocks (KV-cache blocks the check counts)", "blocks",
             d.mamba_blocks, d.mamba_blocks_low, d.mamba_blocks_high)  # fmt: skip
    rep_kv = res.log.figures.get("kv_cache_gib")
    rep_tok = res.log.figures.get("kv_tokens")
    if rep_kv and rep_tok:
        t = d.capacity_tokens_for(int(rep_kv * GiB))
        res.figures.append(
            Figure(
                "kv_tokens_from_printed_kv",
                "tokens at the printed KV GiB",
                "tokens",
                float(rep_tok),
                t,
                d.capacity_tokens_for(int((rep_kv - 0.005) * GiB)),
                d.capacity_tokens_for(int((rep_kv + 0.005) * GiB)),
                res.log.lines.get("kv_tokens"),
                "kvlint's block and group arithmetic on the engine's own KV figure",
            )  # fmt: skip
        )
    if res.log.failure.get("max_model_len") and res.log.failure["max_model_len"] != p.max_model_len:
        res.notes.append(
            f"the log's failing max_model_len is {res.log.failure['max_model_len']:,}, kvlint planned "
            f"{p.max_model_len:,}"
        )


def _plans_extensible(cr: Any, v: Any) -> bool:
    """Whether kvlint's plan of the replay sizes the pool with vLLM's extensible KV cache (>= 0.34.0,
    :func:`kvlint.memory.vllm.extensible_kv_cache`)."""
    from kvlint.memory.vllm import VllmSettings, extensible_kv_cache, gpu_vendor, release_switches

    s = getattr(cr, "settings", None)
    acc = cr.placement.accelerator if getattr(cr, "placement", None) else None
    vendor = gpu_vendor(acc.name, acc.compute_capability) if acc else None
    return isinstance(s, VllmSettings) and extensible_kv_cache(s, release_switches(v), vendor)


def _extensible_notes(res: VerifyResult, planned: bool) -> None:
    """Say when the log and kvlint's replay disagree on vLLM's extensible KV cache (>= 0.34.0)."""
    shown = res.log.extensible_kv_cache
    if shown is True and not planned:
        res.notes.append(
            "the log shows the extensible KV cache sizing the pool after warm-up ('Memory after warmup', 'Extended "
            "KV cache to'), but kvlint planned it off for these settings (an older release or a setting that turns "
            "it off): the KV figures are not comparable"
        )
    elif shown is False and planned:
        res.notes.append(
            "the log shows the extensible KV cache off, but kvlint planned it on: the KV figures are not comparable"
        )


def _tgi_figures(res: VerifyResult, d: Any) -> None:
    p = d.plan
    res.verdict = "fail" if getattr(d, "warmup_oom", False) or not p.kv_cache_bytes > 0 else "ok"
    tok = d.max_batch_total_tokens
    per_tok = max(1, p.kv_bytes_per_token)
    lo = max(0, p.kv_cache_bytes_low) // per_tok
    hi = max(0, p.kv_cache_bytes_high) // per_tok
    _add(res, "max_batch_total_tokens", "max batch total tokens (router)", "tokens", tok, min(lo, tok),
         max(hi, tok))  # fmt: skip
    # the shard's warmup line "KV-cache blocks: N, size: S": N = num_blocks, S = BLOCK_SIZE of the attention
    # backend (tgi@v3.0.0:server/text_generation_server/models/flash_causal_lm.py::FlashCausalLM.warmup)
    nb = p.num_blocks
    _add(res, "kv_cache_blocks", "KV-cache blocks", "blocks", nb, min(p.num_blocks_low, nb),
         max(p.num_blocks_high, nb))  # fmt: skip
    bs = p.block_size
    _add(res, "kv_block_size", "KV-cache blocks' size", "tokens", bs, bs, bs, f"attention {d.attention}")
    rep_bs = res.log.figures.get("kv_block_size")
    if rep_bs is not None and rep_bs != bs:
        res.notes.append(
            f"the log's KV-cache blocks hold {rep_bs} token{'s' if rep_bs != 1 else ''} each, kvlint planned attention {d.attention} "
            f"(BLOCK_SIZE {bs}): the shard ran another attention backend, so its block count is not comparable "
            "(compare max batch total tokens, blocks x size)"
        )
    pf = d.max_batch_prefill_tokens
    _add(res, "max_batch_prefill_tokens_default", "Default max_batch_prefill_tokens", "tokens", pf, pf, pf)
    _add(res, "max_total_tokens", "Default max_total_tokens", "tokens", d.max_total_tokens, d.max_total_tokens,
         d.max_total_tokens)  # fmt: skip


def _sglang_preload_band(d: Any) -> tuple[float, float, float]:
    """kvlint's pre-load free memory for a plan (GiB): ``(point, low, high)``, the card's total less the pre-load
    usage band of :func:`kvlint.memory.sglang.preload_bytes`."""
    from kvlint.memory.sglang import preload_bytes

    used, used_lo, used_hi = preload_bytes(d.tp * d.pp)
    total = d.pre_free_bytes + used
    return d.pre_free_bytes / GiB, (total - used_hi) / GiB, (total - used_lo) / GiB


def _sglang_preload_shift(log: StartupLog, d: Any) -> tuple[int, int] | None:
    """``(held, total)`` in bytes when the log's "Load weight begin. avail mem=X GB" is below the low end of
    kvlint's pre-load free memory (:func:`_sglang_preload_band`): the memory another process ``held`` and the GPU
    total that leaves SGLang X GiB after kvlint's pre-load usage. None otherwise (no such line, no plan, or X
    within or above the band). SGLang's "GB" are GiB (``get_available_gpu_memory`` divides by ``1 << 30``)."""
    free = log.figures.get("free_before_weights_gb")
    if d is None or not isinstance(free, (int, float)) or free <= 0:
        return None
    point, low, _ = _sglang_preload_band(d)
    if free >= low:
        return None
    from kvlint.memory.sglang import preload_bytes

    held = int((point - free) * GiB)
    return held, int(free * GiB) + preload_bytes(d.tp * d.pp)[0]


def _sglang_figures(res: VerifyResult, d: Any) -> None:
    p = d.plan
    res.verdict = "fail" if d.max_total_num_tokens <= 0 else "ok"
    tok = d.max_total_num_tokens
    per_tok = max(1, p.kv_bytes_per_token)
    lo = max(0, p.kv_cache_bytes_low) // per_tok
    hi = max(0, p.kv_cache_bytes_high) // per_tok
    _add(res, "kv_tokens", "max_total_num_tokens (#tokens)", "tokens", tok, min(lo, tok), max(hi, tok))
    w = p.weights_bytes / GiB
    _add(res, "weights_gb", "mem usage (Load weight end)", "GiB", w, w * 0.98, w * 1.02)
    # the free memory SGLang sized the pool from: the card less the CUDA context (and, at TP > 1, what the
    # distributed set-up took), kvlint.memory.sglang.preload_bytes
    free, free_lo, free_hi = _sglang_preload_band(d)
    shifted = str(res.sources.get("GPU total", "")).startswith("the card's total less")
    _add(res, "free_before_weights_gb", "avail mem (Load weight begin)", "GiB", free, free_lo, free_hi,
         note="the replay's input: another process held memory" if shifted else "")  # fmt: skip
    _add(res, "mem_fraction_static", "mem_fraction_static", "x", d.mem_fraction_static, d.mem_fraction_static,
         d.mem_fraction_static)  # fmt: skip
    # the rest of the scheduler's start-up line ("max_total_num_tokens=N, chunked_prefill_size=C, ...,
    # max_running_requests=R, context_len=L", sglang@0.5.23:python/sglang/srt/managers/scheduler.py): the limits
    # SGLang resolved, set against the ones kvlint resolved; max_running_requests follows the pool's size, so it
    # has no band of its own (its prediction moves with the pool's)
    _add(res, "context_len", "context_len", "tokens", d.context_length, d.context_length, d.context_length)
    _add(res, "chunked_prefill_size", "chunked_prefill_size", "tokens", d.chunked_prefill_size,
         d.chunked_prefill_size, d.chunked_prefill_size)  # fmt: skip
    _add(res, "max_running_requests", "max_running_requests", "requests", d.max_running_requests, note=(
        "follows the pool's size" if d.max_running_requests else ""))  # fmt: skip
