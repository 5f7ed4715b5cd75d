"""Markdown report (``kvlint check --format markdown``), written for ``$GITHUB_STEP_SUMMARY``.

Layout: a ``## kvlint`` heading and the summary line (errors, warnings, suppressed), the sizing line and, folded,
the serving objects not read (file:line, object, reason: the first ten); a table of the
diagnostics (severity, rule, location with the workload and container below it, the finding's short statement with
its arithmetic folded below it in a ``<details>`` element, fix); then one section per serving container with its
GPU, model and, when planned, its per-GPU memory breakdown in GiB (total, budget at the engine's memory fraction:
gpu-memory-utilization, mem-fraction-static or cuda-memory-fraction; weights, activation peak, non-torch, CUDA
graphs, KV cache with its band) and
the KV capacity (tokens, max-model-len, concurrency). Text from the inputs goes through
:func:`kvlint.report.escape.markdown_text` (cells, headings) or :func:`kvlint.report.escape.markdown_code`
(file names, container names, model ids): shown as written, never a link, image, HTML or new cell; the
strings of a container's section that quote the manifest (its object, container name, model, why it has no plan)
clipped as findings and the JSON report clip them (:func:`kvlint.statement.clip_words`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.numbers import fraction, times
from kvlint.report.escape import markdown_code, markdown_message, markdown_text
from kvlint.report.plan_text import (
    KEPT_FREE_LABEL,
    budget_note,
    data_parallel_line,
    kept_free_bytes,
    kv_band_text,
)
from kvlint.statement import clip_words
from kvlint.types import findings_stood_for

if TYPE_CHECKING:
    from kvlint.sizing import SizingSummary
    from kvlint.types import (
        CheckResult,
        ContainerRecord,
        ContainerResult,
        Diagnostic,
        Loc,
        MemoryPlan,
        ServingConfig,
    )

GiB = 2**30
_ICON = {"error": "❌ error", "warning": "⚠️ warning", "info": "ℹ️ info"}


def _cell(s: str) -> str:
    """One table cell of text that may come from a manifest (a suppression reason, a model name, a finding's
    statement): :func:`kvlint.report.escape.markdown_text`, shown as written, never rendered as a link, an
    image, HTML or a new cell."""
    return markdown_text(s)


def message_cell(s: str) -> str:
    """A table cell of a finding's own text (its statement, a detail, its fix): kvlint's code spans shown as
    code, the rest as :func:`_cell` shows text (:func:`kvlint.report.escape.markdown_message`)."""
    return markdown_message(s)


def finding_cell(d: Diagnostic) -> str:
    """A finding's table cell: its short statement, then the detail (per-GPU arithmetic, the engine's error
    text) folded in a ``<details>`` element below it."""
    cell = message_cell(d.statement)
    if d.details:
        folded = "<br>".join(message_cell(x) for x in d.details)
        cell += f"<details><summary>arithmetic and detail</summary>{folded}</details>"
    return cell


def location_cell(d: Diagnostic) -> str:
    """A finding's location cell: ``file:line:column`` as code, then (below it) the workload and container it is
    about, as the text report's ``[Kind/namespace/name container c]`` names them: a file of several documents, or
    an object of several containers, has findings of the same rule at lines that do not say whose they are. The
    names come from the manifest: shown as text (:func:`_cell`, :func:`markdown_code`), clipped as the JSON report
    clips them (:func:`kvlint.statement.clip_words`)."""
    parts = [markdown_code(f"{d.loc.file}:{d.loc.line}:{d.loc.column}")] if d.loc else []
    if d.object:
        who = _cell(clip_words(d.object))
        if d.container:
            who += f" container {markdown_code(clip_words(d.container))}"
        parts.append(who)
    return "<br>".join(parts)


def finding_row(d: Diagnostic, prefix: str = "") -> str:
    """One row of the findings table (``prefix``: extra leading cells, e.g. new/pre-existing); its location cell
    names the workload (:func:`location_cell`)."""
    loc = location_cell(d)
    return f"| {prefix}{_ICON.get(d.severity, _cell(d.severity))} | {_cell(d.rule)} | {loc} | {finding_cell(d)} | {message_cell(d.fix)} |"


def _g(b: int) -> str:
    """``b`` bytes as GiB, two decimals and thousands separators (``1,234.57``)."""
    return f"{b / GiB:,.2f}"


def _container_at(c: ContainerResult | ContainerRecord) -> Loc | None:
    """Where a serving container is (its engine command, else the container, else its workload), as
    :func:`kvlint.sizing.explained_at` names a container without a finding."""
    return c.serving.command_loc or c.container.loc or c.workload.loc


def _leader_container(c: ContainerResult | ContainerRecord) -> str | None:
    """The leader container whose engine ``c`` joins (a streaming run's record keeps its name alone)."""
    joins = getattr(c.serving, "joins", None)
    return joins.leader_container if joins is not None else getattr(c.serving, "leader_container", None)


def _workload_section(c: ContainerResult | ContainerRecord, n: int, sizing: str = "") -> list[str]:
    """The section of one serving container; ``n`` is its number of findings, ``sizing`` its
    :func:`kvlint.sizing.outcomes` entry (``leader``: a worker sized with the leader whose engine it joins: it
    said "model `?`" and "No memory plan: model or GPU unknown" of a worker the sizing line counts sized). The line
    under the heading ends with where the container is: two objects of one name in two files had the same heading
    and nothing else to tell them apart."""
    acc = (c.placement.device_name if c.placement else None) or "unknown GPU"
    gpus = c.placement.gpus if c.placement and c.placement.gpus else "?"
    named = c.model.id if c.model else (c.serving.model.value if c.serving.model else None)
    joined = sizing == "leader" and c.plan is None
    at = _container_at(c)
    where = f" · {markdown_code(clip_words(f'{at.file}:{at.line}'), table=False)}" if at is not None else ""
    model = (
        f"model {markdown_code(clip_words(str(named)), table=False)}"
        if named
        else ("the leader's model" if joined else f"model {markdown_code('?', table=False)}")
    )
    lines = [
        "",
        f"### {_cell(clip_words(c.object_ref))} · container {markdown_code(clip_words(c.container_name), table=False)}",
        "",
        f"{_cell(c.serving.engine)} {_cell(c.serving.version or '(version unpinned)')} · {model} · "
        f"{gpus} × {_cell(acc)} · {n} finding{'s' if n != 1 else ''}{where}",
    ]
    p = c.plan
    if p is None:
        if joined:
            name = _leader_container(c)
            leader = f"container {markdown_code(clip_words(name), table=False)}" if name else "its leader"
            lines += [
                "",
                f"Sized with its leader: this worker joins the engine of {leader}, whose memory plan, in its own "
                "section, covers the GPUs of the whole group",
            ]
            return lines
        why = clip_words(c.plan_error or c.model_error or "model or GPU unknown")
        lines += ["", f"No memory plan: {_cell(why)}"]
        return lines
    return lines + plan_table_lines(p, c.serving)


def budget_setting(p: MemoryPlan, serving: ServingConfig | None = None) -> str:
    """The budget's fraction as the engine's own option spells it, with its value: vLLM
    ``gpu-memory-utilization 0.9``, SGLang ``mem-fraction-static 0.88`` (``--mem-fraction-static``,
    sglang ``python/sglang/srt/server_args.py::ServerArgs.add_cli_args``), TGI ``cuda-memory-fraction 1.0`` or
    ``CUDA_MEMORY_FRACTION=1.0`` as the container writes its TGI settings
    (:func:`kvlint.engines.tgi.tgi_option`; launcher ``--cuda-memory-fraction``, env ``CUDA_MEMORY_FRACTION``)."""
    value = fraction(p.gpu_memory_utilization)
    if p.engine == "tgi":
        from kvlint.engines.tgi import tgi_option

        # the streaming report keeps the spelling, not the container's flags (kvlint.stream._record)
        name = getattr(serving, "tgi_fraction_option", None)
        if name is None:
            name = (
                tgi_option(serving, "cuda_memory_fraction")
                if serving is not None
                else "--cuda-memory-fraction"
            )
        return f"{name[2:]} {value}" if name.startswith("--") else f"{name}={value}"
    if p.engine == "sglang":
        return f"mem-fraction-static {value}"
    return f"gpu-memory-utilization {value}"


def plan_table_lines(p: MemoryPlan, serving: ServingConfig | None = None) -> list[str]:
    """A memory plan as Markdown: the per-GPU table (GiB and % of the device total; the budget row named
    with the engine's own option, :func:`budget_setting`, for ``serving``'s spelling of TGI's; TGI's and SGLang's
    terms as :func:`kvlint.report.plan_text.budget_note` names them), the KV band, then the KV
    capacity line (tokens, blocks, the request length under the engine's option name: vLLM's max-model-len, TGI's
    max-total-tokens, SGLang's context-length, concurrency and its band, the parallel layout)."""
    lines: list[str] = []
    total = max(1, p.total_bytes)
    rows = [
        ("GPU total", p.total_bytes),
        (f"budget ({budget_note(p, budget_setting(p, serving))})", p.budget_bytes),
        ("weights", p.weights_bytes),
        ("activation peak", p.activation_bytes),
        ("non-torch", p.non_torch_bytes),
        ("CUDA graphs", p.cudagraph_bytes),
        *([("state pool", p.state_pool_bytes)] if p.state_pool_bytes else []),
        ("KV cache", p.kv_cache_bytes),
    ]
    kept = kept_free_bytes(p)
    if kept:  # the extensible KV cache's margin (vLLM >= 0.34.0): without it the rows do not add up
        rows.append((KEPT_FREE_LABEL, kept))
    lines += ["", "| per GPU | GiB | % of total |", "|---|---:|---:|"]
    for name, b in rows:
        lines.append(f"| {_cell(name)} | {_g(b)} | {b / total * 100:.1f}% |")
    if min(p.kv_cache_bytes_low, p.kv_cache_bytes_high) > 0:
        lines.append(f"| KV cache band | {_g(p.kv_cache_bytes_low)}–{_g(p.kv_cache_bytes_high)} | |")
    else:  # an end at or below zero: said in words, not a bare negative figure (plan_text.kv_band_text)
        lines.append(f"| KV cache band | {_cell(kv_band_text(p))} | |")
    # the request length under the engine's own option name (max-model-len, max-total-tokens, context-length)
    length = p.setting_names[0].replace("_", "-")
    source = "user" if p.max_model_len_source == p.setting_names[0] else p.max_model_len_source
    lines += [
        "",
        f"KV cache: {p.capacity_tokens:,} tokens ({p.kv_bytes_per_token:,} B/token, {p.num_blocks:,} blocks of "
        f"{p.block_size}); {length} {p.max_model_len:,} ({source}); maximum concurrency "
        f"{p.max_concurrency:.2f}× ({times(p.max_concurrency_low)}–{times(p.max_concurrency_high)}×); "
        f"TP {p.tensor_parallel_size}, PP {p.pipeline_parallel_size}.",
    ]
    dp_line = data_parallel_line(p)
    if dp_line:
        lines[-1] += " " + dp_line[0].upper() + dp_line[1:] + "."
    return lines


def _findings_per_container(result: CheckResult) -> list[int]:
    """The findings of each of ``result.containers`` (:func:`findings_stood_for` each), every finding of an
    object and container name counted once: to the one container of that object and name, else (objects of one
    name in several files) to the one in the finding's file, else (containers of one name in one object, a
    prefill and a decode template) to the one whose container starts nearest above the finding's line, else to the
    first. Counted by file alone, a finding kvlint places in another file than the container's (an
    InferenceService's KV208 on its ServingRuntime's image, a chart's values.yaml) was counted nowhere; by name
    alone, two objects of one name counted each other's."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, c in enumerate(result.containers):
        groups.setdefault((c.object_ref, c.container_name), []).append(i)
    counts = [0] * len(result.containers)
    for d in result.diagnostics:
        ids = groups.get((d.object, d.container))
        if not ids:
            continue
        if len(ids) > 1 and d.loc is not None:
            files = [
                i
                for i in ids
                if d.loc.file
                in {
                    result.containers[i].workload.doc.path,
                    getattr(_container_at(result.containers[i]), "file", None),
                }
            ]
            ids = files or ids
            if len(ids) > 1:
                starts = {
                    i: at.line
                    for i in ids
                    if (at := result.containers[i].container.loc or _container_at(result.containers[i]))
                    is not None
                }
                above = [i for i in ids if i in starts and starts[i] <= d.loc.line]
                ids = [max(above, key=lambda i: starts[i])] if above else ids
        counts[ids[0]] += findings_stood_for(d)
    return counts


def render_markdown(result: CheckResult, sizing: SizingSummary | None = None) -> str:
    """The job-summary Markdown (see the module docstring); ``sizing``: the run's :func:`kvlint.sizing.summarise`,
    computed here when not given."""
    from kvlint.report.text import summary_line
    from kvlint.sizing import summarise

    lines = ["## kvlint", "", summary_line(result, suppressed=result.suppressed)]
    if sizing is None:
        sizing = summarise(result)
    if sizing.serving or sizing.not_read:
        lines += ["", sizing.line()]
    if sizing.unread_items:
        # which serving objects were not read, the ones the text report lists (folded)
        entries, more = sizing.unread_listing()
        lines += ["", f"<details><summary>Not read: {sizing.not_read}</summary>", ""]
        for where, what, why in entries:
            parts = [markdown_code(where, table=False)] if where else []
            parts += [markdown_text(what)] if what else []
            lines.append("- " + ": ".join([*parts, markdown_text(why)]))
        if more:
            lines.append(f"- and {more} more (the JSON report lists all: `summary.sizing.not_read_items`)")
        lines += ["", "</details>"]
    if result.diagnostics:
        lines += ["", "| severity | rule | location | finding | fix |", "|---|---|---|---|---|"]
        lines += [finding_row(d) for d in result.diagnostics]
    if result.suppressed_diagnostics:
        lines += ["", "<details><summary>Suppressed findings</summary>", ""]
        lines += ["| rule | location | reason |", "|---|---|---|"]
        for s in result.suppressed_diagnostics:
            d = s.diagnostic
            loc = markdown_code(f"{d.loc.file}:{d.loc.line}") if d.loc else ""
            lines.append(f"| {_cell(d.rule)} | {loc} | {_cell(s.reason)} |")
        lines += ["", "</details>"]
    if result.containers:
        lines += ["", "## Workloads"]
        from kvlint.sizing import outcomes

        outcome = outcomes(result.containers)
        lines += [
            line
            for c, how, n in zip(result.containers, outcome, _findings_per_container(result), strict=True)
            for line in _workload_section(c, n, how)
        ]
    return "\n".join(lines) + "\n"
