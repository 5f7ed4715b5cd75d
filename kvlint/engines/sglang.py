"""SGLang ``python -m sglang.launch_server`` / ``sglang serve`` command lines -> ServingConfig.

SGLang's ``ServerArgs.add_cli_args`` is a plain argparse parser (prefix abbreviations allowed, last value
wins). Main memory settings and their aliases (docs/engine-memory-model.md §3; sglang@0.5.5:
sglang/srt/server_args.py::ServerArgs.add_cli_args): ``--model-path`` [``--model``], ``--tp-size``
[``--tensor-parallel-size``, ``--tp``], ``--pp-size`` [``--pipeline-parallel-size``], ``--dp-size``
[``--data-parallel-size``, ``--dp``], ``--ep-size`` [``--expert-parallel-size``, ``--ep``],
``--mem-fraction-static``, ``--context-length``, ``--max-running-requests``, ``--max-total-tokens``,
``--chunked-prefill-size``, ``--kv-cache-dtype``, ``--page-size``, ``--dtype``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING

import yaml

from kvlint.engines import sglang_flags_data as data
from kvlint.engines.options import (
    QUOTED_SOURCE,
    Collector,
    ConfigReads,
    bare_expansion,
    bare_expansion_unread,
    literal_dollar,
    literal_dollar_said,
    prefixed,
    unknown_from_config_file,
    unresolved_why,
    unseen_expansion,
)
from kvlint.engines.sglang_flags_data import SGLANG_OPTIONS
from kvlint.engines.shell import UNRESOLVED_RE
from kvlint.memory.sglang_graphs import MAX_GRAPH_SIZE, MAX_GRAPH_SIZES, read_graph_config
from kvlint.source import LDict, Loc
from kvlint.types import OptionFinding, ServingConfig, Value

if TYPE_CHECKING:
    from kvlint.memory.versions import ReleaseVersion

__all__ = ["parse_sglang_argv", "sglang_options"]


@functools.lru_cache(maxsize=64)
def sglang_options(version: str | None) -> tuple[frozenset[str], bool]:
    """The option strings SGLang ``version`` accepts, and whether unknown options can be reported for it.

    From :mod:`kvlint.engines.sglang_flags_data` (wheels 0.3.6 … 0.5.23): the options of the nearest sampled
    release at or below ``version`` and of the nearest at or above (generous: an option added between two samples
    is not reported). Unknown version: every sampled release (the union), reported; a version newer than the newest
    sampled release: the union, not reported (kvlint has not read that release). Versions ordered by PEP 440.
    Memoised by version string (a pure function of it): the table is not rebuilt for every command line.
    """
    from kvlint.memory.versions import parse_pep440

    v = parse_pep440(version) if version else None
    if v is None:
        return SGLANG_OPTIONS, True
    sampled = [parse_pep440(x) for x in data.VERSIONS]
    if v > sampled[-1]:
        return SGLANG_OPTIONS, False
    idx = set()
    below = [i for i, s in enumerate(sampled) if s is not None and s <= v]
    above = [i for i, s in enumerate(sampled) if s is not None and s >= v]
    if below:
        idx.add(below[-1])
    if above:
        idx.add(above[0])
    mask = sum(1 << i for i in idx)
    return frozenset(o for o, m in data.OPTION_MASKS.items() if m & mask), True


@functools.lru_cache(maxsize=64)
def _tables(version: str | None) -> tuple[frozenset[str], bool, list[str]]:
    """:func:`sglang_options` of ``version`` and the sorted option strings an abbreviation is matched against
    (the options and :data:`_ALIASES`), built once per version. Callers must not mutate the list."""
    table, report = sglang_options(version)
    return table, report, sorted(set(table) | set(_ALIASES))


_ALIASES = {
    "--model": "--model-path",
    "--tensor-parallel-size": "--tp-size",
    "--tp": "--tp-size",
    "--pipeline-parallel-size": "--pp-size",
    "--pp": "--pp-size",
    "--data-parallel-size": "--dp-size",
    "--dp": "--dp-size",
    "--expert-parallel-size": "--ep-size",
    "--ep": "--ep-size",
}
_INT = {
    "tp_size",
    "pp_size",
    "dp_size",
    "ep_size",
    "context_length",
    "max_running_requests",
    "max_total_tokens",
    "chunked_prefill_size",
    "page_size",
    "max_prefill_tokens",
    "port",
    "nnodes",
    "node_rank",
    "cuda_graph_max_bs",
    # the per-phase graph maxima (``type=int`` in 0.5.14 - 0.5.19's ``add_cli_args``, ``Optional[int]`` fields after)
    # and 0.5.8 - 0.5.13's ``--piecewise-cuda-graph-max-tokens`` (``type=int``): a word that is not an integer is
    # refused by argparse, as kvlint now does (KV206) instead of sizing the default maximum
    # 0.5.22+'s attention-DP width (``attn_dp_size: int``, alias ``--attention-data-parallel-size``)
    "attn_dp_size",
    "attention_data_parallel_size",
    "cuda_graph_max_bs_decode",
    "cuda_graph_max_bs_prefill",
    "piecewise_cuda_graph_max_tokens",
    # the hybrid state pool's slots: ServerArgs ``max_mamba_cache_size: Optional[int]`` (0.5.16+ annotated field,
    # ``type=int`` before), argparse refuses "2.5" or "nan"; read as a string, such a value sized the pool at the
    # ratio and a 24-digit one at 10^23 slots
    "max_mamba_cache_size",
    # ``--moe-dense-tp-size`` (``type=int`` from 0.4.6, ``Optional[int]`` field from 0.5.16): argparse refuses a word
    "moe_dense_tp_size",
}
#: CUDA-graph capture lists (``type=int, nargs="+"``: ``--cuda-graph-bs`` from 0.4.0, ``--piecewise-cuda-graph-tokens``
#: 0.5.8 - 0.5.19, ``--cuda-graph-bs-decode`` / ``--cuda-graph-bs-prefill`` from 0.5.14; sglang ``server_args.py::
#: ServerArgs.add_cli_args``, ``arg_groups/fields/exec_.py`` from 0.5.20): every following word up to the next option
#: is an entry, read as a tuple of ints. SGLang sizes the graph reserve from them (the decode batch is the list's
#: maximum, the prefill reserve its length: :mod:`kvlint.memory.sglang_graphs`).
_LISTS = {"cuda_graph_bs", "cuda_graph_bs_decode", "cuda_graph_bs_prefill", "piecewise_cuda_graph_tokens"}
#: dests whose value is a capture size (bounded by :data:`kvlint.memory.sglang_graphs.MAX_GRAPH_SIZE`, as the
#: entries of :data:`_LISTS`, whose length :data:`kvlint.memory.sglang_graphs.MAX_GRAPH_SIZES` bounds)
_GRAPH_SIZE_DESTS = {
    "cuda_graph_max_bs",
    "cuda_graph_max_bs_decode",
    "cuda_graph_max_bs_prefill",
    "piecewise_cuda_graph_max_tokens",
}
#: From this release the CUDA-graph options below share one argparse ``dest`` with their replacement
#: (``DeprecatedAliasStoreAction`` / ``DeprecatedStoreConstAction`` in ``server_args.py::ServerArgs.add_cli_args`` of
#: the 0.5.14 - 0.5.19 wheels): whichever is given last wins, as for one option given twice. Before it (0.5.8 - 0.5.13)
#: they are fields of their own. ``option -> (dest, constant or None for an option that takes a value)``.
SHARED_GRAPH_DEST_FROM = (0, 5, 14)
_SHARED_GRAPH_DEST: dict[str, tuple[str, str | None]] = {
    "--cuda-graph-max-bs": ("cuda_graph_max_bs_decode", None),
    "--cuda-graph-bs": ("cuda_graph_bs_decode", None),
    "--piecewise-cuda-graph-max-tokens": ("cuda_graph_max_bs_prefill", None),
    "--piecewise-cuda-graph-tokens": ("cuda_graph_bs_prefill", None),
    "--disable-piecewise-cuda-graph": ("cuda_graph_backend_prefill", "disabled"),
    "--enforce-piecewise-cuda-graph": ("cuda_graph_backend_prefill", "tc_piecewise"),
    "--enable-breakable-cuda-graph": ("cuda_graph_backend_prefill", "breakable"),
}


def _release(version: str | None) -> ReleaseVersion | None:
    """The SGLang release ``version`` names (:func:`kvlint.memory.versions.parse_pep440`), or None when it names
    none: None, empty, ``latest`` or unreadable (the cases :func:`kvlint.memory.sglang.sglang_version` assumes the
    newest for)."""
    from kvlint.memory.versions import parse_pep440

    return parse_pep440(version) if version and version.strip().lower() != "latest" else None


def _shared_graph_dests(version: str | None) -> bool:
    """Whether SGLang ``version`` (the newest read when unknown, as the memory model assumes) gives the options of
    :data:`_SHARED_GRAPH_DEST` their replacement's dest."""
    v = _release(version)
    return v is None or v >= SHARED_GRAPH_DEST_FROM


#: ``--config`` keys SGLang refuses whatever their value, by release: ``key -> (first, last release read, why)``.
#: ``ConfigArgumentMerger`` (``server_args_config_parser.py``; from 0.5.19 ``utils/server_args_config_parser.py``)
#: of 0.5.8 - 0.5.22 raises "Unsupported config option '<key>' with action '<class>'" for a key that is the
#: ``dest`` of an action neither ``store_true`` nor ``store`` (its ``unsupported_actions``, keyed by dest, checked
#: before the value is looked at): a deprecated switch, or the new option whose dest a deprecated alias shares; the
#: 0.5.23 merger keeps a dest that a supported option also reads and accepts single-value actions, which leaves the
#: deprecated switches (``nargs=0``). A deprecated ``DeprecatedStoreConstAction`` alias under its own name is no dest
#: and no ``store_true``, so its value is written after it (``--disable-piecewise-cuda-graph true``, or ``false``),
#: which argparse leaves over ("unrecognized arguments"). Read in the 0.5.10 - 0.5.14, 0.5.17, 0.5.19 - 0.5.23 wheels
#: (the actions, ``add_cli_args``) and with the mergers of 0.5.8, 0.5.10 - 0.5.14, 0.5.16 - 0.5.23 (0.5.17, 0.5.22 and 0.5.23 run); only the keys of
#: the settings kvlint sizes with are listed.
_UNSUPPORTED = "SGLang's --config merger refuses the key (\"Unsupported config option ... with action '{}'\")"
_WORD_LEFT = "SGLang's --config merger writes its value after the switch, which argparse leaves over ('unrecognized arguments')"
CONFIG_REFUSED: dict[str, tuple[tuple[int, int, int], tuple[int, int, int], str]] = {
    "enable_piecewise_cuda_graph": ((0, 5, 10), (0, 5, 13), _UNSUPPORTED.format("DeprecatedAction")),
    "disable_cuda_graph": ((0, 5, 14), (0, 5, 23), _UNSUPPORTED.format("DeprecatedStoreTrueAction")),
    "enable_dp_attention": ((0, 5, 22), (0, 5, 23), _UNSUPPORTED.format("DeprecatedStoreTrueAction")),
    **{
        dest: ((0, 5, 14), (0, 5, 19), _UNSUPPORTED.format("DeprecatedAliasStoreAction"))
        for dest in (
            "cuda_graph_max_bs_decode",
            "cuda_graph_bs_decode",
            "cuda_graph_max_bs_prefill",
            "cuda_graph_bs_prefill",
            "mamba_radix_cache_strategy",
        )
    },
    "cuda_graph_backend_prefill": ((0, 5, 14), (0, 5, 19), _UNSUPPORTED.format("DeprecatedStoreConstAction")),
    **{
        key: ((0, 5, 14), (0, 5, 19), _WORD_LEFT)
        for key in (
            "disable_piecewise_cuda_graph",
            "enforce_piecewise_cuda_graph",
            "enable_breakable_cuda_graph",
        )
    },
}


def _refused_config_keys(
    keys: Sequence[tuple[str, str, Loc | None]], version: str | None, col: Collector
) -> None:
    """KV206 for each ``--config`` key SGLang ``version`` refuses (:data:`CONFIG_REFUSED`): the server does not
    start. ``keys``: ``(key, value text, position)`` of the file's top-level keys. Nothing for an unknown version,
    ``latest``, or one outside the releases read."""
    v = _release(version)
    if v is None:
        return
    for key, text, kloc in keys:
        row = CONFIG_REFUSED.get(key.replace("-", "_"))
        if row is None or not row[0] <= v <= row[1]:
            continue
        option = "--" + key.replace("_", "-")
        col.invalid(
            option,
            text,
            kloc,
            f"SGLang {version} does not start with the key {key} in a --config file: {row[2]}",
            fix=f"give {option} on the command line instead (argparse reads it there), or leave the key out",
        )


#: ``mamba_full_memory_ratio: float`` (ServerArgs, 0.5.13+): "abc" was read as the 0.9 default, which SGLang refuses
_FLOAT = {"mem_fraction_static", "mamba_full_memory_ratio"}
# Options known to take no value (store_true) among the common ones.
_SWITCHES = {
    "--trust-remote-code",
    "--enable-metrics",
    "--skip-server-warmup",
    "--enable-dp-attention",
    "--disable-radix-cache",
    "--disable-cuda-graph",
    "--enable-torch-compile",
    "--disable-flashinfer-autotune",
    "--enable-mixed-chunk",
    "--enable-cache-report",
    "--enable-hierarchical-cache",
    "--enable-ep-moe",
    "--enable-deepep-moe",
    "--disable-overlap-schedule",
    "--enable-linear-replayssm-spec",
    "--log-requests",
    "--enable-p2p-check",
    "--disable-custom-all-reduce",
    "--enable-lora",
    "--enable-eplb",
    "--disable-piecewise-cuda-graph",
    "--enforce-piecewise-cuda-graph",
    "--enable-breakable-cuda-graph",
    "--enable-piecewise-cuda-graph",
    "--disable-prefill-cuda-graph",
    "--disable-decode-cuda-graph",
    # store_true in every release (ServerArgs.add_cli_args); read for the embedding mode (memory/pooling.py), where
    # "--is-embedding false" was taken as on although SGLang refuses to start ('unrecognized arguments: false')
    "--is-embedding",
}


def _config_file_argv(
    text: str,
    at: Callable[[int, int], Loc | None],
    section: str | None = None,
    key_out: list[tuple[str, str, Loc | None]] | None = None,
) -> tuple[list[str], list[Loc | None], list[str]]:
    """The arguments SGLang makes of a ``--config`` YAML file, with the position of each: every top-level key
    ``k`` gives ``--k``; ``true`` the bare flag, ``false`` nothing (SGLang adds ``--k false`` for a boolean option
    that is not a switch: rare, read here as the switch), a list ``--k item...``, any other value ``--k value``
    (an empty value, ``None``, is left out), a mapping ``--k JSON`` (0.5.14 on). SOURCE: sglang ``python/sglang/srt/server_args_config_parser.py``
    ``ConfigArgumentMerger._convert_config_to_args`` (the sglang 0.5.5 wheel; the same at
    sgl-project/sglang@03bd2f16). Raises ValueError when the file is not a mapping of names to values or its
    aliases expand it beyond its size, yaml.YAMLError when it is not YAML (SGLang's ``yaml.safe_load`` fails then
    too). ``section``: the top-level key whose mapping holds the options instead (NVIDIA Dynamo's SGLang worker,
    ``--config-key KEY``: ai-dynamo/dynamo components/src/dynamo/sglang/args.py ``_extract_config_section``,
    @d3aac630, which refuses a missing key or a section that is not a mapping, ValueError here too). ``key_out``, when
    given, gets every top-level key with its value's text and the key's position, whatever the value (for
    :func:`_refused_config_keys`)."""
    from kvlint.engines.vllm import _check_expansion, _mapping_pairs, _node_value

    try:
        root = yaml.compose(text)
    except RecursionError:
        raise ValueError("the file nests deeper than PyYAML's composer reads") from None
    if root is None:
        return [], [], []
    if not isinstance(root, yaml.MappingNode):
        raise ValueError("SGLang's --config file must hold a mapping of option names to values")
    _check_expansion(root, len(text))
    if section is not None:
        pairs = _mapping_pairs(root)
        keys = [str(k.value) for k, _v in pairs if isinstance(k, yaml.ScalarNode)]
        chosen = [v for k, v in pairs if isinstance(k, yaml.ScalarNode) and str(k.value) == section]
        if not chosen:
            raise ValueError(
                f"--config-key {section!r} is not a key of the file (its keys: {', '.join(keys[:10]) or 'none'})"
            )
        root = chosen[-1]
        if not isinstance(root, yaml.MappingNode):
            raise ValueError(f"the section {section!r} must hold a mapping of option names to values")
    argv: list[str] = []
    locs: list[Loc | None] = []
    for knode, vnode in _mapping_pairs(root):
        if not isinstance(knode, yaml.ScalarNode):
            raise ValueError(f"the key on line {knode.start_mark.line + 1} is not a plain name")
        key = str(knode.value)
        kloc = at(knode.start_mark.line, knode.start_mark.column)
        vloc = at(vnode.start_mark.line, vnode.start_mark.column)
        if key_out is not None:
            key_out.append((key, str(vnode.value) if isinstance(vnode, yaml.ScalarNode) else "", kloc))
        try:
            value = None if vnode.tag == "tag:yaml.org,2002:null" else _node_value(vnode)
        except yaml.YAMLError:
            raise
        except (TypeError, ValueError, IndexError, AttributeError, OverflowError, RecursionError) as exc:
            raise ValueError(
                f"the value of '{key}' on line {vnode.start_mark.line + 1} cannot be read: {type(exc).__name__}"
            ) from None
        if value is True:
            argv.append("--" + key)
            locs.append(kloc)
        elif value is False or value is None or (isinstance(value, list) and not value):
            continue
        elif isinstance(value, list):
            argv.append("--" + key)
            locs.append(kloc)
            argv += [str(v) for v in value]
            locs += [vloc] * len(value)
        elif isinstance(value, dict):
            # a mapping is written as its JSON text (``json.dumps``, the 0.5.14 and later mergers; ``--cuda-graph-config``)
            try:
                text_value = json.dumps(value)
            except (TypeError, ValueError):
                text_value = str(value)
            argv += ["--" + key, text_value]
            locs += [kloc, vloc]
        else:
            argv += ["--" + key, str(value)]
            locs += [kloc, vloc]
    return argv, locs, ["config"] * len(argv)


def _with_config_file(
    argv: list[str],
    locs: list[Loc | None],
    sources: list[str],
    col: Collector,
    config_loader: Callable[[str], tuple[str, Loc | None] | None] | None,
    map_config_pos: Callable[[Loc | None, str, int, int], Loc | None] | None,
    config_key_option: bool = False,
    version: str | None = None,
) -> tuple[list[str], list[Loc | None], list[str]]:
    """``argv`` with SGLang's ``--config FILE`` applied as SGLang applies it: the file's arguments
    (:func:`_config_file_argv`) first, then the command line without ``--config FILE``, so that a command-line
    value wins (sglang ``server_args_config_parser.py`` ``ConfigArgumentMerger.merge_config_with_args`` /
    ``_insert_config_args``: "CLI > Config > Defaults", the sglang 0.5.5 wheel and sgl-project/sglang@03bd2f16;
    ``prepare_server_args`` calls it when ``--config`` is in the arguments, SGLang 0.5.3 and later: added by
    sgl-project/sglang#10534, merged September 2025 after 0.5.2; the 0.5.1 wheel has no ``--config``, the 0.5.3 wheel
    has it, :mod:`kvlint.engines.sglang_flags_data`). Only the exact word ``--config``
    counts, as there. The file is read through ``config_loader`` (a ConfigMap mounted at that path); when it is
    not among the inputs, unreadable or not YAML, a KV503 warning on ``col`` says its settings are unknown and
    the command line is read alone. ``config_key_option`` (NVIDIA Dynamo's SGLang worker): a ``--config-key KEY``
    among the arguments (the exact word, as Dynamo's ``parse_args`` looks for it) names the file's top-level key
    whose mapping holds the options (a file with ``prefill:`` and ``decode:`` sections); Dynamo takes it off the
    arguments before SGLang merges the file, and so does kvlint. A key SGLang ``version`` refuses in the file is
    KV206 (:func:`_refused_config_keys`); its value is still read."""
    section: str | None = None
    if config_key_option and "--config-key" in argv:
        kk = argv.index("--config-key")
        if kk + 1 < len(argv):
            section = argv[kk + 1]
            argv, locs, sources = (
                argv[:kk] + argv[kk + 2 :],
                locs[:kk] + locs[kk + 2 :],
                sources[:kk] + sources[kk + 2 :],
            )
    idx = [k for k, a in enumerate(argv) if a == "--config"]
    if len(idx) != 1 or idx[0] + 1 >= len(argv):
        # ConfigArgumentMerger._extract_config_file_path (0.5.5 - 0.5.23 wheels) raises before any file is read:
        # the server does not start, whichever file comes last. The words are taken off (no KV207 "the last wins").
        many = len(idx) > 1
        col.invalid(
            "--config",
            " ".join(argv[k + 1] for k in idx if k + 1 < len(argv)) if many else "",
            locs[idx[1 if many else 0]],
            "SGLang refuses "
            + (
                "several --config files ('Multiple config files specified! Only one allowed.')"
                if many
                else "a --config with no file after it ('No config file specified after --config flag!')"
            )
            + " and does not start",
            fix="give one --config FILE (merge the files into one)"
            if many
            else "give the file after --config",
        )
        drop = {j for k in idx for j in (k, k + 1) if j < len(argv)}
        keep = [j for j in range(len(argv)) if j not in drop]
        return [argv[j] for j in keep], [locs[j] for j in keep], [sources[j] for j in keep]
    k = idx[0]
    path, ploc = argv[k + 1], locs[k + 1]
    rest = (argv[:k] + argv[k + 2 :], locs[:k] + locs[k + 2 :], sources[:k] + sources[k + 2 :])
    what = f"--config {path}" + (f" --config-key {section}" if section is not None else "")
    loaded = config_loader(path) if config_loader is not None else None
    if loaded is None:
        why_not = getattr(config_loader, "why_not", None)
        problem = why_not(path) if callable(why_not) else None
        col.note(
            f"{what}: the file is {problem or 'not among the inputs (no ConfigMap provides it)'}; its settings "
            "are unknown to kvlint",
            ploc,
            severity="warning",
            # the loader's own remedy (kvlint plan's local file: kvlint.engines.command.LocalConfigFiles)
            fix=getattr(config_loader, "fix", None)
            or "pass the ConfigMap that holds the file with the workload (kvlint check DEPLOYMENT.yaml "
            "CONFIGMAP.yaml)",
        )
        col.unread_config.append(ploc)
        return rest
    text, text_loc = loaded
    from kvlint.engines.vllm import config_file_too_large

    too_large = config_file_too_large(text)
    if too_large is not None:
        # no cluster mounts it (the API server refuses a ConfigMap over 1 MiB), and PyYAML's pure-Python composer,
        # which SGLang's yaml.safe_load and this reader use, takes seconds a MiB
        col.note(f"{what}: {too_large}", text_loc or ploc, severity="warning")
        col.unread_config.append(ploc)  # its settings unknown, not the defaults (as vLLM's unread --config)
        return rest

    def at(line: int, column: int) -> Loc | None:
        if map_config_pos is not None:
            return map_config_pos(text_loc, text, line, column)
        return None if text_loc is None else Loc(text_loc.file, text_loc.line + line + 1, column + 1)

    def read() -> tuple[list[str], list[Loc | None], list[str], list[tuple[str, str, Loc | None]]]:
        keys: list[tuple[str, str, Loc | None]] = []
        return (*_config_file_argv(text, at, section, keys), keys)

    done = _CONFIG_READS.read(
        (text, text_loc, section, map_config_pos), text, read, (yaml.YAMLError, ValueError)
    )
    if isinstance(done, Exception):
        col.note(f"{what} cannot be read: {done}", text_loc or ploc, "warning")
        col.unread_config.append(ploc)
        return rest
    c_argv, c_locs, c_src, keys = done
    _refused_config_keys(keys, version, col)
    return list(c_argv) + rest[0], list(c_locs) + rest[1], list(c_src) + rest[2]


#: ``--config`` files read so far (:func:`_config_file_argv`'s arguments, positions, sources and top-level keys, or
#: the error), by text, position, section and position mapper: the containers of a manifest that mount one
#: ConfigMap read it once (as :data:`kvlint.engines.vllm._CONFIG_READS`: PyYAML's pure-Python composer takes about
#: 10 CPU s for a 1 MiB flow list, and each of a pod's containers read it again).
_CONFIG_READS: ConfigReads[
    tuple[list[str], list[Loc | None], list[str], list[tuple[str, str, Loc | None]]]
] = ConfigReads()


#: The settings ``--cuda-graph-config`` takes per phase, by release (``model_executor/cuda_graph_config.py::
#: ALLOWED_KEYS_PER_PHASE``, read in every wheel 0.5.14 - 0.5.23; ``parse_cuda_graph_config_arg`` refuses another key,
#: "unknown key ..., expected one of ..."): ``(key, first release, last release)``.
_GRAPH_CONFIG_KEYS: dict[str, tuple[tuple[str, tuple[int, int, int], tuple[int, int, int]], ...]] = {
    "decode": (
        ("backend", (0, 5, 14), (0, 5, 23)),
        ("max_bs", (0, 5, 14), (0, 5, 23)),
        ("bs", (0, 5, 14), (0, 5, 23)),
        ("tc_compiler", (0, 5, 14), (0, 5, 21)),
    ),
    "prefill": (
        ("backend", (0, 5, 14), (0, 5, 23)),
        ("max_bs", (0, 5, 14), (0, 5, 23)),
        ("bs", (0, 5, 14), (0, 5, 23)),
        ("tc_compiler", (0, 5, 14), (0, 5, 21)),
        ("full_prefill_max_req", (0, 5, 15), (0, 5, 23)),
        ("full_prefill_prefix_chunk_tokens", (0, 5, 17), (0, 5, 23)),
        ("max_context_size", (0, 5, 21), (0, 5, 23)),
        ("max_seq_len", (0, 5, 21), (0, 5, 23)),
    ),
}


def _graph_config_keys_refused(raw: str, version: str | None) -> str:
    """Why SGLang ``version`` refuses a ``--cuda-graph-config`` whose phases :func:`kvlint.memory.sglang_graphs.
    read_graph_config` accepted: a setting that release does not take (:data:`_GRAPH_CONFIG_KEYS`), "" otherwise and
    for an unknown version, ``latest`` or one outside 0.5.14 - 0.5.23 (not read)."""
    v = _release(version)
    if v is None or not (0, 5, 14) <= v <= (0, 5, 23):
        return ""
    for phase, settings in read_graph_config(raw)[0].items():
        allowed = [k for k, first, last in _GRAPH_CONFIG_KEYS[phase] if first <= v <= last]
        for key in settings:
            if key not in allowed:
                return (
                    f"SGLang {version} does not take the setting {str(key)[:40]!r} in the {phase} phase "
                    f"(parse_cuda_graph_config_arg: 'unknown key'; it takes {', '.join(allowed)})"
                )
    return ""


#: ``sglang serve`` itself: the ``sglang`` console script (``sglang = sglang.cli.main:main``) and ``sglang/cli/`` are in
#: the 0.5.5 wheel and not in the 0.4.9.post3, 0.5.3 or 0.5.4 ones
SERVE_FROM = (0, 5, 5)
#: ``sglang serve MODEL``: the first word after ``serve`` (once ``--model-type`` is taken off) is the model when it
#: does not start with ``-``, from SGLang 0.5.16 (``sglang/cli/serve.py::_normalize_positional_model_path``, read in
#: the 0.5.16 - 0.5.23 wheels; absent from the 0.5.15 one).
SERVE_POSITIONAL_FROM = (0, 5, 16)
#: ``sglang serve --model-type {auto,llm,diffusion}``: taken off the arguments before the server's parser sees them
#: (``sglang/cli/serve.py::_extract_model_type_override``), from SGLang 0.5.10 (absent from the 0.5.9 wheel).
SERVE_MODEL_TYPE_FROM = (0, 5, 10)


def _serve_argv(
    argv: list[str], locs: list[Loc | None], sources: list[str], version: str | None, col: Collector
) -> tuple[list[str], list[Loc | None], list[str]]:
    """The arguments of ``sglang serve ...`` as SGLang ``version`` hands them to ``prepare_server_args``.

    ``sglang/cli/serve.py::serve`` (0.5.16 - 0.5.23 wheels): ``_extract_model_type_override`` takes every
    ``--model-type X`` / ``--model-type=X`` off (the exact words; 0.5.10 on, before that argparse refuses the
    option), then ``_normalize_positional_model_path`` turns a first word that does not start with ``-`` into
    ``--model-path WORD`` in front of the rest (0.5.16 on), so a later ``--model-path`` wins (argparse keeps the last
    value) and a ``--config`` file's value loses to it (the merger puts the file's arguments first). Before 0.5.16
    the word reaches argparse: ``cli/utils.py::get_model_path`` stops with "Error: --model-path is required" when no
    ``--model-path`` follows, else ``parse_args`` with "unrecognized arguments" (KV206 here; the word is not read as
    the model). An unknown release, ``latest`` or one newer than those read is read as 0.5.23."""
    v = _release(version)
    if v is not None and v < SERVE_FROM:
        _serve_refused(
            col,
            locs[0] if locs else None,
            f"SGLang {version} has no `sglang serve`: the `sglang` program (console script sglang.cli.main:main) "
            "comes with 0.5.5 (the 0.5.4 wheel has neither), so the container stops at once ('command not found' / "
            "'No module named sglang.cli'); the options are read as launch_server's",
            fix="use python3 -m sglang.launch_server --model-path MODEL ..., or an image of SGLang 0.5.5 or later",
        )
        return argv, locs, sources
    if v is None or v >= SERVE_MODEL_TYPE_FROM:
        keep = [
            k
            for k, a in enumerate(argv)
            if not (
                a.startswith("--model-type=") or a == "--model-type" or (k and argv[k - 1] == "--model-type")
            )
        ]
        argv, locs, sources = [argv[k] for k in keep], [locs[k] for k in keep], [sources[k] for k in keep]
    if not argv or argv[0].startswith("-"):
        return argv, locs, sources
    if v is None or v >= SERVE_POSITIONAL_FROM:
        return ["--model-path", *argv], [locs[0], *locs], [sources[0], *sources]
    has_path = _serve_names_model(argv, v)
    _serve_refused(
        col,
        locs[0],
        f"SGLang {version}'s `sglang serve` takes no positional model (it does from 0.5.16): the word "
        f"{argv[0][:60]!r} stops it with "
        + ("'unrecognized arguments'" if has_path else "'Error: --model-path is required'"),
        fix=f"write --model-path {argv[0][:60]}",
    )
    return argv, locs, sources


def _serve_refused(col: Collector, loc: Loc | None, message: str, fix: str) -> None:
    """KV206 (error) about the ``sglang serve`` command itself: SGLang does not start."""
    col.findings.append(
        OptionFinding(
            rule="KV206", message=message, loc=loc, fix=fix, severity="error", option="sglang serve"
        )
    )


#: ``sglang serve``'s own look for the model (``cli/utils.py::get_model_path``) takes ``--model`` as well as
#: ``--model-path`` from this release (read in the 0.5.11 and 0.5.12 wheels; the 0.5.5 - 0.5.10 ones take ``--model-path``
#: only)
SERVE_MODEL_ALIAS_FROM = (0, 5, 11)


def _serve_names_model(argv: Sequence[str], v: ReleaseVersion | None) -> bool:
    """Whether ``sglang serve``'s ``get_model_path`` (``cli/utils.py``, every wheel 0.5.5 - 0.5.23; from 0.5.18
    ``try_get_model_path``, then ``get_model_path`` for a backend that ``requires_model_path``, the LLM one) finds the
    model among the words as written: an exact ``--model-path`` with a word after it or ``--model-path=X``, and
    ``--model`` likewise from :data:`SERVE_MODEL_ALIAS_FROM` (``v`` None: the newest). Neither a ``--config`` file nor
    an abbreviation counts: SGLang stops with "Error: --model-path is required" before it merges the file."""
    names = ("--model-path", "--model") if v is None or v >= SERVE_MODEL_ALIAS_FROM else ("--model-path",)
    return any(
        (a in names and k + 1 < len(argv)) or a.startswith(tuple(n + "=" for n in names))
        for k, a in enumerate(argv)
    )


def _is_json(text: str) -> bool:
    """Whether ``text`` is JSON (a ``--cuda-graph-config`` object ends in ``}}``, which is no template)."""
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _read_list(
    argv: list[str],
    locs: list[Loc | None],
    sources: list[str],
    i: int,
    canon: str,
    dest: str,
    eq: str,
    explicit: str,
    loc: Loc | None,
    src: str,
    col: Collector,
) -> int:
    """Read a capture list (:data:`_LISTS`) whose option word is at ``i - 1``: ``--opt=N`` gives one entry, else every
    following word that is not an option (argparse's ``nargs="+"``; a negative number is a value, as argparse takes
    it when no option looks like one). Sets ``dest`` to a tuple of ints; an entry that is not an integer, below 1 or
    above :data:`kvlint.memory.sglang_graphs.MAX_GRAPH_SIZE`, a list longer than
    :data:`kvlint.memory.sglang_graphs.MAX_GRAPH_SIZES` or no entry at all is KV206 (and the
    setting left unresolved); a variable kvlint cannot resolve leaves it unresolved. Returns the next index."""
    words: list[str] = [explicit] if eq else []
    first = loc
    left: list[str] = []  # the words after ``--opt=N`` that argparse leaves over
    while i < len(argv) and (not argv[i].startswith("-") or re.fullmatch(r"-[0-9]+", argv[i]) is not None):
        if eq:
            left.append(argv[i])
        else:
            if not words:
                first, src = locs[i] or loc, sources[i]
            words.append(argv[i])
        i += 1
    if left:
        # ``--cuda-graph-bs=8 16``: argparse's consume_optional gives an explicit ``=`` value the one argument and
        # stops there (CPython Lib/argparse.py, 3.9 - 3.13), so ``16`` is a positional the parser has none for and
        # parse_args exits with "unrecognized arguments: 16" (sglang ``prepare_server_args``, 0.5.5 - 0.5.23)
        col.invalid(
            canon,
            f"{explicit} {' '.join(left)}",
            locs[i - len(left)] or loc,
            f"{canon}={explicit[:20]} takes one size; SGLang's parser leaves {' '.join(left)[:40]!r} over and "
            "refuses to start ('unrecognized arguments')",
            fix=f"write {canon} {explicit} {' '.join(left)} (a space, not =, before a list)",
        )
    raw = " ".join(words)
    if not words:
        col.invalid(canon, "", loc, "at least one integer is required")
        return i
    if any(UNRESOLVED_RE.search(w) for w in words):
        col.unresolved_value(dest, unresolved_why(canon, raw), first)
        return i
    problem = ""
    sizes: list[int] = []
    if len(words) > MAX_GRAPH_SIZES:
        problem = f"implausibly long ({len(words):,} sizes; kvlint reads up to {MAX_GRAPH_SIZES:,})"
    for w in words if not problem else ():
        try:
            size = int(w)
        except ValueError:
            problem = "integers are required"
            break
        if size < 1 or size > MAX_GRAPH_SIZE:
            problem = f"each capture size must be between 1 and {MAX_GRAPH_SIZE:,} (kvlint refuses {w[:20]})"
            break
        sizes.append(size)
    if problem:
        col.invalid(canon, raw, first, problem + "; the plan's graph reserve is made without it")
        col.unresolved[dest] = first
        return i
    col.set(dest, Value(tuple(sizes), first, raw, src), canon)
    return i


def parse_sglang_argv(
    argv: Sequence[str],
    *,
    locs: Sequence[Loc | None] | None = None,
    version: str | None = None,
    env: Mapping[str, str] | None = None,
    container: LDict | None = None,
    image: str = "",
    sources: Sequence[str] | None = None,
    runtime_template: bool = False,
    config_loader: Callable[[str], tuple[str, Loc | None] | None] | None = None,
    map_config_pos: Callable[[Loc | None, str, int, int], Loc | None] | None = None,
    config_key_option: bool = False,
    serve_cli: bool = False,
    exec_form: bool = False,
    maybe_set: Collection[str] | None = None,
    envsubst_template: bool = False,
) -> ServingConfig:
    """Parse the arguments after ``python -m sglang.launch_server`` (or ``sglang serve``).

    ``flags`` are keyed by SGLang's ``ServerArgs`` field names (``tp_size``, ``mem_fraction_static``,
    ``context_length``, ``max_running_requests``, ``max_total_tokens``, ``chunked_prefill_size``,
    ``kv_cache_dtype``, ``page_size`` ...); the model comes from ``--model-path``/``--model``. Options not
    in sglang 0.4.6/0.5.5 (nor a unique prefix of one) -> KV205; bad numbers -> KV206; repeats -> KV207.
    Unknown options are skipped, never fatal. ``runtime_template``: the command is a serving-runtime template's,
    whose ``--tp-size`` the using service sets (:attr:`kvlint.engines.options.Collector.layout_from_service`).
    ``config_loader`` (``path -> (yaml_text, position)``, a ConfigMap mounted at the path) and ``map_config_pos``
    read a ``--config FILE`` for the releases that take it (:func:`_with_config_file`); its values are read
    before the command line's, which win without a KV207. ``config_key_option``: the arguments are NVIDIA Dynamo's
    SGLang worker's, whose ``--config-key KEY`` selects a section of the file. ``serve_cli``: the arguments follow
    ``sglang serve``, which takes ``--model-type`` and a positional model first (:func:`_serve_argv`).
    ``exec_form``: the words reach SGLang without a shell; else a bare ``$ARGS`` word, which the shell makes any
    words, leaves the arguments not all read (:func:`kvlint.engines.options.bare_expansion_unread`) when its variable
    is among ``maybe_set`` (None: judged from ``container``'s env). ``envsubst_template``: the manifest is a template
    for envsubst (KV002), which replaces an option's value ``$VAR`` before SGLang sees it
    (:func:`kvlint.engines.options.literal_dollar`). Never raises.
    """
    argv = list(argv)
    locs = list(locs) if locs is not None else [None] * len(argv)
    locs += [None] * (len(argv) - len(locs))
    sources = list(sources) if sources is not None else ["arg"] * len(argv)
    col = Collector("SGLang", layout_from_service=runtime_template)
    where = f"SGLang {version}" if version else "SGLang"
    table, report, known = _tables(version)
    serve_named, serve_v = True, None
    if serve_cli:
        argv, locs, sources = _serve_argv(argv, locs, sources, version, col)
        serve_v = _release(version)
        serve_named = serve_v is not None and serve_v < SERVE_FROM or _serve_names_model(argv, serve_v)
    if "--config" in table and "--config" in argv:
        argv, locs, sources = _with_config_file(
            argv, locs, sources, col, config_loader, map_config_pos, config_key_option, version
        )
    shared = _shared_graph_dests(version)
    model: Value | None = None
    unseen: tuple[str, Loc | None] | None = None  # the first bare $ARGS word (bare_expansion)
    i, n = 0, len(argv)
    # whether a word that is no option here is one SGLang's parser has no place for: before any option, or after an
    # option that takes exactly the words read (a switch, ``--opt=value``, a number, a capture list, the model);
    # not after an option whose value count kvlint does not know (an unknown option, a string option: several
    # take ``nargs="*"``/``"+"``, ``--lora-paths``, ``--numa-node``). ``prepare_server_args`` calls
    # ``parser.parse_args(argv)``, which exits with "unrecognized arguments: WORD" (sglang ``srt/server_args.py``,
    # 0.3.6 - 0.5.23; ``ServerArgs`` takes no positional)
    stray = True
    while i < n:
        tok, loc, src = argv[i], locs[i], sources[i]
        quoted = src == QUOTED_SOURCE  # a script's '$ARGS': argparse gets the text, as in exec form
        src = "arg" if quoted else src
        i += 1
        if not tok.startswith("--"):
            if unseen is None and not (exec_form or quoted) and unseen_expansion(tok):
                unseen = (tok, loc)
            if stray and report and (exec_form or quoted) and bare_expansion(tok):
                col.literal_reference(
                    tok, loc, where, quoted=quoted and not exec_form
                )  # no shell: argparse gets "$EXTRA_ARGS" itself
            elif (
                stray and report and tok.strip() and not tok.startswith("-") and not UNRESOLVED_RE.search(tok)
            ):
                spaced = tok.strip().startswith(
                    "--"
                )  # " --context-length": argparse takes it for a positional
                col.unknown(
                    tok, loc, where, known if spaced else [], extra=" (unexpected positional argument)"
                )
                bare = tok.strip()
                if spaced and "=" not in bare and bare in table and bare not in _SWITCHES and i < n:
                    i += 1 if not argv[i].startswith("-") else 0  # its value is not a second finding
            continue
        stray = False
        opt, eq, explicit = tok.partition("=")
        opt = "--" + opt[2:].replace("_", "-")
        canon = _ALIASES.get(opt, opt)
        if canon not in table:
            cands = prefixed(known, opt)
            if len(cands) == 1:
                canon = _ALIASES.get(cands[0], cands[0])
                col.abbreviation(opt, cands[0], loc)
            else:
                # releases newer than the newest sampled wheel are not reported (sglang_options)
                takes_next = not eq and i < n and not argv[i].startswith("-")
                if report:
                    col.unknown(
                        opt, loc, where, known, value=explicit if eq else argv[i] if takes_next else None
                    )
                if takes_next:
                    i += 1
                continue
        dest = canon[2:].replace("-", "_")
        col.written[dest] = tok.partition("=")[0]  # the spelling findings quote (--tensor-parallel-size)
        const: str | None = None
        if shared and canon in _SHARED_GRAPH_DEST:
            dest, const = _SHARED_GRAPH_DEST[canon]
        if const is not None or canon in _SWITCHES:
            # a switch, or a store-const alias of --cuda-graph-backend-prefill: neither takes a value (nargs=0)
            col.set(
                dest,
                Value(True if const is None else const, loc, tok if const is None else const, src),
                canon,
            )
            if eq:
                # argparse refuses a value glued to it ("ignored explicit argument 'true'"); read as the option alone
                col.invalid(
                    canon,
                    explicit,
                    loc,
                    f"{canon} is a switch and takes no value: SGLang's parser refuses to start ('ignored explicit "
                    f"argument {explicit[:20]!r}')",
                    fix=f"write {canon} alone (leave it out to keep it off)",
                )
            elif i < n and not argv[i].startswith("-") and not UNRESOLVED_RE.search(argv[i]):
                # the word is left over and parse_args stops the server ("unrecognized arguments"); a --config
                # file writes a quoted "true" or a number so (ConfigArgumentMerger._add_scalar_arg, sglang 0.5.5 -
                # 0.5.23)
                col.invalid(
                    canon,
                    argv[i],
                    locs[i] or loc,
                    f"{canon} is a switch and takes no value: SGLang's parser leaves {argv[i][:20]!r} over and "
                    "refuses to start ('unrecognized arguments')",
                    fix=f"write {canon} alone"
                    + (
                        " (in a --config file, an unquoted YAML true; false or no key leaves it off)"
                        if sources[i] == "config"
                        else ""
                    ),
                )
                i += 1
            stray = True
            continue
        if dest in _LISTS:
            i = _read_list(argv, locs, sources, i, canon, dest, eq, explicit, loc, src, col)
            stray = True
            continue
        if eq:
            raw = explicit
            stray = (
                True  # argparse gives an explicit ``=`` value the option's one argument (consume_optional)
            )
        elif i < n and (not argv[i].startswith("--")):
            raw, loc, src = argv[i], locs[i] or loc, sources[i]
            quoted = src == QUOTED_SOURCE  # a script's '$TP': the engine parses the text
            src = "arg" if quoted else src
            i += 1
            stray = dest in _INT or dest in _FLOAT or dest == "model_path"
        elif dest in _INT or dest in _FLOAT:
            # a number option with no value (last, or before another option): SGLang's argparse stops the server
            # ("argument --tp-size/--tp: expected one argument"); it was set True, read as --tp 1
            col.invalid(canon, "", loc, "expected a value")
            continue
        else:
            col.set(dest, Value(True, loc, tok, src), canon)
            continue
        if dest == "model_path":
            model = Value(raw, loc, raw, src)
            continue
        literal = literal_dollar(raw, exec_form or quoted, envsubst_template)
        if (
            UNRESOLVED_RE.search(raw)
            and not (dest == "cuda_graph_config" and _is_json(raw))
            and literal is None
        ):
            if dest in _INT or dest in _FLOAT:
                col.unresolved_value(dest, unresolved_why(canon, raw), loc)
                continue
            col.set(dest, Value(raw, loc, raw, src), canon)
            continue
        value: object = raw
        try:
            if dest in _INT:
                value = int(raw)
            elif dest in _FLOAT:
                value = float(raw)
        except ValueError:
            before = len(col.findings)
            col.invalid(canon, raw, loc, "an integer is required" if dest in _INT else "a number is required")
            if literal is not None:
                literal_dollar_said(
                    col, before, raw, literal, quoted=quoted and not exec_form
                )  # exec form: argparse parses the text "$TP" itself
            continue
        if dest in _GRAPH_SIZE_DESTS and isinstance(value, int) and value > MAX_GRAPH_SIZE:
            col.invalid(
                canon,
                raw,
                loc,
                f"implausibly large (kvlint sizes CUDA-graph captures up to {MAX_GRAPH_SIZE:,}; the plan's graph "
                "reserve is made without it)",
                fix=f"give {canon} a realistic value",
            )
            col.unresolved[dest] = loc
            continue
        if dest == "cuda_graph_config":
            problem = read_graph_config(raw)[1] or _graph_config_keys_refused(raw, version)
            if problem:
                col.invalid(canon, raw, loc, problem)
                col.unresolved[dest] = loc
                continue
        col.set(dest, Value(value, loc, raw, src), canon)
    _dp_with_attn_dp(col)
    _moe_dense_tp_refused(col, version)
    if not serve_named and model is not None:
        names = "--model-path" + (", --model" if serve_v is None or serve_v >= SERVE_MODEL_ALIAS_FROM else "")
        names += " or a first positional word" if serve_v is None or serve_v >= SERVE_POSITIONAL_FROM else ""
        given = (
            "in the --config file"
            if model.source == "config"
            else "with --model or an abbreviation of --model-path"
        )
        _serve_refused(
            col,
            model.loc,
            f"`sglang serve` finds the model on its own command line only ({names}; cli/utils.py::"
            f"get_model_path), before any --config file is merged: the model given {given} is not "
            f"seen there and {where} stops with 'Error: --model-path is required'",
            fix=f"write --model-path {str(model.value)[:60]} on the command line (python3 -m "
            "sglang.launch_server reads it from the --config file)",
        )
    if col.unread_config:
        # the file's settings are unknown: not the defaults (after the command line, whose values are known)
        unknown_from_config_file(col, "sglang", col.unread_config[0])
    cfg = col.serving_config("sglang", container, image, version, model, dict(env or {}), locs)
    if unseen is not None:
        bare_expansion_unread(cfg, *unseen, maybe_set)
    return cfg


#: From this release SGLang also accepts ``--moe-dense-tp-size`` equal to ``--tp-size`` (the 0.5.13 wheel; 0.5.12's
#: assertion is ``in {1, None}``)
MOE_DENSE_TP_EQUAL_FROM = (0, 5, 13)


def _moe_dense_tp_refused(col: Collector, version: str | None) -> None:
    """KV206 for a ``--moe-dense-tp-size`` SGLang asserts against before it starts: ``assert self.moe_dense_tp_size
    in {1, None}``, "moe_dense_tp_size only support 1 and None currently" (``server_args.py::ServerArgs.
    __post_init__``/``check_server_args`` in the 0.4.6 – 0.5.12 wheels), ``in (None, 1, self.tp_size)``, "only
    supports None, 1, or tp_size currently" from 0.5.13 (``arg_groups/validation_hook.py`` in 0.5.19 – 0.5.23). A value
    equal to the TP size under an unknown release is let through (the newest read accepts it)."""
    given = col.flags.get("moe_dense_tp_size")
    if given is None or not isinstance(given.value, int) or isinstance(given.value, bool):
        return
    tp_flag = col.flags.get("tp_size")
    tp = tp_flag.value if tp_flag is not None else 1
    m = given.value
    if m == 1 or not isinstance(tp, int) or "tp_size" in col.unresolved:
        return
    v = _release(version)
    newer = v is None or v >= MOE_DENSE_TP_EQUAL_FROM
    if m == tp and newer:
        return
    said = (
        "'moe_dense_tp_size only supports None, 1, or tp_size currently'"
        if newer
        else "'moe_dense_tp_size only support 1 and None currently'"
    )
    col.invalid(
        "--moe-dense-tp-size",
        str(m),
        given.loc,
        f"SGLang asserts {said} and does not start (tp_size {tp})",
        fix="--moe-dense-tp-size 1 (the dense MLP layers whole on every TP rank) or leave it out (split over --tp-size)",
    )


def _dp_with_attn_dp(col: Collector) -> None:
    """KV206 for ``--dp-size N`` (N > 1) with ``--attn-dp-size M`` (M > 1): SGLang refuses to start
    (``arg_groups/parallel_hook.py::handle_data_parallelism`` raises "--dp-size N with --attn-dp-size M:
    data-parallel replicas combined with attention data parallelism are not supported.", read in the 0.5.22 and
    0.5.23 wheels, the releases that have ``--attn-dp-size``; an older release reports the option unknown, KV205).
    The deprecated ``--enable-dp-attention`` next to ``--attn-dp-size`` only turns itself off
    (``handle_deprecated_dp_attention``): ``--dp-size`` stays a replica count and is refused the same way."""
    attn = col.flags.get("attn_dp_size") or col.flags.get("attention_data_parallel_size")
    dp = col.flags.get("dp_size")
    if attn is None or dp is None:
        return
    a, d = attn.value, dp.value
    if not (isinstance(a, int) and isinstance(d, int) and a > 1 and d > 1):
        return
    col.invalid(
        "--attn-dp-size",
        str(a),
        attn.loc,
        f"SGLang refuses --dp-size {d} with --attn-dp-size {a} and does not start ('data-parallel replicas "
        "combined with attention data parallelism are not supported.', arg_groups/parallel_hook.py, 0.5.22 on)",
        fix=f"keep one: --attn-dp-size {a} (attention DP inside the --tp-size GPUs) or --dp-size {d} (replicas, "
        "each on its own GPUs)",
    )
