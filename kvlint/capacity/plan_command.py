"""``kvlint plan``: evaluate one engine command line as a user would type it.

The command goes through the same stages as a manifest: the engine parser, model and accelerator
resolution, the memory plan and the rules -- only the rules that consume a Kubernetes object (GPU resources,
/dev/shm, probes, shared GPUs, image tags; ``consumes: [pod]`` in their catalogue entries) are left out, since
there is no PodSpec (:func:`kvlint.rules.plan_rules`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kvlint.source import LDict, Loc
from kvlint.types import (
    TYPED_COMMAND,
    Accelerator,
    Diagnostic,
    Document,
    Finding,
    OptionFinding,
    Placement,
    Value,
    Workload,
)

if TYPE_CHECKING:
    from kvlint.options import Options
    from kvlint.types import ContainerResult


#: Warnings that make ``kvlint plan``'s verdict ``risky``: KV105, one max-length request fits only in part of
#: kvlint's prediction band (vLLM may refuse to start, TGI's warmup may fail); KV702, SGLang's KV pool holds fewer
#: tokens than ``context_length`` -- SGLang starts, but caps every request below the context it advertises, so a
#: full-length request never fits (the same condition that fails a vLLM plan with KV103, and what the fleet
#: notes of KV501 call ``risky``).
RISKY_RULES = frozenset({"KV105", "KV702"})


class PlanRequestError(ValueError):
    """The command line or options cannot be planned (unknown engine, unknown accelerator...)."""


@dataclass
class PlanOutput:
    """Result of ``kvlint plan``: the container analysis, its diagnostics and a verdict.

    ``verdict`` is ``fail`` when an error is reported, ``unknown`` when nothing could be sized,
    ``risky`` for :data:`RISKY_RULES` (the verdict flips inside the prediction band, or SGLang's KV pool holds
    less than one ``context_length`` request), else ``ok``.
    """

    result: ContainerResult
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``fail`` | ``risky`` | ``ok``, or ``unknown`` when no memory plan could be built (model config or
        GPU unknown, or the engine cannot be sized) and no error was found."""
        if any(d.severity == "error" for d in self.diagnostics):
            return "fail"
        if self.result.plan is None:
            return "unknown"
        if any(d.rule in RISKY_RULES for d in self.diagnostics):
            return "risky"
        return "ok"

    def as_dict(self) -> dict[str, Any]:
        """JSON for ``kvlint plan --format json`` (field names of DESIGN.md)."""
        cr = self.result
        plan = cr.plan.as_dict() if cr.plan else {}
        acc = cr.placement.accelerator if cr.placement else None
        return {
            "engine": cr.serving.engine,
            "engine_version": cr.serving.version,
            "model": cr.serving.model.value if cr.serving.model else None,
            "model_source": cr.model.source if cr.model else None,
            "accelerator": acc.id if acc else None,
            "gpus": cr.placement.gpus if cr.placement else None,
            **plan,
            "plan_error": cr.plan_error,
            "verdict": self.verdict,
            "diagnostics": [
                {"rule": d.rule, "severity": d.severity, "message": d.message, "fix": d.fix}
                for d in self.diagnostics
            ],
        }

    def render_text(self) -> str:
        """Per-GPU breakdown table (kvlint.report.plan_text) followed by the diagnostics. What the command line
        and the files it names carry (the model, a flag's value, a speculative method quoted in a note) is shown
        through :func:`kvlint.report.escape.printable`, as ``kvlint check`` shows it: a value with a line break, an
        escape sequence or a bidirectional override cannot start a line of its own (a GitHub workflow command)
        nor act on the terminal."""
        from kvlint.report.escape import inert_line, printable

        lines: list[str] = []
        cr = self.result
        acc = cr.placement.accelerator if cr.placement else None
        head = f"{cr.serving.engine} {cr.serving.version or '(version assumed)'}"
        head += f" | model {cr.serving.model.value if cr.serving.model else '?'}"
        head += f" | {acc.name if acc else 'unknown GPU'}"
        lines.append(printable(head))
        if cr.plan is not None:
            from kvlint.report.plan_text import render_plan_text

            lines.append(render_plan_text(cr.plan))  # its notes shown as printable text there
        elif cr.plan_error:
            lines.append(printable(f"no plan: {cr.plan_error}"))
        for d in self.diagnostics:
            lines.append(printable(f"{d.severity} {d.rule} {d.message}"))
            if d.fix:
                lines.append(printable(f"  fix: {d.fix}"))
        lines.append(f"verdict: {self.verdict}")
        # no line a GitHub workflow command (a wrapped note or a model id starting one with ``::``)
        return "\n".join(inert_line(x) for x in "\n".join(lines).split("\n")) + "\n"

    def render_markdown(self) -> str:
        """``kvlint plan --format markdown``: a heading naming engine, model and GPU, the per-GPU table and KV
        capacity of :func:`kvlint.report.markdown.plan_table_lines`, the findings (short statement, the
        arithmetic folded, the fix), the assumptions folded, and the verdict."""
        from kvlint.report.escape import markdown_code
        from kvlint.report.markdown import _cell, finding_cell, message_cell, plan_table_lines

        cr = self.result
        acc = cr.placement.accelerator if cr.placement else None
        gpus: int | str = cr.placement.gpus if cr.placement and cr.placement.gpus else "?"
        if gpus == "?" and cr.plan is not None:  # no --gpus: the GPUs the parallel layout runs on
            p = cr.plan
            gpus = p.tensor_parallel_size * p.pipeline_parallel_size * max(1, p.data_parallel_size)
        model = cr.serving.model.value if cr.serving.model else "?"
        lines = [
            f"## kvlint plan: {_cell(cr.serving.engine)} {_cell(cr.serving.version or '(version assumed)')} · "
            f"model {markdown_code(model, table=False)} · {gpus} × {_cell(acc.name if acc else 'unknown GPU')}",
        ]
        if cr.plan is not None:
            lines += plan_table_lines(cr.plan, cr.serving)
        else:
            lines += [
                "",
                f"No memory plan: {_cell(cr.plan_error or cr.model_error or 'model or GPU unknown')}",
            ]
        if self.diagnostics:
            lines += ["", "| severity | rule | finding | fix |", "|---|---|---|---|"]
            for d in self.diagnostics:
                lines.append(
                    f"| {_cell(d.severity)} | {_cell(d.rule)} | {finding_cell(d)} | {message_cell(d.fix)} |"
                )
        if cr.plan is not None and cr.plan.assumptions:
            folded = "".join(f"<li>{_cell(a)}</li>" for a in cr.plan.assumptions)
            lines += ["", f"<details><summary>assumptions</summary><ul>{folded}</ul></details>"]
        lines += ["", f"**verdict: {self.verdict}**"]
        return "\n".join(lines) + "\n"


def own_option_typed_after(
    findings: list[Finding], argv: list[str], own_options: Mapping[str, bool]
) -> list[Finding]:
    """``findings`` with each KV205 for an option the engine does not have (:attr:`OptionFinding.unknown`) that is
    one of ``kvlint plan``'s own (``own_options``: its option strings, True for one that takes a value) restated:
    click reads ``kvlint plan``'s options only before the command (``allow_interspersed_args`` off), so ``kvlint
    plan --accelerator l4 -- vllm serve M --gpus 2`` hands ``--gpus 2`` to the engine, which refuses it as typed.
    The finding keeps its position and severity (the engine would stop on it); its message says whose option it
    is in place of the engine spelling it suggested, and its fix is the command with the option moved before it."""
    out: list[Finding] = []
    for f in findings:
        if not (isinstance(f, OptionFinding) and f.unknown):
            out.append(f)
            continue
        name = f.option.split("=", 1)[0]
        if name not in own_options:
            out.append(f)
            continue
        at = next((i for i, w in enumerate(argv) if w == f.option or w.split("=", 1)[0] == name), None)
        if at is None:
            out.append(f)
            continue
        end = at + 2 if own_options[name] and "=" not in argv[at] and at + 1 < len(argv) else at + 1
        typed = " ".join(argv[at:end])
        rest = " ".join(argv[:at] + argv[end:])
        head = f.message.split("; did you mean", 1)[0]
        out.append(
            replace(
                f,
                message=f"{head}; {name} is an option of kvlint plan, which reads its own options only before the "
                "command",
                fix=f"move {typed} before the command: kvlint plan {typed} -- {rest}",
            )
        )
    return out


def plan_command(
    argv: list[str],
    options: Options,
    *,
    gpus: int | None = None,
    env: dict[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    accelerator: Accelerator | None = None,
    own_options: Mapping[str, bool] | None = None,
    local_config: bool = False,
) -> PlanOutput:
    """Plan ``argv`` (e.g. ``["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "32k"]``);
    ``env`` the engine's environment switches (``VLLM_USE_V1``...), as a container's env would give them.
    ``flags``: settings (the parser's names: TGI's ``num_shard``, SGLang's ``tp_size``...) set to these parsed
    values as if the command had them typed once, None unsetting one (``kvlint plan --compare`` and ``--sweep`` of a
    TGI or SGLang command: each cell is this command so changed). ``accelerator``: the GPU to plan on, in place of
    ``options.accelerator`` (a fleet's own accelerator, which the catalogue lookup does not know). ``own_options``:
    ``kvlint plan``'s option strings (True: takes a value), for :func:`own_option_typed_after`. ``local_config``:
    a ``--config FILE`` the command names is read from this machine (``kvlint plan``, whose user has the file:
    :class:`kvlint.engines.command.LocalConfigFiles`); else it is not read and the settings it may set are unknown
    (a start-up log's command in ``kvlint verify``, whose file was on the serving machine).

    Raises:
        PlanRequestError: the command is not a known engine invocation, or names no model.
    """
    from kvlint.accelerators import lookup
    from kvlint.engines import parse_command_line
    from kvlint.pipeline import analyse_serving
    from kvlint.rules.runner import check_container, plan_rules

    try:
        # the release: --engine-version, as kvlint.engines.images.engine_release decides it without an image
        from kvlint.engines.command import LocalConfigFiles

        serving = parse_command_line(
            argv, options.engine_version, config_loader=LocalConfigFiles() if local_config else None
        )
    except ValueError as exc:
        raise PlanRequestError(str(exc)) from exc
    from kvlint.engines.options import cap_unknown_options

    serving.findings = cap_unknown_options(serving.findings)  # as a container's (kvlint.pipeline)
    if own_options:
        serving.findings = own_option_typed_after(serving.findings, argv, own_options)
    if env:
        serving.env.update(env)
    for name, value in (flags or {}).items():
        if value is None:
            serving.flags.pop(name, None)
        else:
            written = serving.flags.get(name)
            serving.flags[name] = Value(value, written.loc if written else None, str(value), "arg")
    if serving.model is None:
        raise PlanRequestError(
            "the command names no model (vllm serve MODEL, --model, --model-id or --model-path)"
        )
    loc = Loc(TYPED_COMMAND, 1, 1)
    doc = Document(path=TYPED_COMMAND, index=0, data=LDict(), loc=loc)
    workload = Workload(doc=doc, kind="", name="", namespace=None, pod_spec=LDict(loc=loc), path="")
    acc = accelerator or (lookup(options.accelerator) if options.accelerator else None)
    if options.accelerator and acc is None:
        raise PlanRequestError(
            f"unknown accelerator '{options.accelerator}'; `kvlint accelerators` lists them"
        )
    if acc is None and options.gpu_memory_bytes:
        # --gpu-memory alone: a generic CUDA GPU of that size (compute capability unknown, bf16 assumed)
        acc = Accelerator(
            id="custom",
            name=f"GPU with {options.gpu_memory_bytes / 2**30:.2f} GiB",
            vendor="nvidia",
            memory_bytes=options.gpu_memory_bytes,
            memory_source="--gpu-memory",
            compute_capability=None,
            bf16=True,
            fp8=False,
        )
    placement = Placement(
        accelerator=acc,
        how=f"--accelerator {accelerator.id if accelerator else options.accelerator}"
        if options.accelerator or accelerator
        else ("--gpu-memory" if acc else ""),
        gpus=gpus,
        resource="--gpus" if gpus else None,
        memory_bytes_override=options.gpu_memory_bytes,
    )
    cr = analyse_serving(workload, LDict(), serving, options, placement=placement)
    diags = check_container(cr, options, rules=plan_rules())
    return PlanOutput(result=cr, diagnostics=diags)
