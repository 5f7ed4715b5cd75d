"""vLLM command lines -> :class:`~kvlint.types.ServingConfig`.

Restates how vLLM's ``FlexibleArgumentParser`` (argparse) reads ``vllm serve``/``api_server`` arguments
(docs/engine-memory-model.md §1.1, §1.12; vllm@0.33.0:vllm/utils/argparse_utils.py::FlexibleArgumentParser.parse_args,
vllm/engine/arg_utils.py::EngineArgs.add_cli_args):

* ``--flag value`` and ``--flag=value``; underscores in long options are dashes (``--max_model_len``);
  unique prefixes of long options are accepted (argparse ``allow_abbrev``); the last occurrence wins.
* boolean options use ``BooleanOptionalAction`` (``--enable-prefix-caching`` / ``--no-enable-prefix-caching``);
  from 0.10 they take no value: ``--enforce-eager=true`` and ``--enforce-eager true`` are KV206 (older releases
  had ``StoreBoolean`` options reading an optional ``true``/``false``);
* short aliases ``-tp``, ``-pp``, ``-dp``, ``-q``, ``-O`` (``--compilation-config`` ≤0.11, where ``-O.KEY=V`` is a
  dotted key of it from 0.9.2 and, from 0.9.2, an attached ``-OVALUE`` its ``level``; in 0.6.6 - 0.8.5 its value is a
  Python literal, ``ast.literal_eval``; ``--optimization-level`` ≥0.12 as ``-O3``/``-O=3``/any attached ``-OVALUE``
  (but ``-O.KEY`` in 0.12.x, still rewritten to ``-cc.KEY``)
  (a value other than a level 0-3 refused by pydantic, KV206) or ``-O`` before a word 0-3, any other ``-O`` being
  unrecognised there, KV205), ``-cc``, ``-ep``, ``-dcp`` ...;
* human-readable integers for ``--max-model-len``, ``--max-num-batched-tokens``, ``--kv-cache-memory-bytes``
  (``32k`` = 32000, ``32K`` = 32768), ``-1``/``auto`` for ``--max-model-len`` from 0.14;
* ``--config FILE.yaml`` whose keys are option names (CLI > config file > defaults);
* dotted JSON options ``--compilation-config.level=3`` (≥0.9.2; KV206 before).

The option table comes from :mod:`kvlint.engines.vllm_flags_data` (generated from 18 vLLM wheels).
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import yaml

from kvlint.engines import vllm_flags_data as data
from kvlint.engines import vllm_grpc_data as grpc_data
from kvlint.engines.options import (
    LAYOUT_DESTS,
    QUOTED_SOURCE,
    SPEC_SHORTHANDS,
    Collector,
    ConfigReads,
    bare_expansion,
    bare_expansion_unread,
    command_substitution,
    human_readable_int,
    json_too_deep,
    kubernetes_reference,
    literal_dollar,
    literal_dollar_said,
    parse_json_or_str,
    prefixed,
    unknown_from_config_file,
    unresolved_why,
    unseen_expansion,
    version_tuple,
)
from kvlint.engines.shell import UNRESOLVED_RE, json_braces, unresolved
from kvlint.engines.vllm_json import JSON_PARSERS, OPTIONAL_TYPE, expand_human_readable, refusal, unset_by
from kvlint.source import LDict, Loc
from kvlint.types import Finding, OptionFinding, ServingConfig, Value
from kvlint.values import digits, lax_int

__all__ = ["parse_vllm_argv", "known_options", "option_versions", "INT_DESTS", "FLOAT_DESTS"]

#: dests whose value is an ``int`` (argparse ``type=int``) in every release.
INT_DESTS = frozenset(
    {
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "data_parallel_size_local",
        "data_parallel_start_rank",
        "data_parallel_rank",
        "decode_context_parallel_size",
        "prefill_context_parallel_size",
        "max_num_seqs",
        "block_size",
        "num_gpu_blocks_override",
        "max_seq_len_to_capture",
        "max_loras",
        "max_lora_rank",
        "max_cpu_loras",
        "port",
        "seed",
        "max_logprobs",
        "api_server_count",
        "nnodes",
        "node_rank",
        "max_parallel_loading_workers",
        "num_scheduler_steps",
        "max_num_partial_prefills",
        "max_long_partial_prefills",
        "long_prefill_token_threshold",
        "num_lookahead_slots",
        "mamba_block_size",
        "max_num_batched_tokens",
        "max_model_len",
        "kv_cache_memory_bytes",
        "max_num_scheduled_tokens",
        "spec_tokens",
    }
)
#: dests whose value is a ``float``.
FLOAT_DESTS = frozenset({"gpu_memory_utilization", "swap_space", "cpu_offload_gb", "kv_offloading_size"})
#: The float options that are sizes in GiB, and the bound on them: a byte count that fits in 64 bits (2^63 B).
_GIB_DESTS = frozenset({"swap_space", "cpu_offload_gb", "kv_offloading_size"})
_MAX_GIB = float(2**33)
#: dests holding JSON (or a bare string for some, e.g. ``-O 3``).
JSON_DESTS = frozenset(
    {
        "speculative_config",
        "hf_overrides",
        "compilation_config",
        "limit_mm_per_prompt",
        "rope_scaling",
        "kv_transfer_config",
        "kv_events_config",
        "override_generation_config",
        "model_loader_extra_config",
        "mm_processor_kwargs",
        "override_pooler_config",
        "pooler_config",
        "attention_config",
        "additional_config",
    }
)
#: dests declared ``nargs="+"`` (lists) in vLLM. Not ``--allowed-origins``/``--allowed-methods``/
#: ``--allowed-headers``: lists of strings, but one argument read with ``type=json.loads`` in every sampled release
#: (``vllm@0.4.3`` - ``0.9.2:vllm/entrypoints/openai/cli_args.py::make_arg_parser``; from 0.10.1
#: ``FrontendArgs.add_cli_args`` sets ``type = json.loads`` and deletes get_kwargs's ``nargs``, likewise in
#: ``vllm@0.34.0:vllm/entrypoints/common/cli_args.py``), so :data:`kvlint.engines.vllm_json_data.JSON_PARSERS`
#: checks their value (KV206 for ``--allowed-origins https://a.example``).
MULTI_DESTS = frozenset(
    {
        "served_model_name",
        "lora_modules",
        "prompt_adapters",
        "middleware",
        "ignore_patterns",
        "cuda_graph_sizes",
        "cudagraph_capture_sizes",
        "api_key",
        "tool_server",
    }
)
#: Options read with ``json.loads`` whose value vLLM uses as a list of strings (CORS settings, see MULTI_DESTS).
_JSON_LIST_OPTIONS = frozenset({"--allowed-origins", "--allowed-methods", "--allowed-headers"})


def _json_list_fix(option: str, raw: str) -> str:
    """The remedy for an unreadable ``--allowed-origins``-like value: a JSON list of strings, the words given
    (comma- or space-separated) when the value is not bracketed, in single quotes for a shell."""
    words = [w for w in re.split(r"[,\s]+", raw) if w] if raw[:1] != "[" else []
    example = json.dumps(words or ["*"])
    return f"give {option} a JSON list of strings, in single quotes in a shell command ('{example}')"


#: The long option of each dest whose value vLLM reads as JSON, for its short aliases (``-O``, ``-cc``, ``-sc``).
_JSON_OPTION_OF_DEST = {data.OPTIONS[o][0]: o for o in JSON_PARSERS if o in data.OPTIONS}
_SPEC_EXAMPLE = '{"method": "ngram", "num_speculative_tokens": 4}'


#: The short option strings of each dest, in the generated table's order, with the bitmask of the sampled releases
#: that have each (``-O``, ``-cc`` for ``compilation_config``): what :func:`_argparse_name` joins to the long one.
#: Built once from :data:`kvlint.engines.vllm_flags_data.OPTIONS` (a JSON option's value was checked in each
#: candidate release with the whole table scanned for its aliases: 17% of a webhook review's command reading).
def _short_of_dest() -> dict[str, list[tuple[str, int]]]:
    out: dict[str, list[tuple[str, int]]] = {}
    for option, (dest, _, mask) in data.OPTIONS.items():
        if not option.startswith("--"):
            out.setdefault(dest, []).append((option, mask))
    return out


_SHORT_OF_DEST = _short_of_dest()


def _argparse_name(long: str, i: int) -> str:
    """How argparse names the action of ``long`` in sampled release ``i`` in an error: its option strings joined by
    "/" (``_get_action_name``), the long one first as vLLM declares them (``"--speculative-config", "-sc"``)."""
    aliases = [o for o, m in _SHORT_OF_DEST.get(data.OPTIONS[long][0], ()) if m >> i & 1]
    return "/".join([long, *aliases])


#: The first sampled release whose FlexibleArgumentParser rewrites an attached ``-OVALUE`` as ``-O.level=VALUE``
#: (vllm@0.9.2:vllm/utils/__init__.py; 0.8.5's ``len(arg) == 2`` test never matched, so argparse read VALUE as the
#: whole ``--compilation-config``).
_O_LEVEL_FROM = data.VERSIONS.index("0.9.2")
#: The first sampled release whose dataclass JSON options expand bare ``1k``/``80G`` (``dataclass_hr``, 0.20.0)
_HR_JSON_FROM = data.VERSIONS.index("0.20.0")
#: The sampled releases (first, last index) whose ``--compilation-config``/``-O`` is ``CompilationConfig.from_cli``
#: with ``ast.literal_eval`` (vllm@0.6.6.post1, @0.7.3, @0.8.5 ``vllm/config.py``; 0.9.2 reads JSON)
_CC_LITERAL_EVAL = (data.VERSIONS.index("0.6.6.post1"), data.VERSIONS.index("0.8.5"))
_HR_ALWAYS_CANDIDATES = ("max_model_len", "max_num_batched_tokens", "kv_cache_memory_bytes")
_SAMPLED = [version_tuple(v) or (0,) for v in data.VERSIONS]
#: Options whose first release lies between two sampled releases and was read in the wheels, with that release:
#: :func:`_version_mask` is generous between samples, so without this a release before it would accept them.
#: ``--runner`` and ``--convert``: ``model_group.add_argument("--runner", ...)`` / ``("--convert", ...)`` in
#: ``vllm@0.10.1:vllm/engine/arg_utils.py``, absent from ``vllm@0.10.0`` (which argparse stops with
#: "unrecognized arguments").
OPTION_FIRST_RELEASE: dict[str, tuple[int, ...]] = {"--runner": (0, 10, 1), "--convert": (0, 10, 1)}


def _version_mask(version: str | None) -> tuple[int, list[int]]:
    """Bitmask of sampled releases whose options count as valid for ``version``, and their indices.

    Unknown version: all releases (the union). Otherwise the nearest sampled release at or below and
    the nearest at or above (generous: a flag added between two samples is not reported).
    """
    vt = version_tuple(version)
    n = len(data.VERSIONS)
    if vt is None:
        return (1 << n) - 1, list(range(n))
    pos = bisect.bisect_left(_SAMPLED, vt)
    idx: set[int] = set()
    if pos < n and _SAMPLED[pos] == vt:
        idx.add(pos)
    else:
        if pos > 0:
            idx.add(pos - 1)
        if pos < n:
            idx.add(pos)
    mask = 0
    for i in idx:
        mask |= 1 << i
    return mask, sorted(idx)


def known_options(version: str | None = None) -> dict[str, tuple[str, str]]:
    """Option strings valid for ``version`` (None = any release) -> ``(dest, kind)``.

    kind is ``value`` | ``bool`` (also accepts ``--no-X``) | ``flag`` (store_true) | ``multi`` | ``optvalue``.
    Returns a fresh dict each call (the table itself is built once per release, see :func:`_tables`).
    SOURCE: :mod:`kvlint.engines.vllm_flags_data` (vLLM wheels 0.4.3 … 0.34.0).
    """
    return dict(_tables(version)[0])


def _build_known(mask: int) -> dict[str, tuple[str, str]]:
    """The option table for the releases in ``mask`` (see :func:`known_options`)."""
    out = {
        opt: (dest, "multi" if dest in MULTI_DESTS and kind == "value" else kind)
        for opt, (dest, kind, m) in data.OPTIONS.items()
        if m & mask
    }
    if "--optimization-level" in out:
        out["-O"] = ("optimization_level", "value")
    # ``--config`` is handled by FlexibleArgumentParser before argparse in every ``vllm serve`` release.
    out.setdefault("--config", ("config", "value"))
    if "-O" not in out and "--optimization-level" not in out:
        out["-O"] = ("compilation_config", "value")
    return out


_Tables = tuple[dict[str, tuple[str, str]], list[int], frozenset[str], list[str]]
_TABLES: dict[tuple[int, frozenset[str], bool], _Tables] = {}

#: The sampled releases whose gRPC server's parser :mod:`kvlint.engines.vllm_grpc_data` read, as a mask.
_GRPC_MASK = sum(1 << data.VERSIONS.index(v) for v in grpc_data.GRPC_RELEASES)
#: What vLLM's gRPC server adds to the engine's options itself (``vllm@0.14.0`` - ``0.34.0``
#: ``vllm/entrypoints/grpc_server.py::main``, ``launchers/grpc_server.py::main`` from 0.33.0): ``--host`` and
#: ``--port``; and ``--config FILE``, which ``FlexibleArgumentParser.parse_args`` replaces by the file's options
#: before argparse reads them, whichever parser it is.
_GRPC_OWN = frozenset({"--host", "--port", "--config"})


def _frontend_only(mask: int) -> set[str]:
    """The options of the OpenAI server's parser that vLLM's gRPC server (``python -m
    vllm.entrypoints.grpc_server``) does not take on the releases of ``mask``: an option is dropped when each
    sampled release of ``mask`` that ships the gRPC server and has it registers it outside
    ``AsyncEngineArgs.add_cli_args`` (:data:`kvlint.engines.vllm_grpc_data.FRONTEND_ONLY`); an option the
    engine's own parser took on one of them is kept (generous, as :func:`_version_mask` is). Nothing is dropped
    for releases before the gRPC server (KV206 says it is missing there)."""
    on = mask & _GRPC_MASK
    if not on:
        return set()
    out = set()
    for option, only in grpc_data.FRONTEND_ONLY.items():
        present = data.OPTIONS[option][2] & on
        if present and not present & ~only and option not in _GRPC_OWN:
            out.add(option)
    return out


def _tables(version: str | None, grpc: bool = False) -> _Tables:
    """Per-release option tables, memoised by release mask, the :data:`OPTION_FIRST_RELEASE` options the
    release predates and ``grpc`` (pure performance: the tables depend only on those, which derive from
    ``version``). ``grpc``: the table of vLLM's gRPC server, without the OpenAI server's own options
    (:func:`_frontend_only`).

    Returns ``(known, indices, bools, long_names)``: the :func:`known_options` table, the sampled-release
    indices, the ``bool`` long options (accepting ``--no-X``) and the sorted long option names including
    the ``--no-X`` forms. Callers must not mutate them.
    """
    mask, indices = _version_mask(version)
    vt = version_tuple(version)
    later = frozenset(o for o, first in OPTION_FIRST_RELEASE.items() if vt is not None and vt < first)
    hit = _TABLES.get((mask, later, grpc))
    if hit is None:
        known = _build_known(mask)
        for option in later | (_frontend_only(mask) if grpc else set()):
            known.pop(option, None)
        bools = frozenset(o for o, (_, k) in known.items() if k == "bool" and o.startswith("--"))
        long_names = sorted([o for o in known if o.startswith("--")] + ["--no-" + o[2:] for o in bools])
        hit = _TABLES[(mask, later, grpc)] = (known, indices, bools, long_names)
    return hit[0], list(indices), hit[2], hit[3]


def _retired_note(option: str) -> str:
    """For KV205's spelling suggestion when the release is not known (every release's options are candidates): the
    releases that accept ``option`` (``vLLM 0.4.3 to 0.9.2`` for ``--device``) when the newest release kvlint knows
    refuses it, so that "did you mean --device?" does not send an unpinned, current image to an option it refuses
    too; empty otherwise."""
    span = option_versions(option)
    if span is None or span[1] == data.VERSIONS[-1]:
        return ""
    return f"vLLM {span[0]} to {span[1]}"


def option_versions(option: str) -> tuple[str, str] | None:
    """First and last sampled vLLM release that accepts ``option``, or None if none does; the first is the release
    read in the wheels when :data:`OPTION_FIRST_RELEASE` has it (``0.10.1`` for ``--runner``)."""
    entry = data.OPTIONS.get(option)
    if not entry:
        return None
    mask = entry[2]
    span = _SPANS.get(mask)
    if span is None:
        present = [v for i, v in enumerate(data.VERSIONS) if mask >> i & 1]
        span = _SPANS[mask] = (present[0], present[-1]) if present else None
    first = OPTION_FIRST_RELEASE.get(option)
    if span is not None and first is not None:
        return ".".join(map(str, first)), span[1]
    return span


#: :func:`option_versions` by release mask (a pure function of the mask; few distinct masks exist).
_SPANS: dict[int, tuple[str, str] | None] = {}


def option_choices(dest: str, version: str | None) -> set[str] | None:
    """The values argparse accepts for option ``dest`` (``kv_cache_dtype``) in vLLM ``version`` (None: any sampled
    release), from the flag tables read in the wheels (:mod:`kvlint.engines.vllm_flags_data`); None when the
    option takes any value. What KV206 checks a typed value against."""
    return _choices(dest, _tables(version)[1])


def _choices(dest: str, indices: list[int]) -> set[str] | None:
    per = data.CHOICES.get(dest)
    if not per:
        return None
    out: set[str] = set()
    for i in indices:
        if not per[i]:
            return None  # open set in one of the candidate releases
        out.update(per[i])
    return out or None


#: First vLLM release whose ``PoolerConfig`` has ``seq_pooling_type``/``tok_pooling_type`` beside ``pooling_type``
#: and refuses both set (``vllm@0.14.0`` … ``vllm@0.34.0:vllm/config/pooler.py`` ``PoolerConfig.__post_init__``).
POOLING_TYPE_SPLIT_FROM = (0, 14)


def _pooling_type_clash(config: dict[str, Any], version: str | None) -> str | None:
    """The key (``seq_pooling_type`` or ``tok_pooling_type``) a ``--pooler-config`` object sets beside
    ``pooling_type``, which vLLM 0.14.0 and later refuse ("Cannot set both `pooling_type` and
    `seq_pooling_type`"), else None (a null value is unset; releases before 0.14.0 have one ``pooling_type``;
    an unknown release is read as the newest, as elsewhere)."""
    v = version_tuple(version)
    if v is not None and v < POOLING_TYPE_SPLIT_FROM:
        return None
    if config.get("pooling_type") is None:
        return None
    return next((k for k in ("seq_pooling_type", "tok_pooling_type") if config.get(k) is not None), None)


#: Sizes vLLM rejects when zero or negative (argparse accepts them; EngineArgs/config validation fails).
_POSITIVE_INT_DESTS = frozenset(
    {
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "max_model_len",
        "max_num_seqs",
        "max_num_batched_tokens",
        "block_size",
        "num_gpu_blocks_override",
    }
)
#: Why a positive value is required, where the engine's own words say more than "positive".
_POSITIVE_WHY = {
    "num_gpu_blocks_override": (
        ": vLLM uses the override as the number of KV cache blocks, and the V1 engine's BlockPool asserts"
        " num_gpu_blocks > 0 at start-up (vllm/v1/core/block_pool.py, BlockPool.__init__); the V0 engine stops"
        " with 'No available memory for the cache blocks'"
    ),
}
#: The largest value of an integer count vLLM can address, and why, refused (KV206) before anything is sized
#: with it: a KV cache block id is int32 in the V1 model runner's block table (vllm
#: ``vllm/v1/worker/block_table.py``, ``BlockTable.__init__``: ``torch.int32``; read at main, 2026, and in the V1
#: runner's first releases), so an override past 2^31 - 1 blocks names blocks no table can hold. Before,
#: ``--num-gpu-blocks-override 1000000000000`` sized a KV cache of 10^12 blocks that the fit check found roomy,
#: and no rule said anything. (``--max-num-batched-tokens`` has no ceiling here: KV209 prices its buffers against
#: the GPU, with the arithmetic, up to the 2^63 - 1 any integer setting is read to.)
_INT_CEILINGS = {
    "num_gpu_blocks_override": (2**31 - 1, "vLLM's block tables hold KV cache block ids as int32"),
}


def _human_readable(dest: str, indices: list[int], version: str | None) -> bool:
    if version is None:
        return dest in _HR_ALWAYS_CANDIDATES
    return any(dest in data.HUMAN_READABLE[i] for i in indices)


def _auto_max_len(indices: list[int], version: str | None) -> bool:
    return version is None or any(data.MAX_MODEL_LEN_AUTO[i] for i in indices)


class _Parser:
    def __init__(
        self, version: str | None, env: Mapping[str, str], runtime_template: bool = False, grpc: str = ""
    ) -> None:
        self.version = version
        self.where = f"vLLM {version}" if version else "vLLM (any release)"
        self.known, self.indices, self.bools, self.long_names = _tables(version, bool(grpc))
        #: the module of vLLM's gRPC server the command runs (``vllm.entrypoints.grpc_server``, from 0.30.0 also
        #: ``vllm.entrypoints.launchers.grpc_server``), whose parser lacks the OpenAI server's own options
        #: (:func:`_frontend_only`); "" when it runs another entrypoint
        self.grpc = grpc
        self.col = Collector("vLLM", layout_from_service=runtime_template)
        self.model: Value | None = None
        self.env = env
        #: the first bare word of a script kvlint cannot expand (``$ARGS``, ``${EXTRA_ARGS}``), which the shell splits
        #: into any number of words, options among them, and where: the command's arguments are not all read
        self.unseen: tuple[str, Loc | None] | None = None

    # -- option resolution -----------------------------------------------------------------------
    def resolve(self, opt: str) -> tuple[str, str, str, bool] | None:
        """``(canonical option, dest, kind, negated)`` for an option string, or None when unknown."""
        if opt.startswith("--"):
            opt = "--" + opt[2:].replace("_", "-")
        if opt in self.known:
            dest, kind = self.known[opt]
            return opt, dest, kind, False
        if opt.startswith("--no-") and "--" + opt[5:] in self.bools:
            base = "--" + opt[5:]
            return base, self.known[base][0], "bool", True
        if opt.startswith("--") and len(opt) > 3:
            cands = prefixed(self.long_names, opt)
            if len(cands) == 1:
                return self.resolve(cands[0])
            if len(cands) > 1:
                return None
        return None

    def _openai_kind(self, opt: str) -> str | None:
        """The kind of ``opt`` in the OpenAI server's parser of this release (exact spelling, ``_`` read as
        ``-``, ``--no-X`` of a boolean), or None when that parser lacks it too."""
        full = _tables(self.version)[0]
        name = "--" + opt[2:].replace("_", "-") if opt.startswith("--") else opt
        if name in full:
            return full[name][1]
        if name.startswith("--no-") and full.get("--" + name[5:], ("", ""))[1] == "bool":
            return "flag"
        return None

    def _openai_takes_value(self, opt: str, following: str) -> bool:
        """``opt`` (an OpenAI-server option given to the gRPC server) reads ``following`` as its value."""
        kind = self._openai_kind(opt)
        return kind in ("value", "multi", "optvalue") and not following.strip().startswith("-")

    def _openai_only(self, opt: str, explicit: str | None, following: str | None, loc: Loc | None) -> bool:
        """KV205 (error) for an option of vLLM's OpenAI server given to its gRPC server, and True; False when
        the OpenAI server lacks ``opt`` too (the caller reports it as any unknown option). The gRPC server's
        parser is ``--host``, ``--port`` and ``AsyncEngineArgs.add_cli_args`` (vllm@0.14.0 - 0.34.0
        ``vllm/entrypoints/grpc_server.py::main``), so argparse stops the container with "unrecognized
        arguments" on ``--api-key``, ``--chat-template``, ``--enable-auto-tool-choice``, ``--uvicorn-log-level``
        ...; the table is :mod:`kvlint.engines.vllm_grpc_data`, generated from the wheels."""
        if self._openai_kind(opt) is None:
            return False
        value = (
            explicit
            if explicit is not None
            else following
            if following and self._openai_takes_value(opt, following)
            else None
        )
        self.col.unknown(
            opt,
            loc,
            f"{self.where} gRPC server",
            [],
            extra=(
                f" (an option of vLLM's OpenAI-compatible HTTP server; python -m {self.grpc} "
                "takes --host, --port and the engine's options only, and argparse stops it with 'unrecognized "
                "arguments')"
            ),
            value=value,
        )
        return True

    # -- values ----------------------------------------------------------------------------------
    def convert(self, option: str, dest: str, raw: str, loc: Loc | None) -> tuple[bool, Any]:
        """Convert ``raw`` for ``dest``; on failure emit KV206 and return ``(False, None)``."""
        if dest == "max_model_len" and raw.strip().lower() in ("-1", "auto"):
            if _auto_max_len(self.indices, self.version):
                return True, -1
            self.col.invalid(option, raw, loc, f"'-1'/'auto' is accepted from vLLM 0.14, not by {self.where}")
            return False, None
        if dest in INT_DESTS:
            hr = _human_readable(dest, self.indices, self.version)
            try:
                val = human_readable_int(raw) if hr else int(raw.strip())
            except ValueError as exc:
                why = (
                    str(exc) if "decimal" in str(exc) or "plausible" in str(exc) else "an integer is required"
                )
                if not hr and raw.strip()[-1:].lower() in "kmgt":
                    why += f" ({self.where} does not accept k/K suffixes for {option})"
                self.col.invalid(option, raw, loc, why, fix=f"write {option} as a plain integer")
                return False, None
            choices = _choices(dest, self.indices)
            if choices and str(val) not in choices:
                self.col.invalid(
                    option, raw, loc, f"{self.where} accepts {', '.join(sorted(choices, key=int))}"
                )
                return False, None
            if dest in _POSITIVE_INT_DESTS and val < 1:
                self.col.invalid(
                    option, raw, loc, "a positive integer is required" + _POSITIVE_WHY.get(dest, "")
                )
                return False, None
            ceiling = _INT_CEILINGS.get(dest)
            if ceiling is not None and val > ceiling[0]:
                self.col.invalid(
                    option,
                    raw,
                    loc,
                    f"implausibly large: at most {ceiling[0]:,} ({ceiling[1]})",
                    fix=f"give {option} a realistic value",
                )
                return False, None
            return True, val
        if dest in FLOAT_DESTS:
            try:
                fval = float(raw)
            except ValueError:
                self.col.invalid(option, raw, loc, "a number is required (e.g. 0.9)")
                return False, None
            if fval != fval or fval in (float("inf"), float("-inf")):
                self.col.invalid(option, raw, loc, "a finite number is required (e.g. 0.9)")
                return False, None
            if dest in _GIB_DESTS and abs(fval) >= _MAX_GIB:
                # vLLM turns the GiB into bytes, int(value * 1024**3): 1e308 GiB is no integer (OverflowError),
                # and kvlint's own host-memory arithmetic failed on it, hidden in a KV503 "could not finish"
                self.col.invalid(
                    option, raw, loc, f"a size below {_MAX_GIB:.0f} GiB (2^63 bytes) is required"
                )
                return False, None
            return True, fval
        if dest in ("dtype", "kv_cache_dtype", "runner", "convert", "task"):
            # argparse choices read in the wheels (vllm_flags_data.CHOICES): --task's TaskOption (0.6.6-0.12.0),
            # --runner's RunnerOption and --convert's ConvertOption (0.10.1+), Literal fields of ModelConfig
            choices = _choices(dest, self.indices)
            if choices and raw not in choices:
                self.col.invalid(option, raw, loc, f"{self.where} accepts {', '.join(sorted(choices))}")
                return False, None
            return True, raw
        if dest == "optimization_level":
            return self._optimization_level(option, raw, loc)
        if dest == "compilation_config" and self._literal_eval_cc():
            return self._compilation_config_literal(option, raw, loc)
        if not self._json_readable(option, dest, raw, loc):
            return False, None
        if dest == "speculative_config":
            return self._speculative_shape(option, raw, loc)
        if dest in JSON_DESTS:
            kinds = self._json_kinds(dest)
            if any(unset_by(k, raw, opt) for k, opt in kinds):
                return True, None  # optional_type / nullable_kvs: the option is unset, not the text ""/"None"
            parsed: Any = parse_json_or_str(raw)
            if parsed is raw and any(k and k.startswith("dataclass_hr:") for k, _ in kinds):
                # 0.20.0 on: parse_dataclass expands bare 80G / 1k before validate_json; read what vLLM reads
                expanded, _ = expand_human_readable(raw)
                if expanded is not None:
                    parsed = parse_json_or_str(expanded)
            if parsed is raw and json_too_deep(raw):
                self.col.invalid(
                    option,
                    raw,
                    loc,
                    "the JSON is nested too deeply for Python's json module, which vLLM uses, to read",
                )
                return False, None
            if dest == "compilation_config" and isinstance(parsed, str) and digits(parsed) is not None:
                parsed = {"level": digits(parsed)}
            if dest == "compilation_config" and not self._cc_ints_readable(option, raw, parsed, loc):
                return False, None
            if dest == "pooler_config" and isinstance(parsed, dict):
                clash = _pooling_type_clash(parsed, self.version)
                if clash is not None:
                    self.col.invalid(
                        option,
                        raw,
                        loc,
                        f'{self.where} stops with "Cannot set both `pooling_type` and `{clash}`" '
                        "(PoolerConfig.__post_init__)",
                        fix=f"give either pooling_type or {clash} (pooling_type is resolved to seq_pooling_type or "
                        "tok_pooling_type by its kind)",
                    )
                    return False, None
            return True, parsed
        return True, raw

    def _optimization_level(self, option: str, raw: str, loc: Loc | None) -> tuple[bool, Any]:
        """``--optimization-level`` (0.12.0 on; ``-O3``, ``-O=3``, ``-OVALUE`` and ``-O N`` are rewritten to it by
        ``FlexibleArgumentParser.parse_args``, vllm@0.12.0 and @0.19.0 ``vllm/utils/argparse_utils.py``). Its field
        is ``VllmConfig.optimization_level: OptimizationLevel``, an ``IntEnum`` of 0 - 3 (``vllm/config/vllm.py``)
        that ``get_kwargs`` gives argparse as ``type=str`` (not a builtin type), so argparse takes any word and
        pydantic (``>=2.12``, lax mode) checks it when the engine config is built: an integer 0 - 3 as text
        (:func:`kvlint.values.lax_int`: ``"3"``, ``" 3"``, ``"3.0"``) passes, anything else stops vLLM with "1
        validation error for VllmConfig / optimization_level / Input should be 0, 1, 2 or 3". ``-O.mode=3`` (a
        compilation-config key up to 0.12.x: :meth:`_o_dot_is_cc`) is from 0.13.0 ``--optimization-level .mode=3``, and ``-Odecode``
        ``--optimization-level decode``: both refused, KV206."""
        level = lax_int(raw)
        mask = data.OPTIONS["--optimization-level"][2]
        every = bool(self.indices) and all(mask >> k & 1 for k in self.indices)
        if (level is not None and 0 <= level <= 3) or not every:
            # argparse's text, as vLLM holds it until pydantic reads it; under a release that may predate the option
            # (unknown: -O may be --compilation-config's alias) KV205's span warning speaks
            return True, raw
        why = (
            f"{self.where} stops before start-up with '1 validation error for VllmConfig: optimization_level: Input "
            "should be 0, 1, 2 or 3' (--optimization-level is an OptimizationLevel, which argparse passes on as text)"
        )
        fix = "give -O a level 0-3 (-O3, --optimization-level 3)"
        if option == "-O" and raw.startswith("."):
            why += (
                f"; -O{raw[:40]} is read as --optimization-level {raw[:40]}: from vLLM 0.13 -O is the optimization "
                "level, no longer --compilation-config's alias with dotted keys"
            )
            fix = f"write -cc{raw[:60]} (--compilation-config{raw[:60]})"
        self.col.invalid(option, raw, loc, why, fix=fix)
        return False, None

    def _dotted_before_092(
        self, opt: str, sub_key: str, explicit: str | None, canon: str, dest: str, loc: Loc | None
    ) -> None:
        """KV206 for a dotted key (``-O.level=3``, ``--compilation-config.level=3``) in a release before 0.9.2
        (:meth:`_no_dotted_keys`): argparse reads ``-O.level=3`` as ``-O`` with the attached value ``.level=3``, which
        ``CompilationConfig.from_cli``'s ``ast.literal_eval`` refuses with SyntaxError, not caught by argparse (vLLM
        stops with a traceback); ``--compilation-config.level=3`` names no option ("unrecognized arguments")."""
        shown = f"{opt}.{sub_key}" + (f"={explicit}" if explicit is not None else "")
        if opt == "-O" and dest == "compilation_config":
            why = (
                f"{self.where} has no dotted keys (0.9.2 on): argparse reads {shown[:60]} as -O with the value "
                f"{shown[2:][:60]!r}, and CompilationConfig.from_cli's ast.literal_eval raises SyntaxError on it, which "
                "argparse does not catch, so vLLM stops with a traceback"
            )
        else:
            why = (
                f"{self.where} has no dotted keys (0.9.2 on): argparse stops with 'unrecognized arguments: "
                f"{shown[:60]}'"
            )
        key = sub_key.split(".")[-1]
        value = explicit if explicit is not None else "..."
        if dest == "compilation_config" and self._literal_eval_cc():
            fix = (
                f"write the whole config: {canon} \"{{'{key[:40]}': {value[:40]}}}\" (a Python dict literal)"
            )
        else:
            fix = f"write the whole config as JSON: {canon} '{{\"{key[:40]}\": {value[:40]}}}'"
        self.col.invalid(canon, shown, loc, why, fix=fix)

    def _cc_ints_readable(self, option: str, raw: str, parsed: Any, loc: Loc | None) -> bool:
        """False, after KV206, when a compilation config gives one of its integer fields that kvlint sizes the CUDA
        graphs from (``CompilationConfig.max_cudagraph_capture_size: int``, ``cudagraph_capture_sizes: list[int]``,
        vllm@0.20.0 ``vllm/config/compilation.py``; ``List[int]`` in 0.6.6 - 0.8.5 ``vllm/config.py``) a string that is
        no integer (``"1k"``, ``"8K"``): pydantic's lax mode reads ``"512"`` as 512 but refuses other text ("Input
        should be a valid integer, unable to parse string as an integer"), and vLLM stops before start-up. From
        0.20.0 vLLM expands a bare ``1k`` written outside JSON strings (``_expand_json_human_readable_numbers``), never
        a quoted one. Other fields are not checked here."""
        if not isinstance(parsed, dict):
            return True
        bad: list[str] = []
        top = parsed.get("max_cudagraph_capture_size")
        if isinstance(top, str) and lax_int(top) is None:
            bad.append(f'"max_cudagraph_capture_size": {json.dumps(top)[:30]}')
        sizes = parsed.get("cudagraph_capture_sizes")
        if isinstance(sizes, list):
            bad += [
                f'"cudagraph_capture_sizes" entry {json.dumps(x)[:30]}'
                for x in sizes
                if isinstance(x, str) and lax_int(x) is None
            ][:3]
        if not bad:
            return True
        expands = all(k >= _HR_JSON_FROM for k in self.indices) if self.indices else False
        self.col.invalid(
            option,
            raw,
            loc,
            f"{self.where} stops before start-up: pydantic refuses the string in {', '.join(bad)} for an integer "
            "field ('Input should be a valid integer, unable to parse string as an integer')",
            fix=(
                "write the number without quotes (1k is expanded when not quoted) or as digits"
                if expands
                else "write the number as digits, without quotes (1024)"
            ),
        )
        return False

    def _literal_eval_cc(self) -> bool:
        """Whether every candidate release reads ``--compilation-config``/``-O`` with ``CompilationConfig.from_cli``
        and ``ast.literal_eval`` (the 0.6.6 - 0.8.5 wheels; JSON parsing from 0.9.2, none before 0.6.6)."""
        mask = data.OPTIONS["--compilation-config"][2]
        having = [k for k in self.indices if mask >> k & 1]
        return bool(having) and all(_CC_LITERAL_EVAL[0] <= k <= _CC_LITERAL_EVAL[1] for k in having)

    def _o_dot_is_cc(self) -> bool:
        """Whether the release is 0.12.x, whose ``FlexibleArgumentParser.parse_args`` still rewrites a dotted ``-O.KEY``
        to ``-cc.KEY`` (a key of ``--compilation-config``, with a deprecation warning: "The -O.* dotted syntax for
        --compilation-config is deprecated and will be removed in v0.13.0", vllm@0.12.0 ``vllm/utils/
        argparse_utils.py``) although ``-O`` is otherwise ``--optimization-level`` there; from 0.13.0 (vllm@0.13.0,
        @0.19.0, @0.34.0 ``argparse_utils.py``) ``-O.KEY`` is ``--optimization-level .KEY``."""
        v = version_tuple(self.version)
        return v is not None and (0, 12) <= v[:2] < (0, 13)

    def _no_dotted_keys(self) -> bool:
        """Whether every candidate release predates the dotted keys of JSON options (``--compilation-config.level=3``,
        ``-O.level=3``), which ``FlexibleArgumentParser.parse_args`` reads from 0.9.2 among the sampled releases
        (vllm@0.9.2 ``vllm/utils/__init__.py``; the 0.6.6.post1 - 0.8.5 ``vllm/utils.py`` pass such a word to argparse
        as it is)."""
        return bool(self.indices) and max(self.indices) < _O_LEVEL_FROM

    def _compilation_config_literal(self, option: str, raw: str, loc: Loc | None) -> tuple[bool, Any]:
        """``--compilation-config``/``-O`` as 0.6.6 - 0.8.5 read it (``CompilationConfig.from_cli``, vllm@0.6.6.post1
        ``vllm/config.py``, the same in 0.7.3 and 0.8.5): ``"0"`` - ``"3"`` is the level, any other text goes to
        ``ast.literal_eval`` -- a Python literal, not JSON: ``{'level': 3}`` is read, JSON's ``true``, ``false`` and
        ``null`` are names it refuses (ValueError "malformed node or string"; Python's ``True``/``False``/``None``
        instead), and text that is no Python expression raises SyntaxError, which argparse does not catch (vLLM stops
        with a traceback) -- then ``CompilationConfig.model_validate``, which refuses what is not a dict (``-O 4``).
        argparse reports a ValueError as "argument --compilation-config/-O: invalid from_cli value: '...'"."""
        if raw in ("0", "1", "2", "3"):
            return True, {"level": int(raw)}
        if json_too_deep(raw) or len(raw) > 100_000:
            self.col.invalid(
                option, raw, loc, "the value is nested too deeply or too long for kvlint to read"
            )
            return False, None
        try:
            value = ast.literal_eval(raw)
        except SyntaxError:
            why = (
                f"{self.where} reads it with Python's ast.literal_eval (CompilationConfig.from_cli), which raises "
                "SyntaxError on it; argparse does not catch that, so vLLM stops with a traceback"
            )
            value, ok = None, False
        except (ValueError, TypeError, MemoryError, RecursionError):
            why = (
                f'{self.where} stops before start-up with "argument --compilation-config/-O: invalid from_cli value": '
                "it reads the value with Python's ast.literal_eval (CompilationConfig.from_cli), a Python literal, not "
                "JSON (True, False and None, not true, false and null)"
            )
            value, ok = None, False
        else:
            ok = isinstance(value, dict)
            why = (
                f'{self.where} stops before start-up with "argument --compilation-config/-O: invalid from_cli value": '
                f"ast.literal_eval reads a {type(value).__name__}, and CompilationConfig.model_validate needs a dict "
                "(or one of the levels 0, 1, 2, 3 as the whole value)"
            )
        if ok and not self._cc_ints_readable(option, raw, value, loc):
            return False, None
        if not ok:
            self.col.invalid(
                option,
                raw,
                loc,
                why,
                fix=f"write {option} as a Python dict literal, e.g. {option} \"{{'level': 3}}\", or a level 0-3",
            )
            return False, None
        return True, value

    def _json_kinds(self, dest: str) -> list[tuple[str | None, bool]]:
        """The parser kind of ``dest``'s JSON option in each candidate release, and whether ``optional_type`` wraps
        it (:data:`kvlint.engines.vllm_json_data.JSON_PARSERS`, ``OPTIONAL_TYPE``); empty when no release reads it as
        JSON."""
        long = _JSON_OPTION_OF_DEST.get(dest)
        per = JSON_PARSERS.get(long) if long is not None else None
        if per is None or long is None:
            return []
        opt = OPTIONAL_TYPE.get(long)
        return [(per[i], bool(opt and opt[i])) for i in self.indices]

    def _json_readable(self, option: str, dest: str, raw: str, loc: Loc | None) -> bool:
        """False, with KV206, when vLLM's argparse cannot read ``raw`` as ``option``'s JSON: the parser each
        candidate release gives the option (:data:`kvlint.engines.vllm_json_data.JSON_PARSERS`, generated from
        the wheels; kinds and their messages in :mod:`kvlint.engines.vllm_json`) refuses it in every candidate
        release that has the option, so vLLM exits with an argparse error (exit 2) before start-up. kvlint
        used to keep such a value as a string and plan the container as if the flag were unset.

        A short alias (``-O`` for ``--compilation-config`` in 0.6.6 - 0.11.x, ``-cc`` from 0.12.0, ``-sc`` for
        ``--speculative-config`` and ``-ac`` for ``--attention-config`` from 0.20.0) is the same argparse action
        (``add_argument("--compilation-config", "-O", ...)``): its value is read by the long option's parser, in
        the releases the alias exists in, and argparse names the action by all its strings
        ("argument --compilation-config/-O: ...")."""
        long = option if option in JSON_PARSERS else _JSON_OPTION_OF_DEST.get(dest)
        per = JSON_PARSERS.get(long) if long is not None else None
        if per is None or long is None:
            return True
        present = data.OPTIONS.get(option, ("", "", 0))[2]
        optional = OPTIONAL_TYPE.get(long)
        refusals = []
        for i in self.indices:
            kind = per[i]
            if not present >> i & 1:
                continue
            got = (
                refusal(kind, _argparse_name(long, i), raw, bool(optional and optional[i])) if kind else None
            )
            if got is None:
                return True  # a candidate release reads it (or does not read it as JSON)
            refusals.append((i, got))
        if not refusals:
            return True
        i, (message, why) = refusals[0] if self.version else refusals[-1]
        who = (
            self.where
            if self.version
            else f"every sampled vLLM release with {option} (here {data.VERSIONS[i]})"
        )
        kvs = per[i] in ("kvs", "kvs_plain") or (
            per[i] == "parse_type_kvs" and not raw.lstrip().startswith("{")
        )
        self.col.invalid(
            option,
            raw,
            loc,
            f'{who} stops before start-up with "{message}" ({why})',
            fix=(
                f"give {option} comma-separated KEY=VALUE pairs with integer values (image=2,video=1)"
                if per[i] in ("kvs", "kvs_plain")
                else f'give {option} a JSON object ({{"image": 2}}) or comma-separated KEY=VALUE pairs'
                if kvs
                else _json_list_fix(option, raw)
                if option in _JSON_LIST_OPTIONS
                else f"give {option} a JSON object, such as '{_SPEC_EXAMPLE}'"
                if long == "--speculative-config"
                else f'give {option} valid JSON, in single quotes in a shell command (\'{{"key": "value"}}\')'
            ),
        )
        return False

    def _speculative_shape(self, option: str, raw: str, loc: Loc | None) -> tuple[bool, Any]:
        """``--speculative-config`` once :meth:`_json_readable` has found its text readable by the release's parser
        (``type=json.loads`` in 0.8.5 and 0.9.2; ``optional_type(json.loads)`` from 0.10.1, where ``""`` and
        ``"None"`` leave it unset: :data:`kvlint.engines.vllm_json_data.JSON_PARSERS`, read in the wheels). JSON
        ``null`` is unset too; a JSON list, string or number fails in ``EngineArgs.create_speculative_config``,
        which updates it as a dict (``vllm@0.8.5`` - ``0.9.2``: ``self.speculative_config.update``; ``vllm@0.34.0``
        assigns keys into it): KV206 here, where kvlint planned such a container without speculative decoding."""
        if raw in ("", "None"):
            # only a release with optional_type gets here with these (json.loads refuses them)
            return True, None
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):
            return True, raw  # a candidate release's parser read it, though not as JSON: nothing to say
        if parsed is None or isinstance(parsed, dict):
            return True, parsed
        self.col.invalid(
            option,
            raw,
            loc,
            f"a JSON object is required: vLLM's create_speculative_config updates it as a dict, and a JSON "
            f"{_json_kind(parsed)} fails "
            "there at start-up",
            fix=f"give {option} a JSON object, such as '{_SPEC_EXAMPLE}'",
        )
        return False, None

    def set(self, option: str, dest: str, value: Any, raw: str | None, loc: Loc | None, source: str) -> None:
        if dest in ("model", "model_tag"):
            self.model = Value(value, loc, raw, source)
            return
        self.col.set(dest, Value(value, loc, raw, source), option)

    def _attached_o_level(self, tok: str, value: str, loc: Loc | None, src: str) -> None:
        """``-OVALUE`` / ``-O=VALUE`` where ``-O`` is ``--compilation-config``'s alias and
        ``FlexibleArgumentParser.parse_args`` rewrites it as ``-O.level=VALUE`` (0.9.2 - 0.11.x among the sampled
        releases; 0.8.5 passed it to argparse as ``-O``'s value): the dotted-key reader ``json.loads`` the value
        (else keeps the text) and hands argparse ``-O '{"level": VALUE}'`` (vllm@0.9.2:vllm/utils/__init__.py), so
        ``-O3`` is level 3 and ``-O'{"level": 3}'`` a level that is a JSON object, which ``CompilationConfig``
        (``level: int``) refuses: KV206. kvlint read the attached text as the whole config."""
        try:
            level: Any = json.loads(value)
        except (ValueError, RecursionError):
            level = value
        if isinstance(level, float) and level.is_integer():
            level = int(level)  # pydantic's lax int takes 3.0
        if isinstance(level, int) and not isinstance(level, bool):
            self.set("-O", "compilation_config", {"level": level}, tok, loc, src)
            return
        if level is None:
            return  # -Onull: level None, which 0.11.0's ``level: Optional[int]`` takes (0.9.2's ``int`` does not)
        json_like = value.lstrip()[:1] in "{["
        self.col.invalid(
            "-O",
            value,
            loc,
            f"{self.where} rewrites {tok[:40]} as -O.level={value[:40]} (FlexibleArgumentParser.parse_args), so "
            "the compilation config's level is not an integer and CompilationConfig refuses it (level: Input "
            "should be a valid integer) before start-up",
            fix=f"write -O '{value}' with a space (the whole compilation config)"
            if json_like
            else "give -O a compilation level 0-3 (-O3)",
        )

    def _bare_o(self, word: str | None, loc: Loc | None) -> None:
        """KV205 for ``-O WORD`` (a separate word) in a release where ``-O`` is no argparse option (0.12.0 on):
        ``FlexibleArgumentParser.parse_args`` turns ``-O`` into ``--optimization-level`` only when attached
        (``-O3``, ``-O=3``) or followed by one of the words ``0``-``3`` (``args[i + 1] in {"0", "1", "2", "3"}``,
        ``vllm@0.12.0:vllm/utils/argparse_utils.py``, ``vllm@0.20.0`` likewise); any other ``-O`` reaches argparse,
        which has no such option (``--compilation-config``'s alias is ``-cc`` there) and stops with
        "unrecognized arguments". ``-O '{"mode": 3}'``, a compilation config up to 0.11.x, is one."""
        shown = f"-O {word}" if word is not None else "-O"
        json_like = word is not None and word.lstrip()[:1] in "{["
        self.col.findings.append(
            OptionFinding(
                rule="KV205",
                message=(
                    f"{shown}: {self.where} reads -O as --optimization-level only with a level 0-3 (-O 3, -O3); "
                    "any other -O reaches argparse, which has no -O option, so vLLM stops before start-up with "
                    f'"unrecognized arguments: {shown}"'
                ),
                loc=loc,
                fix=(
                    f"write -cc '{word}' (--compilation-config; -O was its alias up to vLLM 0.11)"
                    if json_like
                    else "write --optimization-level with a level 0-3 (-O 3), or remove -O"
                ),
                severity="error",
                option="-O",
                unknown=True,
            )
        )

    def _takes_no_word(self) -> bool:
        """Whether every boolean option of the release takes no separate value word: from vLLM 0.10 (and
        when the release is unknown, read as a current one) each is a ``BooleanOptionalAction`` made by
        ``get_kwargs`` from a ``bool`` config field, or a ``store_true`` (``nargs=0``: vllm@0.11
        vllm/engine/arg_utils.py ``_compute_kwargs``, ``contains_type(type_hints, bool)``). Older releases
        had ``StoreBoolean`` options with an optional value (``--enable-chunked-prefill true`` in 0.6-0.8),
        which kvlint still reads as a value there."""
        v = version_tuple(self.version)
        return v is None or v >= (0, 10)

    def _stray_bool_word(
        self, canon: str, argv: Sequence[str], i: int, loc: Loc | None, positional_model: bool
    ) -> None:
        """KV206 for ``--enforce-eager true``: say what vLLM does with the word ``argv[i]`` after a boolean
        option. argparse sets the option (``nargs=0``) and leaves the word as a positional argument. With the
        model already given (``vllm serve MODEL``, or ``--model``, which
        ``FlexibleArgumentParser.parse_args`` moves to the front for ``vllm serve``; the OpenAI
        ``api_server`` entry point has no positional at all) ``parse_args`` exits with "unrecognized arguments"
        (vllm@0.11 vllm/utils/argparse_utils.py); otherwise ``vllm serve`` takes the word as its model
        (``model_tag``)."""
        word = argv[i]
        has_model = self.model is not None or any(a == "--model" or a.startswith("--model=") for a in argv)
        if positional_model and not has_model:
            then = f"`vllm serve` takes '{word}' as the model to serve (its positional model_tag)"
        else:
            then = f"vLLM exits at start-up with 'error: unrecognized arguments: {word}'"
        meant = canon if word.lower() == "true" else "--no-" + canon[2:] if canon in self.bools else None
        fix = (
            f"write {meant} alone"
            if meant == canon
            else f"write {meant} instead"
            if meant
            else f"remove {canon} {word} ({canon} alone turns it on; it is off by default)"
        )
        self.col.invalid(
            canon,
            word,
            loc,
            f"a boolean option takes no value word: argparse sets {canon} and leaves '{word}' as a positional "
            f"argument, so {then}",
            fix=fix,
        )

    def _explicit_bool_value(
        self, canon: str, tok: str, explicit: str, negated: bool, loc: Loc | None
    ) -> None:
        """KV206 for ``--enable-chunked-prefill=false``: a boolean option written with ``=value``.

        vLLM's ``FlexibleArgumentParser.parse_args`` only turns underscores into dashes in the option name and
        passes ``--name=value`` on to argparse unchanged (read in the vllm 0.34.0 wheel,
        vllm/utils/argparse_utils.py; earlier releases kept the class in vllm/utils/__init__.py). From vLLM 0.10 each boolean option is a
        ``BooleanOptionalAction`` or a ``store_true`` (``nargs=0``, vllm/engine/arg_utils.py
        ``_compute_kwargs``), and argparse's ``consume_optional`` refuses an explicit value on a long option
        that takes none: "argument --X: ignored explicit argument 'false'", exit status 2 (CPython
        Lib/argparse.py, 3.9 to 3.13), whatever the value, ``true`` included. Releases before 0.10 had
        ``StoreBoolean`` options (``nargs="?"``) that read ``=true``/``=false``, which kvlint still reads
        there (the release table does not say which options were ``store_true`` then).

        With the release pinned (at or after 0.10) this is an error and the setting is not recorded; with the
        release unknown it is a warning and the caller reads the value as those older releases did."""
        want = _parse_bool(explicit)
        on = None if want is None else want != negated
        if want is None and self.version is None:
            return  # no release reads this word as a boolean: the caller's KV206 error says so
        base = canon
        if on is True:
            fix = f"write {base} alone"
        elif on is False and base in self.bools:
            fix = f"write --no-{base[2:]} instead"
        elif on is False:
            fix = f"remove {tok} ({base} is off by default)"
        else:
            fix = f"write {base} alone to turn it on" + (
                f" or --no-{base[2:]} to turn it off" if base in self.bools else ""
            )
        name = f"{base}/--no-{base[2:]}" if base in self.bools else base
        refusal = f'argparse refuses it ("argument {name}: ignored explicit argument {explicit!r}")'
        if self.version is not None:
            why = f"a boolean option takes no value in {self.where}: {refusal} and vLLM exits at start-up"
            self.col.invalid(canon, explicit, loc, why, fix=fix)
            return
        why = (
            "vLLM releases before 0.10 read a value after '=' on some boolean options, but from 0.10 every "
            f"boolean option takes none: {refusal} and vLLM exits at start-up; the image does not say which "
            "release runs"
        )
        self.col.invalid(
            canon,
            explicit,
            loc,
            why,
            fix=f"pin the vLLM release (image tag or --engine-version) or {fix}",
            severity="warning",
        )

    # -- main loop -------------------------------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        locs: Sequence[Loc | None],
        sources: Sequence[str],
        *,
        positional_model: bool = True,
        exec_form: bool = False,
        envsubst_template: bool = False,
    ) -> str | None:
        """Parse ``argv``; return the ``--config`` path when one was given (handled by the caller). With
        ``exec_form`` (no shell between the manifest and vLLM) a bare ``$VAR`` word is read as the literal text
        vLLM receives, and an option's value ``$VAR`` too unless the manifest is an envsubst template
        (``envsubst_template``, :func:`kvlint.engines.options.literal_dollar`)."""
        config_path: str | None = None
        i, n = 0, len(argv)
        while i < n:
            tok, loc, src = argv[i], locs[i], sources[i]
            quoted = src == QUOTED_SOURCE  # a script's '$ARGS': vLLM gets the text, as in exec form
            src = "arg" if quoted else src
            i += 1
            if (
                tok == "--"
                or tok == ""
                or "{{" in tok
                or ("}}" in tok and not _json_in_word(tok) and not _shell_braces(tok))
            ):
                continue  # empty, end of options, or a Go/Helm template action (reported by the loader)
            if not tok.startswith("-") or _is_number(tok):
                if not (exec_form or quoted) and unseen_expansion(tok):
                    # a bare unresolved ``$ARGS`` or ``$(cat f)``: may expand to any options; cannot be read (the
                    # settings they may give are not taken at the defaults: arguments_not_all_read, once the command
                    # is read). A command substitution where the model goes (``vllm serve $(cat /models/name)``) is
                    # also the model, known only when the container runs (KV502 names it so)
                    # (a Kubernetes ``$(MODEL)`` where the model goes stays the model, KV502's as before)
                    model_reference = kubernetes_reference(tok) and positional_model and self.model is None
                    if self.unseen is None and not model_reference:
                        self.unseen = (tok, loc)
                    if not (
                        (command_substitution(tok) or model_reference)
                        and positional_model
                        and self.model is None
                    ):
                        continue
                if positional_model and self.model is None:
                    self.set("model_tag", "model_tag", tok, tok, loc, src)
                elif tok.strip().startswith("-") and not _is_number(tok.strip()):
                    # " --max-model-len": argparse takes a word with a blank before its dash for a positional;
                    # its value, when it stands alone next, is not a second finding (as for an unknown option)
                    self.col.unknown(
                        tok, loc, self.where, self.long_names, extra=" (unexpected positional argument)",
                        aliases=self.known,
                    )  # fmt: skip
                    bare = tok.strip()
                    res = (
                        self.resolve(bare) if "=" not in bare and not any(c.isspace() for c in bare) else None
                    )
                    if (
                        res is not None
                        and res[2] not in ("bool", "flag")
                        and i < n
                        and not argv[i].startswith("-")
                    ):
                        i += 1
                elif (exec_form or quoted) and bare_expansion(tok):
                    # no shell between the manifest and vLLM (or a quoted word): it gets "$EXTRA_ARGS" itself
                    self.col.literal_reference(tok, loc, self.where, quoted=quoted and not exec_form)
                else:
                    self.col.unknown(tok, loc, self.where, [], extra=" (unexpected positional argument)")
                continue
            explicit: str | None = None
            attached_o = False
            opt = tok
            if tok.startswith("--") and "=" in tok:
                opt, explicit = tok.split("=", 1)
            elif (
                tok.startswith("-O")
                and tok != "-O"
                and not tok.startswith("--")
                and not (
                    tok[2:3] == "."
                    and (self.known.get("-O", ("",))[0] == "compilation_config" or self._o_dot_is_cc())
                )
            ):
                # -O3, -O=3, -Odecode; but -O.backend=eager while -O is --compilation-config's alias (0.6.6 -
                # 0.11.x) is a dotted key of it: FlexibleArgumentParser leaves "-O." words to its dotted-key
                # reader (vllm@0.9.2:vllm/utils/__init__.py::FlexibleArgumentParser.parse_args, ``arg[2] != '.'``)
                explicit = tok[3:] if tok[2:3] == "=" else tok[2:]
                opt = "-O"
                attached_o = True
            elif not tok.startswith("--") and "=" in tok:
                opt, explicit = tok.split("=", 1)
            # dotted JSON options: --compilation-config.level=3, -O.mode=...
            sub_key: str | None = None
            if "." in opt and opt.startswith("-"):
                base, sub_key = opt.split(".", 1)
                opt = base
                if opt == "-O" and self._o_dot_is_cc():
                    # vLLM 0.12.x rewrites -O.KEY to -cc.KEY (deprecated, removed in 0.13.0)
                    opt = "-cc"
            res = self.resolve(opt)
            if res is None:
                if "{{" in opt or "}}" in opt:
                    continue
                if UNRESOLVED_RE.search(opt):
                    self.col.note(f"{opt} contains a variable kvlint cannot resolve", loc)
                    continue
                if self.grpc and self._openai_only(opt, explicit, argv[i] if i < n else None, loc):
                    if explicit is None and i < n and self._openai_takes_value(opt, argv[i]):
                        i += 1
                    continue
                other = option_versions("--" + opt[2:].replace("_", "-") if opt.startswith("--") else opt)
                extra = ""
                if other and self.version:
                    extra = (
                        f" (vLLM accepts it from {other[0]} to {other[1]} among the releases kvlint knows)"
                    )
                takes_next = (
                    explicit is None
                    and i < n
                    and not argv[i].strip().startswith("-")
                    and not any(c.isspace() for c in opt)  # "-tp 1" holds its value already
                )
                self.col.unknown(
                    opt, loc, self.where, self.long_names, extra=extra, aliases=self.known,
                    value=explicit if explicit is not None else argv[i] if takes_next else None,
                    suggestion_note=None if self.version else _retired_note,
                )  # fmt: skip
                if takes_next:
                    # the unknown option probably takes this value; do not mistake it for the model
                    if not (positional_model and self.model is None and i == 1):
                        i += 1
                continue
            canon, dest, kind, negated = res
            if sub_key is None:
                self.col.written[dest] = opt  # the spelling findings quote (-tp, --tensor_parallel_size)
            if sub_key is not None and self._no_dotted_keys():
                self._dotted_before_092(opt, sub_key, explicit, canon, dest, loc)
                continue
            written = "--" + opt[2:].replace("_", "-") if opt.startswith("--") else opt
            if written.startswith("--") and written not in self.known and canon.startswith(written):
                self.col.abbreviation(written, canon, loc)
            if self.version is None:
                span = option_versions(canon)
                if span is not None and span[1] != data.VERSIONS[-1]:
                    # the release is not pinned (KV208): say which releases accept an option newer ones refuse
                    as_written = opt if opt.startswith("--") else canon  # (--swap_space: the fix removes it)
                    self.col.findings.append(
                        OptionFinding(
                            rule="KV205",
                            message=f"{canon} is accepted only by vLLM {span[0]} to {span[1]} among the releases "
                            "kvlint knows; the image does not say which release runs, and newer ones refuse it",
                            loc=loc,
                            fix=f"pin the vLLM release (image tag or --engine-version) or remove {as_written}",
                            severity="warning",
                            option=as_written,
                        )
                    )
            if (
                attached_o
                and explicit is not None
                and dest == "compilation_config"
                and self.indices
                and min(self.indices) >= _O_LEVEL_FROM
            ):
                self._attached_o_level(tok, explicit, loc, src)
                continue
            if (
                dest == "optimization_level"
                and canon == "-O"
                and explicit is None
                and argv[i : i + 1] not in (["0"], ["1"], ["2"], ["3"])
                and not any(data.OPTIONS["-O"][2] >> k & 1 for k in self.indices)
            ):
                # argparse leaves the next word to the positional model when none came yet
                takes = (
                    i < n and not argv[i].startswith("-") and not (positional_model and self.model is None)
                )
                self._bare_o(argv[i] if takes else None, loc)
                i += 1 if takes else 0
                continue
            if kind in ("bool", "flag") and sub_key is None:
                value: Any = not negated
                raw = tok
                if explicit is not None:
                    if self._takes_no_word():
                        # a BooleanOptionalAction / store_true refuses ``--flag=value``
                        self._explicit_bool_value(canon, tok, explicit, negated, loc)
                        if self.version is not None:
                            continue
                    raw = explicit
                    value = _parse_bool(explicit)
                    if value is None:
                        self.col.invalid(canon, explicit, loc, "a boolean option takes no value")
                        continue
                elif i < n and argv[i].lower() in ("true", "false") and not negated:
                    if self._takes_no_word():
                        # a BooleanOptionalAction / store_true takes no value: the word is a positional
                        self._stray_bool_word(canon, argv, i, locs[i] or loc, positional_model)
                        self.set(canon, dest, value, raw, loc, src)
                        i += 1
                        continue
                    raw = argv[i]
                    value = argv[i].lower() == "true"
                    i += 1
                self.set(canon, dest, value, raw, loc, src)
                continue
            if kind == "multi" and explicit is None:
                vals: list[str] = []
                first_loc = loc
                while i < n and (not argv[i].startswith("-") or _is_number(argv[i])):
                    if not vals:
                        first_loc = locs[i] or loc
                    vals.append(argv[i])
                    i += 1
                if not vals:
                    self.col.invalid(canon, "", loc, "expected at least one value")
                    continue
                self.set(canon, dest, vals if len(vals) > 1 else vals[0], " ".join(vals), first_loc, src)
                continue
            if explicit is None:
                if i >= n or (argv[i].startswith("-") and not _is_number(argv[i]) and argv[i] != "-"):
                    if kind == "optvalue":
                        self.set(canon, dest, True, tok, loc, src)
                        continue
                    self.col.invalid(canon, "", loc, "expected a value")
                    continue
                raw, loc, src = argv[i], locs[i] or loc, sources[i]
                quoted = src == QUOTED_SOURCE  # a script's '$TP': the engine parses the text
                src = "arg" if quoted else src
                i += 1
            else:
                raw = explicit
            if dest == "config":
                if explicit is not None:
                    # vLLM loads the file only when ``--config`` is a word of its own
                    # (vllm@0.34.0:vllm/utils/argparse_utils.py::FlexibleArgumentParser.parse_args, ``if "--config"
                    # in args``, as in 0.20.0); ``--config=FILE`` is the value of argparse's declared ``--config``
                    # (vllm/entrypoints/common/cli_args.py), which nothing reads: the file's settings never apply
                    self.col.note(
                        f"{tok}: vLLM never reads this file: it loads a --config file only when the path is "
                        "a word of its own (--config FILE); with '=' argparse takes the path as the option's value "
                        "and ignores it, so the engine starts on its defaults (the command line's values only)",
                        loc,
                        severity="warning",
                        fix=f"write --config {raw} as two words",
                    )
                    continue
                config_path = raw
                continue
            if sub_key is not None:
                cur = self.col.flags.get(dest)
                base_val = cur.value if cur is not None and isinstance(cur.value, dict) else {}
                merged = dict(base_val)
                node = merged
                keys = sub_key.split(".")
                for k in keys[:-1]:
                    node = node.setdefault(k, {}) if isinstance(node.get(k, {}), dict) else node
                node[keys[-1]] = parse_json_or_str(raw) if raw[:1] in "{[" else _scalar(raw)
                self.col.flags[dest] = Value(merged, loc, f"{opt}.{sub_key}={raw}", src)
                continue
            literal = literal_dollar(raw, exec_form or quoted, envsubst_template)
            if unresolved(raw) and literal is None:
                if dest in INT_DESTS or dest in FLOAT_DESTS:
                    why = unresolved_why(canon, raw)
                    self.col.unresolved_value(
                        dest,
                        why if dest in LAYOUT_DESTS else f"{why}; the engine default is assumed",
                        loc,
                    )
                    continue
                self.set(canon, dest, raw, raw, loc, src)
                continue
            before = len(self.col.findings)
            ok, value = self.convert(canon, dest, raw, loc)
            if literal is not None:
                # exec form: vLLM parses the text "$TP" itself (an int option refuses it)
                literal_dollar_said(self.col, before, raw, literal, quoted=quoted and not exec_form)
            if ok:
                if dest == "served_model_name" and isinstance(value, str):
                    value = [value]
                self.set(canon, dest, value, raw, loc, src)
        return config_path


def _shell_braces(word: str) -> bool:
    """Whether the ``}}`` of a command word close shell references the shell's reading left unresolved, not a Go/Helm
    template action: every ``}`` closes a ``{`` before it in the word, and the word holds a ``${`` (``--tensor-parallel-
    size=${TP:+${N}}``, ``--max-model-len=${1:-${LEN}}``; bash(1) "Parameter Expansion": the word after ``:-``/``:+``
    is itself expanded). A template action's end split off its start (``.Values.tp}}``) closes braces it did not
    open. Such a word was skipped as a template action, its option lost: the engine default was taken."""
    if "${" not in word:
        return False
    depth = 0
    for c in word:
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                return False
            depth -= 1
    return True


def _json_in_word(word: str) -> bool:
    """Whether the ``}}`` of a command word close a JSON value, not a Go/Helm template action: the word from
    its first ``{`` (``--hf-overrides={"rope_scaling": {"factor": 4}}``, ``-O{"pass_config": {...}}``, or the
    JSON word itself) is JSON by :func:`kvlint.engines.shell.json_braces` and the word holds no ``{{``."""
    start = word.find("{")
    return start >= 0 and "{{" not in word and json_braces(word[start:])


def _json_kind(value: Any) -> str:
    """How a JSON value other than an object is named in a message (``list``, ``string``, ``boolean``, ``number``)."""
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    return "boolean" if isinstance(value, bool) else "number"


def _is_number(tok: str) -> bool:
    """Whether ``tok`` reads as a Python float (argparse's test for a negative number among options).
    A ``--`` word never does (float() takes one sign at most), so options are answered without raising."""
    if tok.startswith("--"):
        return False
    try:
        float(tok)
        return True
    except ValueError:
        return False


def _parse_bool(text: str) -> bool | None:
    t = text.strip().lower()
    if t in ("true", "1", "yes"):
        return True
    if t in ("false", "0", "no"):
        return False
    return None


def _scalar(raw: str) -> Any:
    for conv in (int, float):
        try:
            return conv(raw)
        except ValueError:
            pass
    b = _parse_bool(raw)
    return raw if b is None else b


#: Largest ``--config`` file read, in UTF-8 bytes: a ConfigMap holds at most 1 MiB (Kubernetes refuses a larger one:
#: ``ValidateConfigMap``, ``MaxSecretSize``; ``kvlint.engines.command.CONFIGMAP_MAX_BYTES`` for mounted scripts),
#: and such a file is read by PyYAML's pure-Python reader, as vLLM reads it (about 7 CPU s per MiB of a flow list).
MAX_CONFIG_FILE_BYTES = 1 << 20


def config_file_too_large(text: str) -> str | None:
    """Why a ``--config`` file of ``text`` is not read when it is more than :data:`MAX_CONFIG_FILE_BYTES` UTF-8
    bytes (encoded only when its length allows that), else None; the vLLM and SGLang readers' note says it."""
    if (
        len(text) <= MAX_CONFIG_FILE_BYTES // 4
        or len(text.encode("utf-8", "replace")) <= MAX_CONFIG_FILE_BYTES
    ):
        return None
    return (
        f"the file is more than {MAX_CONFIG_FILE_BYTES:,} bytes, more than a ConfigMap holds (the API server "
        "refuses a larger one); its settings were not read"
    )


#: ``--config`` files read so far, by text, position, section and position mapper: the containers of a manifest
#: that mount one ConfigMap read it once (eleven containers mounting a 200 kB config took 35 CPU s, each reading
#: it again; 256 containers of a pod and a 1 MiB ConfigMap, hours).
_CONFIG_READS: ConfigReads[tuple[list[str], list[Loc | None], list[str]]] = ConfigReads()


def _config_file_flags(
    p: _Parser,
    what: str,
    path: str,
    loc: Loc | None,
    section: str | None,
    missing_severity: str,
    config_loader: Callable[[str], tuple[str, Loc | None] | None] | None,
    map_config_pos: Callable[[Loc | None, str, int, int], Loc | None] | None,
    restate: Callable[[Finding], Finding] | None = None,
) -> _Parser | None:
    """Parse the options of a YAML file named on the command line (``--config``, KAITO's
    ``--kaito-config-file`` with ``section="vllm"``) with a fresh parser of ``p``'s release; its findings
    join ``p``'s (each through ``restate`` when given: :func:`kaito_entry`). None, with a KV503 note on ``p``,
    when the file is not among the inputs or unreadable."""
    loaded = config_loader(path) if config_loader else None
    if loaded is None:
        # a ConfigMap the file is mounted from, and what is wrong with it (kvlint.engines.command.ConfigMapFiles)
        from kvlint.workloads.configmaps import (
            AMBIGUOUS,
            AMBIGUOUS_FIX,
            OTHER_NAMESPACE,
            OTHER_NAMESPACE_FIX,
            UNPARSED,
            UNPARSED_FIX,
        )

        why_not = getattr(config_loader, "why_not", None)
        problem = why_not(path) if callable(why_not) else None
        if problem is None:
            p.col.note(
                f"{what}: the file is not among the inputs (no ConfigMap provides it); its settings are unknown "
                "to kvlint",
                loc,
                severity=missing_severity,
            )
        else:
            p.col.note(
                f"{what}: the file is {problem}; its settings are unknown to kvlint",
                loc,
                severity=missing_severity,
                # the loader's own remedy (kvlint plan's local file: kvlint.engines.command.LocalConfigFiles)
                fix=getattr(config_loader, "fix", None)
                or (
                    "pass the ConfigMap with the workload (kvlint check DEPLOYMENT.yaml CONFIGMAP.yaml)"
                    if problem.endswith("is not among the inputs")
                    else UNPARSED_FIX
                    if UNPARSED in problem
                    else AMBIGUOUS_FIX
                    if AMBIGUOUS in problem
                    else OTHER_NAMESPACE_FIX
                    if OTHER_NAMESPACE in problem
                    else "make the ConfigMap hold the file as a string under the key the volume mounts (the engine "
                    "cannot read its --config file without it)"
                ),
            )
        return None
    text, text_loc = loaded
    too_large = config_file_too_large(text)
    if too_large is not None:
        p.col.note(f"{what}: {too_large}", text_loc or loc, "warning")
        return None

    def at(line: int, col: int) -> Loc | None:
        if map_config_pos is not None:
            return map_config_pos(text_loc, text, line, col)
        return None if text_loc is None else Loc(text_loc.file, text_loc.line + line + 1, col + 1)

    done = _CONFIG_READS.read(
        (text, text_loc, section, map_config_pos),
        text,
        lambda: _config_argv(text, text_loc, at, section=section),
        (yaml.YAMLError, ValueError),
    )
    if isinstance(done, Exception):
        p.col.note(f"{what} cannot be read: {done}", getattr(done, "loc", None) or text_loc or loc, "warning")
        return None
    c_argv, c_locs, c_src = list(done[0]), list(done[1]), list(done[2])
    cp = _Parser(p.version, p.env, p.col.layout_from_service, p.grpc)
    cp.run(c_argv, c_locs, c_src, positional_model=False)
    p.col.findings += [restate(f) for f in cp.col.findings] if restate is not None else cp.col.findings
    return cp


#: What KAITO's inference config is, for the findings on its entries (:func:`kaito_entry`).
KAITO_CONFIG = "the KAITO inference config (the ConfigMap that a Workspace's inference.config names)"


def kaito_entry(f: Finding, *, workspace: bool = False) -> Finding:
    """KV205/KV206 ``f`` on an entry of the ``vllm:`` section of KAITO's inference config restated: the user
    wrote ``swap-space: 4`` in a ConfigMap, and KAITO's ``inference_api.py`` passes it to vLLM as
    ``--swap-space 4`` (kaito-project/kaito presets/workspace/inference/vllm/inference_api.py
    ``KAITOArgumentParser.parse_args``), so the message names the entry and the ConfigMap, and the fix removes
    or rewrites the entry rather than a flag nobody typed; for a ``workspace`` (the image is KAITO's own, chosen
    by its release: no tag to pin) the release is given with --engine-version only. Other findings are returned
    as they are. Pure."""
    if not isinstance(f, OptionFinding) or f.rule not in ("KV205", "KV206") or not f.option.startswith("--"):
        return f
    entry = f.option[2:]
    fix = f.fix.replace(f"remove {f.option}", f"remove {entry} from the vllm: section of that ConfigMap")
    fix = fix.replace(f"give {f.option} ", f"give {entry} ", 1)
    if fix.startswith("use --"):
        fix = f"write {fix[len('use --') :]} in place of {entry} in the vllm: section of that ConfigMap"
    fix = fix.replace(f.option, entry)  # any other wording ("write --max-num-seqs as a plain integer")
    if workspace:
        fix = fix.replace(
            "pin the vLLM release (image tag or --engine-version)",
            "pass --engine-version with the vLLM release of the KAITO installation (a Workspace has no image to pin)",
        )
    return OptionFinding(
        rule=f.rule,
        message=f"{KAITO_CONFIG} sets {entry} in its vllm: section, which KAITO passes to vLLM as {f.option}: "
        + f.message,
        loc=f.loc,
        fix=fix,
        severity=f.severity,
        option=f.option,
        unknown=f.unknown,
    )


#: The scalar tags a ``--config`` value is built from directly; any other node goes through the
#: serialise-and-load round trip.
_PLAIN_TAGS = frozenset("tag:yaml.org,2002:" + t for t in ("bool", "int", "float", "str"))


def _node_value(node: yaml.Node, fast: bool = True) -> Any:
    """The Python value of a ``--config`` node, as ``yaml.safe_load(yaml.serialize(node))`` gives it. With
    ``fast``, a scalar of a core tag, a sequence or a mapping is constructed by PyYAML's safe constructor (the
    constructor that round trip ends in, and what vLLM's ``yaml.safe_load`` of the file does after composing it)
    without emitting and re-parsing it: the round trip, in pure Python, took 5 CPU s for a list of 300,000 items
    (a 600 kB ConfigMap), for each container that mounts it. A value the constructor refuses goes through the
    round trip, which words the error. ``fast=False`` is the round trip (tests/test_argv_fast_paths.py compares
    the two)."""
    if fast and isinstance(node, yaml.ScalarNode) and node.tag in _PLAIN_TAGS:
        return yaml.constructor.SafeConstructor().construct_object(node)
    if fast and isinstance(node, (yaml.SequenceNode, yaml.MappingNode)):
        try:
            return yaml.constructor.SafeConstructor().construct_document(node)
        except Exception:  # noqa: BLE001 - the round trip below raises it again, worded as before
            pass
    return yaml.safe_load(yaml.serialize(node))


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _mapping_pairs(node: yaml.MappingNode) -> list[tuple[yaml.Node, yaml.Node]]:
    """The ``(key, value)`` nodes of a ``--config`` mapping as the dict ``yaml.safe_load`` makes of it holds them:
    a merge key (``<<: *common``, ``<<: [*a, *b]``) is replaced by the pairs it merges (PyYAML's
    ``SafeConstructor.flatten_mapping``), and a key met again keeps its first place and takes the last value (an
    explicit key wins over a merged one; ``dict`` assignment). Without a merge key the pairs as written (a key
    given twice is then the file's own repeat). The engines read the file with ``yaml.safe_load`` (vLLM's
    ``FlexibleArgumentParser.load_config_file``, SGLang's ``ConfigArgumentMerger``, Dynamo's
    ``_extract_config_section``): kvlint read ``<<`` as an option (``unknown option --<<``) and missed the merged
    ones (a Dynamo section taking its model from a shared anchor had "no model"). Call after
    :func:`_check_expansion` (merges are aliases: their expansion is bounded there). Raises ValueError where
    ``safe_load`` fails (a merge of a scalar or of a list holding one, a chain of merges too deep to follow)."""
    if not any(k.tag == _MERGE_TAG for k, _v in node.value):
        return list(node.value)
    flat = yaml.MappingNode(node.tag, list(node.value), node.start_mark, node.end_mark)
    try:
        yaml.constructor.SafeConstructor().flatten_mapping(flat)
    except yaml.MarkedYAMLError as exc:
        raise ValueError(f"a merge key (<<) cannot be applied: {exc.problem or exc}") from None
    except RecursionError:
        raise ValueError("its merge keys (<<) chain deeper than PyYAML follows") from None
    out: dict[Any, tuple[yaml.Node, yaml.Node]] = {}
    for k, v in flat.value:
        key = (k.tag, k.value) if isinstance(k, yaml.ScalarNode) else id(k)
        out[key] = (out[key][0], v) if key in out else (k, v)
    return list(out.values())


def _check_expansion(root: yaml.Node, text_chars: int) -> None:
    """Raise ValueError when the node graph ``root`` (a ``--config`` file, composed: an alias is the anchored
    node itself) expands to more values than the file has characters (and more than
    :data:`kvlint.load.ALIAS_FLOOR`): the loader's alias-bomb rule for
    manifests (:mod:`kvlint.load`), applied to the text of a ConfigMap-mounted file. The values are built
    expanded (lists become repeated arguments, mappings JSON text): nine levels of ten aliases in a 1 KB file
    took 25 s and 2.9 GB before this check. Linear in the number of distinct nodes."""
    from kvlint.load import ALIAS_FLOOR, MAX_NODES

    limit = min(MAX_NODES, max(ALIAS_FLOOR, text_chars))
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        if done:
            open_nodes.discard(key)
            total = 1 + sum(size.get(id(c), 1) for c in children)  # (a node still open: a recursive alias)
            if total > limit:
                raise ValueError(
                    f"its aliases expand it to more than {limit} values, more than its own text holds (alias bomb?)"
                )
            size[key] = total
            continue
        if key in size:
            continue
        if key in open_nodes:
            continue  # a recursive alias: str() and json.dumps see the cycle themselves, as in vLLM
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in size)


class _ConfigValueError(ValueError):
    """A ``--config`` value vLLM's reading of the file fails on, with the value's position (``loc``)."""

    def __init__(self, message: str, loc: Loc | None) -> None:
        super().__init__(message)
        self.loc = loc


def _config_argv(
    text: str, base: Loc | None, loc_of_line: Callable[[int, int], Loc | None], section: str | None = None
) -> tuple[list[str], list[Loc | None], list[str]]:
    """Turn a vLLM ``--config`` YAML document into argv (keys -> ``--key``; ``true`` -> bare flag,
    ``false`` -> ``--no-key``, lists -> repeated values, mappings -> JSON), with positions of each value.

    SOURCE: vllm@0.33.0:vllm/utils/argparse_utils.py::FlexibleArgumentParser.load_config_file. With
    ``section``, the options are that key's mapping (KAITO's ``vllm:``). Raises yaml.YAMLError for YAML
    vLLM's ``yaml.safe_load`` refuses, and ValueError when the YAML is not a mapping, a key is not a scalar, a
    value cannot be constructed or passed on as JSON, or the text nests too deep to compose.
    """
    try:
        root = yaml.compose(text)
    except RecursionError:
        raise ValueError(
            "the file nests deeper than PyYAML's composer reads (vLLM's yaml.safe_load fails)"
        ) from None
    if root is not None and section is not None and isinstance(root, yaml.MappingNode):
        # KAITO's inference config: the options are the `vllm:` mapping
        _check_expansion(root, len(text))
        root = next((v for k, v in _mapping_pairs(root) if str(k.value) == section), None)
    if root is None:
        return [], [], []
    if not isinstance(root, yaml.MappingNode):
        raise ValueError("the --config file must hold a mapping of option names to values")
    _check_expansion(root, len(text))
    argv: list[str] = []
    locs: list[Loc | None] = []
    for knode, vnode in _mapping_pairs(root):
        if not isinstance(knode, yaml.ScalarNode):
            raise ValueError(
                f"the key on line {knode.start_mark.line + 1} is not a plain name (vLLM's yaml.safe_load refuses "
                "a mapping or sequence as a key)"
            )
        key = str(knode.value)
        kloc = loc_of_line(knode.start_mark.line, knode.start_mark.column)
        vloc = loc_of_line(vnode.start_mark.line, vnode.start_mark.column)
        try:
            value = _node_value(vnode)
            dumped = json.dumps(value) if isinstance(value, dict) else ""
        except yaml.YAMLError:
            raise
        except (TypeError, ValueError, IndexError, AttributeError, OverflowError, RecursionError) as exc:
            # PyYAML's constructors fail so on an empty `!!int`/`!!float` or a malformed `!!timestamp`, and
            # json.dumps on a date or binary inside a mapping: vLLM's own reading of the file fails the same way
            raise _ConfigValueError(
                f"the value of '{key}' on line {vnode.start_mark.line + 1} cannot be read as vLLM reads it "
                f"(yaml.safe_load, a mapping passed on as JSON): {type(exc).__name__}: {exc}",
                vloc,
            ) from None
        opt = "--" + key
        if value is True:
            argv.append(opt)
            locs.append(kloc)
        elif value is False:
            argv.append("--no-" + key)
            locs.append(kloc)
        elif isinstance(value, list):
            argv.append(opt)
            locs.append(kloc)
            for item in value:
                argv.append(str(item))
                locs.append(vloc)
        elif isinstance(value, dict):
            argv += [opt, dumped]
            locs += [kloc, vloc]
        elif value is None:
            continue
        else:
            argv += [opt, str(value)]
            locs += [kloc, vloc]
    return argv, locs, ["config"] * len(argv)


#: The adapter ranks vLLM's LoRAConfig accepts (``vllm/config/lora.py``: ``MaxLoRARanks = Literal[1, 8, 16, 32, 64,
#: 128, 256, 320, 512]``; releases before the pydantic config listed ``possible_max_ranks`` without 1, which
#: kvlint accepts everywhere rather than refuse a rank some release takes).
LORA_RANKS = frozenset({1, 8, 16, 32, 64, 128, 256, 320, 512})


def _refuse(p: _Parser, dest: str, why: str, fix: str) -> None:
    """KV206 for the setting ``dest`` that vLLM refuses at start-up, dropped from the flags so the plan does not size
    it: named as the command line spelled it (else ``--`` and its dashed name), its value as written; ``fix`` a
    template whose ``{}`` is that option."""
    v = p.col.flags.pop(dest)
    option = p.col.seen_option.get(dest, "--" + dest.replace("_", "-"))
    p.col.invalid(option, v.raw if v.raw is not None else str(v.value), v.loc, why, fix=fix.format(option))


def _check_lora(p: _Parser) -> None:
    """KV206 for the LoRA sizes vLLM refuses when ``--enable-lora`` builds its LoRAConfig (argparse takes any
    integer; ``vllm/config/lora.py::LoRAConfig``: ``max_loras`` ``Field(ge=1)``, ``max_lora_rank`` one of
    :data:`LORA_RANKS`, and ``_validate_lora_config``/``__post_init__`` raising "max_cpu_loras (...) must be >=
    max_loras (...)"). The refused value is dropped, so the plan prices vLLM's default rather than a negative
    or unlisted size. Without ``--enable-lora`` vLLM builds no LoRAConfig and checks none of them."""
    flags = p.col.flags
    on = flags.get("enable_lora")
    if on is None or not on.value:
        return

    loras = flags.get("max_loras")
    if loras is not None and isinstance(loras.value, int) and loras.value < 1:
        _refuse(
            p,
            "max_loras",
            "vLLM's LoRAConfig requires at least 1 adapter slot with --enable-lora",
            "give {} the number of adapters served at once, 1 or more",
        )
    rank = flags.get("max_lora_rank")
    if rank is not None and isinstance(rank.value, int) and rank.value not in LORA_RANKS:
        _refuse(
            p,
            "max_lora_rank",
            f"vLLM's LoRAConfig accepts {', '.join(str(r) for r in sorted(LORA_RANKS))} with --enable-lora",
            "give {} the listed rank at or above your adapters' largest rank",
        )
    cpu = flags.get("max_cpu_loras")
    slots = flags["max_loras"].value if "max_loras" in flags else 1
    if cpu is not None and isinstance(cpu.value, int) and isinstance(slots, int) and cpu.value < slots:
        _refuse(
            p,
            "max_cpu_loras",
            f"vLLM requires --max-cpu-loras >= --max-loras ({slots}) with --enable-lora",
            "raise {} to at least --max-loras, or remove it (vLLM then caches --max-loras adapters on the CPU)",
        )


#: The most speculative tokens per step kvlint plans: the drafters vLLM ships propose a few to a few dozen (suffix
#: decoding defaults to 24, ``vllm@0.13.0:vllm/config/speculative.py``); a count beyond this is refused as absurd
#: rather than priced (every decode step would verify more tokens than a default batch holds).
MAX_SPECULATIVE_TOKENS = 4096


def _speculative_count(value: Any) -> int | None:
    """``num_speculative_tokens`` as vLLM's config reads it: ``SpeculativeConfig`` is a pydantic dataclass
    (``vllm@0.13.0:vllm/config/speculative.py``, ``num_speculative_tokens: int = Field(default=None, gt=0)``, built
    by ``EngineArgs.create_speculative_config`` as ``SpeculativeConfig(**speculative_config)``) whose ``int`` is
    pydantic's lax one (:func:`kvlint.values.lax_int`: ``true`` is 1, ``"+6"`` and ``"6.0"`` are 6); None for a
    fraction or a word."""
    return lax_int(value)


#: vLLM's refusal of a speculative config that gives no count and no draft carrying one
#: (``SpeculativeConfig._verify_args``, the same words in 0.9.2, 0.10.1, 0.11.0, 0.12.0, 0.13.0, 0.26.0 and 0.34.0)
SPEC_COUNT_REQUIRED = (
    "num_speculative_tokens must be provided with speculative model unless the draft model config contains an "
    "n_predict parameter."
)
#: The oldest release whose refusal was read (an unknown release is read as a current one; older ones are not judged)
SPEC_COUNT_REQUIRED_FROM = (0, 9, 2)
#: Methods that set ``num_speculative_tokens`` themselves when it is missing: suffix decoding
#: (``suffix_decoding_max_tree_depth``, ``_validate_suffix_decoding`` of 0.11.0 - 0.26.0), 0.34.0's DSpark ("DSpark
#: drafts carry their own width") and 0.26.0's ``extract_hidden_states`` (which sets its own model) [not refused]
_COUNT_FROM_METHOD = ("suffix", "dspark", "extract_hidden_states")


def _count_missing_refused(cfg: dict[str, Any]) -> bool:
    """Whether vLLM refuses ``--speculative-config`` ``cfg`` for want of ``num_speculative_tokens``: no count and no
    ``model`` (a method's own draft, MTP from the target included, is only set up when a count is given:
    ``if self.model is None and self.num_speculative_tokens is not None`` in ``SpeculativeConfig.__post_init__`` of
    0.9.2 - 0.26.0, ``default_model`` under the same test in 0.34.0), so no draft config can supply ``n_predict`` and
    ``_verify_args`` raises :data:`SPEC_COUNT_REQUIRED`; suffix decoding and DSpark set their own count. A ``model``
    (an EAGLE head, a draft checkpoint) may carry ``n_predict`` in its config, which kvlint does not read here."""
    if cfg.get("num_speculative_tokens") is not None or cfg.get("model") is not None:
        return False
    method = str(cfg.get("method") or "").strip().lower()
    return method not in _COUNT_FROM_METHOD


def _speculative_refusal(n: int | None) -> str | None:
    """Why a ``num_speculative_tokens`` count (:func:`_speculative_count`; None: not a whole number) is refused, or
    None when vLLM takes it and kvlint plans it."""
    if n is not None and 0 < n <= MAX_SPECULATIVE_TOKENS:
        return None
    if n is None:
        return "num_speculative_tokens must be a whole number of tokens; vLLM's SpeculativeConfig refuses it"
    if n <= 0:
        return f"num_speculative_tokens {n} is refused by vLLM, which expects it to be greater than zero"
    shown = f"{n:,}" if n < 10**18 else f"above {MAX_SPECULATIVE_TOKENS:,}"
    return (
        f"num_speculative_tokens {shown} is absurd (kvlint plans at most {MAX_SPECULATIVE_TOKENS:,}; "
        "drafters propose a few to a few dozen tokens per step)"
    )


def _check_speculative(p: _Parser) -> None:
    """KV206 for a ``--speculative-config`` whose ``num_speculative_tokens`` vLLM refuses: missing with no draft model
    (:func:`_count_missing_refused`, the engine's :data:`SPEC_COUNT_REQUIRED`), not an integer, or not above 0
    (``vllm@0.13.0:vllm/config/speculative.py::SpeculativeConfig``, ``Field(default=None, gt=0)``, and
    ``_verify_args`` "Expected num_speculative_tokens to be greater than zero"); above
    :data:`MAX_SPECULATIVE_TOKENS` it is refused as absurd. The refused setting is dropped, so the plan sizes the
    engine without speculative decoding rather than on a nonsensical count.

    The shorthands of :data:`kvlint.engines.options.SPEC_SHORTHANDS` are checked the same way (``--spec-tokens``
    is the count) and, as ``EngineArgs.create_speculative_config`` does (read in 0.34.0), one that sets a key
    ``--speculative-config`` also sets is a KV206 error: vLLM raises "--spec-tokens and --speculative-config['num_speculative_tokens'] are
    mutually exclusive" at start-up. The plan reads them as that key (:func:`kvlint.memory.vllm.settings_from_flags`).
    """
    flags = p.col.flags
    dest = "speculative_config"
    v = flags.get(dest)
    read = version_tuple(p.version)
    if (
        v is not None
        and isinstance(v.value, dict)
        and (read is None or read >= SPEC_COUNT_REQUIRED_FROM)
        # the shorthands (--spec-tokens, --spec-model) are merged into the config before vLLM checks it
        and _count_missing_refused(
            {
                **v.value,
                **{key: s.value for short, key in SPEC_SHORTHANDS if (s := flags.get(short)) is not None},
            }
        )
    ):
        _refuse(
            p,
            dest,
            "it names no draft model and no num_speculative_tokens, and vLLM's SpeculativeConfig refuses it at "
            f"start-up: '{SPEC_COUNT_REQUIRED}'",
            'add "num_speculative_tokens": N (1 for one MTP layer, typically up to 16) to {}, or remove '
            "it; vLLM takes a count from the draft's n_predict only when a draft model is named",
        )
        return
    if v is not None and isinstance(v.value, dict) and v.value.get("num_speculative_tokens") is not None:
        why = _speculative_refusal(_speculative_count(v.value["num_speculative_tokens"]))
        if why is not None:
            _refuse(
                p,
                dest,
                why,
                "give num_speculative_tokens a whole number from 1 (typically 1 to 16), or remove {}",
            )
    tokens = flags.get("spec_tokens")
    if tokens is not None and isinstance(tokens.value, int):
        why = _speculative_refusal(tokens.value)
        if why is not None:
            _refuse(p, "spec_tokens", why, "give {} a whole number from 1 (typically 1 to 16), or remove it")
    config = flags.get(dest)
    given = config.value if config is not None and isinstance(config.value, dict) else {}
    for short, key in SPEC_SHORTHANDS:
        s = flags.get(short)
        if s is None or key not in given:
            continue
        flags.pop(short)
        option = p.col.seen_option.get(short, "--" + short.replace("_", "-"))
        both = p.col.seen_option.get(dest, "--speculative-config")
        p.col.findings.append(
            OptionFinding(
                rule="KV206",
                message=(
                    f"{option} and {both} both set {key}: vLLM's create_speculative_config raises "
                    f"ValueError(\"{option} and --speculative-config['{key}'] are mutually exclusive\") at start-up"
                ),
                loc=s.loc,
                fix=f"remove {option}, or the {key!r} key of {both}",
                severity="error",
                option=option,
            )
        )


#: Options of the OpenAI server's parser that ``vllm serve --grpc`` still reads: ``--host``/``--port`` (its gRPC
#: server binds them), ``--config`` (read before argparse), ``--grpc`` itself, and the logging options the CLI's
#: ``configure_logging_from_args`` reads for every subcommand (``vllm@0.33.0`` ``vllm/logger.py``).
_GRPC_SERVE_READS = frozenset({"host", "port", "config", "grpc", "log_level", "log_config_file"})


def _check_grpc_serve(p: _Parser, serve: bool) -> None:
    """KV205 (warning) for each OpenAI-server option given to ``vllm serve --grpc``: ``ServeSubcommand.cmd``
    (``vllm@0.20.0`` - ``0.34.0`` ``vllm/entrypoints/cli/serve.py``) returns ``serve_grpc(args)`` when ``args.grpc``
    is set, before the HTTP server, its API-server processes or ``--headless`` are looked at, and ``serve_grpc``
    (``vllm/entrypoints/grpc_server.py``'s; ``launchers/grpc_server.py``'s in the 0.33.0 and 0.34.0 wheels) reads
    ``args.host``, ``args.port`` and the engine's options only, and serves on ``add_insecure_port``. The parser is
    the OpenAI server's, so argparse takes them and the engine starts without them: ``--api-key`` guards nothing,
    ``--ssl-keyfile`` serves no TLS. The options are those of :func:`_frontend_only` (the gRPC module's parser
    lacks them) but :data:`_GRPC_SERVE_READS`. ``serve``: the command is ``vllm serve`` (a positional MODEL); the
    ``api_server`` module's ``run_server`` never looks at ``args.grpc``, so there ``--grpc`` is what is ignored."""
    if p.grpc:
        return
    on = p.col.flags.get("grpc")
    if on is None or on.value is not True:
        return
    if not serve:
        option = p.col.seen_option.get("grpc", "--grpc")
        p.col.findings.append(
            OptionFinding(
                rule="KV205",
                message=(
                    f"{option} is ignored: python -m vllm.entrypoints.openai.api_server starts the OpenAI HTTP "
                    "server whatever it says; only vllm serve --grpc starts vLLM's gRPC server"
                ),
                loc=on.loc,
                fix=f"remove {option}, or run vllm serve MODEL --grpc (or python -m vllm.entrypoints.grpc_server)",
                severity="warning",
                option=option,
            )
        )
        return
    ignored = {data.OPTIONS[o][0] for o in _frontend_only(_version_mask(p.version)[0])} - _GRPC_SERVE_READS
    for dest, v in list(p.col.flags.items()):
        if dest not in ignored:
            continue
        option = p.col.seen_option.get(dest, "--" + dest.replace("_", "-"))
        what = {
            "api_key": "; the gRPC endpoint takes requests without the key",
            "ssl_keyfile": "; the gRPC endpoint serves no TLS",
            "ssl_certfile": "; the gRPC endpoint serves no TLS",
        }.get(dest, "")
        p.col.findings.append(
            OptionFinding(
                rule="KV205",
                message=(
                    f"{option} is ignored: --grpc makes vllm serve start vLLM's gRPC server (serve_grpc), which "
                    f"reads --host, --port and the engine's options, not the OpenAI HTTP server's{what}"
                ),
                loc=v.loc,
                fix=f"remove {option}, or drop --grpc to serve the OpenAI-compatible HTTP API",
                severity="warning",
                option=option,
            )
        )


def _check_extensible(p: _Parser) -> None:
    """KV206 for ``--enable-extensible-kv-cache`` given with a setting under which vLLM 0.34.0 cannot use the
    extensible KV cache: ``vllm@0.34.0:vllm/config/vllm.py::VllmConfig._resolve_extensible_kv_cache`` raises
    "enable_extensible_kv_cache: REASON." when it was asked for explicitly (left unset, vLLM turns it off
    instead). The reasons are :func:`kvlint.memory.vllm.extensible_kv_cache_unsupported`'s without the ROCm one
    (the GPU is not known here), on the settings the plan reads (:func:`kvlint.memory.vllm.settings_from_flags`).
    The refused flag is dropped, so the plan sizes the cache as vLLM does without it."""
    flags = p.col.flags
    on = flags.get("enable_extensible_kv_cache")
    if on is None or on.value is not True:
        return
    from kvlint.memory.vllm import extensible_kv_cache_unsupported, settings_from_flags

    why = extensible_kv_cache_unsupported(settings_from_flags(flags, p.env, p.version))
    if why is None:
        return
    v = flags.pop("enable_extensible_kv_cache")
    option = p.col.seen_option.get("enable_extensible_kv_cache", "--enable-extensible-kv-cache")
    p.col.findings.append(
        OptionFinding(
            rule="KV206",
            message=(
                f"{option} is refused at start-up with these settings: vLLM raises "
                f"'enable_extensible_kv_cache: {why}.'"
            ),
            loc=v.loc,
            fix=f"remove {option} (vLLM then sizes the KV cache without it), or the setting it conflicts with",
            severity="error",
            option=option,
        )
    )


def parse_vllm_argv(
    argv: Sequence[str],
    *,
    locs: Sequence[Loc | None] | None = None,
    version: str | None = None,
    env: Mapping[str, str] | None = None,
    config_loader: Callable[[str], tuple[str, Loc | None] | None] | None = None,
    container: LDict | None = None,
    image: str = "",
    sources: Sequence[str] | None = None,
    positional_model: bool = True,
    map_config_pos: Callable[[Loc | None, str, int, int], Loc | None] | None = None,
    kaito_wrapper: bool = False,
    runtime_template: bool = False,
    exec_form: bool = False,
    grpc: str = "",
    maybe_set: Collection[str] | None = None,
    envsubst_template: bool = False,
) -> ServingConfig:
    """Parse the arguments that follow ``vllm serve`` (or ``python -m vllm.entrypoints.openai.api_server``).

    Args:
        argv: the argument strings, already expanded (Kubernetes ``$(VAR)``, shell variables).
        locs: position of each argv item (same length; None entries allowed).
        version: the vLLM release (``0.11.0``) the option table and value rules are checked against;
            None = the union of all releases kvlint knows (0.4.3 … 0.34.0).
        env: the container's literal env (copied to ``ServingConfig.env``).
        config_loader: ``path -> (yaml_text, loc_of_text)`` for ``--config FILE`` (e.g. read from a
            ConfigMap mounted at that path); None or a None result -> a KV503 note that the file's
            settings are unknown.
        container, image: stored on the result (``container_name`` from ``container["name"]``).
        sources: per-item ``Value.source`` (``arg`` by default; ``env`` for items produced by expansion).
        positional_model: accept a positional MODEL (``vllm serve`` form); with the ``api_server`` module
            vLLM itself would reject it, kvlint still reads it.
        map_config_pos: ``(text_loc, text, line, column) -> Loc`` to place config-file values precisely.
        runtime_template: the command is a serving-runtime template's: an unresolved parallel size is the using
            service's, an info note rather than a "not sized" warning (:attr:`Collector.layout_from_service`).
        exec_form: the words reach vLLM without a shell (:attr:`kvlint.types.ServingConfig.exec_form`): a bare
            ``$VAR`` / ``${VAR}`` word is vLLM's literal text (a positional one its MODEL), not arguments a shell
            would expand.
        envsubst_template: the manifest is a template for envsubst (KV002), which replaces an option's value
            ``$VAR`` before the engine sees it (:func:`kvlint.engines.options.literal_dollar`).
        grpc: the module of vLLM's gRPC server the arguments are given to (``vllm.entrypoints.grpc_server`` or
            ``vllm.entrypoints.launchers.grpc_server``), which does not take the OpenAI server's own options
            (KV205, :meth:`_Parser._openai_only`, which names it); "" for another entrypoint.
        maybe_set: the variables a bare ``$ARGS`` word may take words from (:attr:`kvlint.engines.shell.ShellCommand.
            maybe_set` for a script's words; ``*`` any name); None: judged from ``container``'s env
            (:func:`kvlint.engines.options.bare_expansion_unread`).

    Returns:
        a ``ServingConfig`` with ``engine="vllm"``; ``flags`` keyed by argparse dest (``max_model_len``,
        ``tensor_parallel_size`` ...), values converted (ints, floats, bools, JSON dicts; ``max_model_len``
        ``-1`` means ``auto``); ``findings`` with KV205 (unknown option for that release, closest known
        option suggested), KV206 (rejected value), KV207 (same setting twice, last wins) and KV503 notes
        (values hidden behind unresolved variables). Never raises on bad input.
    """
    argv = list(argv)
    locs = list(locs) if locs is not None else [None] * len(argv)
    if len(locs) < len(argv):
        locs += [None] * (len(argv) - len(locs))
    sources = list(sources) if sources is not None else ["arg"] * len(argv)
    env = dict(env or {})
    kaito_path: str | None = None
    kaito_loc: Loc | None = None
    if kaito_wrapper or "kaito" in (image or ""):
        # KAITO's inference_api.py wrapper: --kaito-config-file names a YAML whose `vllm:` mapping is
        # appended to the command line (kaito-project/kaito presets/workspace/inference/vllm/inference_api.py
        # @997577de KAITOArgumentParser.parse_args); its other --kaito-* options are its own, not vLLM's
        # (--kaito-disable-rate-limit takes no value)
        kept: list[int] = []
        k = 0
        while k < len(argv):
            a = argv[k]
            if a == "--kaito-config-file" and k + 1 < len(argv):
                kaito_path, kaito_loc = argv[k + 1], locs[k + 1]
                k += 2
                continue
            if a.startswith("--kaito-config-file="):
                kaito_path, kaito_loc = a.split("=", 1)[1], locs[k]
                k += 1
                continue
            if a.startswith("--kaito-"):
                takes_value = "=" not in a and a != "--kaito-disable-rate-limit"
                k += 2 if takes_value and k + 1 < len(argv) and not argv[k + 1].startswith("--") else 1
                continue
            kept.append(k)
            k += 1
        argv, locs, sources = [argv[i] for i in kept], [locs[i] for i in kept], [sources[i] for i in kept]
    p = _Parser(version, env, runtime_template, grpc)
    config_path = p.run(
        argv,
        locs,
        sources,
        positional_model=positional_model,
        exec_form=exec_form,
        envsubst_template=envsubst_template,
    )
    if config_path is not None and config_path.split(".")[-1] not in ("yaml", "yml"):
        # vLLM stops before it opens the file: FlexibleArgumentParser.load_config_file raises ValueError
        # "Config file must be of a yaml/yml type." for a path whose text after its last "." (case kept) is not
        # yaml/yml (vllm 0.7.3 sdist vllm/utils.py, 0.11.0 vllm/utils/__init__.py, 0.34.0
        # vllm/utils/argparse_utils.py; --config exists from 0.7.3 among the releases kvlint knows). The rest of
        # the message differs: 0.7.3 and 0.11.0 pass ("...type.\<indent>%s supplied", extension) as two
        # arguments, so Python prints the tuple unformatted; 0.34.0's f-string prints "... json supplied"
        cfg_loc = next((locs[k + 1] for k, a in enumerate(argv[:-1]) if a == "--config"), None)
        extension = config_path.split(".")[-1]
        folder, _sep, name = config_path.rpartition("/")
        folder = folder + _sep
        stem = name.rsplit(".", 1)[0] if "." in name.strip(".") else name
        p.col.invalid(
            "--config",
            config_path,
            cfg_loc,
            "vLLM loads a --config file only when its name ends in .yaml or .yml; it stops at start-up with "
            f'ValueError "Config file must be of a yaml/yml type." (naming what it read as the extension, '
            f"'{extension[:40]}') and never reads the file",
            fix=f"give the file a name ending in .yaml (the key it is mounted from) and pass that path: --config "
            f"{folder}{stem}.yaml",
        )
        unknown_from_config_file(p.col, "vllm", cfg_loc)
    elif config_path is not None:
        cli_flags, cli_model = dict(p.col.flags), p.model
        cfg_loc = next((locs[k + 1] for k, a in enumerate(argv[:-1]) if a == "--config"), None)
        cp = _config_file_flags(
            p, f"--config {config_path}", config_path, cfg_loc, None, "warning", config_loader, map_config_pos
        )
        if cp is not None:
            # config first, then the CLI again so that CLI values win (vLLM: CLI > config file)
            merged = dict(cp.col.flags)
            merged.update(cli_flags)
            p.col.flags = merged
            p.model = cli_model or cp.model
        else:
            unknown_from_config_file(p.col, "vllm", cfg_loc)
    if kaito_path:
        kp = _config_file_flags(
            p,
            f"--kaito-config-file {kaito_path} (the KAITO inference config)",
            kaito_path,
            kaito_loc,
            "vllm",
            "info",
            config_loader,
            map_config_pos,
            # a Workspace's pod runs KAITO's untagged kaito-base image (kvlint.workloads.kaito)
            restate=lambda f: kaito_entry(f, workspace=(image or "").endswith("/kaito-base")),
        )
        if kp is not None:
            p.col.flags.update(kp.col.flags)  # appended after the command line: the file wins
            for dest in kp.col.flags:
                p.col.written.pop(dest, None)  # a setting of the file, not of the command line's option word
    _check_lora(p)
    _check_speculative(p)
    _check_extensible(p)
    _check_grpc_serve(p, positional_model)
    p.col.flags.pop("model", None)
    cfg = p.col.serving_config("vllm", container, image, version, p.model, env, locs)
    if p.unseen is not None:
        bare_expansion_unread(cfg, *p.unseen, maybe_set)
    return cfg
