"""Shared pieces of engine argv parsing: value conversion, duplicate tracking, findings.

The engines parse their command lines with Python ``argparse`` (vLLM, SGLang) or Rust ``clap`` (TGI);
both accept ``--flag value`` and ``--flag=value`` and let the last occurrence win. This module keeps
the bookkeeping common to the three parsers (one :class:`Collector` per container).
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
import json
import re
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from kvlint.source import LDict, Loc
from kvlint.template_params import _STRING as _TEMPLATE_REFERENCE_RE
from kvlint.types import (
    ENGINE_NAMES,
    ChartArg,
    EngineName,
    Finding,
    Mark,
    OptionFinding,
    RepeatedSetting,
    ServingConfig,
    Severity,
    Value,
    findings_stood_for,
    ref_part,
)

__all__ = [
    "MAX_NAMED_UNKNOWN",
    "MAX_UNKNOWN_OPTIONS",
    "USUALLY_MEANT",
    "cap_unknown_options",
    "findings_stood_for",  # kvlint.types.findings_stood_for, here as before
    "MAX_INT_SETTING",
    "MAX_PARALLEL_SIZE",
    "PARALLEL_DESTS",
    "SPEC_SHORTHANDS",
    "LAYOUT_DESTS",
    "LAYOUT_FROM_SERVICE",
    "LAYOUT_UNSIZED",
    "arguments_not_all_read",
    "Collector",
    "ConfigReads",
    "chart_provenance",
    "human_readable_int",
    "suggest",
    "template_words",
    "QUOTED_SOURCE",
    "version_tuple",
    "json_too_deep",
    "parse_json_or_str",
]

#: Largest parallel size (tensor / pipeline / data parallel, shards, nodes) kvlint sizes a plan with: 65,536
#: GPUs, well beyond any single serving deployment. Larger values are reported (KV206) and left unread, so
#: no check sizes a loop or a list with a number such as ``--pipeline-parallel-size 1000000000000``.
MAX_PARALLEL_SIZE = 65_536
#: vLLM's ``--spec-method`` / ``--spec-model`` / ``--spec-tokens`` (0.24.0 and later among the sampled releases) as
#: ``(dest, the --speculative-config key each sets)``
#: (``vllm@0.34.0:vllm/engine/arg_utils.py::EngineArgs.create_speculative_config``). Here, not in
#: :mod:`kvlint.engines.vllm`, so that :mod:`kvlint.memory.vllm` reads it without an import cycle.
SPEC_SHORTHANDS = (
    ("spec_method", "method"),
    ("spec_model", "model"),
    ("spec_tokens", "num_speculative_tokens"),
)
#: Largest integer setting read at all (2^63 - 1, the int64 range the engines' tensors and C++ code use).
MAX_INT_SETTING = 2**63 - 1
#: Settings that size the GPU layout (vLLM, SGLang and TGI names).
PARALLEL_DESTS = frozenset(
    {
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "data_parallel_size_local",
        "nnodes",
        "tp_size",
        "pp_size",
        "dp_size",
        "num_shard",
    }
)

#: The parallel sizes each GPU's share of the model depends on (the settings
#: :func:`kvlint.engines.layout.parallelism` reads; ``--nnodes`` only says where the workers run). One of
#: them given a value kvlint cannot resolve leaves the container not sized ("parallel size unknown",
#: :func:`kvlint.sizing.sizing_of`) rather than sized on the engine default of 1.
LAYOUT_DESTS = PARALLEL_DESTS - {"nnodes"}

#: The settings an engine's unread ``--config`` YAML file may set that the rules and the plan would otherwise
#: take at the engine's default (:func:`unknown_from_config_file`): the parallel sizes (the GPU layout) and the
#: context limit (KV202's "no --max-model-len", SGLang's ``--context-length``).
_CONFIG_FILE_UNKNOWN = {
    "vllm": (
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "data_parallel_size_local",
        "max_model_len",
    ),
    "sglang": ("tp_size", "pp_size", "dp_size", "context_length"),
}


def unknown_from_config_file(col: Collector, engine: str, loc: Loc | None) -> None:
    """An engine's ``--config FILE`` that kvlint cannot read (its ConfigMap not among the inputs, unreadable): the
    file may set any option (vLLM: ``vllm/utils/argparse_utils.py::FlexibleArgumentParser.load_config_file``
    turns each key into ``--key value`` before the command line; SGLang's ``--config`` likewise), so each of
    :data:`_CONFIG_FILE_UNKNOWN` that the command line does not set is recorded as set to a value kvlint does not
    know (``col.unresolved``, at the ``--config`` value), not as the engine default: a parallel size leaves the
    container not sized (:func:`kvlint.engines.layout.unresolved_sizes`) and KV403 does not count GPUs on the
    default of one worker, nor KV202 report a limit the file may set. The caller's KV503 warning says the file's
    settings are unknown."""
    layout = False
    for dest in _CONFIG_FILE_UNKNOWN.get(engine, ()):
        if dest not in col.flags and dest not in col.unresolved:
            col.unresolved[dest] = loc
            layout = layout or dest in LAYOUT_DESTS
    if layout:
        # the caller's KV503 on the file says its settings are unknown: say what that does to the sizing, as a
        # parallel size from a variable does (LAYOUT_UNSIZED)
        for k in range(len(col.findings) - 1, -1, -1):
            f = col.findings[k]
            if f.rule == "KV503" and f.loc == loc and f.message.startswith("--config"):
                col.findings[k] = dataclasses.replace(f, message=f.message + CONFIG_FILE_UNSIZED)
                break


#: The settings a command whose arguments are not all known may still set (:func:`arguments_not_all_read`): those
#: of an unread ``--config`` file, and TGI's shard count and token limits.
_UNSEEN_ARGUMENTS = {**_CONFIG_FILE_UNKNOWN, "tgi": ("num_shard", "max_input_tokens", "max_total_tokens")}


#: A ``${...}`` reference (without nested braces), which may hold blanks (``${A:-a b}``) and still be one reference.
_BRACED_REFERENCE_RE = re.compile(r"\$\{[^{}]*\}")


def bare_expansion(word: str) -> bool:
    """Whether a command word is a shell expansion the shell's reading left unresolved, alone where the engine
    expects an option (``$ARGS``, ``${EXTRA_ARGS}``, ``$@``): the shell splits it into any number of words, options
    among them (a variable not in the container's env may still be set by the image's ``ENV``; a word in a command
    run without a shell is the engine's literal text, which the callers leave out)."""
    from kvlint.engines.shell import UNRESOLVED_RE

    return (
        word.startswith("$")
        and UNRESOLVED_RE.search(word) is not None
        and " " not in _BRACED_REFERENCE_RE.sub("", word)
        and (word.startswith("${") or word[1:2].isalpha() or word[1:2] == "@")
    )


def command_substitution(word: str) -> bool:
    """Whether a command word begins with a command substitution the shell's reading left unresolved (``$(cat
    /etc/args)``, ``$(< f)``, a backtick ```cat f```), not an arithmetic one (``$((...))``, one number): its output is
    the engine's words, which kvlint does not run a command to see (bash(1) "Command Substitution": unquoted, the
    output is split into words; dash the same). In a shell script's words only: a command run without a shell
    hands the engine the text as written (the callers leave it out, as for :func:`bare_expansion`). Not a
    Kubernetes reference the kubelet left as written (``$(MODEL_X)``, a name in capitals with no env entry: the
    shell then runs a command of that name, which no image has; read as before)."""
    if word.startswith("`"):
        return True
    return (
        word.startswith("$(")
        and not word.startswith("$((")
        and _KUBERNETES_REFERENCE_RE.fullmatch(word) is None
    )


#: A Kubernetes ``$(VAR)`` reference in the shape env names are written (capitals, digits, ``_``).
_KUBERNETES_REFERENCE_RE = re.compile(r"\$\([A-Z_][A-Z0-9_]*\)")


def kubernetes_reference(word: str) -> bool:
    """Whether a command word is a whole Kubernetes ``$(VAR)`` reference left as written (:func:`command_substitution`
    leaves it out): in a shell script's words, the kubelet expanded it to VAR's value when the container's
    environment has VAR (a ``valueFrom`` or an ``envFrom`` kvlint did not read), and else left it, which the shell
    then runs as a command named VAR (bash(1) "Command Substitution"; dash the same)."""
    return _KUBERNETES_REFERENCE_RE.fullmatch(word) is not None


def unseen_expansion(word: str) -> bool:
    """Whether a shell script's command word, where the engine expects an option, may expand to words kvlint cannot
    see: a :func:`bare_expansion` (``$ARGS``, ``${ARGS[@]}``, ``$@``), a :func:`command_substitution`
    (``$(cat /etc/args)``) or a :func:`kubernetes_reference` (``$(VLLM_EXTRA_ARGS)``: the kubelet's expansion, or a
    command the shell runs; :func:`bare_expansion_unread` tells them apart)."""
    return bare_expansion(word) or command_substitution(word) or kubernetes_reference(word)


#: The source (``_Item.source`` of :mod:`kvlint.engines.command`, the ``sources`` the engine parsers take) of a word
#: of a shell script that is a reference only as text: quoted so that the shell does not expand it (``'$ARGS'``,
#: ``\$ARGS``, ``"\$ARGS"``), it reaches the engine as written, as a word of a command run without a shell does.
#: The parsers read it as such a word (:meth:`Collector.literal_reference`) and keep ``"arg"`` as its value's source.
QUOTED_SOURCE = "quoted"


#: A value that is one unbraced shell reference and nothing else (``$TP``): what a command run without a shell hands
#: the engine as written (an envsubst template's ``${TP}`` is the renderer's, :func:`template_words`).
_LITERAL_DOLLAR_RE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def literal_dollar(raw: str, exec_form: bool, envsubst_template: bool = False) -> str | None:
    """The variable of an option's value ``raw`` that is a bare ``$NAME`` of a command run without a shell
    (``exec_form``): the kubelet expands only ``$(NAME)`` in ``command``/``args`` (Kubernetes, "Define a Command and
    Arguments for a Container"), so the engine parses the text ``$NAME`` itself (an integer option refuses it: vLLM's
    and SGLang's argparse "invalid int value: '$TP'", TGI's clap "invalid digit found in string"). None otherwise (a
    shell's word, a ``$(NAME)`` the kubelet left, a ``${NAME}`` placeholder), and in a manifest that is a template
    for envsubst (``envsubst_template``: KV002, :attr:`~kvlint.types.Mark.ENVSUBST_TEMPLATE`): envsubst replaces
    ``$NAME`` as well as ``${NAME}`` (GNU gettext manual, "envsubst Invocation": "references to environment
    variables of the form $VARIABLE or ${VARIABLE}") before the manifest is applied, so the value is the
    renderer's, a variable kvlint cannot resolve (:func:`unresolved_why`)."""
    m = _LITERAL_DOLLAR_RE.fullmatch(raw) if exec_form and not envsubst_template else None
    return m.group(1) if m is not None else None


def literal_dollar_said(col: Collector, before: int, raw: str, name: str, quoted: bool = False) -> None:
    """Say why on the KV206 findings the engine parser made since ``before`` (an index of ``col.findings``) for the
    value ``raw``, a :func:`literal_dollar` reference to ``name``: the engine received the text as written, from a
    command run without a shell, or (``quoted``) from a shell script that quotes it (:data:`QUOTED_SOURCE`:
    ``--tensor-parallel-size '$TP'``; bash(1) "QUOTING", dash the same)."""
    for k in range(before, len(col.findings)):
        f = col.findings[k]
        if f.rule == "KV206" and quoted:
            col.findings[k] = dataclasses.replace(
                f,
                message=f"{f.message} (the script quotes it, so the shell does not expand it and the engine "
                f"receives the text {raw} as written)",
                fix=f'write {raw} unquoted, or "{raw}", so that the shell expands it, or the value itself',
            )
        elif f.rule == "KV206":
            col.findings[k] = dataclasses.replace(
                f,
                message=f"{f.message} (no shell runs this command and Kubernetes expands only $(VAR) in command and "
                f"args, so the engine receives the text {raw} as written)",
                fix=f"write $({name}) with {name} in the container's env, or the value itself",
            )


def bare_expansion_unread(
    cfg: ServingConfig, word: str, loc: Loc | None, maybe_set: Collection[str] | None = None
) -> None:
    """:func:`arguments_not_all_read` for a :func:`bare_expansion` ``word`` of the command (``loc``) whose variable
    may hold words kvlint cannot see: it is among ``maybe_set`` (or ``*`` is), the names the reading of the command
    found set to a value it does not know (:attr:`kvlint.engines.shell.ShellCommand.maybe_set`: the script's
    ``ARGS=$(cat f)`` or ``read ARGS``, an array it built in a loop (``"${ARGS[@]}"``), a prefix ``ARGS=$(cmd)`` of
    the ``eval`` or function call that runs the command, the container's ``valueFrom`` or ``envFrom`` kvlint did
    not read; an
    ``envFrom`` ConfigMap it read defines only its keys), or, with ``maybe_set`` None (the words of a bare command
    line), the container declares it. ``$@`` always may. A variable neither sets is unset as far as the manifest says
    (the same assumption :func:`kvlint.engines.shell` makes for ``${X:-d}``: the image's ``ENV`` is not read), so
    bash expands the word to nothing: an info note, and the engine defaults stand (a KServe LLMInferenceService
    preset's ``${VLLM_ADDITIONAL_ARGS}`` that the service does not set)."""
    if kubernetes_reference(word):
        _kubernetes_reference_unread(cfg, word, loc)
        return
    if _declared_unknown(cfg.container, word) if maybe_set is None else _may_hold_words(word, maybe_set):
        where = _unknown_why(cfg.container, word, maybe_set)
        arguments_not_all_read(cfg, f"{word} expands to arguments kvlint cannot see ({where})", loc)
        return
    cfg.findings.append(
        Finding(
            rule="KV503",
            message=f"{word} expands to arguments kvlint cannot see (not set in the container env: the shell "
            "expands it to nothing unless the image sets it)",
            loc=loc,
            severity="info",
            mark=Mark.VARIABLE_UNRESOLVED,
        )
    )


def _kubernetes_reference_unread(cfg: ServingConfig, word: str, loc: Loc | None) -> None:
    """:func:`bare_expansion_unread` for a :func:`kubernetes_reference` ``$(VAR)`` among a shell script's engine
    words: when the container's env names VAR without a literal value (a ``valueFrom``) or has an ``envFrom`` kvlint
    did not read, the kubelet expanded it to a value kvlint does not know, which the shell splits into words
    (:func:`arguments_not_all_read`, KV503); else the kubelet left it as written (Kubernetes API, ``Container.args``:
    "If a variable cannot be resolved, the reference in the input string will be unchanged") and the shell runs a
    command named VAR, **[assumed]** not in the image ("command not found" on its error output): it expands to
    nothing, and the engine starts without the options it was meant to hold (a KV503 note). Was read as the engine's
    literal word (vLLM: a KV205 "unexpected positional argument" error the engine never raises)."""
    name = word[2:-1]
    if _declared_unknown(cfg.container, word):
        arguments_not_all_read(
            cfg,
            f"{word} expands to arguments kvlint cannot see (the kubelet expands it to {name}'s value, which kvlint "
            "does not read)",
            loc,
        )
        return
    names = {"vllm": "vLLM", "tgi": "TGI", "sglang": "SGLang"}
    cfg.findings.append(
        Finding(
            rule="KV503",
            message=f"{word}: the container env does not define {name}, so Kubernetes leaves it as written and the "
            f"shell runs a command named {name} (not found), which expands to nothing: "
            f"{names.get(cfg.engine, cfg.engine)} starts without the options it was meant to hold",
            loc=loc,
            severity="info",
            mark=Mark.VARIABLE_UNRESOLVED,
        )
    )


#: A reference to all of an array's elements, ``${ARGS[@]}`` or ``${ARGS[*]}`` (group 1: the name).
_ARRAY_REFERENCE_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}")


def _expansion_name(word: str) -> str | None:
    """The variable of the bare expansion ``word``: ``ARGS`` for ``$ARGS``, ``${ARGS}`` and ``${ARGS[@]}``; None for
    ``$@`` and the positional parameters."""
    m = _ARRAY_REFERENCE_RE.search(word)
    if m is not None:
        return m.group(1)
    m = _VARIABLE_RE.search(word)
    return (m.group(1) or m.group(2) or m.group(3)) if m is not None else None


def _unknown_why(container: object, word: str, maybe_set: Collection[str] | None) -> str:
    """Why the variable of the bare expansion ``word`` may hold words kvlint cannot see, for the KV503 warning: the
    script sets it (``ARGS=$(cat f)``, ``read ARGS``, an array built in a loop), the container's env declares it
    without a literal value, or it may come from an ``envFrom`` kvlint did not read."""
    if command_substitution(word):
        return "the output of a command, which kvlint does not run"
    name = _expansion_name(word)
    if maybe_set is not None and name is not None and name in maybe_set and _env_literal(container, name):
        # the env's literal value (which an envFrom does not override) changed in the script: by an assignment of a
        # command's output, or by a file it sources (shell55: ``. /app/env.sh`` may set any name)
        return (
            f"the container env gives {name} a literal value, but the script sets it, or a file it sources may, to "
            "a value kvlint does not read"
        )
    if maybe_set is None or name is None or _env_declares(container, name):
        return "no literal value in the container env"
    if name in maybe_set:
        return f"the script sets {name} to a value kvlint does not read, such as a command's output"
    return "it may come from the container's envFrom, which kvlint did not read"


def _may_hold_words(word: str, maybe_set: Collection[str]) -> bool:
    """Whether the variable of the bare expansion ``word`` (``$X``, ``${X}``, ``${X[@]}``; ``$@`` always) is among
    ``maybe_set`` (``*``: any name)."""
    name = _expansion_name(word)
    return name is None or command_substitution(word) or "*" in maybe_set or name in maybe_set


def _declared_unknown(container: object, word: str) -> bool:
    """Whether the variable of the bare expansion ``word`` (``$X``, ``${X}``; ``$@`` always) may hold words: the
    container's ``env`` names it, or the container has an ``envFrom`` (any name may come from it)."""
    m = _VARIABLE_RE.search(word)
    if m is None or not isinstance(container, dict) or command_substitution(word):
        return True
    if container.get("envFrom"):
        return True
    return _env_declares(container, m.group(1) or m.group(2) or m.group(3))


def _env_declares(container: object, name: str) -> bool:
    """Whether the container's ``env`` list has an entry named ``name`` (with a value or a ``valueFrom``)."""
    env = container.get("env") if isinstance(container, dict) else None
    return isinstance(env, list) and any(isinstance(e, dict) and e.get("name") == name for e in env)


def _env_literal(container: object, name: str) -> bool:
    """Whether the container's ``env`` list gives ``name`` a literal ``value`` (a string; the last entry of that name
    wins, as the kubelet builds the environment in order)."""
    env = container.get("env") if isinstance(container, dict) else None
    if not isinstance(env, list):
        return False
    entries = [e for e in env if isinstance(e, dict) and e.get("name") == name]
    return bool(entries) and isinstance(entries[-1].get("value"), str) and "valueFrom" not in entries[-1]


def arguments_not_all_read(cfg: ServingConfig, why: str, loc: Loc | None) -> None:
    """The engine command of ``cfg`` gets words kvlint cannot see besides those it read (``why``: ``xargs`` appends
    words from its input, :data:`kvlint.engines.shell.APPENDING_WRAPPERS`): each setting of :data:`_UNSEEN_ARGUMENTS`
    that the words read do not set is recorded as set to a value kvlint does not know (``cfg.unresolved``, at the
    command), as for an unread ``--config`` file (:func:`unknown_from_config_file`): no rule takes it at the engine's
    default (KV403 "tensor-parallel-size 1", KV202 "no --max-model-len"), and a parallel size so left leaves the
    container not sized, and a KV503 warning says why at ``loc``."""
    layout = False
    for dest in _UNSEEN_ARGUMENTS.get(cfg.engine, ()):
        if dest not in cfg.flags and dest not in cfg.unresolved:
            cfg.unresolved[dest] = loc
            layout = layout or dest in LAYOUT_DESTS
    names = {"vllm": "vLLM", "tgi": "TGI", "sglang": "SGLang"}
    engine = names.get(cfg.engine, cfg.engine)
    cfg.findings.append(
        Finding(
            rule="KV503",
            message=f"the {engine} command's arguments are not all known: {why}; the settings they may give are "
            "not assumed to be the engine defaults"
            + ("; the GPU layout may be among them, so the container is not sized" if layout else "")
            + ("; so may the model, which the words read do not name" if cfg.model is None else ""),
            loc=loc,
            fix="write the engine's options in the command itself, or in a ConfigMap kvlint reads (--config)",
            severity="warning",
            mark=Mark.ARGUMENTS_UNSEEN,
        )
    )


#: The settings whose product is the GPUs one node of each engine's layout uses (:func:`launched_from_env`).
_NODE_LAYOUT = {"vllm": ("tensor_parallel_size", "pipeline_parallel_size"), "sglang": ("tp_size", "pp_size")}


def launched_from_env(
    cfg: ServingConfig,
    why: str,
    command: str,
    names: Sequence[str],
    loc: Loc | None,
    gpus: int | None,
    pods: int = 1,
    device: str | None = None,
) -> None:
    """The engine of ``cfg`` read from the container's env rather than from a command line the manifest holds
    (``why``: its image's entrypoint, or a script of the image, starts the engine; ``command``: the engine command
    kvlint read from the env variables ``names``, :func:`kvlint.engines.command.env_launch`). **[assumed]** the
    entrypoint passes these variables to the engine as the options they are named after; what else it passes is not
    known, so each setting of :data:`_UNSEEN_ARGUMENTS` the env does not give, and the port, is recorded as set to a
    value kvlint does not know (``cfg.unresolved``, as :func:`arguments_not_all_read` does), but for the GPU layout
    when the sizes the env gives already use all the ``gpus`` the container requests (one GPU and none given;
    ``TENSOR_PARALLEL_SIZE=4`` on 4): a larger layout needs more GPUs than the pod has (vLLM and SGLang start one
    worker per GPU of ``tensor x pipeline`` on the node), so the engine that starts there runs on that one (a data-
    parallel size spanning other pods is **[assumed]** absent). ``pods``: the pods of the group the container's pod
    leads (a LeaderWorkerSet of ``size: 2``), whose GPUs a multi-node engine's ``tensor x pipeline`` workers span
    (vllm@0.11.0 ``vllm/config/parallel.py::ParallelConfig.world_size``; SGLang's ``--nnodes``): the layout is then
    the env's only when its sizes use the ``gpus x pods`` GPUs of the group (``TENSOR_PARALLEL_SIZE=8`` alone on two
    8-GPU pods leaves the pipeline size unknown). ``device``: the container resource of an accelerator that is not a
    CUDA/ROCm GPU (``aws.amazon.com/neuron``, :data:`kvlint.gpu_resources.NON_GPU_RESOURCES`), or None: the container
    is then not sized because kvlint has no memory model for that device (KV501), whatever the layout, and the
    warning says so rather than blame the layout. A KV503 warning at ``loc`` says what was read and assumed."""
    used = 1
    for dest in _NODE_LAYOUT.get(cfg.engine, ()):
        size = cfg.get(dest)
        used *= size if isinstance(size, int) and size > 0 else 1
    layout_full = gpus is not None and used == gpus * max(pods, 1)
    layout = False
    for dest in _UNSEEN_ARGUMENTS.get(cfg.engine, ()):
        if dest in cfg.flags or dest in cfg.unresolved or (layout_full and dest in LAYOUT_DESTS):
            continue
        cfg.unresolved[dest] = loc
        layout = layout or dest in LAYOUT_DESTS
    if "port" not in cfg.flags:
        # the port the entrypoint gives the engine is not known either (KV408 does not compare the probes with the
        # engine's default)
        cfg.unresolved.setdefault("port", loc)
    cfg.findings.append(
        Finding(
            rule="KV503",
            message=f"engine command not in the manifest ({why}); kvlint read it from the container env ("
            f"{', '.join(names)}) as `{command}`, assuming the entrypoint passes these variables as the options "
            "they are named after; the settings the env does not give are not assumed to be the engine defaults"
            + (
                f"; the container requests {device}, not a CUDA/ROCm GPU, so it is not sized (KV501)"
                if device
                else "; the GPU layout may be among them, so the container is not sized"
                if layout
                else f"; the pod's {gpus} GPU{'s set' if gpus != 1 else ' sets'} the GPU layout"
                if layout_full and pods <= 1
                else f"; the group's {pods} pods x {gpus} GPUs set the GPU layout"
                if layout_full
                else ""
            ),
            loc=loc,
            fix="write the engine command in the container (command: [vllm, serve, MODEL, ...] or args to an "
            "engine image) so kvlint reads what runs, or check it with `kvlint plan -- <command>`",
            severity="warning",
        )
    )


#: The end of the KV503 warning on an engine ``--config`` file kvlint cannot read when the command line leaves a
#: parallel size to it (:func:`unknown_from_config_file`).
CONFIG_FILE_UNSIZED = (
    "; the GPU layout may be set there, so the container is not sized (the engine defaults are not assumed)"
)

#: The end of the KV503 warning on a parallel size kvlint cannot resolve (:meth:`Collector.unresolved_value`);
#: a serving-runtime template's parser (:attr:`Collector.layout_from_service`) says :data:`LAYOUT_FROM_SERVICE`
#: instead.
LAYOUT_UNSIZED = (
    "; the GPU layout depends on it, so the container is not sized (the engine default is not assumed)"
)
#: ... and in a serving-runtime template, whose sizes the InferenceService that uses it sets (an info note).
LAYOUT_FROM_SERVICE = (
    "; the service that uses this runtime template sets it (the template is not sized on its own)"
)

#: The variable of an unresolved value as a KV503 message quotes it (``--tp-size $(TP): ...``, ``${TP}``, ``$TP``).
_VARIABLE_RE = re.compile(
    r"\$(?:\(([A-Za-z_][A-Za-z0-9_]*)\)|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))"
)


#: A word the shell's reading left unresolved for its brace or tilde expansion, as the engines' parsers get it:
#: ``$(`` around the value kvlint did not read (kvlint.engines.command._unexpanded, which wraps only a word holding
#: no reference): a brace expansion bash makes into several words (``{2,4}``, ``{1..3}``: a comma or a sequence
#: between braces; bash(1) "Brace Expansion"), or a ``~`` starting the value (a home directory, bash(1) "Tilde
#: Expansion").
_BRACE_WORD_RE = re.compile(r"\$\(([^$`()]*\{[^{}]*(?:,|\.\.)[^{}]*\}[^$`()]*)\)\Z")
#: ... or an ANSI-C quote ``$'...'`` in a ``sh -c`` script (kvlint.engines.shell._dash_word: dash 0.5.12 has none).
_ANSI_C_WORD_RE = re.compile(r"\$\((\$'.*)\)\Z", re.S)
_TILDE_WORD_RE = re.compile(r"\$\((~[^$`()]*)\)\Z")


def unresolved_why(option: str, raw: str) -> str:
    """The KV503 message for ``option``'s value ``raw`` that kvlint cannot resolve: what it is, the word as written
    (a variable: ``--tp-size ${TP}: the value comes from a variable ...``; a brace or tilde expansion kvlint does
    not read: ``--tensor-parallel-size {2,4}{,}: the value is a brace expansion ...``, where it said "comes from a
    variable" and showed ``$({2,4}{,})``)."""
    m = _BRACE_WORD_RE.match(raw)
    if m is not None:
        return (
            f"{option} {m.group(1)}: the value is a brace expansion kvlint does not read (bash makes it several "
            "words, dash passes it as written)"
        )
    m = _ANSI_C_WORD_RE.match(raw)
    if m is not None:
        return (
            f"{option} {m.group(1)}: the value is an ANSI-C quote in a sh script (bash decodes its escapes, dash "
            "passes a $ and the text)"
        )
    m = _TILDE_WORD_RE.match(raw)
    if m is not None:
        return (
            f"{option} {m.group(1)}: the value is a tilde expansion kvlint does not read (a home directory)"
        )
    return f"{option} {raw}: the value comes from a variable kvlint cannot resolve"


def layout_fix(message: str) -> str:
    """The remedy of the KV503 warning on a parallel size kvlint cannot resolve (``message`` starts with the option
    as written, then its value: ``--tensor-parallel-size $(TP): the value comes from ...``): the size itself, or the
    variable given a literal value in the container's env, each with its syntax."""
    option = message.split(" ", 1)[0]
    m = _VARIABLE_RE.search(message)
    if m is None and "comes from a variable" not in message:
        return f"write the size itself ({option} N), so kvlint can size the container"
    var = next((g for g in m.groups() if g), "VAR") if m else "VAR"
    # Kubernetes expands $(VAR) in command and args from the container's env; ${VAR} and $VAR only a shell expands
    # (kubernetes.io, "Define a Command and Arguments for a Container": "Use environment variables to define
    # arguments"), so a ${VAR} outside a shell reaches the engine as written
    how = "" if m is not None and m.group(1) else f" and write it $({var})"
    return (
        f"write the size itself ({option} N), or give {var} a literal value in the container's env "
        f'(env: [{{name: {var}, value: "N"}}]){how}, so kvlint can size the container'
    )


_HR_RE = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_DEC = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BIN = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def human_readable_int(text: str) -> int:
    """Parse an integer the way vLLM's ``human_readable_int`` does.

    ``k/m/g/t`` are powers of 10 and may have decimals (``25.6k`` = 25600), ``K/M/G/T`` powers of 2 and
    must be whole (``32K`` = 32768; ``1.5K`` is rejected); a plain integer is returned as is.
    SOURCE: vllm@0.33.0:vllm/utils/argparse_utils.py::human_readable_int (same rules since 0.8.5 in
    vllm/engine/arg_utils.py, ``t``/``T`` added later). Raises ValueError with vLLM's reason, or when the
    text is longer than 40 characters (no real setting is; converting thousands of digits is slow).
    """
    value = text.strip()
    if len(value) > 40:
        raise ValueError(f"{len(value)} characters is not a plausible integer")
    m = _HR_RE.fullmatch(value)
    if m:
        number, suffix = m.groups()
        if suffix in _DEC:
            return int(float(number) * _DEC[suffix])
        if "." in number:
            raise ValueError(
                f"decimals are not allowed with binary suffixes like {suffix}; did you mean {number}{suffix.lower()}?"
            )
        return int(number) * _BIN[suffix]
    return int(value)


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """``0.8.5.post1`` -> ``(0, 8, 5, 1)``-like sortable tuple (post releases sort after), None if unparsable."""
    if not version:
        return None
    m = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?post(\d+))?", version)
    if not m or any(g and len(g) > _MAX_VERSION_DIGITS for g in m.groups()):
        return None  # (a part of more than 4,300 digits is more than Python's int() converts)
    return tuple(int(g) if g else 0 for g in m.groups())


#: Most digits of one part of a version :func:`version_tuple` reads (no release numbers a part with more).
_MAX_VERSION_DIGITS = 20


#: Option names users write for another option than the one argparse's prefix matching picks: the
#: context-length names of other engines and libraries (Hugging Face ``max_seq_len``/``max_sequence_length``,
#: TGI's ``max_total_tokens``), which vLLM reads as ``--max-seq-len-to-capture`` (a CUDA-graph setting) while
#: the setting meant is ``--max-model-len``.
USUALLY_MEANT: dict[str, str] = {
    "--max-seq-len": "--max-model-len",
    "--max-seq": "--max-model-len",
    "--max-seq-length": "--max-model-len",
}


#: Names longer than this get no suggestion: no engine option is half as long, and difflib's work grows with
#: the name's length (a 100 KB "option" cost seconds per lookup).
_SUGGEST_MAX_CHARS = 120


#: Unknown options (KV205) of one command line reported one by one (:func:`cap_unknown_options`); the others are
#: named in one finding. 100 KAITO Workspaces sharing an inference ConfigMap of 1,000 unknown options (a 41 KB
#: manifest) gave 100,000 KV205 findings and took 12.5 s. [assumed] a hand-written command has a few typos.
MAX_UNKNOWN_OPTIONS = 32

#: Options past :data:`MAX_UNKNOWN_OPTIONS` named in the finding that stands for them; the rest are counted.
MAX_NAMED_UNKNOWN = 32

#: Unknown options of one command line that get a "did you mean" (difflib against every option of the engine:
#: 0.9 ms each; a 0.34 MB Deployment of 20,000 made-up flags took 2 s of the webhook's 2 s budget): those
#: reported one by one (:data:`MAX_UNKNOWN_OPTIONS`).
MAX_SUGGESTIONS = MAX_UNKNOWN_OPTIONS


#: Options of another engine (vLLM's, TGI's, SGLang's) often carried over to a command line of the engine keyed: the
#: option of that engine that sets the same thing, and whose option it is, for KV205's "did you mean" (offered only when the engine knows it: the ``known`` options of the
#: release). TGI: the launcher's ``Args`` (tgi@v3.3.7:launcher/src/main.rs; ``--cuda-graphs 0`` turns CUDA graphs
#: off). SGLang: ``python/sglang/srt/server_args.py::ServerArgs.add_cli_args`` (sglang@v0.5.5), where
#: ``--mem-fraction-static`` covers the weights and the KV pool only, not vLLM's whole budget. vLLM: the options of
#: ``vllm/engine/arg_utils.py::EngineArgs.add_cli_args`` (the generated table of
#: :mod:`kvlint.engines.vllm_flags_data`) for TGI's and SGLang's; a TGI option spelled like an SGLang one
#: (``--max-total-tokens``: TGI's request length, SGLang's pool size) is taken as TGI's, and the fix says so.
COUNTERPARTS: dict[str, dict[str, tuple[str, str]]] = {
    "TGI": {
        "--max-model-len": ("--max-total-tokens", "vLLM"),
        "--tensor-parallel-size": ("--num-shard", "vLLM"),
        "--tp-size": ("--num-shard", "SGLang"),
        "--gpu-memory-utilization": ("--cuda-memory-fraction", "vLLM"),
        "--mem-fraction-static": ("--cuda-memory-fraction", "SGLang"),
        "--max-num-batched-tokens": ("--max-batch-prefill-tokens", "vLLM"),
        "--quantization": ("--quantize", "vLLM"),
        "--model": ("--model-id", "vLLM"),
        "--model-path": ("--model-id", "SGLang"),
        "--context-length": ("--max-total-tokens", "SGLang"),
        "--enforce-eager": ("--cuda-graphs 0", "vLLM"),
    },
    "SGLang": {
        "--max-model-len": ("--context-length", "vLLM"),
        "--gpu-memory-utilization": ("--mem-fraction-static", "vLLM"),
        "--cuda-memory-fraction": ("--mem-fraction-static", "TGI"),
        "--max-num-seqs": ("--max-running-requests", "vLLM"),
        "--max-num-batched-tokens": ("--chunked-prefill-size", "vLLM"),
        "--num-shard": ("--tp-size", "TGI"),
        "--model-id": ("--model-path", "TGI"),
        "--enforce-eager": ("--disable-cuda-graph", "vLLM"),
    },
    "vLLM": {
        "--max-total-tokens": ("--max-model-len", "TGI"),
        "--num-shard": ("--tensor-parallel-size", "TGI"),
        "--cuda-memory-fraction": ("--gpu-memory-utilization", "TGI"),
        "--max-batch-prefill-tokens": ("--max-num-batched-tokens", "TGI"),
        "--max-batch-size": ("--max-num-seqs", "TGI"),
        "--quantize": ("--quantization", "TGI"),
        "--model-id": ("--model", "TGI"),
        "--hostname": ("--host", "TGI"),
        "--cuda-graphs": ("--enforce-eager", "TGI"),
        "--context-length": ("--max-model-len", "SGLang"),
        "--mem-fraction-static": ("--gpu-memory-utilization", "SGLang"),
        "--tp-size": ("--tensor-parallel-size", "SGLang"),
        "--dp-size": ("--data-parallel-size", "SGLang"),
        "--pp-size": ("--pipeline-parallel-size", "SGLang"),
        "--max-running-requests": ("--max-num-seqs", "SGLang"),
        "--chunked-prefill-size": ("--max-num-batched-tokens", "SGLang"),
        "--model-path": ("--model", "SGLang"),
        "--tokenizer-path": ("--tokenizer", "SGLang"),
        "--disable-cuda-graph": ("--enforce-eager", "SGLang"),
        "--page-size": ("--block-size", "SGLang"),
    },
}


#: What a counterpart of :data:`COUNTERPARTS` does differently from the option it stands for, said in KV205's fix.
_COUNTERPART_CAUTION = {
    "--mem-fraction-static": (
        " (SGLang's share of GPU memory for the weights and the KV pool only: leave room for activations and "
        "CUDA graphs, its default is sized per GPU)"
    ),
}


#: What a counterpart does differently from another engine's option given to vLLM, by (engine, that option): said
#: in KV205's fix after the counterpart's own caution. SGLang's fraction (``ServerArgs.mem_fraction_static``) is the
#: weights and KV pool's share; vLLM's ``--gpu-memory-utilization`` the whole budget (weights, activation peak,
#: CUDA graphs and KV cache: ``vllm/v1/worker/gpu_worker.py::Worker.determine_available_memory``).
_FOREIGN_CAUTION = {
    ("vLLM", "--mem-fraction-static"): (
        " (vLLM's share of GPU memory covers the weights, the activation peak, CUDA graphs and the KV cache; "
        "SGLang's --mem-fraction-static the weights and the KV pool only: a value that fit SGLang can leave vLLM "
        "less KV cache)"
    ),
    ("vLLM", "--max-total-tokens"): (
        " (TGI's --max-total-tokens is one request's prompt plus output, vLLM's --max-model-len; SGLang's is the "
        "KV pool's size in tokens, which vLLM sizes from --gpu-memory-utilization instead)"
    ),
    ("vLLM", "--cuda-graphs"): (
        " for TGI's --cuda-graphs 0 (no CUDA graphs); vLLM picks its capture sizes itself otherwise"
    ),
    ("vLLM", "--page-size"): " (vLLM accepts only the block sizes of its --block-size choices)",
}


#: Another engine's options whose value does not carry over to the counterpart (KV205's fix names the counterpart
#: without it): SGLang's ``--mem-fraction-static`` is the weights and KV pool's share, vLLM's
#: ``--gpu-memory-utilization`` and TGI's ``--cuda-memory-fraction`` the whole budget's (:data:`_FOREIGN_CAUTION`).
_VALUE_DIFFERS = frozenset(
    {
        ("vLLM", "--mem-fraction-static"),
        ("TGI", "--mem-fraction-static"),
        ("SGLang", "--gpu-memory-utilization"),
        ("SGLang", "--cuda-memory-fraction"),
    }
)

#: The quantization methods vLLM's ``--quantization`` and TGI's ``--quantize`` both take by the same name: TGI's
#: choices (tgi@v3.3.7 launcher/src/main.rs ``enum Quantization``: awq, compressed-tensors, eetq, exl2, gptq, marlin,
#: bitsandbytes, bitsandbytes-nf4, bitsandbytes-fp4, fp8) that vLLM's ``QUANTIZATION_METHODS``
#: (vllm/model_executor/layers/quantization/__init__.py, 0.6 to 0.11) holds too, ``marlin`` left out (gone from
#: vLLM's list in later releases). KV205's fix carries another value of the one option to the other bare: vLLM takes
#: no ``eetq``, ``exl2`` or ``bitsandbytes-nf4``, TGI no ``awq_marlin``, ``gptq_marlin``, ``modelopt`` or ``gguf``.
_SHARED_QUANTIZATION = frozenset({"awq", "gptq", "fp8", "compressed-tensors", "bitsandbytes"})
#: The counterparts whose values carry over only when among a set, by (engine given the option, option)
_VALUES_CARRIED = {
    ("vLLM", "--quantize"): _SHARED_QUANTIZATION,
    ("TGI", "--quantization"): _SHARED_QUANTIZATION,
}

#: Counterparts that take no value (a switch), and those written with theirs (``--cuda-graphs 0``)
_SWITCH_COUNTERPARTS = frozenset({"--enforce-eager", "--disable-cuda-graph"})

#: Another engine's option spelled like a third engine's, by (engine given it, option): that third engine, named
#: beside the owner in KV205's message. ``--max-total-tokens`` is TGI's (one request's prompt plus output: vLLM's
#: ``--max-model-len``) and SGLang's too (the KV pool's size in tokens: ``ServerArgs.max_total_tokens``,
#: sglang@v0.5.5:python/sglang/srt/server_args.py), which vLLM has no option for.
_ALSO_OWNED = {("vLLM", "--max-total-tokens"): "SGLang"}

#: A value shown in KV205's fix as typed: a number, a word, a list of sizes (``1,2,4``); anything else (white space,
#: a shell expansion, quotes) is left out
_PLAIN_VALUE = re.compile(r"[\w.,:/+-]{1,64}")


def counterpart_use(engine: str, option: str, ours: str, value: str | None) -> str:
    """The counterpart ``ours`` as KV205's fix writes it, with the value the command gave another engine's
    ``option`` when that value means the same to ``engine`` (``--num-shard 2`` given to vLLM: ``use
    --tensor-parallel-size 2``); bare for a switch (``--enforce-eager``), a counterpart written with its value
    (``--cuda-graphs 0``), a pair whose values differ (:data:`_VALUE_DIFFERS`), a value the counterpart does not
    take by that name (:data:`_VALUES_CARRIED`: a quantization method only one engine has) or a value that is not
    plain (:data:`_PLAIN_VALUE`)."""
    if (
        value is None
        or " " in ours
        or ours in _SWITCH_COUNTERPARTS
        or (engine, _dashed(option)) in _VALUE_DIFFERS
        or not _PLAIN_VALUE.fullmatch(value)
        or value not in _VALUES_CARRIED.get((engine, _dashed(option)), (value,))
    ):
        return ours
    return f"{ours} {value}"


def _dashed(option: str) -> str:
    """``option`` with ``_`` read as ``-`` after its leading ``--`` (``--mem_fraction_static`` is
    ``--mem-fraction-static``: vLLM's and SGLang's argparse read both); any other word as it is."""
    return "--" + option[2:].replace("_", "-") if option.startswith("--") else option


def counterpart_caution(engine: str, option: str, ours: str) -> str:
    """What to mind when ``engine``'s ``ours`` stands for another engine's ``option`` (KV205's fix): the caution of
    :data:`_FOREIGN_CAUTION` for that pair, else the counterpart's own (``--mem-fraction-static``'s); empty when
    none. ``option`` may be spelled with underscores, as for :func:`counterpart`."""
    return _FOREIGN_CAUTION.get((engine, _dashed(option))) or _COUNTERPART_CAUTION.get(ours, "")


def counterpart(engine: str, option: str, known: Iterable[str]) -> tuple[str, str] | None:
    """(the option of ``engine`` (``vLLM``/``TGI``/``SGLang``) that sets what another engine's ``option`` sets, that
    other engine) from :data:`COUNTERPARTS`, when ``known`` (the release's options) has it; else None. ``option``
    may be spelled with underscores (``--mem_fraction_static``, as vLLM's and SGLang's argparse dests read)."""
    got = COUNTERPARTS.get(engine, {}).get(_dashed(option))
    if got is None:
        return None
    return got if got[0].split()[0] in set(known) else None


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """Closest known option to ``name`` (difflib ratio >= 0.75, so short unrelated flags such as
    ``--gpus`` get no suggestion while typos like ``--quantize``/``--max-model-lenn`` do), or None (also
    for names over :data:`_SUGGEST_MAX_CHARS` characters, which no typo of an option reaches)."""
    if len(name) > _SUGGEST_MAX_CHARS:
        return None
    got = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.75)
    return got[0] if got else None


def prefixed(names: Sequence[str], prefix: str) -> list[str]:
    """The names of the sorted sequence ``names`` that start with ``prefix``, in order (the candidates
    argparse's ``allow_abbrev`` considers for an abbreviated long option). Found by bisection: in a sorted
    sequence the names starting with ``prefix`` are one run, from ``prefix``'s insertion point; the tests
    compare it with testing every name."""
    out = []
    for k in range(bisect.bisect_left(names, prefix), len(names)):
        if not names[k].startswith(prefix):
            break
        out.append(names[k])
    return out


def parse_json_or_str(text: str) -> Any:
    """JSON-decode ``text`` when it looks like a JSON object/array, else return it unchanged (also when it is
    not valid JSON or nested too deeply for Python's ``json`` to read: see :func:`json_too_deep`)."""
    t = text.strip()
    if t[:1] in "{[":
        try:
            return json.loads(t)
        except (ValueError, RecursionError):
            return text
    return text


def json_too_deep(text: str) -> bool:
    """Whether ``text`` is JSON nested too deeply for Python's ``json`` module (the engines' own parser for
    JSON-valued flags such as vLLM's ``--hf-overrides``): it raises ``RecursionError``, and so would the
    engine at start-up. Parses ``text``; call it only for a value :func:`parse_json_or_str` left a string."""
    t = text.strip()
    if t[:1] not in "{[":
        return False
    try:
        json.loads(t)
    except RecursionError:
        return True
    except ValueError:
        return False
    return False


#: ``Value.source`` kinds of the words of the command line itself: a word as written (``arg``) and one a
#: ``$(VAR)``/``${VAR}`` expansion produced (``env``, such as the ``--tensor-parallel-size=${TENSOR_PARALLEL_SIZE}``
#: of KServe's multi-node runtime): the engine's parser sees both as argv words, the last one winning.
_ARGV_SOURCES = frozenset({"arg", "env"})


def _same_kind(a: str, b: str) -> bool:
    """Whether two occurrences of a setting come from the same kind of source, so that a different value is
    a conflict (KV207): both words of the command line (:data:`_ARGV_SOURCES`), or both from a ``--config``
    file; a ``--config`` value that the command line overrides is not one."""
    return a == b or (a in _ARGV_SOURCES and b in _ARGV_SOURCES)


@dataclass
class Collector:
    """Accumulates parsed settings for one engine command line.

    ``flags`` maps canonical dest -> :class:`Value` (last occurrence wins, like argparse/clap);
    ``findings`` gathers KV205/KV206/KV207/KV503. ``engine`` is used in messages (``vLLM 0.11.0``).
    ``layout_from_service``: the command is a serving-runtime template's, whose parallel sizes the service that
    uses it sets (:func:`kvlint.rules.facts.is_runtime_template`): an unresolved one is then an info note
    (:meth:`unresolved_value`).
    """

    engine: str
    layout_from_service: bool = False
    flags: dict[str, Value] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    seen_option: dict[str, str] = field(default_factory=dict)
    #: Setting -> the option word the command line spelled it with, where the parser records it (SGLang's
    #: ``--tensor-parallel-size`` for ``tp_size``, whose canonical name ``seen_option`` holds): the spelling a
    #: finding quotes (:attr:`kvlint.types.ServingConfig.written`).
    written: dict[str, str] = field(default_factory=dict)
    unresolved: dict[str, Loc | None] = field(default_factory=dict)
    #: Unknown options given a suggestion so far (see :data:`MAX_SUGGESTIONS`).
    suggested: int = 0
    #: Where the command names a ``--config`` file kvlint could not read (SGLang: the command line is parsed
    #: after it, and :func:`unknown_from_config_file` is applied then); empty when none.
    unread_config: list[Loc | None] = field(default_factory=list)

    def set(self, dest: str, value: Value, option: str) -> None:
        """Record ``dest = value``; warn KV207 when the same setting was already given differently
        from the same source kind (a ``--config`` value overridden by the CLI is not a conflict).

        An integer beyond :data:`MAX_PARALLEL_SIZE` (layout sizes, :data:`PARALLEL_DESTS`) or
        :data:`MAX_INT_SETTING` (any other) is reported as KV206 and not recorded; the setting is marked
        unresolved, so the checks that need it are skipped rather than run on an absurd number."""
        v = value.value
        if isinstance(v, int) and not isinstance(v, bool):
            limit = MAX_PARALLEL_SIZE if dest in PARALLEL_DESTS else MAX_INT_SETTING
            if abs(v) > limit:
                what = f"{limit:,} GPUs" if dest in PARALLEL_DESTS else "2^63 - 1"
                self.invalid(
                    option,
                    value.raw
                    if value.raw is not None
                    else str(v)
                    if v.bit_length() < 200
                    else "<huge number>",
                    value.loc,
                    f"implausibly large (kvlint reads values up to {what})",
                    fix=f"give {option} a realistic value",
                )
                self.unresolved[dest] = value.loc
                return
        old = self.flags.get(dest)
        if old is not None and _same_kind(old.source, value.source) and old.value != value.value:
            prev = self.seen_option.get(dest, option)
            self.findings.append(
                RepeatedSetting(
                    rule="KV207",
                    message=(
                        f"{option} is given twice with different values "
                        f"({prev} {old.raw if old.raw is not None else old.value!r} then "
                        f"{value.raw if value.raw is not None else value.value!r}); "
                        f"{self.engine} uses the last one ({value.raw if value.raw is not None else value.value})"
                    ),
                    loc=value.loc,
                    fix=f"remove one of the {option} settings",
                    severity="warning",
                    option=option,
                    first_option=prev,
                    first=old,
                    last=value,
                    engine=self.engine,
                )
            )
        self.flags[dest] = value
        self.seen_option[dest] = option

    def unknown(
        self,
        option: str,
        loc: Loc | None,
        where: str,
        known: Iterable[str],
        extra: str = "",
        aliases: Iterable[str] = (),
        value: str | None = None,
        suggestion_note: Callable[[str], str] | None = None,
    ) -> None:
        """KV205: ``option`` is not an option of ``where`` (e.g. ``vLLM 0.11.0``); suggest the closest of ``known``
        (for the first :data:`MAX_SUGGESTIONS` unknown options of the command line). A word with white space in it
        (:meth:`_spaced`) says so: shown bare, ``--enforce-eager `` read "unknown option --enforce-eager; did you mean
        --enforce-eager?". ``aliases``: the engine's other option strings (short ones such as vLLM's ``-tp``), which
        :meth:`_spaced` recognises in a word but are never suggested. ``value``: the word the command gives the
        option (``--num-shard 2``: ``2``), which the fix carries to the engine's counterpart of another engine's
        option (:func:`counterpart_use`). ``suggestion_note``: for a spelling suggestion, the releases that accept it
        when only older ones do (``vLLM 0.4.3 to 0.9.2``: the release is not known and the newest refuses it), which
        the hint and the fix then name; empty for none."""
        known = list(known)
        aliases = list(aliases)
        if self._spaced(option, loc, where, [*known, *aliases], extra):
            return
        best = None
        found = counterpart(self.engine, option, known)
        other = None
        # a short alias typed with two dashes (vLLM's -tp as --tp, which SGLang users type): argparse matches
        # neither the alias nor, by prefix, a long option, and refuses it
        single = "-" + option[2:] if option.startswith("--") and len(option) > 2 else None
        short = found is None and single is not None and single in aliases
        if short:
            best = single
            extra = f"{extra}: {single}, with one dash, is {where}'s short option"
        elif found is not None:
            # another engine's option: name this engine's own (a closer spelling would be a different setting)
            other, owner = found
            best = other
            also = _ALSO_OWNED.get((self.engine, _dashed(option)))
            if also:
                extra = f"{extra} ({owner}'s and {also}'s option; {self.engine}'s counterpart of {owner}'s is {other})"
            else:
                extra = f"{extra} ({owner}'s option; {self.engine}'s counterpart is {other})"
        elif self.suggested < MAX_SUGGESTIONS:
            self.suggested += 1
            best = suggest(option, known)
        hint = f"; did you mean {best}?" if best and other is None and not short else ""
        caveat = suggestion_note(best) if best and other is None and suggestion_note is not None else ""
        if caveat:
            hint = f"; did you mean {best} (an option of {caveat} only, which later releases refuse too)?"
        self.findings.append(
            OptionFinding(
                rule="KV205",
                message=f"unknown {where} option {option}{extra}{hint}",
                loc=loc,
                fix=(
                    f"use {counterpart_use(self.engine, option, best, value)}"
                    + counterpart_caution(self.engine, option, best)
                    if other
                    else f"use {best} on {caveat} only; later releases refuse both: remove {option} there"
                    if caveat
                    else f"use {best}"
                )
                if best
                else f"remove {option}",
                severity="error",
                option=option,
                unknown=True,
            )
        )

    def literal_reference(self, word: str, loc: Loc | None, where: str, quoted: bool = False) -> None:
        """KV205 for a :func:`bare_expansion` ``word`` (``$EXTRA_ARGS``, ``${EXTRA_ARGS}``) of a command that reaches
        the engine without a shell (:attr:`kvlint.types.ServingConfig.exec_form`): the kubelet expands only
        ``$(VAR)`` in ``command`` and ``args`` (Kubernetes, "Define a Command and Arguments for a Container"), so
        the engine receives the word as written, a positional argument none of the three engines takes (vLLM's and
        SGLang's argparse: "unrecognized arguments"; TGI's clap: "unexpected argument '$EXTRA_ARGS' found") and it
        exits before loading the model. An unknown option (:attr:`~kvlint.types.OptionFinding.unknown`), so that in
        an envsubst template the word is the renderer's (:func:`template_words`). ``quoted``: the word is a shell
        script's, quoted so that the shell passes it as written (:data:`QUOTED_SOURCE`: ``'$ARGS'``; bash(1)
        "QUOTING": "Enclosing characters in single quotes preserves the literal value of each character"; dash
        the same), with the same outcome."""
        m = _VARIABLE_RE.search(word)
        name = (m.group(1) or m.group(2) or m.group(3)) if m is not None else None
        if quoted:
            self.findings.append(
                OptionFinding(
                    rule="KV205",
                    message=f"unknown {where} option {word} (unexpected positional argument): the script quotes "
                    f"it, so the shell does not expand it and the engine receives the text {word} as written and "
                    "exits",
                    loc=loc,
                    fix=f"write {word} unquoted so that the shell splits it into options, or list the options "
                    "themselves",
                    severity="error",
                    option=word,
                    unknown=True,
                )
            )
            return
        self.findings.append(
            OptionFinding(
                rule="KV205",
                message=f"unknown {where} option {word} (unexpected positional argument): no shell runs this "
                f"command and Kubernetes expands only $(VAR) in command and args, so the engine receives the text "
                f"{word} as written and exits",
                loc=loc,
                fix="list the options themselves as items of args; "
                + (
                    f"$({name}) passes the variable's value as one word (a single --option=value at most); "
                    if name
                    else ""
                )
                + f"or run the command through sh -c so that the shell splits {word} into options",
                severity="error",
                option=word,
                unknown=True,
            )
        )

    def _spaced(self, option: str, loc: Loc | None, where: str, known: Iterable[str], extra: str) -> bool:
        """KV205 for an option word holding white space, and True; False for any other word. A container's
        ``command``/``args`` item reaches the engine as one word, spaces included: argparse (vLLM, SGLang) takes
        a word with a space in it for a positional argument ("unrecognized arguments"), clap (TGI) for an
        unexpected argument. Two cases, by what the word holds once stripped: ``--max-model-len 4096`` (an
        option and its value in one list item: split it) and ``--enforce-eager `` (a space at an end: remove
        it). The word is quoted so that the space shows."""
        bare = option.strip()
        if bare == option and not any(c.isspace() for c in option):
            return False
        names = set(known)
        before_eq = bare.split("=", 1)[0]

        def named(word: str) -> bool:  # an option of the engine, as written or with _ for - (vLLM reads both)
            return word in names or (word.startswith("--") and "--" + word[2:].replace("_", "-") in names)

        head, value = (bare.split(None, 1) + ["", ""])[:2]  # (a word of white space only splits into none)
        value = value.strip()
        if value and named(head):
            why = f"one list item holds {head} and its value, and the engine gets it as one word"
            fix = f"split it into two list items ({head!r}, {value!r}) or write {head}={value}"
        elif not value and (named(bare) or (before_eq != bare and named(before_eq))):
            # " --max-model-len" or "--enforce-eager " or " --max-model-len=4096"
            why = "the word has white space at an end, which the engine reads as part of it"
            fix = f"remove the white space: {bare}"
        else:
            why = (
                "a container's command and args items reach the engine as single words, white space included"
            )
            fix = f"remove {option!r}, or write each option and each value as its own list item"
        self.findings.append(
            OptionFinding(
                rule="KV205",
                message=f"unknown {where} option {option!r}{extra}: {why}",
                loc=loc,
                fix=fix,
                severity="error",
                option=option,
                unknown=True,
            )
        )
        return True

    def invalid(
        self, option: str, raw: str, loc: Loc | None, why: str, fix: str = "", severity: Severity = "error"
    ) -> None:
        """KV206: ``raw`` is a value the engine rejects for ``option`` (quoted, cut to 60 characters);
        ``severity`` "warning" when only some of the releases the image may run reject it."""
        shown = raw if len(raw) <= 60 else raw[:57] + "..."
        self.findings.append(
            OptionFinding(
                rule="KV206",
                message=f"invalid value {shown!r} for {option}: {why}",
                loc=loc,
                fix=fix or f"give {option} a value the engine accepts ({why})",
                severity=severity,
                option=option,
            )
        )

    def abbreviation(self, written: str, option: str, loc: Loc | None) -> None:
        """KV205 (warning): ``written`` is not an option but argparse took it as the unique prefix of
        ``option`` (``allow_abbrev``); say so, and name the option usually meant when it is another."""
        meant = USUALLY_MEANT.get(written)
        hint = f"; {written} is usually meant as {meant}" if meant and meant != option else ""
        self.findings.append(
            Finding(
                rule="KV205",
                message=(
                    f"{written} is not a {self.engine} option: argparse takes it as an abbreviation of {option} "
                    f"(unique-prefix matching), so it sets {option}{hint}; a release that adds another option "
                    f"beginning with {written} makes the command fail with 'ambiguous option'"
                ),
                loc=loc,
                fix=f"write {meant} if that is what was meant"
                if hint
                else f"write the full option name {option}",
                severity="warning",
            )
        )

    def unresolved_value(self, dest: str, message: str, loc: Loc | None) -> None:
        """A setting whose value comes from a variable kvlint cannot resolve: remember ``dest`` (so the rules
        know the setting is set but unknown, not at its default) and note it (KV503 info).

        A parallel size (:data:`LAYOUT_DESTS`: ``--tensor-parallel-size $(TP)``, ``--tp-size ${X}``,
        ``--num-shard $(N)``) decides each GPU's share of the weights and KV cache, so the note is a warning
        that says the container is not sized: the engine default (1 in vLLM's ``ParallelConfig``, SGLang's
        ``ServerArgs``) is not assumed for a size the manifest sets to something else. In a serving-runtime
        template (:attr:`layout_from_service`) the size is the using service's (KServe sets the variable from its
        workerSpec) and the template is not sized on its own anyway: the note then says so, as an info."""
        self.unresolved[dest] = loc
        if dest in LAYOUT_DESTS:
            if self.layout_from_service:
                self.note(f"{message}{LAYOUT_FROM_SERVICE}", loc)
            else:
                self.note(f"{message}{LAYOUT_UNSIZED}", loc, severity="warning", fix=layout_fix(message))
        else:
            self.note(message, loc)
        self.findings[-1] = dataclasses.replace(self.findings[-1], mark=Mark.VARIABLE_UNRESOLVED)

    def serving_config(
        self,
        engine: EngineName,
        container: LDict | None,
        image: str,
        version: str | None,
        model: Value | None,
        env: dict[str, str],
        locs: Sequence[Loc | None],
    ) -> ServingConfig:
        """The parser's result (the three engines' parsers end alike): what was collected (``flags``, ``findings``,
        a copy of ``unresolved``) for ``container`` (an empty one when None; its name as a reference part, its
        ``image:`` key as where the release is said), the ``command_loc`` at the first argument with a position
        (``locs``)."""
        cont = container if container is not None else LDict()
        return ServingConfig(
            engine=engine,
            container=cont,
            container_name=ref_part(str(cont.get("name", ""))) if isinstance(cont, dict) else "",
            image=image,
            version=version,
            model=model,
            flags=self.flags,
            env=env,
            findings=self.findings,
            unresolved=dict(self.unresolved),
            written=dict(self.written),
            command_loc=next((x for x in locs if x is not None), None),
            version_loc=cont.locs.get("image") if isinstance(cont, LDict) else None,
        )

    def note(self, message: str, loc: Loc | None, severity: str = "info", fix: str | None = None) -> None:
        """KV503 note: part of the command cannot be read statically (unresolved variable, missing file);
        ``fix`` when the note has its own remedy (else the rule's)."""
        found = Finding(rule="KV503", message=message, loc=loc, severity=severity, fix=fix or "")  # type: ignore[arg-type]
        self.findings.append(found)


def _named(option: str) -> str:
    """An unknown option word as :func:`cap_unknown_options` names it: quoted when it holds white space (as
    :meth:`Collector._spaced` shows it), cut to 60 characters."""
    shown = option if len(option) <= 60 else option[:57] + "..."
    return repr(shown) if any(c.isspace() for c in shown) else shown


def cap_unknown_options(findings: Sequence[Finding]) -> list[Finding]:
    """``findings`` of one command line (a container's engine parser) with its unknown options (KV205,
    :attr:`OptionFinding.unknown`) after the first :data:`MAX_UNKNOWN_OPTIONS` replaced by one KV205 in place of
    the first of them, at its position, with the severity of the most severe: "N more unknown options: ..."
    naming the first :data:`MAX_NAMED_UNKNOWN` of them (their option words as the parser read them) and counting
    the rest. The first ones stay :class:`OptionFinding` objects, so the stages that restate them (who wrote the
    option: :func:`chart_provenance`, an operator's keyword arguments) still do; the one that stands for the
    rest is a plain :class:`Finding` they leave as it is. Other findings are kept, in order. Pure; ``findings``
    itself when nothing is past the bound."""
    count = 0
    for f in findings:
        if isinstance(f, OptionFinding) and f.unknown:
            count += 1
    if count <= MAX_UNKNOWN_OPTIONS:
        return list(findings)
    out: list[Finding] = []
    extra: list[OptionFinding] = []
    at = -1
    seen = 0
    for f in findings:
        if isinstance(f, OptionFinding) and f.unknown:
            seen += 1
            if seen > MAX_UNKNOWN_OPTIONS:
                if at < 0:
                    at = len(out)
                    out.append(f)  # (its place, for the finding that stands for them all)
                extra.append(f)
                continue
        out.append(f)
    named = ", ".join(_named(f.option) for f in extra[:MAX_NAMED_UNKNOWN])
    rest = len(extra) - MAX_NAMED_UNKNOWN
    if rest > 0:
        named += f" and {rest:,} more"
    first = extra[0]
    severity = next((f.severity for f in extra if f.severity == "error"), first.severity)
    out[at] = Finding(
        rule="KV205",
        message=f"{len(extra):,} more unknown option{'' if len(extra) == 1 else 's'}: {named} (kvlint reports the first {MAX_UNKNOWN_OPTIONS} "
        "unknown options of a command line one by one)",
        loc=first.loc,
        fix="remove or correct each of them; with fewer unknown options, each is reported with what wrote it and "
        "a suggestion",
        severity=severity,
        stands_for=len(extra),
    )
    return out


def template_words(
    findings: Sequence[Finding], engine: str, parameters: Collection[str] | None = None
) -> list[Finding]:
    """``findings`` of one command line of a workload KV002 reports as an envsubst template
    (:attr:`~kvlint.types.Mark.ENVSUBST_TEMPLATE`, :func:`kvlint.workloads.placeholders.template_findings`) with
    each KV205 on a word that is wholly a ``${VAR}`` placeholder (:func:`kvlint.engines.images.whole_placeholder`),
    or for envsubst a bare ``$VAR`` (which it replaces too, GNU gettext "envsubst Invocation"),
    replaced by a KV503 info at its position: the word is the renderer's (envsubst writes in its place the options
    it is given: llm-d's ``"${VLLM_EXTRA_ARGS_D}"``), not an option the engine lacks, so "remove it" is no remedy;
    what it renders to is unseen, as a bare ``$ARGS`` in a shell script is. Only the engine parsers' unknown
    options (:attr:`~kvlint.types.OptionFinding.unknown`); a word that only holds a placeholder (``extra-${X}``)
    stays one. ``parameters``: for an OpenShift ``Template``, the names of its parameters that have no value
    (:func:`kvlint.template_params.unresolved_parameters`), which ``oc process`` fills in: only a word wholly one
    of those (``${EXTRA_ARGS}``) is such a word (a name the Template does not declare reaches the engine as
    written); and the KV503 on a variable kvlint left unresolved (:attr:`~kvlint.types.Mark.VARIABLE_UNRESOLVED`)
    that is such a parameter (in a ``sh -c`` script too: oc process substitutes every string before a shell reads
    it) is restated as the parameter's (:func:`_template_parameter`): a bare ``${EXTRA_ARGS}`` was "not set in the
    container env", a ``--tensor-parallel-size ${TP}`` told to set TP in the container's env. Pure; ``findings``
    itself when none is such a word."""
    from kvlint.engines.images import whole_placeholder

    out: list[Finding] = []
    changed = False
    name = ENGINE_NAMES.get(engine, engine)
    for f in findings:
        if parameters is not None and f.mark is Mark.VARIABLE_UNRESOLVED:
            restated = _template_parameter(f, parameters, name)
            changed = changed or restated is not f
            out.append(restated)
            continue
        word = whole_placeholder(f.option) if isinstance(f, OptionFinding) and f.unknown else None
        if word is None and parameters is None and isinstance(f, OptionFinding) and f.unknown:
            # envsubst replaces an unbraced $EXTRA_ARGS too (GNU gettext, "envsubst Invocation"): a word of a
            # command run without a shell that would otherwise reach the engine as written (KV205)
            bare = _LITERAL_DOLLAR_RE.fullmatch(f.option.strip())
            word = bare.group(0) if bare is not None else None
        if word is not None and parameters is not None:
            m = re.fullmatch(r"\s*\$\{([a-zA-Z0-9_]+)\}\s*", word)
            word = word if m is not None and m.group(1) in parameters else None
        if word is None:
            out.append(f)
            continue
        changed = True
        out.append(
            Finding(
                "KV503",
                f"{word} is a placeholder of this template (KV002) in place of {name}'s arguments: the words it is "
                "rendered to are arguments kvlint cannot see",
                f.loc,
                fix="render the manifest with the values you deploy with and lint the result, e.g. "
                "envsubst < FILE | kvlint check -",
                severity="info",
            )
            if parameters is None
            else Finding(
                "KV503",
                f"{word} is a parameter of this OpenShift Template with no value, which oc process fills in "
                f"(-p NAME=VALUE, or generated) in place of this argument of {name}: what it is given is not seen "
                "here",
                f.loc,
                fix="process the Template with the values you deploy with and lint the result, e.g. "
                "oc process -f FILE -p NAME=VALUE | kvlint check -",
                severity="info",
            )
        )
    return out if changed else list(findings)


def _template_parameter(f: Finding, parameters: Collection[str], engine: str) -> Finding:
    """The KV503 ``f`` (:attr:`~kvlint.types.Mark.VARIABLE_UNRESOLVED`) restated when the variable it names is one of
    an OpenShift Template's ``parameters`` with no value: ``oc process`` substitutes ``${NAME}`` in every string of
    the Template's objects (a ``sh -c`` script's included) before any shell or engine reads it, with the value
    ``-p NAME=VALUE`` gives, a generated one, or nothing (openshift/library-go
    ``pkg/template/templateprocessing/template.go``, ``Processor.Process``). A bare word keeps its severity (info:
    the arguments it stands for are not seen, as an exec-form word's); an option's value keeps its message's
    consequence (a parallel size left unknown: not sized), with the Template's remedy in place of the container
    env's. ``f`` itself otherwise."""
    head = f.message.split(" expands to ", 1)[0].split(": ", 1)[0]
    # the first ``${NAME}`` of the message's head (the word, or the option and its value), read as oc process reads
    # one (kvlint.template_params, openshift/library-go ``template.go``'s ``stringParameterExp``)
    m = _TEMPLATE_REFERENCE_RE.search(head)
    if m is None or m.group(1) not in parameters:
        return f
    param = m.group(1)
    fix = (
        f"give the Template's parameter {param} a value (parameters: [{{name: {param}, value: ...}}]), or process "
        f"the Template with the values you deploy with and lint the result, e.g. oc process -f FILE -p "
        f"{param}=VALUE | kvlint check -"
    )
    if " expands to " in f.message:
        return dataclasses.replace(
            f,
            message=f"{head} is a parameter of this OpenShift Template with no value, which oc process fills in "
            f"(-p {param}=VALUE, or generated) before the shell reads the script, in place of {engine}'s arguments: "
            "what it is given is not seen here",
            fix=fix,
        )
    message = f.message.replace(
        "the value comes from a variable kvlint cannot resolve",
        f"the value comes from the parameter {param} of this OpenShift Template, which has no value (oc process "
        "fills it in)",
        1,
    )
    return dataclasses.replace(f, message=message, fix=fix)


def _option_word(word: str) -> str:
    """An option as written, for comparing: the part before ``=``, ``_`` read as ``-``."""
    return word.split("=", 1)[0].replace("_", "-")


class _ChartArgIndex:
    """The :class:`ChartArg` objects of one workload by position and option word, first in their order: each
    finding :func:`chart_provenance` restates looks its option up here instead of scanning every argument (a
    Kthena config of 20,000 unknown keys made 20,000 KV205 findings, each scanning the 20,000 arguments: 26 CPU
    s; 200,000 keys, a 5 MB file, would have taken most of an hour)."""

    def __init__(self, chart_args: Sequence[ChartArg]) -> None:
        #: (loc, word) -> (order, arg) over every argument; the same over those not from an env expansion;
        #: word -> (order, arg) over those from one
        self.at: dict[tuple[Loc | None, str], tuple[int, ChartArg]] = {}
        self.at_plain: dict[tuple[Loc | None, str], tuple[int, ChartArg]] = {}
        self.env: dict[str, tuple[int, ChartArg]] = {}
        for i, a in enumerate(chart_args):
            for w in {_option_word(w) for w in a.words}:
                self.at.setdefault((a.loc, w), (i, a))
                if a.from_env:
                    self.env.setdefault(w, (i, a))
                else:
                    self.at_plain.setdefault((a.loc, w), (i, a))

    def written(self, option: str, value: Value | None) -> ChartArg | None:
        """The :class:`ChartArg` that wrote the occurrence ``option`` = ``value`` of a setting (matched by
        position, or for one from an env expansion by ``Value.source == "env"``, and by the option or the word as
        written), None when the user wrote it (the values' own extra arguments)."""
        if value is None or value.loc is None:
            return None
        said = {_option_word(option), _option_word(value.raw or "")}
        hits = [self.at_plain.get((value.loc, w)) for w in said]
        if value.source == "env":
            hits += [self.env.get(w) for w in said]
        found = [h for h in hits if h is not None]
        return min(found, key=lambda h: h[0])[1] if found else None

    def option(self, option: str, loc: Loc | None) -> ChartArg | None:
        """The first :class:`ChartArg` at ``loc`` that wrote the option ``option``."""
        hit = self.at.get((loc, _option_word(option)))
        return hit[1] if hit is not None else None


def _shown(value: Value | None) -> str:
    if value is None:
        return ""
    return value.raw if value.raw is not None else str(value.value)


def _written(option: str, value: Value | None) -> str:
    """``--flag value`` as written (a switch's word alone: ``--no-enable-prefix-caching``)."""
    shown = _shown(value)
    return shown if shown.startswith("-") else f"{option} {shown}"


def _by_chart(option: str, value: Value | None, arg: ChartArg) -> str:
    written = _written(option, value)
    if arg.from_env and arg.key is not None:
        # an operator's environment variable that the command expands into the option
        if arg.given:
            return f"{written} from ${{{arg.from_env}}}, which {arg.writer} sets from {arg.key}"
        return f"{written} from ${{{arg.from_env}}}, which {arg.writer} sets to its default as {arg.key} is not set"
    if arg.key is None:
        return f"{arg.writer}'s template always writes {written}"
    if arg.given:
        return f"{arg.writer} writes {written} from {arg.key}"
    return f"{arg.writer} writes {written} because {arg.key} is not set"


def _setting_of(value: Value | None) -> str:
    """``value`` as a values file would set it (``true`` for a switch that turns the setting on)."""
    v = value.value if value is not None else None
    if isinstance(v, bool):
        return "true" if v else "false"
    return _shown(value)


def chart_provenance(findings: Sequence[Finding], chart_args: Sequence[ChartArg]) -> list[Finding]:
    """``findings`` with those about an option a Helm chart (or an operator: :attr:`ChartArg.writer`) wrote
    (``chart_args``, from :attr:`kvlint.types.Workload.chart_args`) restated, so they name the values key
    rather than a flag the user never typed:

    * KV207 (:class:`RepeatedSetting`) with one occurrence the chart's: the message says which values key made
      the chart write it (or that the template always does) and which occurrence the user wrote in the
      values' own list (:attr:`ChartArg.extra`); the fix names the values key to set;
    * KV205/KV206 (:class:`OptionFinding`) on a word the chart wrote: the message says from which key, the fix
      names the key instead of the flag.

    Position, rule and severity are kept; other findings are returned as they are. Pure."""
    out: list[Finding] = []
    index: _ChartArgIndex | None = None
    for f in findings:
        if not isinstance(f, OptionFinding) or not chart_args:
            out.append(f)
            continue
        if index is None:
            index = _ChartArgIndex(chart_args)
        if not isinstance(f, RepeatedSetting):
            out.append(_chart_option(f, index))
            continue
        first = index.written(f.first_option, f.first)
        last = index.written(f.option, f.last)
        if (first is None) == (last is None):  # both the user's (or both the chart's): as the parser said
            out.append(f)
            continue
        uses = f"{f.engine} uses the last one ({_shown(f.last)})"
        if first is not None:
            extra = first.extra
            mine = _written(f.option, f.last)
            said = f"{_by_chart(f.first_option, f.first, first)}, then {extra} gives {mine}"
            if first.key is None:
                fix = (
                    f"remove {mine} from {extra}, or keep it knowing that it overrides the template's "
                    f"{_written(f.first_option, f.first)}"
                )
            elif first.given:
                fix = f"keep one: set {first.key} to the value you mean and remove {mine} from {extra}"
            else:
                fix = f"set {first.key}: {_setting_of(f.last)} in place of {mine} in {extra}"
        else:
            assert last is not None
            extra = last.extra
            mine = _written(f.first_option, f.first)
            said = f"{extra} gives {mine}, then {_by_chart(f.option, f.last, last)}"
            if last.key is None:
                fix = f"remove {mine} from {extra}: the template writes {f.option} after it"
            else:
                fix = f"remove {mine} from {extra} and set {last.key} to the value you mean"
        out.append(
            Finding(
                f.rule,
                f"{f.option} is given twice with different values ({said}); {uses}",
                f.loc,
                fix=fix,
                severity=f.severity,
            )
        )
    return out


def _chart_option(f: OptionFinding, index: _ChartArgIndex) -> Finding:
    """KV205/KV206 ``f`` restated when the chart wrote its option (see :func:`chart_provenance`)."""
    arg = index.option(f.option, f.loc)
    if arg is None:
        return f
    if arg.key is None:
        why = f"{arg.writer}'s template always writes it"
        fix = f"use an image whose engine release has {f.option}"
    elif not arg.given:
        why = f"{arg.writer} writes it because {arg.key} is not set"
        fix = f"set {arg.key}, or use an image whose engine release has {f.option}"
    elif f.rule == "KV206" and arg.as_written is not None:
        why = f"{arg.writer} writes it from {arg.key}: {arg.as_written}, printed as Helm prints a number"
        fix = f'give it in {arg.extra} instead of {arg.key}: ["{f.option}", "{arg.as_written}"]'
    elif f.rule == "KV206":
        why = f"{arg.writer} writes it from {arg.key}"
        fix = f.fix.replace(f"give {f.option} ", f"give {arg.key} ", 1)
        # another wording ("write --max-model-len as a plain integer"): the key, not the flag
        if fix == f.fix:
            fix = f.fix.replace(f.option, arg.key, 1)
    else:
        why = f"{arg.writer} writes it from {arg.key}"
        fix = f"remove {arg.key}, or use an image whose engine release has {f.option}"
    return Finding(f.rule, f"{f.message} ({arg.why or why})", f.loc, fix=arg.fix or fix, severity=f.severity)


_T = TypeVar("_T")


class ConfigReads(Generic[_T]):
    """What an engine's ``--config`` reader made of each file (or the error it raised), by a key that holds the
    file's text: the containers of a manifest that mount one ConfigMap read it once (PyYAML's pure-Python composer
    takes about 7 to 10 CPU s per MiB of a flow list; eleven containers mounting a 200 kB config took 35 CPU s, each
    reading it again). Emptied at ``max_entries`` entries or ``max_chars`` characters of text read. One per reader
    (:data:`kvlint.engines.vllm._CONFIG_READS`, :data:`kvlint.engines.sglang._CONFIG_READS`)."""

    def __init__(self, max_entries: int = 64, max_chars: int = 16 << 20) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._done: dict[Hashable, _T | Exception] = {}
        self._chars = 0

    def read(
        self, key: Hashable, text: str, reader: Callable[[], _T], errors: tuple[type[Exception], ...]
    ) -> _T | Exception:
        """``reader()``'s result for ``key`` (``text`` among its parts), or the ``errors`` exception it raised:
        from an earlier call when there is one, else read now and kept."""
        done = self._done.get(key)
        if done is None:
            try:
                done = reader()
            except errors as exc:
                done = exc
            if len(self._done) >= self.max_entries or self._chars + len(text) > self.max_chars:
                self.clear()
            self._done[key] = done
            self._chars += len(text)
        return done

    def clear(self) -> None:
        """Forget every file read."""
        self._done.clear()
        self._chars = 0
