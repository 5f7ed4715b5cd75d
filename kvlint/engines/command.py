"""Kubernetes container -> which engine it runs and with which argv (the ``engine config`` stage).

A container's process is ``command`` (the image ENTRYPOINT when absent) followed by ``args`` (the image
CMD when absent), after Kubernetes ``$(VAR)`` expansion from ``env``. kvlint finds the engine invocation:

* directly: ``vllm serve ...``, ``python3 -m vllm.entrypoints.openai.api_server ...``,
  ``python -m vllm.entrypoints.api_server``, vLLM's gRPC server ``python -m vllm.entrypoints.grpc_server``,
  ``text-generation-launcher ...``, ``python -m sglang.launch_server``,
  ``sglang serve``;
* args only, relying on the image entrypoint: vLLM images (``ENTRYPOINT python3 -m
  vllm.entrypoints.openai.api_server`` in older images, ``vllm serve`` in newer ones — both accepted,
  a leading ``serve`` is skipped; docs/engine-memory-model.md §1.1), TGI images (``/tgi-entrypoint.sh`` execs
  ``text-generation-launcher "$@"``, §2.1);
* inside ``sh -c``/``bash -c`` scripts (any command of the script, after ``exec``/``env``/assignments,
  ``eval``), with ``$VAR`` expanded from the container env and ``"$@"`` from the arguments after the script.

A container that clearly is an engine but whose command cannot be read gets a ServingConfig with
``model=None`` and a KV503 finding saying why.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import os
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from packaging.version import Version

from kvlint import filecache
from kvlint.engines.images import (
    dynamo_engine_version,
    dynamo_release,
    dynamo_runtime,
    engine_of_image,
    engine_release,
    image_mentions_engine,
    is_dell_enterprise_hub,
    pip_names_source,
    pip_source_build,
    pip_source_variable,
    proxy_image_engine,
    split_image,
    tag_of_unknown_image,
    tag_only_names_release,
    unreleased_tag,
)
from kvlint.engines.kserve import HF_SERVER_MODULE, huggingface_backend, to_vllm_argv
from kvlint.engines.options import (
    QUOTED_SOURCE,
    arguments_not_all_read,
    bare_expansion,
    chart_provenance,
    launched_from_env,
    prefixed,
    unseen_expansion,
)
from kvlint.engines.pip_options import PIP_SHORT_VALUED, PIP_VALUED
from kvlint.engines.requirements import (
    Pin,
    RequirementReader,
    dev_placeholder_wheel,
    newest_admitted,
    range_admits,
    ref_release,
    source_repository,
)
from kvlint.engines.sglang import parse_sglang_argv
from kvlint.engines.shell import (
    ARG_MAX,
    MAX_ARG_STRLEN,
    MAYBE_DASH,
    MUSL_LOOKUP_WRAPPERS,
    OWN_PATH_WRAPPERS,
    UNRESOLVED_RE,
    ShellArg,
    charge_command_text,
    commands,
    k8s_expand,
    list_env_split,
    list_wrapper_env,
    list_wrapper_script,
    one_reading,
    program_after_wrapper,
    script_after_shell_options,
    shell_allexport,
    wrapper_name,
)
from kvlint.engines.substratus import entrypoint_argv, runs_env_entrypoint
from kvlint.engines.tgi import parse_tgi_argv
from kvlint.engines.vllm import parse_vllm_argv
from kvlint.gpu_resources import NON_GPU_RESOURCES, is_gpu_resource
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.statement import clip
from kvlint.template_params import TemplateText, offsets_through, written_offsets
from kvlint.types import (
    ENGINE_NAMES,
    ChartArg,
    Finding,
    JoinedEngine,
    Mark,
    OptionFinding,
    ServingConfig,
    Severity,
    Value,
    ref_part,
)
from kvlint.values import digits

__all__ = ["clear_file_cache", "parse_container", "parse_command_line", "container_env"]

_SHELLS = {"sh", "bash", "ash", "dash", "zsh", "ksh"}
#: ``python -m`` modules that start vLLM with its engine options (``--model X``, no positional model). The gRPC
#: server (vllm ``vllm/entrypoints/grpc_server.py`` ``main`` @029329a8; the Gateway API Inference Extension's
#: ``config/manifests/vllm/gpu-grpc-deployment.yaml`` runs it) parses ``AsyncEngineArgs.add_cli_args`` plus its own
#: ``--host``/``--port`` with vLLM's ``FlexibleArgumentParser``: the engine options kvlint sizes from are the same;
#: the OpenAI server's frontend options (``--api-key``, ``--chat-template`` ...), which it does not take, are KV205
#: (``parse_vllm_argv(grpc=MODULE)``, :mod:`kvlint.engines.vllm_grpc_data`).
_VLLM_MODULES = {
    "vllm.entrypoints.openai.api_server",
    "vllm.entrypoints.api_server",
    "vllm.entrypoints.grpc_server",
    "vllm.entrypoints.launchers.grpc_server",
}
#: vLLM's gRPC server module (:data:`GRPC_MODULES_FROM`)
GRPC_SERVER_MODULE = "vllm.entrypoints.grpc_server"
#: The gRPC server's module from 0.30.0 (:data:`GRPC_MODULES_FROM`)
GRPC_LAUNCHER_MODULE = "vllm.entrypoints.launchers.grpc_server"
#: Each module of vLLM's gRPC server -> the first release that ships it (``python -m`` on an older one stops at once):
#:
#: - ``vllm/entrypoints/grpc_server.py`` is in the vllm 0.14.0, 0.17.0, 0.20.0, 0.21.0 and 0.34.0 wheels (a
#:   deprecated shim over ``launchers/grpc_server.py`` in 0.34.0) and in neither the 0.12.0 nor the 0.13.0 one,
#:   where ``python -m`` stops with "No module named vllm.entrypoints.grpc_server";
#: - ``vllm/entrypoints/launchers/grpc_server.py`` (``main``: ``--host``, ``--port``, ``AsyncEngineArgs.add_cli_args``;
#:   ``if __name__ == "__main__": main()``) is in the vllm 0.30.0, 0.31.0, 0.32.0, 0.33.0 and 0.34.0 wheels and not
#:   in the 0.29.0 one (nor 0.28.0), where ``python -m`` stops with "No module named vllm.entrypoints.launchers";
#:   ``grpc_server.py`` became its deprecated shim in 0.33.0.
GRPC_MODULES_FROM: dict[str, tuple[int, int, int]] = {
    GRPC_SERVER_MODULE: (0, 14, 0),
    GRPC_LAUNCHER_MODULE: (0, 30, 0),
}
#: The gRPC server's own option beside ``--host``/``--port``: ``--disable-log-stats-server`` (a switch) is in its
#: ``main`` in the 0.14.0 and 0.17.0 wheels, gone from 0.18.0 (0.18.0, 0.19.0, 0.20.0, 0.21.0, 0.34.0 read).
GRPC_OWN_OPTION = "--disable-log-stats-server"
GRPC_OWN_OPTION_UNTIL = (0, 18, 0)


@dataclass(slots=True)
class _Item:
    text: str
    loc: Loc | None
    source: str = "arg"
    #: the text as written in the manifest when Kubernetes ``$(VAR)`` expansion changed it (``text`` is the
    #: expansion): the positions of a script's words are taken in this text (see :func:`_raw_offsets`)
    raw: str | None = None
    #: the string of an OpenShift Template's objects that ``oc process``'s substitution made (``raw``, or ``text``
    #: when no ``$(VAR)`` expansion changed it): positions are moved on to the string as the manifest writes it
    template: TemplateText | None = None


def container_env(
    container: Mapping,
    configmaps: Mapping[tuple[str | None, str], LDict] | None = None,
    namespace: str | None = None,
) -> tuple[dict[str, str], dict[str, Loc | None]]:
    """The container's env as Kubernetes resolves it statically: ``name -> value`` and ``name -> Loc`` of each
    value. ``envFrom`` ``configMapRef`` entries first (every key of the ConfigMap, with the entry's ``prefix``),
    then ``env`` in order, later definitions winning (the kubelet's ``makeEnvironmentVariables``): literal
    ``value`` entries with ``$(VAR)`` references to variables defined before them expanded, and
    ``valueFrom.configMapKeyRef`` entries. ConfigMaps come from ``configmaps`` (the ConfigMaps of the same
    input set, ``(namespace, name) -> object``); their values' positions are in the ConfigMap. Secrets, field
    and resource references, and ConfigMaps that are not among the inputs are unknown statically and left out.
    Never raises. Substitutions are bounded as ``execve(2)`` bounds the environment: one value at most
    :data:`~kvlint.engines.shell.MAX_ARG_STRLEN` characters, all of them adding at most
    :data:`~kvlint.engines.shell.ARG_MAX` (beyond that references stay unexpanded), so values that reference
    each other cannot grow without bound. ``envFrom`` is read in time linear in the input: each ConfigMap's keys
    are listed once however many entries name it, and the entries stop being read once the variables they
    define reach :data:`~kvlint.engines.shell.ARG_MAX` bytes (``NAME=value`` and its NUL each, as ``execve(2)``
    counts the environment it refuses with E2BIG beyond that): 4,000 entries naming one ConfigMap of 4,000 keys
    listed its keys 4,000 times (14 s).
    """
    env: dict[str, str] = {}
    grown = 0  # characters the substitutions added to the values
    locs: dict[str, Loc | None] = {}
    if not isinstance(container, Mapping):
        return env, locs
    sources = container.get("envFrom")
    imported = 0  # bytes of the variables the envFrom entries defined (execve's count)
    listed: dict[str, list[tuple[str, str, Loc | None]]] = {}  # each ConfigMap's variables, by name
    for src in sources if isinstance(sources, list) and configmaps else []:
        ref = src.get("configMapRef") if isinstance(src, Mapping) else None
        if isinstance(ref, Mapping) and isinstance(ref.get("name"), str):
            # imported only when there are ConfigMaps to read (was at the top of every call: ~3 us a container)
            from kvlint.workloads.configmaps import configmap_env

            prefix = src.get("prefix") if isinstance(src.get("prefix"), str) else ""
            cm_vars = listed.get(ref["name"])
            if cm_vars is None:
                cm_vars = listed[ref["name"]] = configmap_env(configmaps or {}, ref["name"], "", namespace)
            for name, value, loc in cm_vars:
                if imported > ARG_MAX:
                    break  # the container cannot start with more (execve fails with E2BIG)
                name = prefix + name
                imported += len(name) + len(value) + 2
                env[name], locs[name] = value, loc
    entries = container.get("env")
    if not isinstance(entries, list):
        return env, locs
    # the names defined so far with a value not known here (a valueFrom left out; any name when an envFrom was not
    # read): the kubelet substitutes their values into a later entry's $(NAME), so that entry is not known either
    unread = _Unread(env, any_name=isinstance(sources, list) and _env_from_unread(sources, listed))
    for e in entries:
        if not isinstance(e, Mapping):
            continue
        key = e.get("name")
        if not isinstance(key, str):
            continue
        raw = e.get("value")
        if raw is not None and not isinstance(raw, (dict, list)):
            if type(raw) is str:
                text = raw
            else:
                text = str(raw).lower() if isinstance(raw, bool) else str(raw)
            if "$" in text:
                value = k8s_expand(text, env, MAX_ARG_STRLEN if grown < ARG_MAX else 0)[0]
                grown += max(0, len(value) - len(text))
                if unread and "$(" in value and _UNREAD in k8s_expand(text, unread)[0]:
                    env.pop(key, None)
                    locs.pop(key, None)
                    unread.names.add(key)
                    continue
            else:  # nothing to expand (most values): k8s_expand would return the text
                value = text
            env[key] = value
            locs[key] = loc_of(e, "value")
            unread.names.discard(key)
            continue
        ref = e.get("valueFrom")
        ref = ref.get("configMapKeyRef") if isinstance(ref, Mapping) else None
        found = None
        if (
            configmaps
            and isinstance(ref, Mapping)
            and isinstance(ref.get("name"), str)
            and isinstance(ref.get("key"), str)
        ):
            from kvlint.workloads.configmaps import configmap_value

            found = configmap_value(configmaps, ref["name"], ref["key"], namespace)
        if found is not None:
            env[e["name"]], locs[e["name"]] = found
            unread.names.discard(key)
        else:
            env.pop(e["name"], None)
            locs.pop(e["name"], None)
            unread.names.add(key)
    return env, locs


#: What :class:`_Unread` gives for a variable whose value is not known (no env value holds a NUL: execve's strings
#: end at one).
_UNREAD = "\0"


class _Unread(Mapping[str, str]):
    """:func:`container_env`'s variables as a probe of a later entry's ``$(NAME)`` for :func:`k8s_expand`: nothing
    for a name known (``env``: the probe is never longer than the text, however long the values), :data:`_UNREAD`
    for a name defined with a value not known (``names``; any name not in ``env`` when ``any_name``: an ``envFrom``
    not read). True when some name may be unread."""

    __slots__ = ("any_name", "env", "names")

    def __init__(self, env: Mapping[str, str], any_name: bool) -> None:
        self.env, self.any_name, self.names = env, any_name, set[str]()

    def __getitem__(self, name: str) -> str:
        if name in self.env:
            return ""
        if self.any_name or name in self.names:
            return _UNREAD
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.env)

    def __len__(self) -> int:
        return len(self.env)

    def __bool__(self) -> bool:
        return self.any_name or bool(self.names)


def _env_from_unread(sources: list, listed: Mapping[str, list[tuple[str, str, Loc | None]]]) -> bool:
    """Whether an ``envFrom`` entry of ``sources`` defines variables :func:`container_env` did not read (a
    ``secretRef``, a ConfigMap not among the inputs or empty: ``listed``, the ConfigMaps it read, by name), as
    :func:`env_unknown` takes it."""
    for src in sources:
        ref = src.get("configMapRef") if isinstance(src, Mapping) else None
        name = ref.get("name") if isinstance(ref, Mapping) else None
        if not isinstance(name, str) or not listed.get(name):
            return True
    return False


def env_unknown(
    container: Mapping,
    env: Mapping[str, str],
    configmaps: Mapping[tuple[str | None, str], LDict] | None = None,
    namespace: str | None = None,
) -> frozenset[str]:
    """The variables the container's environment sets to values kvlint does not know, for a script's
    ``${NAME:-default}`` (:func:`kvlint.engines.shell.commands`' ``unknown``): an ``env`` entry :func:`container_env`
    left out (a ``secretKeyRef``, ``fieldRef``, ``resourceFieldRef``, a ConfigMap not among the inputs), and ``*``
    (any name) for an ``envFrom`` entry whose variables it did not read (a ``secretRef``, a ConfigMap not among the
    inputs), as :func:`kvlint.rules.families.resolution._env_defines` takes any ``envFrom`` to define a name. A name
    neither sets is taken as unset (the image's ``ENV`` is not read)."""
    names: set[str] = set()
    entries = container.get("env") if isinstance(container, Mapping) else None
    for e in entries if isinstance(entries, list) else []:
        name = e.get("name") if isinstance(e, Mapping) else None
        if isinstance(name, str) and name not in env:
            names.add(name)
    sources = container.get("envFrom") if isinstance(container, Mapping) else None
    listed: set[str] = set()  # (each ConfigMap looked up once: linear in the entries however many name it)
    for src in sources if isinstance(sources, list) else []:
        ref = src.get("configMapRef") if isinstance(src, Mapping) else None
        if not isinstance(ref, Mapping) or not isinstance(ref.get("name"), str) or not configmaps:
            names.add("*")
            break
        if ref["name"] in listed:
            continue
        listed.add(ref["name"])
        from kvlint.workloads.configmaps import configmap_env

        if not configmap_env(configmaps, ref["name"], "", namespace):
            names.add("*")  # not among the inputs (or empty)
            break
    return frozenset(names)


def _env_maybe_set(
    container: Mapping,
    env: Mapping[str, str],
    configmaps: Mapping[tuple[str | None, str], LDict] | None,
    namespace: str | None,
) -> frozenset[str]:
    """The variables an engine command's words that no shell reading gave (a container's ``args`` passed to an
    image ENTRYPOINT kvlint does not know) may take words from, for a bare ``$ARGS`` among them
    (:func:`kvlint.engines.options.bare_expansion_unread`): every name the container's environment defines, with a
    value kvlint read (:func:`container_env`, ``envFrom`` ConfigMaps among the inputs included) or not
    (:func:`env_unknown`: ``*`` for an ``envFrom`` it did not read). An ``envFrom`` whose ConfigMaps kvlint read
    defines only their keys."""
    names = set(env) | set(env_unknown(container, env, configmaps, namespace))
    entries = container.get("env") if isinstance(container, Mapping) else None
    for e in entries if isinstance(entries, list) else []:
        name = e.get("name") if isinstance(e, Mapping) else None
        if isinstance(name, str):
            names.add(name)
    return frozenset(names)


# ------------------------------------------------------------------------------------------------
# positions inside a script held by one YAML scalar


class SegmentLines(Sequence[str]):
    """The lines of a large file that a streaming run holds in memory (its ``---`` segments being analysed),
    indexed as the whole file's lines (0-based); a line outside them (a search that runs past the last
    segment) is read from the file."""

    def __init__(self, path: str, segments: Sequence[tuple[int, str]], total_lines: int) -> None:
        self._path = path
        self._offsets = [off for off, _ in segments]
        self._texts = [text for _, text in segments]
        self._split: dict[int, list[str]] = {}
        self._len = total_lines
        self._index: tuple[int, ...] | None = None
        self._stamp: tuple[int, int] = (0, 0)

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i: int) -> str:  # type: ignore[override]  # (no slices: none is taken)
        k = bisect.bisect_right(self._offsets, i) - 1
        if k >= 0:
            lines = self._split.get(k)
            if lines is None:
                lines = self._split[k] = self._texts[k].split("\n")
            j = i - self._offsets[k]
            if j < len(lines) - 1 or (j == len(lines) - 1 and k == len(self._texts) - 1 and lines[j]):
                return lines[j]
        return self._far_line(i)

    def _far_line(self, i: int) -> str:
        """Line ``i`` read from the file through a sparse index (the byte offset of every
        :data:`_BLOCK`-th line, built on first use): the file is never held whole."""
        if self._index is None:
            self._index, self._stamp = _line_index(self._path)
        block = i // _BLOCK
        if block >= len(self._index):
            return ""
        lines = _far_block(self._path, self._index[block], block == 0, self._stamp)
        j = i - block * _BLOCK
        return lines[j] if j < len(lines) else ""


_BLOCK = 1024


def _line_index(path: str) -> tuple[tuple[int, ...], tuple[int, int]]:
    """Byte offsets of lines 0, :data:`_BLOCK`, 2 x :data:`_BLOCK`, ... of ``path``, built once per file
    (size and modification time) and kept for the batches that follow (a streaming run builds a
    :class:`SegmentLines` per batch; the context documents they refer to lie anywhere in the file); with the
    file's (size, mtime in ns), which keys the blocks read through it."""
    try:
        st = os.stat(path)
    except OSError:
        return (), (0, 0)
    stamp = (st.st_size, st.st_mtime_ns)
    return _line_index_of(path, *stamp), stamp


@functools.lru_cache(maxsize=4)
def _line_index_of(path: str, size: int, mtime_ns: int) -> tuple[int, ...]:
    del size, mtime_ns  # the cache key: a file changed on disk is indexed again
    return tuple(_scan_line_index(path))


@functools.lru_cache(maxsize=16)
def _far_block(path: str, start: int, first: bool, stamp: tuple[int, int]) -> tuple[str, ...]:
    """The :data:`_BLOCK` lines of ``path`` from byte ``start`` (a few blocks kept: the lines a batch asks
    for outside itself are those of a few context documents, asked for again and again); ``stamp`` (size,
    mtime) is part of the cache key only."""
    del stamp
    try:
        with open(path, "rb") as fh:
            fh.seek(start)
            raw = b"".join(fh.readline() for _ in range(_BLOCK))
    except OSError:
        return ()
    text = raw.decode("utf-8", errors="replace")
    if first:
        text = text.removeprefix("\ufeff")
    return tuple(text.split("\n"))


def _scan_line_index(path: str) -> list[int]:
    out = [0]
    pos = 0
    count = 0
    try:
        with open(path, "rb") as fh:
            for line in fh:
                pos += len(line)
                count += 1
                if count % _BLOCK == 0:
                    out.append(pos)
    except OSError:
        return []
    return out


#: Files whose lines a streaming run holds (:class:`SegmentLines`), read instead of the file on disk.
HELD_LINES: dict[str, Sequence[str]] = {}


def _file_lines(path: str) -> Sequence[str] | None:
    held = HELD_LINES.get(path)
    if held is not None:
        return held
    return _disk_lines(path)


@functools.lru_cache(maxsize=64)
def _disk_lines(path: str) -> tuple[str, ...] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return tuple(fh.read().splitlines())
    except OSError:
        return None


def scalar_position(scalar_loc: Loc | None, text: str, line: int, column: int) -> Loc | None:
    """Position in the file of character (``line``, ``column``) (0-based) of the YAML scalar ``text``
    starting at ``scalar_loc``.

    Literal block scalars (``|``): line k is the file line after the indicator + k (leading empty lines
    included: they are lines of the value), at the block's indentation (its first non-blank line's). Every other style (plain, single- or double-quoted, folded ``>``), on one line or
    folded over several, goes through :func:`_flow_positions`, which follows the folding and escapes
    back to the source. Falls back to ``scalar_loc`` when the file cannot be read or the text is not
    found in it (a value changed by ``$(VAR)`` expansion).
    """
    if scalar_loc is None:
        return None
    lines = _file_lines(scalar_loc.file) if scalar_loc.file not in ("", "-") else None
    if not lines or scalar_loc.line - 1 >= len(lines):
        return scalar_loc
    src = lines[scalar_loc.line - 1]
    ch = src[scalar_loc.column - 1 : scalar_loc.column] if scalar_loc.column - 1 < len(src) else ""
    if ch == "|":
        first = scalar_loc.line  # 0-based index of the next line
        while first < len(lines) and not lines[first].strip():
            first += 1
        if first >= len(lines):
            return scalar_loc
        indent = _block_indent(lines, first, scalar_loc.line, text)
        # the block's leading empty lines are lines of its value (YAML keeps them): line k of the value is
        # the k-th file line after the indicator's, whatever the blank lines before the first content line
        return Loc(scalar_loc.file, scalar_loc.line + 1 + line, indent + column + 1)
    starts = _line_starts(text)  # memoised per script: not re-split for each word of a long script
    if 0 <= line < len(starts):
        offset = starts[line] + column
    else:
        offset = sum(len(p) + 1 for p in text.split("\n")[:line]) + column
    key = (scalar_loc.file, scalar_loc.line, scalar_loc.column, text)
    positions = _POSITIONS.get(key)
    if positions is None and key not in _POSITIONS:
        if len(_POSITIONS) > 512:
            _POSITIONS.clear()
        positions = _POSITIONS[key] = _flow_positions(lines, scalar_loc, ch, text)
    if positions is None or offset >= len(positions):
        return scalar_loc
    pl, pc = positions[offset]
    return Loc(scalar_loc.file, pl, pc)


_POSITIONS: dict[tuple[str, int, int, str], list[tuple[int, int]] | None] = {}


@filecache.register
def clear_file_cache() -> None:
    """Forget the file lines (:func:`_disk_lines`, by path) and scalar positions (:data:`_POSITIONS`) of the
    previous run: a file edited since is read again (registered with :mod:`kvlint.filecache`: emptied where a
    run starts)."""
    _disk_lines.cache_clear()
    _POSITIONS.clear()


def _block_indent(lines: Sequence[str], first: int, indicator_line: int, text: str) -> int:
    """The column (0-based) where the content of a literal block scalar starts in the file: the indentation of
    its first non-blank line (``lines[first]``; the indicator is on 1-based line ``indicator_line``) less the
    spaces that line keeps in the value ``text``. Without an indentation indicator the value keeps none; with
    one (``|2``, ``|-2``: the content is indented that much more than the parent node) the first line may be
    indented further, and those spaces are part of the value (YAML 1.2, 8.1.1.1 "Block Indentation Indicator")."""
    indent = len(lines[first]) - len(lines[first].lstrip(" "))
    starts = _line_starts(text)
    k = first - indicator_line  # the value's line that file line holds
    if 0 <= k < len(starts):
        i = starts[k]
        j = i
        while j < len(text) and text[j] == " ":
            j += 1
        indent -= j - i
    return max(indent, 0)


def _flow_positions(
    lines: Sequence[str], scalar_loc: Loc, style: str, text: str
) -> list[tuple[int, int]] | None:
    """1-based file ``(line, column)`` of every character of the value ``text`` of a plain, quoted or
    folded scalar that starts at ``scalar_loc`` (``style`` is the character there).

    YAML folding turns a line break and the next line's indentation into one space (or keeps a newline
    for an empty line) and double quotes add escapes, so the value's characters are matched in order to
    the source: each non-blank character to its next occurrence in the source (escape backslashes and
    indentation are skipped over), each blank to the position reached. None when a character is not
    found within the lines the scalar can span (the value is not the source text).
    """
    li, ci = scalar_loc.line - 1, scalar_loc.column - 1
    if style in ("'", '"'):
        ci += 1
    elif style == ">":  # folded block: the content starts on the next non-blank line, at its indentation
        li += 1
        while li < len(lines) and not lines[li].strip():
            li += 1
        if li >= len(lines):
            return None
        ci = len(lines[li]) - len(lines[li].lstrip(" "))
    last = min(len(lines), li + len(text) + 2)
    out: list[tuple[int, int]] = []
    for c in text:
        if c in " \t\n\r":
            out.append((li + 1, ci + 1))
            continue
        while True:
            if li >= last:
                return None
            j = lines[li].find(c, ci)
            if j >= 0:
                break
            li, ci = li + 1, 0
        out.append((li + 1, j + 1))
        ci = j + 1
    return out


def _offset_loc(scalar_loc: Loc | None, script: str, offset: int) -> Loc | None:
    starts = _line_starts(script)
    line = bisect.bisect_right(starts, offset) - 1
    return scalar_position(scalar_loc, script, line, offset - starts[line])


def _offset_locs(scalar_loc: Loc | None, script: str, offsets: Sequence[int]) -> list[Loc | None]:
    """The positions in the file of the characters at ``offsets`` (0-based, ascending or not) of the YAML
    scalar ``script`` starting at ``scalar_loc``: :func:`_offset_loc` of each, with the work that depends on
    the scalar only (reading its lines, skipping a literal block's leading blank lines, matching a flow
    scalar's characters to the source) done once for all of them. Per offset that work made a script of N
    words after N blank lines quadratic (80,000 of each: about a quarter of an hour)."""
    if scalar_loc is None:
        return [None] * len(offsets)
    lines = _file_lines(scalar_loc.file) if scalar_loc.file not in ("", "-") else None
    if not lines or scalar_loc.line - 1 >= len(lines):
        return [scalar_loc] * len(offsets)
    src = lines[scalar_loc.line - 1]
    ch = src[scalar_loc.column - 1 : scalar_loc.column] if scalar_loc.column - 1 < len(src) else ""
    starts = _line_starts(script)
    file = scalar_loc.file
    out: list[Loc | None] = []
    if ch == "|":  # as scalar_position: line k of the block is the k-th file line after the indicator's
        first = scalar_loc.line
        while first < len(lines) and not lines[first].strip():
            first += 1
        if first >= len(lines):
            return [scalar_loc] * len(offsets)
        indent = _block_indent(lines, first, scalar_loc.line, script)
        for offset in offsets:
            line = bisect.bisect_right(starts, offset) - 1
            out.append(Loc(file, scalar_loc.line + 1 + line, indent + offset - starts[line] + 1))
        return out
    key = (file, scalar_loc.line, scalar_loc.column, script)
    positions = _POSITIONS.get(key)
    if positions is None and key not in _POSITIONS:
        if len(_POSITIONS) > 512:
            _POSITIONS.clear()
        positions = _POSITIONS[key] = _flow_positions(lines, scalar_loc, ch, script)
    for offset in offsets:
        if positions is None or offset >= len(positions):
            out.append(scalar_loc)
        else:
            pl, pc = positions[offset]
            out.append(Loc(file, pl, pc))
    return out


@functools.lru_cache(maxsize=8)
def _line_starts(script: str) -> list[int]:
    """Offsets of the first character of each line of ``script`` (computed once per script: a script of
    many words is not rescanned from its start for each word's line)."""
    return [0] + [m.end() for m in re.finditer("\n", script)]


# ------------------------------------------------------------------------------------------------
# finding the engine invocation


def _base(word: str) -> str:
    """The last ``/``-separated component of ``word`` (``posixpath.basename`` of a str, without its
    generic-path overhead)."""
    return word[word.rfind("/") + 1 :]


#: A Python interpreter's program name (``python``, ``python3``, ``python3.12``).
_PYTHON_RE = re.compile(r"python[0-9.]*")


#: The pseudo-engine of KAITO's vLLM wrapper (read as vLLM, see :func:`_kaito_vllm`).
KAITO_VLLM = "kaito-vllm"
#: Where KAITO's preset images keep the weights: the wrapper's default ``--model``.
KAITO_WEIGHTS_DIR = "/workspace/vllm/weights"
#: The wrapper's ``--gpu-memory-utilization`` when none is given: free memory less 600 MiB as a fraction of the
#: total, floored to 0.01 and capped at 0.95; a fresh GPU of 24 GB or more reaches the cap.
KAITO_WRAPPER_GPU_MEMORY_UTILIZATION = 0.95
#: The wrapper's ``--port`` default: 5000 plus the ``LOCAL_RANK`` environment variable (0 in a plain pod).
KAITO_WRAPPER_PORT = 5000


def _is_kaito_vllm_wrapper(script: str) -> bool:
    """Whether ``script`` is KAITO's vLLM wrapper, ``/workspace/vllm/inference_api.py`` in KAITO's images
    (kaito-project/kaito presets/workspace/inference/vllm/inference_api.py): a script named
    ``inference_api.py`` in a directory named ``vllm``."""
    parts = script.replace("\\", "/").split("/")
    return len(parts) >= 2 and parts[-1] == "inference_api.py" and parts[-2] == "vllm"


#: The programs (last path component) :func:`_match_program` reads as an engine, besides the Python interpreters
#: (:data:`_PYTHON_RE`, whose names start with ``python``).
_ENGINE_PROGRAMS = frozenset({"vllm", "text-generation-launcher", "tgi-entrypoint.sh", "sglang"})
#: Words one of which is in every command or argument list :func:`_match_program` reads an engine from, whatever the
#: image: a program of :data:`_ENGINE_PROGRAMS` (``tgi-entrypoint``), a module of vLLM or SGLang (``vllm.``,
#: ``sglang.``, ``dynamo.vllm``), KAITO's ``vllm/inference_api.py`` and KServe's Hugging Face server
#: (:data:`~kvlint.engines.kserve.HF_SERVER_MODULE`), also inside a shell script. For the webhook chart's CEL
#: ``matchCondition``, which tests each word of a container's ``command`` and ``args``, and each ``env`` value (what
#: a ``$(VAR)`` of the command, or a script's ``$VAR``, expands to, as :func:`parse_container` reads it), with
#: ``contains()``
#: (``deploy/helm/kvlint-webhook/webhook-match.yaml``, written by ``tools/gen_webhook_kinds.py``).
ENGINE_COMMAND_WORDS: tuple[str, ...] = (
    "vllm",
    "sglang",
    "text-generation-launcher",
    "tgi-entrypoint",
    HF_SERVER_MODULE,
)


#: ``conda run``'s options that take a value (conda ``conda/cli/main_run.py::configure_parser``: ``-n/--name`` and
#: ``-p/--prefix`` from ``add_parser_prefix``, ``--cwd``; micromamba's ``run`` adds ``-r/--root-prefix``,
#: ``-a/--attach``, ``-e/--env``, ``--label``). Its other options are flags (``-s``/``--no-capture-output``/
#: ``--live-stream``, ``-v``, ``--dev``, ``--debug-wrapper-scripts``); the first other word starts the program
#: (``executable_call``, ``nargs=REMAINDER``), after an optional ``--``.
_CONDA_RUN_VALUED = frozenset(
    {
        "-n",
        "--name",
        "-p",
        "--prefix",
        "--cwd",
        "-r",
        "--root-prefix",
        "-a",
        "--attach",
        "-e",
        "--env",
        "--label",
    }
)


def _conda_run_program(words: Sequence[str], at: int = 0) -> int | None:
    """The index of the program ``conda run [OPTIONS] [--] PROGRAM ...`` (also ``mamba``/``micromamba run``)
    starts, when ``words`` from ``at`` are such a command naming one, else None."""
    if len(words) < at + 3 or _base(words[at]) not in _CONDA or words[at + 1] != "run":
        return None
    k = at + 2
    while k < len(words) and words[k].startswith("-"):
        if words[k] == "--":
            k += 1
            break
        k += 2 if words[k] in _CONDA_RUN_VALUED else 1
    return k if k < len(words) else None


#: The options of uv's runners that take a value, as a separate word or attached (``--with=vllm``, ``-wvllm``):
#: ``uvx``/``uv tool run`` (``ToolRunArgs``), ``uv run`` (``RunArgs``) and uv's global options (``GlobalArgs``, with
#: ``CacheArgs``), their flattened argument groups included (astral-sh/uv@26a9dd4b ``crates/uv-cli/src/lib.rs``: every
#: field whose type is not ``bool``). Every other option before the command is a flag.
_UV_RUN_VALUED = frozenset(
    {
        "--allow-insecure-host", "--trusted-host", "--build-constraints", "--build-constraint", "--cache-dir",
        "--color", "--config-file", "--config-setting", "--config-settings", "--config-settings-package",
        "--constraints", "--constraint", "--default-index", "--directory", "--env-file", "--exclude-newer",
        "--exclude-newer-package", "--extra", "--extra-index-url", "--find-links", "--fork-strategy", "--from",
        "--generate-shell-completion", "--group", "--index", "--index-strategy", "--index-url", "--keyring-provider",
        "--link-mode", "--max-recursion-depth", "--no-binary-package", "--no-build-isolation-package",
        "--no-build-package", "--no-editable-package", "--no-extra", "--no-group", "--only-group", "--overrides",
        "--override", "--package", "--prerelease", "--prerelease-package", "--preview-features", "--preview-feature",
        "--project", "--python", "--python-fetch", "--python-platform", "--python-preference", "--refresh-package",
        "--reinstall-package", "--resolution", "--torch-backend", "--upgrade-group", "--upgrade-package", "--with",
        "--with-editable", "--with-requirements",
    }
)  # fmt: skip
#: Their short forms (``-w`` is ``--with``, ``-p`` ``--python``, ``-i`` ``--index-url`` ...).
_UV_RUN_VALUED_SHORT = frozenset("bcCfiPpw")
#: The options whose values are requirements the runner installs in the environment the command runs in.
_UV_RUN_REQUIREMENTS = {"--from": "from", "--with": "with", "-w": "with"}


def _uv_runner(words: Sequence[str], at: int) -> tuple[int, bool, str] | None:
    """``(index after the runner's words, whether it runs a tool, the runner as written)`` when ``words[at]`` starts
    one of uv's runners: ``uvx`` (``uvx``), ``uv run`` (``uv run``) or ``uv tool run`` (``uv tool run``), uv's
    global options allowed between ``uv`` and its subcommand as clap allows them (``uv --no-cache tool run``, ``uv
    --directory /app run``: astral-sh/uv@26a9dd4b ``crates/uv-cli/src/lib.rs``, ``GlobalArgs`` are ``global =
    true``); else None."""
    base = _base(words[at]) if at < len(words) else ""
    if base == "uvx":
        return at + 1, True, words[at]
    if base != "uv":
        return None
    j = at + 1
    while j < len(words) and words[j].startswith("-") and words[j] not in ("-", "--"):
        j = _uv_option_end(words, j)
    if j < len(words) and words[j] == "run":
        return j + 1, False, f"{words[at]} run"
    if j + 1 < len(words) and words[j] == "tool" and words[j + 1] == "run":
        return j + 2, True, f"{words[at]} tool run"
    return None


def _uv_option_end(words: Sequence[str], k: int) -> int:
    """The index after the uv option ``words[k]`` and its value (:data:`_UV_RUN_VALUED`, attached or the next
    word); ``k + 1`` at least."""
    word = words[k]
    if word.startswith("--"):
        return k + 2 if "=" not in word and word in _UV_RUN_VALUED else k + 1
    return k + 2 if len(word) == 2 and word[1:2] in _UV_RUN_VALUED_SHORT else k + 1


def _uv_run_program(words: Sequence[str], at: int = 0) -> tuple[int, list[str], str] | None:
    """``(index of the program, the requirements it installs for it, the tool runner as written)`` when ``words``
    from ``at`` are uv running a command in an environment it makes: ``uvx [OPTIONS] COMMAND``, ``uv tool run [OPTIONS] COMMAND`` (an isolated
    tool environment of the package ``--from`` names, else the command's own name; ``COMMAND@VERSION`` pins it) or
    ``uv run [OPTIONS] COMMAND`` (the project's environment, ``--with`` requirements over it); else None. The
    requirements are ``--from``'s, ``--with``'s (comma-separated: uv's ``CommaSeparatedRequirements``) and, for a
    tool, its package: ``vllm==0.10.1`` for ``uvx vllm@0.10.1`` or ``uvx --from vllm==0.10.1 vllm``, bare ``vllm``
    for ``uvx vllm`` (the newest release, as uv resolves it), none for ``uv run`` without ``--with``. Options are read
    as uv's CLI declares them (:data:`_UV_RUN_VALUED`, astral-sh/uv@26a9dd4b ``crates/uv-cli/src/lib.rs``). The
    runner as written is ``"uvx"`` or ``"uv tool run"`` for a tool runner, which installs the command's package in
    an environment of its own (:func:`_uv_runner`), and "" for ``uv run``."""
    runner = _uv_runner(words, at)
    if runner is None:
        return None
    k, tool, written = runner
    requirements: list[str] = []
    source = ""
    while k < len(words) and words[k].startswith("-") and words[k] != "-":
        word = words[k]
        if word == "--":
            k += 1
            break
        name, eq, attached = word.partition("=")
        if word.startswith("--"):
            valued = name in _UV_RUN_VALUED
            value = attached if eq else (words[k + 1] if valued and k + 1 < len(words) else None)
            k += 1 if eq or not valued else 2
        else:
            valued = word[1:2] in _UV_RUN_VALUED_SHORT
            name = word[:2]
            value = (word[2:] or (words[k + 1] if k + 1 < len(words) else None)) if valued else None
            k += 2 if valued and len(word) == 2 else 1
        kind = _UV_RUN_REQUIREMENTS.get(name)
        if kind == "from" and value is not None:
            source = value
        elif kind == "with" and value is not None:
            requirements.extend(r for r in value.split(",") if r.strip())
    if k >= len(words):
        return None
    if tool:
        program, at_sign, version = words[k].partition("@")
        package = source or program
        if not source and at_sign and version and version != "latest":
            package = f"{program}=={version}"  # `uvx vllm@0.10.1`: the tool's package at that release
        elif "@" in package and "://" not in package and " @ " not in package:
            name, _, version = package.partition("@")
            package = name if version == "latest" else f"{name}=={version}"
        requirements.insert(0, package)
    return k, requirements, written if tool else ""


def _uv_run_release(words: Sequence[str], start: int, engine: str, reader: RequirementReader) -> str | None:
    """What a uv runner among ``words[:start]`` (the words before the engine's arguments, :func:`_match_program`'s
    index) installs of ``engine`` for the command it runs (:func:`_uv_run_program`): the release one of its
    requirements pins (``uvx --from vllm==0.10.1 vllm serve``, ``uvx vllm@0.10.1 serve``, ``uv run --with
    vllm==0.10.1 vllm serve``); ``""`` when a tool runner installs the engine unpinned (``uvx --from vllm vllm serve``:
    an environment of its own, the newest release); None when there is no runner or it names no release of the
    engine (``uv run`` without ``--with vllm`` runs the project's environment as it is)."""
    for k in range(start):
        if _base(words[k]) not in ("uv", "uvx"):
            continue
        run = _uv_run_program(words, k)
        if run is None:
            continue
        pins = [p for p in (reader.read(r) for r in run[1]) if p is not None and p.project == engine]
        if not pins or _conflicting(pins):
            return None
        pinned = _last_release(pins)
        if pinned is not None:
            return pinned
        if run[2]:
            # a tool runner's own environment within a range (uvx --from "vllm>=0.9,<0.10"): uv resolves the newest
            # release the range admits, taken as the newest kvlint models in it (_ranged)
            ranged = _ranged(pins, engine)
            return ranged[0] if ranged is not None else ""
        return None
    return None


def _uv_run_pins(
    words: Sequence[str], start: int, engine: str, reader: RequirementReader
) -> list[Pin] | None:
    """The requirements of ``engine`` of the first uv tool runner among ``words[:start]`` that runs a program, when
    they are there, agree and pin no single release (a range, or none): what :func:`_uv_run_range` and
    :func:`_uv_run_spec` read; None otherwise (no runner, a runner not running a program, a single release)."""
    for k in range(start):
        if _base(words[k]) not in ("uv", "uvx"):
            continue
        run = _uv_run_program(words, k)
        if run is None:
            continue
        pins = [p for p in (reader.read(r) for r in run[1]) if p is not None and p.project == engine]
        if not run[2] or not pins or _conflicting(pins) or _last_release(pins) is not None:
            return None
        return pins
    return None


def _uv_run_range(words: Sequence[str], start: int, engine: str, reader: RequirementReader) -> str:
    """The version range of ``engine`` a uv tool runner among ``words[:start]`` installs it within (``uvx --from
    "vllm>=0.9,<0.10" vllm serve``), when :func:`_uv_run_release` took its release from it (:func:`_ranged`); ""
    otherwise. A tool's environment is its own (uv ``tool run``: an ephemeral environment of the tool's requirements,
    astral-sh/uv ``crates/uv/src/commands/tool/run.rs``), so no release the image carries is kept in its place."""
    pins = _uv_run_pins(words, start, engine, reader)
    ranged = _ranged(pins, engine) if pins is not None else None
    return ranged[1] if ranged is not None else ""


def _uv_run_spec(words: Sequence[str], start: int, engine: str, reader: RequirementReader) -> str:
    """The version range of ``engine`` a uv tool runner among ``words[:start]`` installs it within when
    :func:`_uv_run_release` placed no modelled release in it (``uvx --from "vllm<0.1"``, ``"vllm>=0.9,!=0.9.2,<0.10"``
    admitting none of the releases kvlint models, or ``"vllm>=0.9"`` admitting the newest): uv still installs
    only a release that range admits (its resolver, astral-sh/uv ``crates/uv-resolver``), so the engine is not
    "unpinned"; "" when the runner's requirement of the engine has no range (``uvx vllm``) or there is none."""
    pins = _uv_run_pins(words, start, engine, reader)
    return next((pin.spec for pin in reversed(pins) if pin.spec), "") if pins is not None else ""


def _uv_tool_runner(words: Sequence[str], start: int) -> str:
    """The words of the uv tool runner among ``words[:start]`` that installs the engine it starts in an environment
    of its own (:func:`_uv_run_release`): ``"uvx"`` or ``"uv tool run"`` as written, wherever it stands (after a
    wrapper too: ``nohup uvx vllm serve``, ``timeout 1000 uv tool run ...``); "" when there is none (``uv run``
    runs the project's environment, not a tool's)."""
    for k in range(start):
        run = _uv_run_program(words, k) if _base(words[k]) in ("uv", "uvx") else None
        if run is not None:
            return run[2]
    return ""


#: The package name a uv tool runner's command word starts with (PEP 508's name characters).
_UV_TOOL_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _uv_tool_name(word: str) -> str:
    """The command a uv tool runner's command word runs, without ``--from``: uv reads the word as the tool's
    requirement and runs the executable its package name names (astral-sh/uv@26a9dd4b
    ``crates/uv/src/commands/tool/mod.rs`` ``Target::parse`` for ``NAME[EXTRAS]@VERSION``/``@latest``, and
    ``tool/run.rs`` for any other PEP 508 requirement, ``ruff>=0.6.0`` -> ``ruff``): ``vllm@0.10.1``,
    ``vllm[audio]@0.10.1``, ``vllm==0.10.1`` and ``'vllm>=0.10'`` all run ``vllm``. A word that starts with no
    package name (a path) is the command as written."""
    if "/" in word:
        return word
    m = _UV_TOOL_NAME_RE.match(word)
    return m.group(0) if m is not None else word


def _match_program(words: Sequence[str]) -> tuple[str, int, bool] | None:
    """``(engine, index of first engine argument, positional model allowed)`` when ``words`` start with
    an engine invocation, else None. ``conda run -n ENV PROGRAM ...`` (conda, mamba, micromamba) runs PROGRAM in
    that environment with the arguments as given: the engine is read after its options; so do uv's runners
    (``uvx --from vllm==0.10.1 vllm serve ...``, ``uvx vllm@0.10.1 serve ...``, ``uv run --with vllm vllm serve
    ...``: :func:`_uv_run_program`)."""
    if not words:
        return None
    # the wrapper programs an exec-form command can start (``["nohup", "vllm", "serve", ...]``, ``["/usr/bin/tini",
    # "--", "python3", "-m", ...]``, ``["timeout", "3600", "text-generation-launcher", ...]``), read with their
    # options from the script's one table (kvlint.engines.shell.program_after_wrapper); the index returned counts
    # the wrapper words, so that findings point at the list item of each argument. Each step moves forward: a
    # hostile list of 10^4 wrappers is one pass, no recursion.
    k = 0
    uv_tool = False
    while k < len(words):
        after = program_after_wrapper(words, k)
        if after is None and _base(words[k]) in _CONDA:
            after = _conda_run_program(words, k)
            if after is None:
                return None
        if after is None and _base(words[k]) in ("uv", "uvx"):
            run = _uv_run_program(words, k)
            if run is None:
                return None
            after, uv_tool = run[0], bool(run[2])
        if after is None:
            break
        k = after
    if k:
        rest = [_uv_tool_name(words[k]), *words[k + 1 :]] if uv_tool and k < len(words) else words[k:]
        inner = _match_program(rest) if k < len(words) else None
        return (inner[0], inner[1] + k, inner[2]) if inner is not None else None
    w0 = _base(words[0])
    if w0 not in _ENGINE_PROGRAMS and not w0.startswith("python"):
        return None  # (the commonest case: none of the programs below)
    if w0 == "vllm" and len(words) > 1 and words[1] == "serve":
        return "vllm", 2, True
    if w0 in ("text-generation-launcher", "tgi-entrypoint.sh"):
        return "tgi", 1, False
    if w0 == "sglang" and len(words) > 1 and words[1] == "serve":
        # `sglang serve MODEL` (0.5.16+) and its --model-type: kvlint.engines.sglang._serve_argv
        return "sglang", 2, True
    if _PYTHON_RE.fullmatch(w0):
        k = 1
        while k < len(words) and words[k].startswith("-") and words[k] != "-m":
            k += 1
        if k < len(words) and _is_kaito_vllm_wrapper(words[k]):
            return KAITO_VLLM, k + 1, False
        if k + 1 < len(words) and words[k] == "-m":
            mod = words[k + 1]
            if mod in _VLLM_MODULES:
                return "vllm", k + 2, False
            if (
                mod in ("vllm.entrypoints.cli.main", "vllm")
                and k + 2 < len(words)
                and words[k + 2] == "serve"
            ):
                return "vllm", k + 3, True
            if mod in ("dynamo.vllm", "dynamo.sglang"):
                # NVIDIA Dynamo's workers: their own options, then the engine's (see _as_dynamo_worker)
                return "dynamo-" + mod.split(".")[1], k + 2, False
            if mod == "sglang.launch_server":
                return "sglang", k + 2, False
            if mod == "sglang.cli.main" and k + 2 < len(words) and words[k + 2] == "serve":
                return "sglang", k + 3, True
            if mod == "text_generation_server.cli":
                return None
            if mod == HF_SERVER_MODULE:
                # KServe's Hugging Face server: vLLM unless --backend says otherwise
                if huggingface_backend(words[k + 2 :]) in ("auto", "vllm"):
                    return "kserve-hf", k + 2, False
                return None
    return None


def _after_wrappers(texts: Sequence[str]) -> int:
    """The index of the program a command list runs behind its wrapper programs (``env [-u NAME] [K=V ...]``,
    ``tini --``, ``nohup``: :func:`kvlint.engines.shell.program_after_wrapper`, the table a script's words are read
    by), 0 when it starts none."""
    k = 0
    while k < len(texts):
        after = program_after_wrapper(texts, k)
        if after is None:
            break
        k = after
    return k


def _path_gone(texts: Sequence[str], upto: int) -> bool:
    """Whether the wrapper programs before ``texts[upto]`` take ``PATH`` out of the environment they run it with
    (``env -i``, ``env -u PATH``, no ``PATH=...`` after, no ``sudo`` after: :data:`OWN_PATH_WRAPPERS`) and the
    last of them, which looks it up, searches glibc's default path (not dumb-init: :data:`MUSL_LOOKUP_WRAPPERS`)."""
    changes: list[tuple[str, int | None]] = []
    k = 0
    last = ""
    while k < upto:
        after = program_after_wrapper(texts, k, changes)
        if after is None:
            break
        last = wrapper_name(texts[k]) or ""
        if last in OWN_PATH_WRAPPERS:
            changes.append(("PATH=", k))  # sudo searches its secure_path
        k = after
    if last in MUSL_LOOKUP_WRAPPERS:
        return False  # dumb-init looks the command up with musl's execvp: /usr/local/bin is searched
    gone = False
    for text, at in changes:
        if at is None and text in ("", "PATH"):
            gone = True
        elif at is not None and text.startswith("PATH="):
            gone = False
    return gone


def _shell_index(items: Sequence[_Item]) -> int | None:
    """Index of the shell (``sh``, ``bash`` ...) a command starts, behind its wrapper programs
    (:func:`_after_wrappers`: ``["/usr/bin/env", "-u", "FOO", "bash", ...]``); None when it does not start a
    shell."""
    if not items:
        return None
    k = _after_wrappers([it.text for it in items])
    if k >= len(items) or _base(items[k].text) not in _SHELLS:
        return None
    return k


def _shell_split(items: Sequence[_Item]) -> tuple[int, int, int] | None:
    """For ``sh [-opts] -c [--] SCRIPT [$0 $1 ...]``: (index of the shell, index of SCRIPT, index of $0), else
    None; the options read as :func:`kvlint.engines.shell.script_after_shell_options` reads them (``bash -o
    pipefail -c``). Also a wrapper giving the user's shell a script (``runuser app -c SCRIPT [$0 ...]``, ``tmux new
    -d SCRIPT``: :func:`kvlint.engines.shell.list_wrapper_script`), the wrapper's index then the shell's."""
    k = _shell_index(items)
    if k is None:
        return list_wrapper_script([it.text for it in items])
    j = script_after_shell_options(items, k + 1)
    return None if j is None else (k, j, j + 1)


def _describe(words: Sequence[str]) -> str:
    return " ".join(words[:4]) + (" ..." if len(words) > 4 else "")


def _reason_for(words: Sequence[str]) -> str:
    """Why an (engine-looking) command cannot be read."""
    if not words:
        return "the container has no command or args; kvlint cannot tell how the engine is started"
    w0 = _base(words[0])
    if _PYTHON_RE.fullmatch(w0) and len(words) > 1 and not words[1].startswith("-"):
        return (
            f"the container runs the Python program {words[1]} (a wrapper around the engine, e.g. KAITO "
            f"inference_api.py); its command line is not the engine's own CLI, so kvlint cannot read the flags"
        )
    if w0 in ("ray", "serve") or "ray" in w0:
        return "the container runs Ray; the engine is configured by Ray Serve application code, which kvlint does not read"
    if w0.endswith(".sh") or (w0 in _SHELLS and len(words) > 1 and words[1].endswith(".sh")):
        script = words[1] if w0 in _SHELLS else words[0]
        described = _describe(words)
        # the whole command in brackets only when it says more than the script's path (its shell, its arguments)
        detail = f" ({described})" if described != script else ""
        return f"the container runs the script {script}{detail}; the engine flags inside it are not visible to kvlint"
    return f"the container runs `{_describe(words)}`, not a recognised engine command"


@dataclass
class _Found:
    """An engine command: the engine, its arguments (``argv``, after the program's own words) and ``loc``, the
    position of the program that starts it, which becomes :attr:`ServingConfig.command_loc`
    (:func:`_program_loc`): the program's first word (``vllm`` of ``vllm serve``, ``python3`` of ``python3 -m
    ...``, in ``command``, ``args`` or a script), or the ``args:`` key when the image's ENTRYPOINT is the
    program. None: the position of the first argument, as the engine parsers choose it."""

    engine: str
    argv: list[_Item]
    positional_model: bool
    loc: Loc | None = None
    #: the words reach the engine without a shell: the container's ``command``/``args`` run directly (or through
    #: an image ENTRYPOINT that passes them on), so a ``$VAR`` or ``${VAR}`` in them is the engine's literal text
    #: (the kubelet expands only ``$(VAR)``). False for the words of a ``sh -c`` script, and when not known.
    exec_form: bool = False
    #: the program is vLLM's gRPC server module (one of :data:`GRPC_MODULES_FROM`, which older releases do not
    #: ship), its name; "" when it is not
    grpc: str = ""
    #: the engine release the ``sh -c`` script installs before it starts the engine (``pip install vllm==0.6.6``,
    #: :func:`_pip_pinned`), which the container then runs whatever its image carried; None when it installs none
    installed: str | None = None
    #: the script upgrades the engine without pinning a release (``pip install -U vllm``): the release it runs is
    #: the newest on the day the container starts, unknown here
    upgraded: bool = False
    #: the unpinned install is the engine built from its source repository at a branch or commit
    #: (:func:`_from_source_branch`: ``pip install git+https://github.com/vllm-project/vllm.git``): the newest code,
    #: not the newest release
    from_source: bool = False
    #: the unpinned upgrade takes vLLM's nightly (or one commit's) build from its main-branch index
    #: (:func:`_vllm_main_index`): that index's URL; "" when it does not
    main_index: str = ""
    #: the pip command that installs the engine (:attr:`installed`, :attr:`upgraded`) and where it is
    install_text: str = ""
    install_loc: Loc | None = None
    #: the uv tool runner that installs the engine instead of a pip command (``uvx``, ``uv tool run``:
    #: :func:`_uv_tool_runner`); "" when none
    install_runner: str = ""
    #: the version range the script's pip install admits (``<0.10,>=0.9``) when :attr:`installed` is only the
    #: newest release kvlint models in it (:func:`_ranged`), else ""
    install_range: str = ""
    #: that pip install upgrades (``-U``: :func:`_upgrades`), so it replaces an installed release the range admits
    range_upgrades: bool = False
    #: the version range a uv tool runner installs the engine within when kvlint places no release in it (the
    #: range admits none of the releases kvlint models, or admits the newest: :func:`_uv_run_spec`), else ""
    runner_range: str = ""
    #: the last pip command of the script that installs the engine, pinned or not: its words after ``install``
    #: (:func:`_pip_words`), its text and where it is (:attr:`kvlint.types.ServingConfig.pip_args`)
    pip_args: tuple[str, ...] = ()
    pip_text: str = ""
    pip_loc: Loc | None = None
    pip_elsewhere: bool = False
    #: the environment a ``sh -c`` script runs the engine with (its ``export``s, ``NAME=value`` before the
    #: command, ``env -u``/``-i``, ``unset``: :attr:`kvlint.engines.shell.ShellCommand.environ`), and where the
    #: script sets each variable it changed; None when the engine is not started by a script
    script_env: dict[str, str] | None = None
    script_env_locs: dict[str, Loc | None] = field(default_factory=dict)
    #: why the command gets words besides :attr:`argv` that kvlint cannot see (a wrapper of
    #: :data:`kvlint.engines.shell.APPENDING_WRAPPERS` before it: ``xargs``), else ""
    appends: str = ""
    #: the variables the command's unresolved words reference that may hold words kvlint cannot see
    #: (:attr:`kvlint.engines.shell.ShellCommand.maybe_set`: set by the script to a value kvlint does not read, or by
    #: the container's env from a source it did not read; ``*`` any name); for words the shell reader did not give,
    #: the container's env (:func:`_env_maybe_set`) when a bare ``$ARGS`` is among them, else None
    maybe_set: frozenset[str] | None = None
    #: a ``<...>`` placeholder to fill in by hand among the script's engine words, which the shell reads as
    #: redirections (:attr:`kvlint.engines.shell.ShellCommand.fill_in`); "" when none
    fill_in: str = ""


def _runs_grpc(words: Sequence[str], start: int) -> str:
    """The gRPC server module (:data:`GRPC_MODULES_FROM`) when the engine invocation :func:`_match_program` found
    in ``words`` (arguments from ``start``) is ``python -m vllm.entrypoints.grpc_server`` (or ``python -m
    vllm.entrypoints.launchers.grpc_server``), else ""."""
    return words[start - 1] if start >= 1 and words[start - 1] in GRPC_MODULES_FROM else ""


@dataclass
class _Unrunnable:
    """An engine command the shell refuses to run (a syntax error in its script): why, and where."""

    reason: str
    loc: Loc | None
    engine: str
    #: the remedy (None: close the quote, the syntax error :func:`_unclosed_quote` finds)
    fix: str | None = None


@dataclass
class _Join:
    """A worker command that joins a leader's engine instead of running one."""

    how: str
    loc: Loc | None


#: A program word that is one variable's value kvlint does not know (``"$LAUNCHER_SCRIPT"``).
_VARIABLE_PROGRAM_RE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")

#: Shell builtins that read a script into the current shell (its settings), rather than run a program.
_SOURCE = frozenset({"source", "."})


#: Commands that only wait, log or set things up: a script made of nothing else runs no server.
_IDLE = frozenset(
    {"sleep", "trap", "wait", "true", "exit", "echo", "printf", ":", "set", "ulimit", "tail", "cat", "read"}
)


#: ``python -m`` modules of serving stacks that run beside an engine but serve no model themselves (NVIDIA
#: Dynamo's frontend, router and planner; the SGLang router). Dynamo releases before 1.0 ran the SLA planner as
#: the bare module ``planner_sla`` from its own directory (``workingDir: /workspace/components/src/dynamo/planner``:
#: the ``Planner`` service, ``componentType: planner``, of NVIDIA/nim-deploy's AKS Dynamo workshop on the 0.8.0
#: runtime, cloud-service-providers/azure/workshops/aks-dynamo/disagg_planner.yaml@26f521d); later ones run
#: ``python3 -m dynamo.planner`` (ai-dynamo/dynamo examples/backends/*/deploy/disagg_planner.yaml). It reads
#: metrics and scales the workers, loading no model.
_NO_MODEL_MODULES = (
    "dynamo.frontend",
    "dynamo.router",
    "dynamo.planner",
    "planner_sla",
    "sglang_router.launch_router",
)


#: Commands that keep a container alive doing nothing (``sleep infinity``, ``tail -f /dev/null``, ``wait``).
_WAITS = frozenset({"sleep", "tail", "wait"})
#: Package managers whose ``install`` subcommand installs system or conda packages.
_SYSTEM_INSTALLERS = frozenset({"apt-get", "apt", "yum", "dnf", "microdnf", "conda", "mamba", "micromamba"})
#: The conda-family managers, which also run programs (``conda run -n env vllm serve ...``, ``micromamba run``).
_CONDA = frozenset({"conda", "mamba", "micromamba"})
#: Their subcommands that manage packages or environments and run nothing (conda's ``conda/cli/main.py``
#: subcommands; ``run`` is not one of them).
_CONDA_PACKAGING = frozenset(
    {
        "install",
        "create",
        "update",
        "upgrade",
        "remove",
        "uninstall",
        "clean",
        "config",
        "env",
        "init",
        "activate",
        "deactivate",
        "list",
        "info",
        "search",
    }
)


def _installs(texts: Sequence[str]) -> bool:
    """``texts`` installs packages and runs nothing: ``pip install ...`` (:func:`_is_pip`: ``pip3``, ``python3 -m
    pip``, ``uv pip``, after ``sudo``/``env``), or runs a system or conda package manager (``apt-get update``,
    ``apt-get install -y curl``, ``conda install ...``)."""
    words = [_base(w) for w in texts]
    head = [w for w in words if w not in _PIP_WRAPPERS and not w.startswith("-") and "=" not in w][:2]
    if head and head[0] in _CONDA:
        # conda install / create / env ...; not ``conda run -n env vllm serve ...``, which runs the engine
        return len(head) > 1 and head[1] in _CONDA_PACKAGING
    if head and head[0] in _SYSTEM_INSTALLERS:
        return True  # apt-get update / install / clean ...
    return "install" in words and _is_pip(words[: words.index("install")])


#: File names of the request proxies vLLM's repository ships for disaggregated prefill, which forward each request
#: to prefill and decode servers and load no model (an aiohttp/Quart/FastAPI app): ``disagg_prefill_proxy_server.py``
#: (Quart; vllm-project/vllm@910dccc0 ``benchmarks/disagg_benchmarks/``) and ``round_robin_proxy.py`` (aiohttp;
#: @d3390218, same directory), ``toy_proxy_server.py`` (FastAPI with httpx clients to ``--prefiller-hosts`` and
#: ``--decoder-hosts``; @e0099301 ``tests/v1/kv_connector/nixl_integration/``). They run in the vllm/vllm-openai
#: image (``python3 disagg_prefill_proxy_server.py --prefill-url ... --decode-url ...``), whose name made such a
#: container read as a vLLM engine whose wrapper kvlint could not see into.
_NO_MODEL_SCRIPTS = frozenset(
    {"disagg_prefill_proxy_server.py", "round_robin_proxy.py", "toy_proxy_server.py"}
)


#: :func:`_scan_shell`'s reason for a script that runs only components loading no model (vLLM's request proxies, a
#: router): the container serves nothing unless it requests a GPU, when KV503 gives this reason
PROXY_ONLY = (
    "the shell script runs only a component that loads no model (a request proxy or router), yet the container "
    "requests a GPU"
)


def _requests_gpu(container: Mapping) -> bool:
    """The container asks for a GPU in ``resources`` (``nvidia.com/gpu``, ``amd.com/gpu``, a MIG slice or an AMD
    partition: :func:`kvlint.gpu_resources.is_gpu_resource`; any positive count or an unreadable one), or names a
    Dynamic Resource Allocation claim of its pod in ``resources.claims`` (its devices, which the placement counts
    as the container's: :func:`kvlint.accelerators.placement.dra_claims`): a request proxy or router loads no model
    and needs none, so such a container is not set aside as one by its image name or script name alone, and only
    such a container's engine is read from its env (:func:`env_launch`)."""
    res = container.get("resources")
    if not isinstance(res, Mapping):
        return False
    for section in ("limits", "requests"):
        block = res.get(section)
        if not isinstance(block, Mapping):
            continue
        for key, value in block.items():
            name = str(key)
            if name.endswith("/gpu") or is_gpu_resource(name):
                if str(value).strip() not in ("0", ""):
                    return True
    claims = res.get("claims")
    return isinstance(claims, list) and any(isinstance(c, Mapping) and c.get("name") for c in claims)


def _serves_no_model(texts: Sequence[str]) -> bool:
    """``texts`` runs a serving-stack component that loads no model: a router or frontend module
    (:data:`_NO_MODEL_MODULES`, ``python -m dynamo.frontend``), or one of vLLM's disaggregated-prefill request
    proxies run as a script (:data:`_NO_MODEL_SCRIPTS`, ``python3 benchmarks/.../disagg_prefill_proxy_server.py``;
    the interpreter's own options before the script skipped, ``-c`` code is not a script)."""
    if len(texts) > 2 and _PYTHON_RE.fullmatch(_base(texts[0])) and texts[1] == "-m":
        return texts[2].startswith(_NO_MODEL_MODULES)
    if len(texts) > 1 and _PYTHON_RE.fullmatch(_base(texts[0])):
        script = next((w for w in texts[1:] if not w.startswith("-")), None)
        if script is None or any(w in ("-c", "-m") for w in texts[1 : texts.index(script)]):
            return False
        return _base(script) in _NO_MODEL_SCRIPTS
    return False


#: What each no-model module is, in a note (:func:`request_proxy_note`), by the prefix of its module name.
_NO_MODEL_WHAT = {
    "dynamo.frontend": "NVIDIA Dynamo's frontend (the HTTP server that routes requests to the workers)",
    "dynamo.router": "NVIDIA Dynamo's router",
    "dynamo.planner": "NVIDIA Dynamo's planner (it scales the workers from their metrics)",
    "planner_sla": "NVIDIA Dynamo's SLA planner (it scales the workers from their metrics)",
    "sglang_router.launch_router": "the SGLang router sglang_router.launch_router",
}


def request_proxy_note(container: Mapping, kind: str) -> Finding | None:
    """The KV506 info (rules/KV506.yaml, its own rule: it was a KV503 "engine-command-unparsed" of a command that
    is no engine's) for a container :func:`parse_container` set aside (returned None for) as a component that
    loads no model and that requests no GPU: one of vLLM's disaggregated-prefill request proxies run as a script
    (:data:`_NO_MODEL_SCRIPTS`), a serving stack's router, frontend or planner module (:data:`_NO_MODEL_MODULES`),
    or an image named as an engine's proxy (:func:`kvlint.engines.images.proxy_image_engine`,
    ``ghcr.io/acme/vllm-proxy``). The note says what was seen, that nothing is sized, and that a GPU request makes
    kvlint read the container as the engine (:func:`_requests_gpu`). ``kind``: the workload's kind, for the
    wording. None for any other container (one requesting a GPU was read as an engine, or got KV503's
    :data:`PROXY_ONLY`). Never raises; the caller says it only when no container of the object serves a model."""
    try:
        if not isinstance(container, Mapping) or _requests_gpu(container):
            return None
        words: list[str] = []
        for key in ("command", "args"):
            seq = container.get(key)
            for item in [seq] if isinstance(seq, str) else seq if isinstance(seq, list) else []:
                if isinstance(item, str) and len(words) < _MAX_PROXY_WORDS:
                    words.extend(item[: 16 * _MAX_PROXY_WORDS].split())
        what = None
        for i, word in enumerate(words[:_MAX_PROXY_WORDS]):
            if _base(word) in _NO_MODEL_SCRIPTS:
                what = f"vLLM's disaggregated-prefill request proxy {_base(word)}"
            elif word == "-m" and i + 1 < len(words) and words[i + 1].startswith(_NO_MODEL_MODULES):
                module = words[i + 1]
                what = next(v for k, v in _NO_MODEL_WHAT.items() if module.startswith(k))
            if what is not None:
                break
        image = str(container.get("image") or "")
        at = loc_of(container, "command") or loc_of(container, "args")
        if what is None:
            engine = proxy_image_engine(image)
            if engine is None:
                return None
            what = f"the image {clip(image, 120)}, named as a {ENGINE_NAMES[engine]} request proxy"
            at = loc_of(container, "image")
        name = container.get("name")
        who = f"container {name}" if isinstance(name, str) and name else "its container"
        return Finding(
            "KV506",
            f"nothing in this {kind} is sized: {who} runs {what}, which loads no model and requests no GPU, and no "
            "other container of the object runs vLLM, SGLang or TGI",
            at or getattr(container, "loc", None),
            fix="lint the manifests of the engines it forwards to as well (kvlint check on their files); if this "
            "container does serve a model, give it its GPU request (resources.limits nvidia.com/gpu) and kvlint "
            "reads it as the engine",
            severity="info",
        )
    except Exception:  # a shape no reader expected: no note, as before
        return None


#: Words of a container's command and args :func:`request_proxy_note` looks at (a script's first ones).
_MAX_PROXY_WORDS = 4096


def _join_of(texts: Sequence[str]) -> str | None:
    """How ``texts`` joins a multi-node leader, or None: ``ray start --address ...`` (no ``--head``), vLLM's
    ``multi-node-serving.sh worker``, a Ray start script run as ``worker`` (the LeaderWorkerSet example's
    ``ray_init.sh worker``), or KubeRay's generated worker start command ``$KUBERAY_GEN_RAY_START_CMD``."""
    if not texts:
        return None
    w0 = _base(texts[0])
    if w0 == "ray" and len(texts) > 1 and texts[1] == "start":
        if "--head" not in texts and any(t.startswith("--address") for t in texts):
            return _describe(texts)
        return None
    if "KUBERAY_GEN_RAY_START_CMD" in texts[0] and "--head" not in texts:
        return _describe(texts)
    scripts = [t for t in texts[:2] if t.endswith(".sh")]
    if (
        scripts
        and "worker" in texts
        and ("multi-node-serving" in " ".join(texts) or "ray" in _base(scripts[0]).lower())
    ):
        return _describe(texts)
    return None


def _scan_shell(
    items: Sequence[_Item],
    k: int,
    j: int,
    env: Mapping[str, str],
    p: int | None = None,
    unknown: Collection[str] = (),
    read_file: Callable[[str], str | None] | None = None,
) -> tuple[_Found | _Join | _Unrunnable | None, str]:
    """The engine command a ``sh -c`` script runs (or the leader it joins), else None and why not; the
    reason is empty when the script only waits (sleep, trap, wait: no server at all). An engine command the
    shell refuses to run (a quote it never closes, :func:`_unclosed_quote`) is an :class:`_Unrunnable`.
    ``items[k]`` is the shell, ``items[j]`` the script, its ``$0 $1 ...`` the items from ``p`` (``j + 1``);
    ``unknown`` the variables set with values kvlint does not know (:func:`env_unknown`); ``read_file`` the files
    a ``. FILE`` may read (:func:`_sourced_files`)."""
    script_item = items[j]
    script = script_item.text
    p = j + 1 if p is None else p
    positional = [ShellArg(it.text, None, it.loc, it.source == "env") for it in items[p:]]
    if not positional:
        positional = [ShellArg(_base(items[k].text))]
    seen: list[list[str]] = []
    heads: list[ShellArg] = []  # the first word of each command of ``seen``
    pip_env_source = False  # a pip command of ``seen`` runs with a pip/uv source variable set by the script
    build_target_set = (
        False  # a pip command of ``seen`` runs with VLLM_TARGET_DEVICE set (a source build's target)
    )
    pip_environs = 0
    allexport = shell_allexport(items, k + 1, j) if _base(items[k].text) in _SHELLS else False
    for words in commands(
        script,
        env,
        positional,
        allexport=allexport,
        sh=_base(items[k].text) in MAYBE_DASH,
        unknown=unknown,
        read_file=read_file,
    ):
        texts = [w.text for w in words]
        m = _match_program(texts)
        if m is None:
            seen.append(texts)
            heads.append(words[0])
            if "install" in texts and pip_env_source is False:
                # a pip/uv source variable the shell gives this command (``PIP_INDEX_URL=... pip install``, ``env
                # UV_INDEX=...``, an export before it): read for at most _MAX_PIP_ENVIRONS commands, beyond which
                # the script may set one unread
                pip_environs += 1
                environ = getattr(words, "environ", None)
                if pip_environs > _MAX_PIP_ENVIRONS:
                    pip_env_source = True
                elif environ is not None and _is_pip([_base(w) for w in texts[: texts.index("install")]]):
                    names = environ.get()[1]
                    pip_env_source = any(pip_source_variable(name) for name in names)
                    build_target_set = build_target_set or "VLLM_TARGET_DEVICE" in names
            broken = next((w.unclosed for w in words if w.unclosed >= 0), -1)
            swallowed = _swallowed_engine(script, broken, env) if broken >= 0 else None
            if swallowed is not None:
                # an earlier command's quote is never closed: the engine command is inside the quoted word
                return _unclosed_quote(script_item, env, script, broken, *swallowed), ""
            continue
        engine, start, pos_model = m
        broken = next((w.unclosed for w in words if w.unclosed >= 0), -1)
        if broken >= 0:
            return _unclosed_quote(script_item, env, script, broken, words[0].text, engine), ""
        refused = getattr(words, "env_refused", None)
        if refused:
            loc = words[0].loc
            if words[0].offset is not None:
                source, (offset,) = _raw_offsets(script_item, env, [words[0].offset])
                loc = _offset_loc(script_item.loc, source, offset)
            return _env_refuses(refused, words[0].text, engine, loc or script_item.loc), ""
        if getattr(words, "no_path", False):
            loc = words[0].loc
            if words[0].offset is not None:
                source, (offset,) = _raw_offsets(script_item, env, [words[0].offset])
                loc = _offset_loc(script_item.loc, source, offset)
            missing = _not_found_without_path(words[0].text, engine, loc or script_item.loc)
            if missing is not None:
                return missing, ""
        rest = words[start:]
        # the positions of the words taken from the script (the program's first word, then its arguments),
        # computed together (see _offset_locs), in the text as written when Kubernetes expanded a $(VAR) in it
        offsets = [w.offset for w in (words[0], *rest) if w.offset is not None]
        source = script
        if offsets:
            source, offsets = _raw_offsets(script_item, env, offsets)
        locs = iter(_offset_locs(script_item.loc, source, offsets)) if offsets else iter(())
        program = (words[0].loc if words[0].offset is None else next(locs)) or script_item.loc
        env_script = script_item.source == "env"
        argv = []
        for w in rest:
            loc = w.loc if w.offset is None else next(locs)
            text = _unexpanded(w.text) if w.unresolved else w.text
            # a word the script quotes so that it stays a $ reference as text ('$ARGS'): the engine's literal word
            quoted = (
                not (w.unresolved or w.from_env or env_script)
                and w.offset is not None
                and bare_expansion(text)
            )
            kind = "env" if w.from_env or env_script else QUOTED_SOURCE if quoted else "arg"
            argv.append(_Item(text, loc or script_item.loc, kind))
        found = _Found(engine, argv, pos_model, _in_their_file(program, argv), grpc=_runs_grpc(texts, start))
        found.appends = getattr(words, "appends", None) or ""
        found.maybe_set = getattr(words, "maybe_set", frozenset())
        found.fill_in = getattr(words, "fill_in", "")
        environ = getattr(words, "environ", None)
        if environ is not None:
            found.script_env, set_by = environ.get()
            by_offset = [(name, w) for name, w in set_by.items() if w is not None and w.offset is not None]
            for name, w in set_by.items():
                found.script_env_locs[name] = (w.loc if w is not None else None) or script_item.loc
            if by_offset:
                source, offs = _raw_offsets(script_item, env, [w.offset or 0 for _n, w in by_offset])
                for (name, _w), loc in zip(
                    by_offset, _offset_locs(script_item.loc, source, offs), strict=True
                ):
                    found.script_env_locs[name] = loc or script_item.loc
        # the last pip install of the engine before it starts decides: a release it pins, or an unpinned upgrade
        # (the script's requirements read within one budget: RequirementReader); a uv runner that starts the engine
        # in an environment of its own (uvx --from vllm==0.10.1 vllm serve) decides before any of them
        reader = RequirementReader(engine)
        uv_release = _uv_run_release(texts, start, engine, reader)
        if uv_release is not None:
            found.installed = uv_release or None
            found.upgraded = not uv_release
            found.install_text = clip(" ".join(texts[:start]), 120)
            found.install_loc = program
            found.install_runner = _uv_tool_runner(texts, start)
            found.install_range = _uv_run_range(texts, start, engine, reader) if uv_release else ""
            found.range_upgrades = bool(found.install_range)
            found.runner_range = "" if uv_release else _uv_run_spec(texts, start, engine, reader)
        for k in range(len(seen) - 1 if uv_release is None else -1, -1, -1):
            t, w0 = seen[k], heads[k]
            got = _pip_install(t, engine, reader)
            tree = _builds_source_tree(t) if got is None else None
            if tree is not None:
                # ``python3 setup.py install`` / ``pip install -e .`` in a clone of the engine's source at a
                # release tag (HabanaAI's Gaudi tutorial: git clone -b v0.7.2+Gaudi-1.21.0 .../vllm-fork.git)
                clone = _cloned_release(seen[:k], engine, tree)
                if clone is not None:
                    got, at = clone
                    t, w0 = seen[at], heads[at]
            if got is None:
                continue
            found.installed = got or None
            found.upgraded = not got
            ranged = _ranged(_pip_engine_pins(_pip_words(t), engine, reader) or [], engine) if got else None
            found.install_range = ranged[1] if ranged is not None and ranged[0] == got else ""
            found.range_upgrades = bool(found.install_range) and _upgrades(t, _pip_words(t) or (), engine)
            found.from_source = not got and any(_from_source_branch(w, engine) for w in _pip_words(t) or ())
            found.main_index = (
                (_vllm_main_index(t, env, script) or _dev_wheel(_pip_words(t) or (), engine) or "")
                if not got and engine == "vllm"
                else ""
            )
            found.install_text = clip(" ".join(t), 120)
            found.install_loc = w0.loc
            if w0.offset is not None:
                source, (offset,) = _raw_offsets(script_item, env, [w0.offset])
                found.install_loc = _offset_loc(script_item.loc, source, offset)
            found.install_loc = found.install_loc or script_item.loc
            break
        # the last pip install that names the engine at all (pip install vllm, unpinned too): where it installs
        # the engine from (PyPI's CUDA wheel or a ROCm index, images.pypi_cuda_wheel)
        for k in range(len(seen) - 1, -1, -1):
            args = _pip_words(seen[k])
            if not _pip_engine_pins(args, engine, reader):
                continue
            found.pip_args = tuple(args or ())
            found.pip_text = clip(" ".join(seen[k]), 120)
            # (a configuration file written by a redirection, ``echo ... > /etc/pip.conf``, is in the text only)
            found.pip_elsewhere = (
                pip_env_source
                or any(f in script for f in _PIP_CONFIG_FILES)
                or _pip_elsewhere(seen, k)
                # a source build (--no-binary vllm) for the target the script gives it (VLLM_TARGET_DEVICE=rocm
                # pip install ...): not the CUDA build PyPI's source makes by default
                or (build_target_set and pip_source_build(args or []))
            )
            head = heads[k]
            found.pip_loc = head.loc
            if head.offset is not None:
                source, (offset,) = _raw_offsets(script_item, env, [head.offset])
                found.pip_loc = _offset_loc(script_item.loc, source, offset)
            found.pip_loc = found.pip_loc or script_item.loc
            break
        return found, ""
    # no engine: the first command that joins a leader (looked for only now: a script that starts an engine
    # does not need it)
    for texts, w0 in zip(seen, heads, strict=True):
        how = _join_of(texts)
        if how is not None:
            loc = w0.loc
            if w0.offset is not None:
                source, (offset,) = _raw_offsets(script_item, env, [w0.offset])
                loc = _offset_loc(script_item.loc, source, offset)
            return _Join(how, loc or script_item.loc), ""
    if seen and all(t and (_base(t[0]) in _IDLE or _serves_no_model(t)) for t in seen):
        return None, ""  # only waits, or runs a component that serves no model: no engine here
    if (
        seen
        and seen[-1]
        and _base(seen[-1][0]) in _WAITS
        and all(t and (_base(t[0]) in _IDLE or _installs(t)) for t in seen)
    ):
        # installs packages, then waits (``pip install vllm && sleep infinity``: a tools sidecar a user execs
        # into): nothing is served, whatever the packages are
        return None, ""
    significant = [
        t
        for t in seen
        if t
        and t[0]
        not in ("echo", "set", "ulimit", "mkdir", "sleep", "cd", "printf", "[", "[[", "test", "true", "cat")
        and not t[0].startswith("((")
    ]
    if not significant:
        return None, "the shell script starts no engine process that kvlint can see"
    if all(_serves_no_model(t) for t in significant):
        # ``cd /vllm-workspace/benchmarks/disagg_benchmarks && python3 disagg_prefill_proxy_server.py ...``: the
        # directory change and the like aside, only components that load no model run (the caller sets the
        # container aside unless it requests a GPU, which no such component needs)
        return None, PROXY_ONLY
    # a script read into the shell (``source /usr/local/gib/scripts/set_nccl_env.sh``, ``. ./env.sh``) sets the
    # environment up; the command that starts the server comes later (gpu-recipes' charts then ``exec
    # "$LAUNCHER_SCRIPT" "${ARGS[@]}"``), so a sourced script is named only when nothing else is; a program run
    # from a variable (that launcher once the sourced script may have set it: shell55) is such a command
    first = next(
        (
            t
            for t in sorted(significant, key=lambda t: t[0] in _SOURCE)
            if "vllm" in " ".join(t)
            or "sglang" in " ".join(t)
            or ".sh" in " ".join(t)
            or (_VARIABLE_PROGRAM_RE.fullmatch(t[0]) is not None and "]]" not in t)
        ),
        significant[0],
    )
    reason = _reason_for(first)
    if "multi-node-serving.sh" in " ".join(first) and "worker" in first:
        reason = (
            "the container runs vLLM's multi-node-serving.sh worker: a Ray worker node; the engine and its "
            "flags are on the leader container"
        )
    return None, "the shell script starts no engine directly; " + reason


#: ``git clone`` options whose value is the next word (git ``builtin/clone.c``; ``--branch=X`` forms hold theirs).
_CLONE_VALUED = frozenset(
    {
        "-b",
        "--branch",
        "-o",
        "--origin",
        "-c",
        "--config",
        "--depth",
        "--reference",
        "--reference-if-able",
        "--separate-git-dir",
        "-j",
        "--jobs",
        "-u",
        "--upload-pack",
        "--template",
        "--shallow-since",
        "--shallow-exclude",
        "--filter",
        "--server-option",
        "--bundle-uri",
        "--revision",
    }
)


def _git_words(texts: Sequence[str]) -> list[str] | None:
    """The words after ``git`` (its ``-C DIR``/``-c k=v`` options skipped) of a command ``texts`` that runs git
    (after ``sudo``/``env``...), else None."""
    k = 0
    while k < len(texts) and (texts[k] in _PIP_WRAPPERS or "=" in texts[k]):
        k += 1
    if k >= len(texts) or _base(texts[k]) != "git":
        return None
    rest = list(texts[k + 1 :])
    while rest and rest[0] in ("-C", "-c") and len(rest) > 1:
        rest = rest[2:]
    return rest


def _clone_of(texts: Sequence[str]) -> tuple[str, str | None, str | None] | None:
    """``(url, ref, dir)`` of a ``git clone [-b REF] URL [DIR]`` command ``texts`` (``--branch=REF`` too; ref None
    without one, dir None without one), else None."""
    rest = _git_words(texts)
    if not rest or rest[0] != "clone":
        return None
    ref: str | None = None
    positional: list[str] = []
    i = 1
    while i < len(rest):
        w = rest[i]
        i += 1
        if w in _CLONE_VALUED:
            if w in ("-b", "--branch", "--revision") and i < len(rest):
                ref = rest[i]
            i += 1
        elif w.startswith(("--branch=", "--revision=")):
            ref = w.split("=", 1)[1]
        elif w.startswith("-b") and len(w) > 2:
            ref = w[2:]
        elif not w.startswith("-"):
            positional.append(w)
    return (positional[0], ref, positional[1] if len(positional) > 1 else None) if positional else None


#: ``git checkout`` / ``git switch`` options whose value is the next word: the new branch's name (its start point,
#: when given, is the next positional word).
_BRANCH_NAME_OPTS = frozenset({"-b", "-B", "-c", "-C", "--orphan", "--create", "--force-create"})
#: git commands that move a clone's HEAD onto commits no tag names: ``git pull`` after ``git checkout v0.8.5``
#: merges a branch into it, as do ``merge``, ``rebase`` and ``am``.
_GIT_HEAD_REWRITES = frozenset({"pull", "merge", "rebase", "am"})


def _head_move(texts: Sequence[str]) -> str | None:
    """Where a git command ``texts`` moves the clone's HEAD: the ref of ``git checkout REF``, ``git switch
    --detach REF``, ``git checkout -b NAME START`` (``START``) and ``git reset [--hard] REF``; ``""`` (no ref that
    names a release) for ``git pull``/``merge``/``rebase``/``am`` and a ``checkout`` of files from a ref
    (``git checkout REF -- path``); None for a git command that leaves HEAD where it is (``git fetch``,
    ``git checkout -- setup.py``, ``git checkout -b NAME`` at HEAD, ``git reset --hard``, ``git reset HEAD
    path``) and any other command."""
    rest = _git_words(texts)
    if not rest:
        return None
    cmd, args = rest[0], list(rest[1:])
    if cmd in _GIT_HEAD_REWRITES:
        return ""
    if cmd not in ("checkout", "switch", "reset"):
        return None
    paths = "--" in args
    if paths:
        args = args[: args.index("--")]
    positional: list[str] = []
    branch = False
    i = 0
    while i < len(args):
        w = args[i]
        i += 1
        if cmd != "reset" and w in _BRANCH_NAME_OPTS:
            branch = True
            i += 1  # the branch's name
        elif not w.startswith("-"):
            positional.append(w)
    if cmd == "reset":
        # ``git reset REF`` moves HEAD; ``git reset [REF] -- path`` / ``git reset HEAD path`` unstage files
        return positional[0] if len(positional) == 1 and not paths else None
    if not positional:
        return None  # restores files (``git checkout -- setup.py``) or makes a branch at HEAD
    if branch or (len(positional) == 1 and not paths):
        return positional[0]
    return ""  # files taken from another ref: the tree is no release's


def _builds_source_tree(texts: Sequence[str]) -> str | None:
    """The directory whose project ``texts`` installs into the environment, else None: ``"."`` for ``python
    setup.py install`` or ``develop``; a pip install of a directory (``pip install -e .``, ``pip install
    --no-build-isolation .``, ``pip install ./vllm-fork``, ``pip install /opt/vllm``, SGLang's NPU guide's ``pip
    install -e python[srt_npu]`` in its clone; :func:`_pip_words`) its argument."""
    words = [_base(w) for w in texts]
    if len(words) >= 3 and _PYTHON_RE.fullmatch(words[0]) and words[1] == "setup.py":
        return "." if words[2] in ("install", "develop") else None
    args = _pip_words(texts)
    if args is None or any(w.split("=", 1)[0] in _PIP_ELSEWHERE for w in args):
        return None
    for w, n in zip(args, args[1:], strict=False):
        if w in ("-e", "--editable") and not n.startswith(("git+", "hg+", "svn+", "bzr+")):
            return (
                n  # an editable install is of a local directory (pip install -e python[srt_npu]) or a VCS URL
            )
    return next(
        (
            w
            for w in args
            if not w.endswith((".txt", ".whl"))
            and (w in (".", "./") or w.startswith(("./", "../", "/")) or w.startswith(".["))
        ),
        None,
    )


def _tree_of_clone(tree: str, url: str, directory: str | None) -> bool:
    """Whether the directory ``tree`` a source install names may be the clone of ``url`` into ``directory`` (its
    ``git clone URL DIR`` argument, else the repository's name): a path relative to the working directory
    (``.``, ``python[srt_npu]``: which directory that is, after the script's ``cd``, :func:`_cloned_release`
    decides), or one whose last component is the clone's (``pip install /opt/vllm`` after ``git clone URL
    /opt/vllm`` or ``git clone URL`` in /opt). ``pip install /workspace/myplugin`` builds another project."""
    t = tree.split("[", 1)[0].rstrip("/")
    if not t.startswith(("/", "./", "../", "~")):
        return True
    return t.rsplit("/", 1)[-1] == _clone_name(url, directory)


def _clone_name(url: str, directory: str | None) -> str:
    """The name of the directory ``git clone URL [DIR]`` makes: DIR's last component, else the repository's."""
    name = (
        (directory or url.rstrip("/").removesuffix(".git")).rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    )
    return name.removesuffix(".git")


def _cd_target(texts: Sequence[str]) -> str | None:
    """The directory ``cd [-L|-P] DIR`` (or ``pushd DIR``) goes to, normalised without its trailing ``/``; None when
    it is not known from the words (``cd`` alone goes to $HOME, ``cd -`` to $OLDPWD, ``..`` or a name with ``$``
    left unexpanded depend on where the script is)."""
    args = [w for w in texts[1:] if w not in ("-L", "-P", "-e", "-@", "--")]
    if len(args) != 1 or not args[0] or args[0] == "-" or "$" in args[0]:
        return None
    target = os.path.normpath(args[0]) if args[0] != "/" else "/"
    if target in (".", "/") or target.startswith("..") or "/.." in target:
        return None
    return target.rstrip("/")


def _cloned_release(before: Sequence[Sequence[str]], engine: str, tree: str = ".") -> tuple[str, int] | None:
    """``(release, index)`` of the last ``git clone`` among the commands ``before`` a source install that
    clones ``engine``'s source repository (:data:`kvlint.engines.requirements.ENGINE_SOURCES`) at a release tag
    (``-b v0.7.2+Gaudi-1.21.0``, or a later ``git checkout v0.8.5``), the release that tag builds
    (:func:`kvlint.engines.requirements.ref_release`: setuptools-scm versions the build from the tag); None when
    no such clone precedes it, or its ref names no release (a branch: the build's release is not known), or the
    last git command that moves HEAD after it (:func:`_head_move`: ``git checkout -b dev main``, ``git reset
    --hard origin/habana_main``, ``git pull``) leaves the tree at no release tag. Which clone a later git command
    runs in (``cd``) is not followed: any such command between the clone and the install counts. ``tree``, the
    directory the install names (:func:`_builds_source_tree`), must be that clone's (:func:`_tree_of_clone`); a
    relative one is read in the directory of the last ``cd`` between the clone and the install (bash's working
    directory: ``cd /opt/tool && pip install .`` builds /opt/tool, not a clone at /opt/vllm-bench), which must be
    the clone's (its last component the clone's name); a ``cd`` whose target is not known (``cd``, ``cd -``, ``cd
    ..``) gives no release (:func:`_cd_target`)."""
    checkout: str | None = None
    cd_seen = False
    cwd: str | None = None
    relative = not tree.split("[", 1)[0].startswith(("/", "~"))
    for k in range(len(before) - 1, -1, -1):
        texts = before[k]
        if texts and _base(texts[0]) in ("cd", "pushd"):
            if not cd_seen:
                cd_seen, cwd = True, _cd_target(texts)
            continue
        moved = _head_move(texts)
        if moved is not None:
            if checkout is None:
                checkout = moved  # the last move decides what the tree holds
            continue
        clone = _clone_of(texts)
        if clone is None:
            continue
        url, ref, directory = clone
        if not _tree_of_clone(tree, url, directory):
            continue  # the install builds another directory than this clone: an earlier clone may be it
        if cd_seen and relative:
            if cwd is None or tree.startswith(".."):
                return None  # the working directory of the install is not known
            name = _clone_name(url, directory)
            built = os.path.normpath(os.path.join(cwd, tree.split("[", 1)[0]))
            if name not in (cwd.rsplit("/", 1)[-1], built.rsplit("/", 1)[-1]):
                continue  # the install builds in the directory `cd` went to, not in this clone
        elif relative and (directory is None or directory.rstrip("/") != "."):
            # no `cd` between them: the install runs where the clone ran, the clone is its ./DIR
            rel = os.path.normpath(tree.split("[", 1)[0])
            if directory is not None and directory.startswith(("/", "~")):
                continue  # an absolute clone, a relative install in a directory not known: not this clone
            if rel.split("/", 1)[0] != _clone_name(url, directory):
                continue  # `git clone URL && pip install .` builds the working directory, not the clone in it
        if source_repository(url) != engine:
            return None
        release = ref_release((ref or "") if checkout is None else checkout)
        return (release, k) if release else None
    return None


#: Words that run the next word as the program (``sudo pip install ...``), skipped before the installer.
_PIP_WRAPPERS = frozenset({"sudo", "env", "nohup", "time", "exec", "command", "nice"})
#: ``pip install`` options after which the engine the container runs is not replaced: nothing is installed
#: (``--dry-run``) or it goes to a directory that is not the environment's site-packages (``--target``,
#: ``--prefix``, ``--root``; pip ``commands/install.py``).
_PIP_ELSEWHERE = frozenset({"--dry-run", "-t", "--target", "--prefix", "--root"})


def _is_pip(before: Sequence[str]) -> bool:
    """Whether the words before ``install`` run pip: ``pip``/``pip3``/``pip3.12``, ``python3 -m pip``,
    ``uv pip`` (after ``sudo``, its options, ``env`` and ``NAME=value`` words; pip's own options may follow:
    ``pip -q install``); not ``echo pip`` or ``apt-get``."""
    k = 0
    while k < len(before) and (before[k] in _PIP_WRAPPERS or "=" in before[k] or before[k].startswith("-")):
        k += 1
    rest = list(before[k:])
    while rest and rest[-1].startswith("-"):
        rest.pop()
    if len(rest) == 1:
        return re.fullmatch(r"pip[0-9.]*", rest[0]) is not None
    if rest == ["uv", "pip"]:
        return True
    return len(rest) == 3 and _PYTHON_RE.fullmatch(rest[0]) is not None and rest[1:] == ["-m", "pip"]


#: ``pip install`` options that upgrade an installed requirement to the newest release its specifier allows
#: (pip ``commands/install.py``: ``-U``/``--upgrade``; uv pip takes the same), and pip's ``--force-reinstall``,
#: under which pip's resolver "pretend[s] there is nothing installed" and takes the best candidate of its indexes
#: (pip 26.3 ``resolution/resolvelib/factory.py::Factory._iter_found_candidates``, ``_get_installed_candidate``).
_PIP_UPGRADE = frozenset({"-U", "--upgrade", "--force-reinstall"})
#: vLLM's index of the wheels of its main branch (vllm-project/vllm@0487d5c2 ``docs/getting_started/installation/
#: gpu.cuda.inc.md``, "Install the latest code"): ``https://wheels.vllm.ai/nightly`` (the last commit of ``main``;
#: ``/nightly/<variant>`` for ``cu130``, ``cpu`` ...) and ``https://wheels.vllm.ai/<full commit hash>`` (that
#: commit's build), each a development version (``0.23.1rc1.dev901+g2f3f441f8``), no release. Group 1: ``nightly``
#: or the commit.
_VLLM_MAIN_INDEX = re.compile(
    r"https?://wheels\.vllm\.ai/(nightly|[0-9a-f]{40})(?:/[a-z0-9]+)?/?", re.IGNORECASE
)
#: pip's and uv's options that name an index.
_PIP_INDEX_OPTIONS = frozenset({"-i", "--index-url", "--extra-index-url", "--index", "--default-index"})


def _pip_words(words: Sequence[str]) -> list[str] | None:
    """The words after ``install`` of a pip command ``words`` (:func:`_is_pip`), each cluster of one-letter options
    split as pip's option parser (optparse) splits it: ``-qU`` is ``-q -U``, ``-qr req.txt`` is ``-q -r req.txt``,
    ``-qtDIR`` is ``-q -t DIR``; None when ``words`` is not a pip install."""
    if "install" not in words:
        return None
    at = words.index("install")
    if not _is_pip([_base(w) for w in words[:at]]):
        return None
    out: list[str] = []
    for w in words[at + 1 :]:
        if len(w) < 3 or w[0] != "-" or not ("a" <= w[1] <= "z" or "A" <= w[1] <= "Z"):
            out.append(w)  # (a requirement, a long option, a lone short one)
            continue
        for k, c in enumerate(w[1:], 1):
            out.append("-" + c)
            if c in PIP_SHORT_VALUED:
                if k + 1 < len(w):
                    out.append(w[k + 1 :])
                break
    return out


#: How many pip commands of a script the environment is read for (:func:`_scan_shell`, each a copy of it).
_MAX_PIP_ENVIRONS = 32
#: Words that name pip's or uv's configuration file (``echo ... > /etc/pip.conf``, ``cp pip.conf ~/.pip/``).
_PIP_CONFIG_FILES = ("pip.conf", "pip.ini", "uv.toml")


def _pip_elsewhere(seen: Sequence[Sequence[str]], own: int | None = None) -> bool:
    """Whether a command of the script before the engine (``seen``, each command's words) may install the engine
    from elsewhere than PyPI, or set where pip or uv installs it from, so that the script's ``pip install vllm``
    may not be PyPI's wheel (:attr:`kvlint.types.ServingConfig.pip_elsewhere`): a pip install naming another
    source (:func:`kvlint.engines.images.pip_names_source`: ``pip install -r requirements-rocm.txt``, ``vllm==X+rocm700
    --extra-index-url ...``, after which a later ``pip install vllm`` is "Requirement already satisfied") or a
    requirement that is a local path, URL or VCS reference (``pip install -e .``, ``/wheels/vllm-...whl``,
    ``git+https://...``), ``pip config`` (``pip config set global.index-url ...``), a word naming a
    pip/uv configuration file, a ``setup.py`` build, or an environment activated (``source /opt/venv/bin/activate``,
    ``conda activate``: one on a volume may hold vLLM already, and ``pip install vllm`` then installs nothing).
    ``own``: the index in ``seen`` of the install whose source is read here, whose index options
    :func:`kvlint.engines.images.pypi_cuda_wheel` reads itself (:func:`kvlint.engines.images.rocm_index_outbid`)."""
    for at_command, words in enumerate(seen):
        if any(w.endswith(_PIP_CONFIG_FILES) or _base(w) in ("setup.py", "activate") for w in words):
            return True
        if words[:2] in (["conda", "activate"], ["micromamba", "activate"], ["mamba", "activate"]):
            return True
        for sub in ("install", "config"):
            if sub not in words:
                continue
            at = words.index(sub)
            if not _is_pip([_base(w) for w in words[:at]]):
                continue
            if sub == "config" or any(
                "=" in w and pip_source_variable(w.split("=", 1)[0]) for w in words[:at]
            ):
                return True
            args = _pip_words(words) or []
            if at_command != own and pip_names_source(args):
                return True
            skip = False
            for w in args:
                if skip or w in PIP_VALUED:
                    skip = not skip and w in PIP_VALUED
                    continue
                if not w.startswith("-") and (
                    "/" in w or "@" in w or w.startswith(".") or w.endswith((".whl", ".tar.gz", ".zip"))
                ):
                    return True
    return False


#: The directories of vLLM's wheel bucket (``https://wheels.vllm.ai`` or the S3 bucket behind it,
#: ``vllm-wheels.s3.us-west-2.amazonaws.com``) where its CI copies a development build under the placeholder name
#: (vllm-project/vllm@d3390218 ``.buildkite/upload-wheels.sh``): ``<commit>/`` that commit's, ``nightly/`` and
#: ``1.0.0.dev/`` the last one. Group 1: the directory.
_VLLM_DEV_WHEEL_DIR = re.compile(
    r"https?://(?:wheels\.vllm\.ai|vllm-wheels\.s3\.us-west-2\.amazonaws\.com)/(nightly|1\.0\.0\.dev|[0-9a-f]{40})/"
    r"[^/]+\.whl",
    re.IGNORECASE,
)


def main_index_build(url: str) -> tuple[str, str | None]:
    """Which build of vLLM's main branch ``url`` installs, the index (:data:`_VLLM_MAIN_INDEX`) or a placeholder
    wheel (:data:`_VLLM_DEV_WHEEL_DIR`, a local file too): ``("commit", hash)`` for one commit's build
    (``https://wheels.vllm.ai/<commit>``), ``("nightly", None)`` for the last commit's (``/nightly``,
    ``/1.0.0.dev/``), ``("dev", None)`` for a wheel whose directory does not say."""
    m = _VLLM_MAIN_INDEX.fullmatch(url.strip()) or _VLLM_DEV_WHEEL_DIR.fullmatch(url.strip())
    if m is None:
        return "dev", None
    if m.group(1).lower() in ("nightly", "1.0.0.dev"):
        return "nightly", None
    return "commit", m.group(1)


def main_index_commit(url: str) -> str | None:
    """The commit whose build the vLLM main-branch index ``url`` holds (``https://wheels.vllm.ai/<commit>``, or
    that directory's placeholder wheel), or None for the nightly index (the last commit of ``main``) and any other
    URL."""
    return main_index_build(url)[1]


def _option_value(args: Sequence[str], option: str) -> str | None:
    """The value the last ``option`` (``--option VALUE`` or ``--option=VALUE``) of ``args`` gives, or None."""
    got: str | None = None
    for k, word in enumerate(args):
        name, eq, value = word.partition("=")
        if name == option:
            got = value if eq else (args[k + 1] if k + 1 < len(args) else "")
    return got


def _vllm_main_index(
    words: Sequence[str], env: Mapping[str, str] | None = None, script: str = ""
) -> str | None:
    """The index of vLLM's main-branch wheels (:data:`_VLLM_MAIN_INDEX`) the unpinned upgrade ``words`` (a pip or uv
    pip command) takes vLLM from, or None. uv under its default ``--index-strategy first-index`` takes the first
    index that has the package, an extra index before PyPI, and allows pre-releases when those are all the index
    has: the nightly build. Under ``unsafe-best-match`` or ``unsafe-first-match`` (the option, or
    ``UV_INDEX_STRATEGY`` from the container's ``env`` or the script) uv weighs PyPI's releases too, and takes a
    development version only when pre-releases are allowed (``--prerelease allow``, ``--pre``,
    ``UV_PRERELEASE=allow``); a strategy kvlint cannot read (a variable the script sets) is not read as
    first-index (astral-sh/uv@029be052 ``docs/concepts/indexes.md``, "Searching across multiple indexes").
    pip gives its indexes no priority and takes the highest version (vLLM's guide: "pip combines packages from
    --extra-index-url and the default index, choosing only the latest version"), and a development version only
    with ``--pre`` (or ``PIP_PRE``; else PyPI's newest release, which the upgrade text already says) or when the
    index replaces PyPI (``--index-url``: its development versions are all there is). ``env``: the container's
    variables; ``script``: the script's text."""
    if "install" not in words:
        return None
    env = env or {}
    at = list(words).index("install")
    uv = any(_base(w) == "uv" for w in words[:at])
    args = _pip_words(words) or []
    if uv:
        prerelease = _option_value(args, "--prerelease") or env.get("UV_PRERELEASE", "")
        pre = "--pre" in args or prerelease.strip().lower() == "allow"
        strategy = _option_value(args, "--index-strategy")
        if strategy is None:
            # the script's own assignment (export UV_INDEX_STRATEGY=...) is not read: any mention is unknown
            strategy = "?" if "UV_INDEX_STRATEGY" in script else env.get("UV_INDEX_STRATEGY", "first-index")
        first_index = strategy.strip().lower() == "first-index"
    else:
        pre = "--pre" in args or env.get("PIP_PRE", "").strip().lower() in ("1", "true", "yes", "on")
        first_index = False
    for k, word in enumerate(args):
        option, eq, value = word.partition("=")
        if option not in _PIP_INDEX_OPTIONS:
            continue
        value = value if eq else (args[k + 1] if k + 1 < len(args) else "")
        if _VLLM_MAIN_INDEX.fullmatch(value.strip()) is None:
            continue
        if first_index or pre or option in ("-i", "--index-url", "--default-index"):
            return value.strip()
    return None


def _pip_install(words: Sequence[str], engine: str, reader: RequirementReader | None = None) -> str | None:
    """What the command ``words`` installs of ``engine`` with pip: the release it pins (:func:`_pip_pinned`),
    ``""`` when it upgrades the engine without pinning one (``pip install -U vllm``, ``pip install --upgrade
    vllm``: pip replaces the release the image carried with the newest on the day the container starts), else
    None (nothing of the engine, or an unpinned install without ``-U``, which pip leaves alone when the image
    carries the engine: "Requirement already satisfied"). ``reader`` reads the requirements within the script's
    budget (:class:`kvlint.engines.requirements.RequirementReader`)."""
    args = _pip_words(words)
    pins = _pip_engine_pins(args, engine, reader or RequirementReader(engine))
    if pins is None or _conflicting(pins):
        return None
    pinned = _last_release(pins)
    if pinned is not None:
        return pinned
    ranged = _ranged(pins, engine)
    if ranged is not None:
        return ranged[0]
    if _upgrades(words, args or (), engine) and any(pin.release is None for pin in pins):
        return ""
    if any(_from_source_branch(w, engine) for w in args or ()):
        # the engine built from its source at a branch (git+https://github.com/vllm-project/vllm.git, @main): the
        # build's version is a development one (setuptools-scm: 0.11.1.dev12+g...), never the image's release, and
        # pip's resolver reinstalls a candidate whose version differs from the installed one
        # (pip/_internal/resolution/resolvelib/resolver.py, Resolver.resolve): the newest code, no release
        return ""
    if _dev_wheel(args or (), engine) is not None:
        # vLLM's CI's placeholder wheel name (vllm-1.0.0.dev-...whl: requirements.dev_placeholder_wheel): a
        # development build of main, whose version differs from the image's release, so pip installs it
        return ""
    return None


#: uv pip install's options that make uv pass over the installed release of a package (astral-sh/uv@26a9dd4b
#: ``crates/uv-cli/src/lib.rs``: ``ReinstallArgs`` ``--reinstall`` (alias ``--force-reinstall``),
#: ``--reinstall-package NAME``; ``ResolverInstallerArgs`` ``-U``/``--upgrade``, ``-P``/``--upgrade-package REQ``;
#: ``--no-reinstall``/``--no-upgrade`` override them, the last one written winning, clap's ``overrides_with``):
#: ``crates/uv-resolver/src/candidate_selector.rs`` ``CandidateSelector::select`` skips an installed
#: distribution of a package to reinstall and does not prefer it for a package to upgrade, so the resolver takes
#: the best candidate of the indexes, the newest release, as pip does under ``-U``.
_UV_ALL = {"-U": "upgrade", "--upgrade": "upgrade", "--no-upgrade": "", "--reinstall": "reinstall"}
_UV_ALL |= {"--force-reinstall": "reinstall", "--no-reinstall": ""}
_UV_PACKAGE = frozenset({"-P", "--upgrade-package", "--reinstall-package"})


def _upgrades(words: Sequence[str], args: Sequence[str], engine: str) -> bool:
    """Whether the pip command ``words`` (``args``: its words after ``install``, :func:`_pip_words`) upgrades
    ``engine`` over the installed release: pip's ``-U``/``--upgrade``/``--force-reinstall`` (:data:`_PIP_UPGRADE`);
    for ``uv pip``, the last of ``-U``/``--upgrade``/``--reinstall``/``--force-reinstall`` and their ``--no-``
    forms, or ``--upgrade-package``/``-P``/``--reinstall-package`` naming ``engine`` (:data:`_UV_ALL`,
    :data:`_UV_PACKAGE`)."""
    at = list(words).index("install") if "install" in words else 0
    if not any(_base(w) == "uv" for w in words[:at]):
        return any(w in _PIP_UPGRADE for w in args)
    upgrade = reinstall = False
    for k, word in enumerate(args):
        if word in _UV_ALL:
            if _UV_ALL[word] == "upgrade" or word == "--no-upgrade":
                upgrade = word != "--no-upgrade"
            else:
                reinstall = word != "--no-reinstall"
            continue
        name, eq, value = word.partition("=")
        if name in _UV_PACKAGE:
            value = value if eq else (args[k + 1] if k + 1 < len(args) else "")
            m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", value)
            if m is not None and re.sub(r"[-_.]+", "-", m.group(1)).lower() == engine:
                return True
    return upgrade or reinstall


def _dev_wheel(args: Sequence[str], engine: str) -> str | None:
    """The location of the wheel among the words after ``pip install`` (``args``) that vLLM's CI names by its
    placeholder ``vllm-1.0.0.dev-...whl`` (:func:`kvlint.engines.requirements.dev_placeholder_wheel`), alone or
    as a direct reference (``vllm@https://...``), else None (``engine`` not vLLM)."""
    if engine != "vllm":
        return None
    for w in args:
        m = None if w.startswith("-") else _DIRECT_REFERENCE.match(w.strip())
        location = (m.group(1) if m else w).split("#", 1)[0]
        if not w.startswith("-") and dev_placeholder_wheel(location):
            return location
    return None


#: A PEP 508 direct reference, ``name [extras] @ url`` with or without blanks around the ``@``
#: (``vllm@git+https://...``, ``vllm[audio] @ git+https://...``): group 1 is the URL.
_DIRECT_REFERENCE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\]\s*)?@\s*(\S+)")


def _from_source_branch(word: str, engine: str) -> bool:
    """Whether the pip argument ``word`` is a VCS URL of ``engine``'s source repository
    (:func:`kvlint.engines.requirements.source_repository`) at no release tag (no ``@ref``, or a branch or
    commit: :func:`kvlint.engines.requirements.ref_release` reads none), in either form pip takes
    (``git+https://...``, the direct reference ``vllm @ git+https://...`` or ``vllm@git+https://...``)."""
    m = None if word.startswith("git+") else _DIRECT_REFERENCE.match(word.strip())
    url = m.group(1) if m else word
    if not url.startswith("git+") or source_repository(url) != engine:
        return False
    try:
        path = urlsplit(url.removeprefix("git+").split("#", 1)[0]).path
    except ValueError:
        return False
    return ref_release(path.partition("@")[2]) is None


def _pip_pinned(words: Sequence[str], engine: str) -> str | None:
    """The release of ``engine`` the command ``words`` installs with pip (``pip install vllm==0.6.6 --quiet``,
    ``python3 -m pip install "sglang[all]==0.4.6"``, ``uv pip install ...``; each word read as pip reads a
    requirement, :func:`kvlint.engines.requirements.read_requirement`), else None. An unpinned requirement
    (``pip install -U vllm``) installs whatever is newest on the day: no release. Nothing either when the command
    is not pip (``echo pip install ...``) or installs elsewhere than the environment the engine runs from
    (``--target DIR``, ``--prefix``, ``--root``, ``--dry-run``)."""
    pins = _pip_engine_pins(_pip_words(words), engine, RequirementReader(engine))
    return None if pins is None or _conflicting(pins) else _last_release(pins)


def _ranged(pins: Sequence[Pin], engine: str) -> tuple[str, str] | None:
    """``(release, range)`` for the last of ``pins`` that installs the engine within a version range
    (``vllm>=0.9,<0.10``, ``vllm~=0.9.1``, ``sglang[all]>=0.4.6,<0.4.7``): pip (and uv) installs the newest release
    its index holds that the range admits, taken here as the newest release kvlint models in it
    (:func:`kvlint.engines.requirements.newest_admitted` over the engine's modelled releases,
    :data:`kvlint.engines.vllm_flags_data.VERSIONS`, :data:`kvlint.engines.sglang_flags_data.VERSIONS`). None when no
    pin has a range, the engine is not vLLM or SGLang (TGI's server is no package pip installs), or the range admits
    the newest release kvlint models (pip may take a newer one: the release stays unknown)."""
    if engine == "vllm":
        from kvlint.engines.vllm_flags_data import VERSIONS
    elif engine == "sglang":
        from kvlint.engines.sglang_flags_data import VERSIONS
    else:
        return None
    for pin in reversed(pins):
        if pin.spec:
            release = newest_admitted(pin.spec, VERSIONS)
            return None if release is None else (release, pin.spec)
    return None


def _conflicting(pins: Sequence[Pin]) -> bool:
    """Whether ``pins`` name two different releases of the engine (``pip install vllm==0.8.5 vllm==0.9.0``): pip's
    resolver (20.3 on) refuses the command, "ERROR: Cannot install vllm==0.8.5 and vllm==0.9.0 because these
    package versions have conflicting dependencies" / "ResolutionImpossible", and exits 1 having installed nothing
    (seen with pip 26.3; pip before 20.3 stopped with "Double requirement given"). The image's release stays."""
    releases = {Version(pin.release) for pin in pins if pin.release is not None}  # 0.9 and 0.9.0 are one
    return len(releases) > 1


def _last_release(pins: Sequence[Pin]) -> str | None:
    """The release the pinned requirements of ``pins`` name (one release: :func:`_conflicting` rules out two),
    else None."""
    pinned = None
    for pin in pins:
        if pin.release is not None:
            pinned = pin.release
    return pinned


def _pip_engine_pins(args: Sequence[str] | None, engine: str, reader: RequirementReader) -> list[Pin] | None:
    """The requirements of ``engine`` (pinned or not) among ``args``, the words after ``pip install`` (``uv pip
    install``, ``python3 -m pip install``) as :func:`_pip_words` gives them, in order, the values of pip's valued
    options skipped; None when ``args`` is None (not pip's install) or the command installs elsewhere than the
    environment the engine runs from (:data:`_PIP_ELSEWHERE`)."""
    if args is None:
        return None
    pins: list[Pin] = []
    skip = False
    for w in args:
        if skip:
            skip = False
            continue
        if w.split("=", 1)[0] in _PIP_ELSEWHERE:
            return None
        if w in PIP_VALUED:
            skip = True
            continue
        pin = reader.read(w)
        if pin is not None and pin.project == engine:
            pins.append(pin)
    return pins


#: How many quotes the text after an unclosed one is followed through in search of the engine command it swallows.
_MAX_SWALLOWED_QUOTES = 8


def _swallowed_engine(script: str, offset: int, env: Mapping[str, str]) -> tuple[str, str] | None:
    """``(program, engine)`` of an engine command in the text after the quote at ``offset`` that the script never
    closes (``echo "starting`` on a line before ``vllm serve ...``): the shell reads that text as part of the
    quoted word and stops with a syntax error at its end, so the engine command in it never runs. The text is read
    as a script of its own (a quote never closed in it followed the same way, at most
    :data:`_MAX_SWALLOWED_QUOTES` times); None when it holds no engine command."""
    for _ in range(_MAX_SWALLOWED_QUOTES):
        rest = script[offset + 1 :]
        if not rest.strip():
            return None
        again = -1
        for words in commands(rest, env):
            m = _match_program([w.text for w in words])
            if m is not None:
                return words[0].text, m[0]
            again = next((w.unclosed for w in words if w.unclosed >= 0), -1)
            if again >= 0:
                break
        if again < 0:
            return None
        script, offset = rest, again
    return None


def _unexpanded(text: str) -> str:
    """A word the shell's reading left unresolved, as the engines' parsers know one (a reference in its text,
    :data:`UNRESOLVED_RE`): most keep the ``$...`` they could not expand; a brace or tilde expansion kvlint does not
    read (``{2,4}{,}``, ``~user/m``, ``{a,b}`` in ``sh -c``) has none and was taken as the value written (vLLM
    "invalid value '{2,4}{,}'" for a word bash makes ``2 2 4 4``). Such a value is shown as ``$(...)`` around it
    (an ``--option=`` before it kept, so the option is still the one read)."""
    if UNRESOLVED_RE.search(text):
        return text
    option, eq, value = text.partition("=")
    if eq and option.startswith("-") and value:
        return option + "=$(" + value + ")"
    return "$(" + text + ")"


def _unclosed_quote(
    item: _Item, env: Mapping[str, str], script: str, offset: int, program: str, engine: str
) -> _Unrunnable:
    """The engine command of the ``sh -c`` script ``item`` (its text ``script``) holds a quote, at ``offset``,
    that the script never closes: the shell reads to the end of the script looking for it and stops with a
    syntax error before it runs the command (bash 5 ``parse.y`` ``parse_matched_pair``: "unexpected EOF while
    looking for matching"; dash ``parser.c`` ``readtoken1``: "Unterminated quoted string"), exit status 2, so
    the engine never starts. Complete lines before it do run (bash and dash read a ``-c`` string a command at
    a time)."""
    quote = script[offset]
    line = script.count("\n", 0, offset) + 1
    source, (raw,) = _raw_offsets(item, env, [offset])
    loc = _offset_loc(item.loc, source, raw) or item.loc
    return _Unrunnable(
        f"the {quote} at line {line} of the shell script is never closed, so the shell reads the rest of the "
        f"script as one quoted word and stops with a syntax error before running {program} (bash: 'unexpected "
        f"EOF while looking for matching `{quote}'', dash: 'Unterminated quoted string'); the container exits "
        "with status 2 and restarts without ever starting the engine",
        loc,
        engine,
    )


#: Engine programs the engines' images install outside glibc's default search path ``/bin:/usr/bin``, which
#: ``execvp`` searches when the environment has no ``PATH`` (glibc posix/execvpe.c, ``CS_PATH``): vLLM's images
#: install with ``uv pip install --system`` into /usr/local (their processes run ``/usr/bin/python3
#: /usr/local/bin/vllm serve``), TGI's Dockerfile copies ``text-generation-launcher`` to /usr/local/bin.
#: ``python3`` is /usr/bin/python3 in vLLM's and SGLang's images (found there), not in every image: not judged.
_OUTSIDE_DEFAULT_PATH = {"vllm": "/usr/local/bin", "text-generation-launcher": "/usr/local/bin"}


def _env_refuses(message: str, program: str, engine: str, loc: Loc | None) -> _Unrunnable:
    """``env -S STRING`` refuses STRING (coreutils 9.1 ``env.c::parse_split_string``/``build_argv``: an unclosed quote,
    an unknown ``\\`` sequence, a ``$`` that is not ``${NAME}``): it prints ``message`` and exits 125 without running
    anything, so the engine command in STRING (``program``) never starts."""
    return _Unrunnable(
        f"env refuses the -S string that holds `{program}` (env: {message}) and exits with status 125 without "
        "running anything: the container restarts without ever starting the engine",
        loc,
        engine,
        "write the -S string as env reads it: quotes closed, only the escapes \\f \\n \\r \\t \\v \\_ \\c "
        "\\\" \\# \\$ \\' \\\\, variables as ${NAME}",
    )


def _not_found_without_path(program: str, engine: str, loc: Loc | None) -> _Unrunnable | None:
    """An engine ``program`` that a wrapper program (``env -i``, ``env -u PATH``) looks up in an environment without
    ``PATH``: not found in ``/bin:/usr/bin`` when the images install it elsewhere (:data:`_OUTSIDE_DEFAULT_PATH`;
    a path with ``/`` is run as written). The wrapper fails: ``env``, ``nohup``, ``timeout``, ``setsid`` exit 127 ("No
    such file or directory"), tini and gosu with statuses of their own. dumb-init is not one (it is linked against
    musl, whose ``execvp`` searches /usr/local/bin too: :data:`kvlint.engines.shell.MUSL_LOOKUP_WRAPPERS`)."""
    where = _OUTSIDE_DEFAULT_PATH.get(program)
    if where is None:
        return None
    return _Unrunnable(
        f"`{program}` is run by a wrapper whose environment has no PATH (`env -i` or `env -u PATH` took it out), so "
        f"it is looked up in /bin:/usr/bin only (glibc execvp's default search path) and not found: the image installs it "
        f"in {where}; the wrapper fails (`env`, `nohup`, `timeout`, `setsid` exit with status 127) and the engine "
        f"never starts",
        loc,
        engine,
        f"give the wrapped command a PATH (`env -i PATH={where}:/usr/bin:/bin {program} ...`) or its full path "
        f"(`env -i {where}/{program} ...`)",
    )


def _unrunnable(
    found: _Unrunnable, container: LDict, image: str, env: dict[str, str], engine_version_option: str | None
) -> ServingConfig:
    """KV503 as an error for an engine command the shell refuses to run: the container never starts."""
    version = engine_release(image, found.engine, engine_version_option)
    return _kv503(
        found.engine,
        container,
        image,
        version,
        env,
        found.reason,
        found.loc,
        found.fix
        or "close the quote (or remove the stray one) so the shell can parse the script; `bash -n -c SCRIPT` checks "
        "a script's syntax without running it",
        "error",
    )


def _raw_offsets(item: _Item, env: Mapping[str, str], offsets: Sequence[int]) -> tuple[str, list[int]]:
    """The script text the manifest holds for ``item`` and ``offsets`` (of characters of ``item.text``, the
    script after Kubernetes ``$(VAR)`` expansion) moved to it: a character of a substituted value (or the
    ``$`` a ``$$`` became) to its reference's ``$``, every other character by the length the expansions
    before it added (the pieces :func:`kvlint.engines.shell.k8s_expand` reports). Without a change
    (``item.raw`` None), or when expanding ``item.raw`` again does not give ``item.text`` (a substitution the
    expansion did not make, past its length bound), the expanded text and the offsets as they are (the
    positions then follow the expanded text, as before). The expansion here is bounded by ``item.text``'s
    length: a result longer than it cannot be it."""
    source, moved = _expansion_offsets(item, env, offsets)
    template = item.template
    if template is None or source != template:
        return source, moved
    return template.written, written_offsets(template, moved)


def _expansion_offsets(item: _Item, env: Mapping[str, str], offsets: Sequence[int]) -> tuple[str, list[int]]:
    """:func:`_raw_offsets` before an OpenShift Template's substitution is undone."""
    raw = item.raw
    if raw is None:
        return item.text, list(offsets)
    pieces: list[tuple[int, int, bool]] = []
    if k8s_expand(raw, env, len(item.text), pieces)[0] != item.text:
        return item.text, list(offsets)
    return raw, offsets_through(pieces, offsets)


def _items_of(
    container: Mapping, key: str, env: Mapping[str, str], *, fast: bool = True
) -> list[_Item] | None:
    """The words of ``container[key]`` (``command`` or ``args``) after Kubernetes ``$(VAR)`` expansion from
    ``env``, with their positions; None when the key is absent. ``fast`` (the default) takes a list of
    strings holding no ``$`` as it is, and otherwise expands only the items holding a ``$`` (a script's
    ``$VAR`` sends the whole list there); the tests compare it with the steps (``fast=False``)."""
    seq = container.get(key)
    if seq is None:
        return None
    if isinstance(seq, str):
        seq = [seq]
    if not isinstance(seq, list):
        return []
    # each item's position (an LList with one per item: the item's own, as loc_of gives it)
    locs = seq.locs if isinstance(seq, LList) and len(seq.locs) == len(seq) else None
    if fast and locs is not None:
        # a list of strings with no ``$(VAR)`` to expand, each with its position (most commands and args): the
        # items as they are, as the steps below make them
        try:
            joined = "".join(seq)
        except TypeError:  # an item that is not a string: the steps below
            joined = "$"
        if "$" not in joined:
            return [
                _Item(text, loc, "arg", None, text if type(text) is TemplateText else None)
                for text, loc in zip(seq, locs, strict=True)
            ]
    out: list[_Item] = []
    grown = 0  # characters the substitutions added (bounded as execve(2) bounds argv, see container_env)
    for idx, raw in enumerate(seq):
        if raw is None or isinstance(raw, (dict, list)):
            continue
        loc: Loc | None
        if locs is not None:
            loc = locs[idx]
        else:
            loc = loc_of(seq, idx) if isinstance(seq, LList) else loc_of(container, key)
        if fast and type(raw) is str and "$" not in raw:  # nothing to expand: k8s_expand would return it
            out.append(_Item(raw, loc, "arg"))
            continue
        text = str(raw).lower() if isinstance(raw, bool) else str(raw)
        expanded, changed = k8s_expand(text, env, MAX_ARG_STRLEN if grown < ARG_MAX else 0)
        grown += max(0, len(expanded) - len(text))
        template = raw if type(raw) is TemplateText else None
        out.append(
            _Item(expanded, loc, "env" if changed else "arg", text if expanded != text else None, template)
        )
    return out


class ConfigMapFiles:
    """``path -> (text, loc)`` of the files a container mounts from ConfigMaps of the same input set (calling
    it: :func:`kvlint.workloads.mounted_file`, which follows volumeMounts, subPath, items and projected volumes
    to the ConfigMap's ``data`` key), and :meth:`why_not` of a path it gives nothing for."""

    __slots__ = ("_pod_spec", "_container", "_namespace", "_cms")

    def __init__(
        self,
        pod_spec: LDict,
        container: LDict,
        namespace: str | None,
        cms: dict[tuple[str | None, str], LDict],
    ) -> None:
        self._pod_spec, self._container, self._namespace, self._cms = pod_spec, container, namespace, cms

    def __call__(self, path: str) -> tuple[str, Loc | None] | None:
        if not self._cms:
            return None
        return _mounted_file()(self._pod_spec, self._container, path, self._cms, namespace=self._namespace)

    def why_not(self, path: str) -> str | None:
        """Why the file at ``path``, in a directory mounted from a ConfigMap, gives no text, in words
        (:func:`kvlint.workloads.configmaps.mount_problem`: ``mounted from ConfigMap NAME (FILE:LINE), which
        has no key start.sh ...``); None when it is not mounted from a ConfigMap."""
        from kvlint.workloads.configmaps import mount_problem

        return mount_problem(self._pod_spec, self._container, path, self._cms, namespace=self._namespace)


def _config_loader(
    container: Mapping,
    pod_spec: Mapping | None,
    namespace: str | None,
    configmaps: Mapping[tuple[str | None, str], LDict] | None,
) -> ConfigMapFiles | None:
    """The :class:`ConfigMapFiles` of ``container``, or None when its pod mounts no volume (nothing to read and
    nothing to explain)."""
    if not isinstance(pod_spec, LDict) or not isinstance(container, LDict):
        return None
    if not configmaps and not (container.get("volumeMounts") and pod_spec.get("volumes")):
        return None
    return ConfigMapFiles(pod_spec, container, namespace, dict(configmaps or {}))


@functools.cache
def _mounted_file() -> Callable[..., tuple[str, Loc | None] | None]:
    """:func:`kvlint.workloads.mounted_file`, imported on first use (the package imports this module's
    package) and once a process: an import statement from a package costs a few us, and this one ran for every
    container with ConfigMaps among the inputs (~1,400 a corpus-x12 pass)."""
    from kvlint.workloads import mounted_file

    return mounted_file


@functools.cache
def _mounted_mode() -> Callable[..., int | None]:
    """:func:`kvlint.workloads.mounted_file_mode`, imported on first use (see :func:`_mounted_file`)."""
    from kvlint.workloads import mounted_file_mode

    return mounted_file_mode


#: How each engine is started without a wrapper, for KV503's fix.
_DIRECT_COMMAND = {
    "vllm": "command: [vllm, serve, MODEL, ...]",
    "tgi": "command: [text-generation-launcher, --model-id, MODEL, ...]",
    "sglang": "command: [python3, -m, sglang.launch_server, --model-path, MODEL, ...]",
}


def _script_path(container: Mapping, items: Sequence[_Item]) -> tuple[int | None, int, str] | None:
    """``(shell index, script index, absolute path)`` of the script file a container runs (``command:
    [/scripts/start.sh, ...]`` or ``[bash, /scripts/start.sh, ...]``; a relative path under ``workingDir``), as
    :func:`_mounted_script` reads it; None when it runs no file."""
    if not items:
        return None
    k = _shell_index(items)
    idx = 0 if k is None else k + 1
    if idx >= len(items) or (k is None and idx != 0):
        return None
    path = items[idx].text
    if not path or path.startswith("-") or any(c.isspace() for c in path):
        return None
    if not path.startswith("/"):
        workdir = container.get("workingDir")
        if not isinstance(workdir, str) or not workdir.startswith("/"):
            return None
        path = workdir.rstrip("/") + "/" + path
    return k, idx, path


def _mounted_script(
    container: Mapping,
    items: Sequence[_Item],
    loader: Callable[[str], tuple[str, Loc | None] | None],
    mode_of: Callable[[str], int | None] | None = None,
) -> tuple[list[_Item] | None, str, _Unmounted]:
    """For a container that runs a script file (``command: [/scripts/start.sh, ...]`` or ``[bash,
    /scripts/start.sh, ...]``) mounted from a ConfigMap among the inputs (``loader``, :func:`_config_loader`):
    the words of the equivalent ``sh -c SCRIPT $0 $1 ...`` -- the script's name, its text (positioned at the
    ConfigMap's value), the name again as ``$0``, then the container's remaining words as ``$1 ...``, so a
    wrapper's ``exec vllm serve --model=X "$@"`` receives the container's args as the kernel would pass them.
    A relative path is taken under the container's ``workingDir``. None when the container does not run a
    file, or the file is not mounted from a ConfigMap of the inputs.

    ``mode_of`` (the file's permission bits, :func:`kvlint.workloads.mounted_file_mode`) is given when the
    file is the container's ``command`` itself, which the runtime ``execve(2)``s without a shell: then a file
    with no execute bit (the ConfigMap volume default is 0644) fails with EACCES and one without a ``#!`` line
    with ENOEXEC (runc does not fall back to ``sh``), so the container never starts, and ``(None, why)`` says
    so; a ``#!`` naming another interpreter than a shell (``#!/usr/bin/env python3``) is not read as ``sh``. A
    value over :data:`CONFIGMAP_MAX_BYTES`, which no cluster mounts, is not read either (``(None, why)``). The
    third item says which of those ``why`` is (:data:`_Unmounted`; ``""`` with no ``why``): a script the container
    cannot start with (``"oversized"``, ``"unexecutable"``), or one kvlint did not read past its budget
    (``"unread"``), which the container may well run."""
    at = _script_path(container, items)
    if at is None:
        return None, "", ""
    k, idx, path = at
    got = loader(path)
    if got is None or not got[0].strip():
        return None, "", ""
    text, loc = got
    if len(text) > CONFIGMAP_MAX_BYTES // 4 and len(text.encode("utf-8", "replace")) > CONFIGMAP_MAX_BYTES:
        # (not read: no cluster holds it, and reading it would cost ~0.6 s and ~130 MB a MiB, per container)
        return (
            None,
            f"the container runs {items[idx].text}, mounted from a ConfigMap value of more than "
            f"{CONFIGMAP_MAX_BYTES:,} bytes, the most a ConfigMap may hold: the API server rejects the ConfigMap, "
            f"so the volume cannot be mounted and the container never starts",
            "oversized",
        )
    if not _charge_mounted_script(len(text)):
        return (
            None,
            f"the container runs {items[idx].text}, mounted from a ConfigMap, which kvlint did not read: the scripts "
            f"it read for other containers already add up to {MOUNTED_SCRIPT_CHARS:,} characters, the most it reads "
            "(each container reads its script again, with its own env and arguments)",
            "unread",
        )
    if k is None and mode_of is not None:
        why = _exec_failure(items[idx].text, text, mode_of(path))
        if why is not None:
            return None, why, "unexecutable"
        interpreter = _shebang_program(text)
        if interpreter is not None and interpreter not in _SHELLS:
            return None, "", ""  # a Python (or other) script: not shell words
    name = items[idx]
    return (
        [
            name,
            _Item(text, loc or name.loc, "arg"),
            _Item(name.text, name.loc, "arg"),
            *items[idx + 1 :],
        ],
        "",
        "",
    )


def _sourced_files(
    loader: Callable[[str], tuple[str, Loc | None] | None] | None,
) -> Callable[[str], str | None] | None:
    """The reader of the files a container's script reads with ``. FILE`` / ``source FILE`` that kvlint can read
    itself: an absolute path mounted from a ConfigMap among the inputs (``loader``, :func:`_config_loader`), its text
    within the mounted-script budget (:func:`_charge_mounted_script`, the same as a script the container runs) and
    no larger than a ConfigMap may hold; None for any other file (the shell reader then takes what it may set as
    unknown, :func:`kvlint.engines.shell.commands`)."""
    if loader is None:
        return None

    def read(path: str) -> str | None:
        if not path.startswith("/"):
            return None
        got = loader(path)
        if got is None:
            return None
        text = got[0]
        if len(text.encode("utf-8", "replace")) > CONFIGMAP_MAX_BYTES or not _charge_mounted_script(
            len(text)
        ):
            return None
        return text

    return read


#: Why :func:`_mounted_script` did not read a script (``""``: it did, or there is none): too large for any
#: ConfigMap, not executable as the container's command (the container never starts), or past kvlint's budget
_Unmounted = Literal["", "oversized", "unexecutable", "unread"]


#: The most a ConfigMap's values may hold together, in bytes (kubernetes pkg/apis/core/types.go MaxSecretSize,
#: checked by validation.go ValidateConfigMap for data and binaryData together): no larger script is mounted.
CONFIGMAP_MAX_BYTES = 1 << 20
#: Characters of ConfigMap-mounted scripts one process reads (one review: :func:`mounted_script_budget`). A script
#: is read again for each container that runs it, with that container's env and arguments (0.5 - 0.8 us a
#: character): a manifest of one 1 MiB script ConfigMap and thousands of container stanzas running it (a few
#: hundred bytes each) was hours of CPU. Past it, a container's mounted script is not read (KV503 says so).
#: [assumed] 32 MiB, about 20 CPU s: thousands of times the scripts of the shared corpus.
MOUNTED_SCRIPT_CHARS = 32 << 20
_PROCESS_MOUNTED_LEFT = [MOUNTED_SCRIPT_CHARS]
#: The mounted-script characters the current review may still read (a one-item list), or None: the process's.
_MOUNTED_LEFT: ContextVar[list[int] | None] = ContextVar("kvlint_mounted_script_left", default=None)


@contextmanager
def mounted_script_budget(chars: int = MOUNTED_SCRIPT_CHARS) -> Iterator[None]:
    """Within the block (a webhook review), mounted scripts are read up to ``chars`` characters together, apart
    from the process's budget (:data:`MOUNTED_SCRIPT_CHARS`), which a long-lived review worker would spend."""
    token = _MOUNTED_LEFT.set([chars])
    try:
        yield
    finally:
        _MOUNTED_LEFT.reset(token)


def _charge_mounted_script(chars: int) -> bool:
    """Spend ``chars`` of the mounted-script budget (the review's, else the process's); whether it could."""
    left = _MOUNTED_LEFT.get() or _PROCESS_MOUNTED_LEFT
    if chars > left[0]:
        return False
    left[0] -= chars
    return True


def _exec_failure(name: str, text: str, mode: int | None) -> str | None:
    """Why ``execve(2)`` of the ConfigMap file ``name`` (its ``text`` and permission bits ``mode``) fails, or
    None: no execute bit at all (EACCES, even for root: fs/namei.c ``generic_permission``), or no ``#!`` first
    line (ENOEXEC: fs/exec.c finds no binary format; runc reports 'exec format error')."""
    if mode is not None and not mode & 0o111:
        return (
            f"the container runs {name}, mounted from a ConfigMap with mode {mode:04o} (no execute bit; a "
            f"ConfigMap volume's files are 0644 unless defaultMode or the item's mode says otherwise): the "
            f"runtime cannot execute it ('permission denied') and the container never starts"
        )
    if not text.startswith("#!"):
        return (
            f"the container runs {name}, mounted from a ConfigMap, but its first line is not a '#!' line: the "
            f"kernel cannot execute it ('exec format error', no shell fallback when the runtime starts the "
            f"command) and the container never starts"
        )
    return None


def _shebang_program(text: str) -> str | None:
    """The interpreter a ``#!`` line names, by base name (``#!/usr/bin/env python3`` -> ``python3``, env's
    ``-S`` and options skipped), or None when the text has no ``#!`` line or it names nothing."""
    if not text.startswith("#!"):
        return None
    words = text[2 : text.find("\n") if "\n" in text else len(text)].split()
    if words and _base(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    return _base(words[0]) if words else None


#: What a Ray container's user can do when the Ray Serve application is their own code: the engine settings are
#: Python arguments kvlint cannot see (each application maps its env vars to engine arguments its own way, with
#: its own defaults), while Ray Serve LLM's ``llm_configs`` are read (:mod:`kvlint.workloads.rayserve`).
_RAY_SERVE_FIX = (
    "serve the model with Ray Serve LLM (import_path: ray.serve.llm:build_openai_app, its llm_configs naming "
    "model_loading_config and engine_kwargs), whose engines kvlint reads from the RayService; for an application "
    "of your own, check the engine it starts with `kvlint plan -- vllm serve MODEL --tensor-parallel-size N ...`"
)

#: Why a KubeRay container with no command of its own is not read (ray-project/kuberay v1.7.0,
#: ray-operator/controllers/ray/common/pod.go BuildPod: the container at utils.RayContainerIndex, 0, gets
#: ``/bin/bash -lc -- "ulimit -n ...; ray start ..."``, the user's command and args run before ``ray start``,
#: unless they already say ``ray start`` or the pod template's ray.io/overwrite-container-cmd is "true")
_KUBERAY_REASON = (
    "KubeRay starts this Ray container with the `ray start` command its operator writes (it has no command or args "
    "of its own, so its image's entrypoint does not run); the engine runs in the Ray Serve application (a RayService's "
    "serveConfigV2) or the Ray job submitted to the cluster, configured by its Python code, which kvlint does not read"
)
#: The fix of :data:`_KUBERAY_REASON` (``{example}``: an engine command of :data:`_PLAN_EXAMPLE`)
_KUBERAY_FIX = (
    "check the engine the Ray application or job starts with `kvlint plan -- {example}`; a RayService that serves "
    "it with Ray Serve LLM (import_path: ray.serve.llm:build_openai_app, its llm_configs) is read by kvlint"
)
#: An engine command for ``kvlint plan --``, by engine
_PLAN_EXAMPLE = {
    "vllm": "vllm serve MODEL --tensor-parallel-size N ...",
    "tgi": "text-generation-launcher --model-id MODEL --num-shard N ...",
    "sglang": "python -m sglang.launch_server --model-path MODEL --tp-size N ...",
}


def _kv503(
    engine: str,
    container: LDict,
    image: str,
    version: str | None,
    env: dict[str, str],
    reason: str,
    loc: Loc | None,
    fix: str | None = None,
    severity: Severity = "warning",
) -> ServingConfig:
    return ServingConfig(
        engine=engine,  # type: ignore[arg-type]
        container=container,
        container_name=ref_part(str(container.get("name", ""))),
        image=image,
        version=version,
        model=None,
        env=env,
        findings=[
            Finding(
                rule="KV503",
                message=reason,
                loc=loc,
                fix=fix
                or (
                    f"run the engine directly ({_DIRECT_COMMAND.get(engine, _DIRECT_COMMAND['vllm'])}) so kvlint can "
                    "read its flags, or check the command the wrapper runs with `kvlint plan -- <command>`"
                ),
                severity=severity,
            )
        ],
        command_loc=loc,
        version_loc=container.locs.get("image") if isinstance(container, LDict) else None,
    )


def _kaito_preset_of_image(image: str) -> str | None:
    """The KAITO preset an image is named after (``mcr.microsoft.com/aks/kaito/kaito-falcon-40b:0.0.1`` ->
    ``falcon-40b``: KAITO's preset images are ``kaito-<preset>``), when KAITO's registry as kvlint read it has
    that preset; else None."""
    from kvlint.models.resolve import kaito_preset

    repo = split_image(image)[0].rsplit("/", 1)[-1].lower()
    for name in (repo.removeprefix("kaito-"), repo):
        if name and kaito_preset(name) is not None:
            return name
    return None


def _kaito_vllm(cfg: ServingConfig, anchor: Loc | None) -> None:
    """KAITO's vLLM wrapper defaults (kaito-project/kaito presets/workspace/inference/vllm/inference_api.py
    ``KAITOArgumentParser._reset_vllm_defaults`` and ``get_max_gpu_memory_utilization``, @056b828): it parses
    vLLM's own arguments, with ``--model`` defaulting to the weights baked into the image
    (:data:`KAITO_WEIGHTS_DIR`; ``kaito-image:<preset>`` when the image is named after a KAITO preset, which
    model resolution reads as that preset with an assumption note) and ``--gpu-memory-utilization`` to the GPU's free memory less 600 MiB, capped
    at 0.95 (:data:`KAITO_WRAPPER_GPU_MEMORY_UTILIZATION`), and ``--port`` to 5000. Sets the defaults the command leaves out, as
    ``default`` values at ``anchor`` (the script's position)."""
    if cfg.model is None:
        preset = _kaito_preset_of_image(cfg.image)
        ref = f"kaito-image:{preset}" if preset else KAITO_WEIGHTS_DIR
        cfg.model = Value(ref, anchor, KAITO_WEIGHTS_DIR, source="default")
    if "gpu_memory_utilization" not in cfg.flags:
        u = KAITO_WRAPPER_GPU_MEMORY_UTILIZATION
        cfg.flags["gpu_memory_utilization"] = Value(u, anchor, str(u), source="default")
    rank = digits(cfg.env.get("LOCAL_RANK", "0"))  # (str.isdigit() then int() raised on "²" or 5,000 digits)
    if "port" not in cfg.flags and rank is not None:
        port = KAITO_WRAPPER_PORT + rank
        cfg.flags["port"] = Value(port, anchor, str(port), source="default")


def _script_facts(cfg: ServingConfig, found: _Found, env_locs: Mapping[str, Loc | None]) -> ServingConfig:
    """``cfg``, the engine ``found`` runs as its parser read it, with ``command_loc`` at the program that starts it
    (``found.loc``) when known, where each variable is set, and what the container's script installs of the engine
    (:attr:`_Found.install_text`, :attr:`_Found.pip_args`). Modifies and returns ``cfg``."""
    if found.loc is not None:
        cfg.command_loc = found.loc
    if found.fill_in:
        # `vllm serve <model-id>` in a script: bash opens the file model-id for input (and the word after `>` for
        # output) before it runs the command, and stops there ("model-id: No such file or directory"; a `>` ending
        # the line is a syntax error); the words are read as the author meant them, and this says what happens
        name = ENGINE_NAMES.get(cfg.engine, cfg.engine)
        cfg.findings.append(
            Finding(
                rule="KV503",
                message=f"the script holds {found.fill_in}, a placeholder to fill in by hand: as written the shell "
                f"reads it as redirections (input from a file {found.fill_in[1:-1]!r}, output to the word after the "
                f"'>'), so the command fails before {name} starts; kvlint reads the command with the placeholder "
                "as its word",
                loc=found.loc or cfg.command_loc,
                fix=f"replace {found.fill_in} with the value it stands for",
                severity="warning",
            )
        )
    cfg.env_locs = dict(env_locs)  # where each variable is set (KV502's refusals of an engine variable)
    if found.install_text:
        # the release comes from the script's pip install, not the image's tag (KV208 names it)
        cfg.installed_by = found.install_text
        cfg.installed_loc = found.install_loc
        cfg.install_upgrades = found.upgraded
        cfg.install_from_source = found.from_source
        cfg.install_main_index = found.main_index
        cfg.install_runner = found.install_runner
        cfg.install_range = found.install_range
        cfg.install_runner_range = found.runner_range
    if found.pip_args:
        cfg.pip_args, cfg.pip_text, cfg.pip_loc = found.pip_args, found.pip_text, found.pip_loc
        cfg.pip_elsewhere = found.pip_elsewhere
    return cfg


def _grpc_own_option(option: str, version: str | None) -> str | None:
    """How the gRPC server's parser reads ``option``, an option the engine's own parser does not have: ``"exact"``
    when it is :data:`GRPC_OWN_OPTION` as vLLM's ``FlexibleArgumentParser`` reads it (``_`` for ``-`` in the name,
    as for every vLLM option: ``--disable_log_stats_server``), the name with dashes when it is an abbreviation
    argparse takes for it (``allow_abbrev``: a prefix no option of the engine's starts with, the engine's parser
    having found none), else None."""
    if not option.startswith("--") or "=" in option:
        return None
    name = "--" + option[2:].replace("_", "-")
    if name == GRPC_OWN_OPTION:
        return "exact"
    from kvlint.engines.options import prefixed
    from kvlint.engines.vllm import _tables

    if (
        len(name) > 3
        and GRPC_OWN_OPTION.startswith(name)
        and not prefixed(_tables(version, grpc=True)[3], name)
    ):
        return name
    return None


def _grpc_release(cfg: ServingConfig, version: str | None, module: str) -> None:
    """KV206 (error) on ``python -m vllm.entrypoints.grpc_server`` (``module``, one of :data:`GRPC_MODULES_FROM`)
    when the image's vLLM ``version`` is older than the first release that ships ``module``: the module is not in
    that release, so the container stops at once. An unknown release (``latest``, no tag) is read as the newest,
    which ships it. On the releases whose gRPC server takes :data:`GRPC_OWN_OPTION` (the first with
    :data:`GRPC_SERVER_MODULE` to before :data:`GRPC_OWN_OPTION_UNTIL`), the engine parser's KV205 on that option
    is dropped."""
    from kvlint.memory.versions import parse_version

    v = parse_version(version)  # (None, latest, no release number: the newest)
    server_from = GRPC_MODULES_FROM[GRPC_SERVER_MODULE]
    if server_from <= v < GRPC_OWN_OPTION_UNTIL:
        kept: list[Finding] = []
        for f in cfg.findings:
            own_word = f.option if isinstance(f, OptionFinding) and f.unknown else None
            own = _grpc_own_option(own_word, version) if own_word is not None else None
            if own is None or own_word is None:
                kept.append(f)
            elif own != "exact":
                # still an option word the engine's parser does not have (OptionFinding.unknown): counted by the
                # command line's KV205 bound (options.cap_unknown_options) like the others; 40,000 of them were
                # 40,000 findings
                kept.append(
                    OptionFinding(
                        rule="KV205",
                        message=(
                            f"{own} is not a vLLM option: argparse takes it as an abbreviation of {GRPC_OWN_OPTION} "
                            f"(unique-prefix matching), so it sets {GRPC_OWN_OPTION}; a release that adds another "
                            f"option beginning with {own} makes the command fail with 'ambiguous option'"
                        ),
                        loc=f.loc,
                        fix=f"write the full option name {GRPC_OWN_OPTION}",
                        severity="warning",
                        option=own_word,
                        unknown=True,
                    )
                )
        cfg.findings = kept
    since = GRPC_MODULES_FROM[module]
    if v >= since:
        return
    first = ".".join(map(str, since))
    path = module.replace(".", "/") + ".py"
    if module == GRPC_SERVER_MODULE:
        stops = f"('No module named {module}')"
        fix = f"use an image of vLLM {first} or later, or python3 -m vllm.entrypoints.openai.api_server"
    else:
        stops = f"('Error while finding module specification for {module}')"
        older = ".".join(map(str, server_from))
        fix = (
            f"use an image of vLLM {first} or later"
            + (f", or python3 -m {GRPC_SERVER_MODULE} (vLLM {older} and later)" if v >= server_from else "")
            + ", or python3 -m vllm.entrypoints.openai.api_server"
        )
    cfg.findings.append(
        OptionFinding(
            rule="KV206",
            message=(
                f"vLLM {version} has no gRPC server at {module}: {path} comes with vLLM {first}, so "
                f"the container stops at once {stops}; the options are read as the engine's"
                if module != GRPC_SERVER_MODULE
                else f"vLLM {version} has no gRPC server: {path} comes with vLLM {first}, so "
                f"the container stops at once {stops}; the options are read as the engine's"
            ),
            loc=cfg.command_loc,
            fix=fix,
            severity="error",
            option=module,
        )
    )


def _dispatch(
    found: _Found,
    *,
    container: LDict,
    image: str,
    env: dict[str, str],
    env_locs: Mapping[str, Loc | None],
    config_loader=None,
    version_override: str | None = None,
    runtime_template: bool = False,
    dynamo: bool = False,
    envsubst_template: bool = False,
) -> ServingConfig:
    """The engine ``found`` runs, read by its parser, with ``command_loc`` at the program that starts it
    (``found.loc``) when known (:func:`_script_facts`); ``version_override`` (``--engine-version``) and the image
    decide the release its options are read with (:func:`kvlint.engines.images.engine_release`);
    ``runtime_template`` and ``envsubst_template`` as :func:`parse_container` has them."""
    # KServe's and KAITO's servers are read as vLLM below (a _Found of their own); the script's facts are given's
    given = found
    if found.engine.startswith("dynamo-"):
        # NVIDIA Dynamo's worker hands the arguments it does not know to the engine's parser (_as_dynamo_worker)
        engine = _DYNAMO[found.engine]
        cfg = _dispatch(
            _Found(engine, found.argv, False, found.loc, found.exec_form, maybe_set=found.maybe_set),
            container=container,
            image=image,
            env=env,
            env_locs=env_locs,
            config_loader=config_loader,
            version_override=version_override,
            runtime_template=runtime_template,
            dynamo=True,
            envsubst_template=envsubst_template,
        )
        return _script_facts(_as_dynamo_worker(cfg, engine), given, env_locs)
    argv = [it.text for it in found.argv]
    locs = [it.loc for it in found.argv]
    sources = [it.source for it in found.argv]
    if found.engine == "kserve-hf":
        # KServe's Hugging Face server starting vLLM: its own options dropped, --model_id/--model_dir as
        # the model (kvlint.engines.kserve); positions stay those of the words they come from
        anchor = locs[0] if locs else container.loc
        mapped = to_vllm_argv(argv)
        server_args = _hf_server_args(mapped, argv, locs)
        argv = [t for t, _ in mapped]
        locs = [locs[i] if i is not None else anchor for _, i in mapped]
        sources = [sources[i] if i is not None else "arg" for _, i in mapped]
        # a KServe release tag names the vLLM its image carries (images.KSERVE_HF_VLLM); other tags say nothing
        found = _Found("vllm", found.argv, False, found.loc, found.exec_form, maybe_set=found.maybe_set)
    else:
        server_args = ()
    kaito = found.engine == KAITO_VLLM
    if kaito:
        found = _Found("vllm", found.argv, False, found.loc, found.exec_form, maybe_set=found.maybe_set)
    # a release the container's script installs is the one it runs: pip replaces the engine the image carried
    # (an engine release image's included: its tag then names a release that no longer runs), and so does a
    # RayService's runtime_env.pip pin, which Ray installs over the image (parse_container's installed_release)
    # an unpinned upgrade (pip install -U vllm) leaves the release unknown: the image's tag no longer says it
    # (--engine-version still does)
    if found.install_range and not found.range_upgrades:
        # pip install "vllm>=0.9,<0.10" without -U over an image (or --engine-version) whose release the range
        # admits: "Requirement already satisfied", pip keeps it (pip/_internal/resolution/resolvelib/factory.py
        # prefers the installed candidate unless upgrading); only a release outside the range is replaced
        carried = engine_release(image, found.engine, version_override)
        if carried is not None and range_admits(found.install_range, carried):
            found.installed, found.install_text, found.install_range = None, "", ""
    version = found.installed or (
        version_override if found.upgraded else engine_release(image, found.engine, version_override)
    )
    if found.engine == "vllm":
        cfg = parse_vllm_argv(
            argv,
            locs=locs,
            version=version,
            env=env,
            config_loader=config_loader,
            container=container,
            image=image,
            sources=sources,
            positional_model=found.positional_model,
            map_config_pos=scalar_position,
            kaito_wrapper=kaito,
            runtime_template=runtime_template,
            exec_form=found.exec_form,
            grpc=found.grpc,
            maybe_set=found.maybe_set,
            envsubst_template=envsubst_template,
        )
        cfg.exec_form = found.exec_form
        if found.loc is not None:
            cfg.command_loc = found.loc  # (before the KV503 below, which points at it)
        if server_args and cfg.findings:
            # KV205-KV207 on an option the server wrote from one of its own say so (chart_provenance)
            cfg.findings = chart_provenance(cfg.findings, server_args)
        if kaito:
            _kaito_vllm(cfg, locs[0] if locs else cfg.command_loc or container.loc)
        if found.grpc:
            _grpc_release(cfg, version, found.grpc)
        if found.appends:
            arguments_not_all_read(cfg, found.appends, cfg.command_loc)
            _value_appended(cfg, argv, locs)
        elif cfg.model is None and not any(f.mark is Mark.ARGUMENTS_UNSEEN for f in cfg.findings):
            # (a bare $ARGS kvlint cannot see may hold the model: its KV503 says the arguments are not all known)
            cfg.findings.append(
                Finding(
                    rule="KV503",
                    message=(
                        "the vLLM command names no model (no positional MODEL, no --model, no model: in a "
                        "--config file): vLLM would start its built-in default model, not the one meant"
                    ),
                    # the program; with no command or args, the image whose ENTRYPOINT starts vLLM without one
                    loc=cfg.command_loc
                    or _same_file(loc_of(container, "image"), container.loc)
                    or container.loc,
                    fix="pass the model (vllm serve MODEL, or --model MODEL); if a wrapper adds it at run time, "
                    "declare it with the kvlint.io/model annotation",
                    severity="warning",
                    mark=Mark.NO_MODEL,  # a command read whole (ServingConfig.unreadable)
                )
            )
        _quoted_model(cfg, argv, locs, sources)
        return _script_facts(cfg, given, env_locs)
    if found.engine == "tgi":
        tgi = parse_tgi_argv(
            argv,
            locs=locs,
            version=version,
            env=env,
            env_locs=env_locs,
            container=container,
            image=image,
            sources=sources,
            runtime_template=runtime_template,
            exec_form=found.exec_form,
            maybe_set=found.maybe_set,
            envsubst_template=envsubst_template,
        )
        tgi.exec_form = found.exec_form
        if found.appends:
            arguments_not_all_read(tgi, found.appends, found.loc or tgi.command_loc)
            _value_appended(tgi, argv, locs)
        _quoted_model(tgi, argv, locs, sources)
        return _script_facts(tgi, given, env_locs)
    sgl = parse_sglang_argv(
        argv,
        locs=locs,
        version=version,
        env=env,
        container=container,
        image=image,
        sources=sources,
        runtime_template=runtime_template,
        config_loader=config_loader,
        map_config_pos=scalar_position,
        config_key_option=dynamo,
        serve_cli=found.positional_model,
        exec_form=found.exec_form,
        maybe_set=found.maybe_set,
        envsubst_template=envsubst_template,
    )
    sgl.exec_form = found.exec_form
    if found.appends:
        arguments_not_all_read(sgl, found.appends, found.loc or sgl.command_loc)
        _value_appended(sgl, argv, locs)
    _quoted_model(sgl, argv, locs, sources)
    return _script_facts(sgl, given, env_locs)


def _quoted_model(
    cfg: ServingConfig, argv: Sequence[str], locs: Sequence[Loc | None], sources: Sequence[str]
) -> None:
    """Mark ``cfg``'s model as a quoted reference of a shell script (:attr:`ServingConfig.quoted_model`): the word the
    parser took it from is one of :data:`~kvlint.engines.options.QUOTED_SOURCE` (``'$MODEL'``, ``\\$MODEL``), which
    the engine receives as written."""
    model = cfg.model
    if model is None or model.loc is None:
        return
    cfg.quoted_model = any(
        src == QUOTED_SOURCE and text == model.raw and loc == model.loc
        for text, loc, src in zip(argv, locs, sources, strict=False)
    )


#: Who writes the vLLM options KServe's Hugging Face server passes on from its own (kvlint.engines.kserve).
HF_SERVER_WRITER = "KServe's huggingfaceserver"


def _hf_server_args(
    mapped: Sequence[tuple[str, int | None]], words: Sequence[str], locs: Sequence[Loc | None]
) -> tuple[ChartArg, ...]:
    """The vLLM options KServe's Hugging Face server writes from options of its own (``--max_length`` as
    ``--max-model-len``, ``--model_revision`` as ``--revision``, ``--model_id``/``--model_dir`` as ``--model``:
    :func:`kvlint.engines.kserve.to_vllm_argv`), as :class:`ChartArg` at the positions of the user's words, so a
    KV205-KV207 on them names the option the user wrote (:func:`kvlint.engines.options.chart_provenance`)."""
    out: list[ChartArg] = []
    for k, (text, i) in enumerate(mapped):
        if i is None or not text.startswith("--") or i >= len(words):
            continue
        own = words[i].split("=", 1)[0]
        if own.replace("_", "-") == text.split("=", 1)[0].replace("_", "-"):
            continue  # passed on as written
        at = [locs[i]]
        nxt = mapped[k + 1][1] if k + 1 < len(mapped) else None
        if nxt is not None and nxt != i and nxt < len(locs):
            at.append(locs[nxt])  # the value, given as the next word
        for loc in at:
            out.append(ChartArg(loc, (text,), own, True, writer=HF_SERVER_WRITER, extra="args"))
    return tuple(out)


def _in_their_file(loc: Loc | None, argv: Sequence[_Item]) -> Loc | None:
    """``loc`` (a program's position) when the last of ``argv``'s words with a position is in the file ``loc`` is
    in (or none has one), else None (the parsers then take the first argument's position): a container a workload
    reader merged from two documents (an InferenceService's args appended to its ServingRuntime's command or
    script) keeps its command line in the document whose arguments come last, the workload's own."""
    last = next((it.loc for it in reversed(argv) if it.loc is not None), None)
    return loc if loc is None or last is None or last.file == loc.file else None


def _args_key(container: LDict, items: Sequence[_Item]) -> Loc | None:
    """The position of the ``args:`` key of ``container``, when it is in the file its arguments are: a container a
    workload reader put together (an InferenceService's args after its ServingRuntime's, a KubeAI Model's) may
    hold the key of another document, or none; None then."""
    key = container.key_locs.get("args")
    if key is None:
        return None
    first = next((it.loc for it in items if it.loc is not None), None) or container.locs.get("args")
    return key if first is None or first.file == key.file else None


#: TGI launcher variables (launcher/src/main.rs ``Args``, ``#[clap(long, env)]``) whose presence in the env of a
#: Dell Enterprise Hub image (:func:`kvlint.engines.images.is_dell_enterprise_hub`) says it runs TGI: the Hub's
#: deployment snippets set NUM_SHARD, MAX_INPUT_TOKENS, MAX_TOTAL_TOKENS and MAX_BATCH_PREFILL_TOKENS (dell/omnia
#: ``examples/ai_examples/nvidia/dell_pretrained_model/dell_pretrained_model_nvidia.py``@a367b60400b1, the Dell AI
#: SDK's test snippets; huggingface/blog ``dell-enterprise-hub.md``: the deployed model answers TGI's Messages API).
_DEH_TGI_ENV = frozenset(
    {
        "NUM_SHARD",
        "MAX_INPUT_TOKENS",
        "MAX_INPUT_LENGTH",
        "MAX_TOTAL_TOKENS",
        "MAX_BATCH_PREFILL_TOKENS",
        "MAX_BATCH_TOTAL_TOKENS",
        "MODEL_ID",
    }
)


def _guessed_release(cfg: ServingConfig) -> None:
    """KV205 for an option the release does not have is a warning, not an error, when that release was only read
    from the tag of an image kvlint does not know as the engine's release image (:func:`tag_of_unknown_image`:
    ``rtalaricw/vllm:0.1``, ``<registry>/vllm-openai-rebuild:v0.28.0``), whose tag may be the image's own version:
    the option may well be the running release's. The message says the release is assumed. Not for a release a
    ``pip install`` in the container's script pins (``installed_by``), which the script does install."""
    if cfg.installed_by or not tag_of_unknown_image(cfg) or not tag_only_names_release(cfg.image):
        return
    repo, tag = split_image(cfg.image)[:2]
    said = (
        f" (the release is assumed: kvlint read {cfg.version} from the tag {tag} of {repo}, an image it does not "
        "know as a release image, whose tag may be its own version)"
    )
    cfg.findings[:] = [
        dataclasses.replace(f, severity="warning", message=f.message + said)
        if isinstance(f, OptionFinding) and f.unknown and f.rule == "KV205" and f.severity == "error"
        else f
        for f in cfg.findings
    ]


@one_reading
def parse_container(
    container: LDict,
    *,
    pod_spec: LDict | None = None,
    namespace: str | None = None,
    configmaps: Mapping[tuple[str | None, str], LDict] | None = None,
    path: str = "",
    engine_version_option: str | None = None,
    runtime_template: bool = False,
    kuberay: bool = False,
    installed_release: str | None = None,
    from_env: bool = True,
    group_pods: int = 1,
    envsubst_template: bool = False,
) -> ServingConfig | None:
    """Read the serving engine a Kubernetes container runs, with the options unknown to a release only guessed at
    warned about, not refused (:func:`_guessed_release`).

    Args:
        container: the container mapping (``name``, ``image``, ``command``, ``args``, ``env`` ...).
        pod_spec: its PodSpec, used to follow ``volumeMounts`` of ConfigMaps for ``--config FILE``.
        namespace: the workload's namespace (to pick ConfigMaps); ``configmaps`` maps
            ``(namespace, name)`` -> the ConfigMap object (``namespace`` None = unspecified).
        path: dotted path of the container in its document (unused in results; for callers' messages).
        engine_version_option: ``--engine-version`` (or ``engine_version`` in .kvlint.yaml): with the image, it
            decides the release the options are read with and ``ServingConfig.version``, which the memory model
            and the rules use (:func:`kvlint.engines.images.engine_release`).
        runtime_template: the container is a serving-runtime template's (:func:`kvlint.rules.facts.is_runtime_template`):
            its parallel sizes are the using service's, so one kvlint cannot resolve gets an info note rather
            than the "not sized" warning (:attr:`kvlint.engines.options.Collector.layout_from_service`).
        kuberay: KubeRay's operator writes the container's command (the Ray container of a head or worker pod of a
            Ray cluster: :func:`kvlint.pipeline.kuberay_writes_command`). With no command or args of its own it runs
            the operator's ``ray start``, never its image's ENTRYPOINT: an engine image or a placeholder naming
            one gets KV503 saying the engine runs in the Ray application or job submitted to the cluster.
        installed_release: a vLLM release the workload installs over the image's Python environment, a KubeRay
            RayService's ``runtime_env.pip``/``uv`` pin (:attr:`kvlint.types.Workload.engine_release`): the engine
            runs it whatever the image carried, so it wins over a vLLM release image's tag and
            ``--engine-version``, as a ``pip install vllm==X`` in the container's script does (README "Which
            engine release a container is read with"). A pin of the script itself (none in the containers kvlint
            writes for a RayService) is kept.
        from_env: a command the manifest does not hold (a custom image's entrypoint, a script of the image) may be
            read from the container's env when the env names the model (:func:`env_launch`, **[assumed]**, said by
            a KV503 warning: :func:`kvlint.engines.options.launched_from_env`); False for a worker node of a
            multi-node engine, whose script joins its leader's engine rather than starting one.
        group_pods: the pods of the group the container's pod leads (a LeaderWorkerSet's ``size``, 1 for a pod of its
            own): an engine read from the env may span them all, so its GPU layout is taken as the env's sizes only
            when they use every GPU of the group (:func:`kvlint.engines.options.launched_from_env`).
        envsubst_template: the container's document is a template for envsubst (KV002,
            :attr:`kvlint.types.Mark.ENVSUBST_TEMPLATE`): an option's value ``$TP`` of a command run without a shell
            is the renderer's to replace, a variable kvlint cannot resolve, not the text the engine receives
            (:func:`kvlint.engines.options.literal_dollar`).

    Returns:
        None when the container is not a vLLM/TGI/SGLang engine (sidecars, proxies, routers, Ollama ...).
        Otherwise a :class:`ServingConfig`; when the container clearly is an engine (by image or
        command) but its command cannot be read (custom scripts, Ray Serve, wrappers such as KAITO
        ``inference_api.py``) the config has ``model=None`` and a KV503 finding explaining why.
    Never raises on malformed input.
    """
    if not isinstance(container, Mapping):
        return None
    if not isinstance(container, LDict):
        container = LDict(container)
    image = str(container.get("image") or "")
    env, env_locs = container_env(container, configmaps, namespace)
    cmd = _items_of(container, "command", env)
    args = _items_of(container, "args", env)
    items = (cmd or []) + (args or [])
    refused: list[str] = []  # env's message when an ``env -S`` of the list refuses its string
    split = list_env_split([it.text for it in items], env, refused)
    if split is not None:
        # ``["env", "-S", "vllm serve m", ...]``: env runs the words of its string, each at the string's item
        items = [
            items[k] if items[k].text == text else _Item(text, items[k].loc, items[k].source)
            for text, k in split
        ]
    first_loc = next((it.loc for it in items if it.loc), None) or container.loc
    img_engine = engine_of_image(image)
    gpu = _requests_gpu(container)
    hint = image_mentions_engine(image) or (proxy_image_engine(image) if gpu else None)
    loader = _config_loader(container, pod_spec, namespace, configmaps)
    texts = [it.text for it in items]
    # a review reads at most REVIEW_COMMAND_CHARS of command lines (raises ReviewTooLarge past it)
    charge_command_text(sum(min(len(t), MAX_ARG_STRLEN) for t in texts))
    too_long = _over_arg_strlen(items)
    too_long_env = _over_env_strlen(env) if too_long is None else None
    if too_long_env is not None:
        engine = img_engine or _command_hint(texts) or hint
        if engine is not None:
            name, size = too_long_env
            return _kv503(
                engine,
                container,
                image,
                installed_release
                if installed_release and engine == "vllm"
                else engine_release(image, engine, engine_version_option),
                env,
                f"the container never starts: its environment variable {name} is {size:,} bytes as the "
                f"NAME=value string the kernel copies, and Linux's execve(2) refuses any environment string longer "
                f"than {MAX_ARG_STRLEN - 1:,} bytes (MAX_ARG_STRLEN, with the terminating NUL) with 'argument list "
                "too long'",
                env_locs.get(name) or first_loc,
                f"keep {name} under 128 KiB: put a long value in a file (a ConfigMap mounted as a volume)",
                "error",
            )
    if too_long is not None:
        engine = img_engine or _command_hint(texts) or hint
        version = (
            installed_release
            if installed_release and engine == "vllm"
            else engine_release(image, engine, engine_version_option)
            if engine is not None
            else None
        )
        return _too_long_to_exec(container, items, too_long, image, version, env, engine, first_loc)
    if kuberay and not items:
        # KubeRay gives it `ulimit ...; ray start ...` (its image's ENTRYPOINT, `vllm serve` of vllm/vllm-openai,
        # never runs): what the engine is told is in the Ray application or job, not in this manifest
        engine = img_engine or hint
        if engine is None:
            return None
        return _kv503(
            engine,
            container,
            image,
            engine_release(image, engine, engine_version_option),
            env,
            "engine command cannot be read: " + _KUBERAY_REASON,
            _unread_loc(container, items, first_loc),
            _KUBERAY_FIX.format(example=_PLAN_EXAMPLE.get(engine, _PLAN_EXAMPLE["vllm"])),
        )

    def wrapped_env(upto: int) -> tuple[dict[str, str], dict[str, Loc | None]]:
        """The environment the program at ``items[upto]`` runs with: the container's, as the ``env`` wrapper
        programs before it change it (``["env", "VLLM_USE_V1=0", "vllm", ...]``, ``env -u NAME``, ``env -i``;
        read by :func:`kvlint.engines.shell.program_after_wrapper`, as in a script)."""
        changes: list[tuple[str, int | None]] = []
        k = 0
        while k < upto:
            after = program_after_wrapper(texts, k, changes)
            if after is None:
                break
            k = after
        # a wrapper giving its script a login's environment (``runuser -l app -c SCRIPT``: TERM and its -w names)
        # or setting some of it (``tmux new -e NAME=value SCRIPT``)
        keeps, sets = list_wrapper_env(texts, upto)
        changes.extend(sets)
        if not changes and keeps is None:
            return env, env_locs
        own, own_locs = dict(env), dict(env_locs)
        for text, at in changes:
            if at is None and not text:  # env -i
                own.clear()
                own_locs.clear()
            elif at is None:  # env -u NAME
                own.pop(text, None)
                own_locs.pop(text, None)
            else:  # NAME=value
                name, _, value = text.partition("=")
                own[name], own_locs[name] = value, items[at].loc
        if keeps is not None:
            own = {name: value for name, value in own.items() if name in keeps}
            own_locs = {name: loc for name, loc in own_locs.items() if name in keeps}
        return own, own_locs

    def dispatch(found: _Found, upto: int = 0) -> ServingConfig | None:
        if installed_release and found.engine == "vllm" and not found.installed and not found.upgraded:
            # the release the workload installs over the image is the one that runs (the image's tag no longer
            # says it): it takes the place of a script's pip pin, before the image (_dispatch)
            found.installed = installed_release
        own, own_locs = wrapped_env(upto)
        if (
            found.maybe_set is None
            and not found.exec_form
            and any(unseen_expansion(it.text) for it in found.argv)
        ):
            # words no shell reading gave, a bare $ARGS among them (the engine parsers judge it only then): it may
            # hold words when the container declares it (looked up only for such a word: no ConfigMap listing
            # for every container)
            found.maybe_set = _env_maybe_set(container, env, configmaps, namespace)
        if found.script_env is not None:
            # the script's engine command runs with the environment the script gives it
            own_locs = {
                name: found.script_env_locs.get(name, own_locs.get(name)) for name in found.script_env
            }
            own = found.script_env
        cfg = _dispatch(
            found,
            container=container,
            image=image,
            env=own,
            env_locs=own_locs,
            config_loader=loader,
            version_override=engine_version_option,
            runtime_template=runtime_template,
            envsubst_template=envsubst_template,
        )
        if not engine_version_option and installed_release is None:
            # every engine command line the container runs is read here: an option unknown to a release only
            # guessed at from an image's tag is a warning (:func:`_guessed_release`)
            _guessed_release(cfg)
        return cfg

    # the program's first word, where the command (or args) names it
    program = items[0].loc if items else None
    if not cmd and runs_env_entrypoint(image):
        # substratusai/vllm v0.4.2-v0.6.2: its entrypoint.sh ignores args and writes vLLM's command from the env
        words = entrypoint_argv(container, env, env_locs)
        # the command the script writes from the env (EXTRA_ARGS) counts against a review as a command line does
        charge_command_text(sum(min(len(w), MAX_ARG_STRLEN) for w, _ in words))
        return dispatch(
            _Found("vllm", [_Item(w, loc, "env") for w, loc in words], False, loc_of(container, "image"))
        )
    # a serving program named in command, or in args only (the image ENTRYPOINT runs, its args name one)
    m = _match_program(texts)
    if m and refused:
        # ``["env", "-S", "vllm serve 'm", ...]``: env runs nothing
        runs = min(_after_wrappers(texts), len(texts) - 1)
        return _unrunnable(
            _env_refuses(refused[0], texts[runs], m[0], items[runs].loc or first_loc),
            container,
            image,
            env,
            engine_version_option,
        )
    if m:
        looked_up = _after_wrappers(texts)
        unfound = (
            _not_found_without_path(texts[looked_up], m[0], items[looked_up].loc or first_loc)
            if 0 < looked_up < len(texts) and _path_gone(texts, looked_up)
            else None
        )
        if unfound is not None:
            return _unrunnable(unfound, container, image, env, engine_version_option)
        listed = _Found(
            m[0],
            items[m[1] :],
            m[2],
            _in_their_file(program, items[m[1] :]),
            True,
            _runs_grpc(texts, m[1]),
        )
        uv_release = _uv_run_release(texts, m[1], m[0], RequirementReader(m[0]))
        if uv_release is not None:
            # a uv runner installs the engine it starts (["uvx", "--from", "vllm==0.10.1", "vllm", "serve", ...])
            listed.installed = uv_release or None
            listed.upgraded = not uv_release
            listed.install_text = clip(" ".join(texts[: m[1]]), 120)
            listed.install_loc = program or first_loc
            listed.install_runner = _uv_tool_runner(texts, m[1])
            listed.install_range = (
                _uv_run_range(texts, m[1], m[0], RequirementReader(m[0])) if uv_release else ""
            )
            listed.range_upgrades = bool(listed.install_range)
            listed.runner_range = (
                "" if uv_release else _uv_run_spec(texts, m[1], m[0], RequirementReader(m[0]))
            )
        return dispatch(listed, m[1])
    if not cmd:
        # args only, naming no serving program: the image ENTRYPOINT runs
        # the ENTRYPOINT is the program: its command line is written at the args: key (without args, None: the
        # container's own position, as before)
        entry = _args_key(container, items) or program
        if img_engine == "vllm":
            rest = items[1:] if texts[:1] == ["serve"] else items
            cfg = dispatch(_Found("vllm", rest, True, entry, True))
            if texts[:1] == ["serve"] and isinstance(cfg, ServingConfig):
                cfg.findings.append(
                    Finding(
                        "KV205",
                        "args start with `serve`, but the image's ENTRYPOINT already runs the server "
                        "(`vllm serve` in newer vllm/vllm-openai images, `python3 -m "
                        "vllm.entrypoints.openai.api_server` in older ones): the extra word is taken as an "
                        + _extra_serve(texts)
                        + " (docs/engine-memory-model.md §1.1)",
                        items[0].loc,
                        fix="drop `serve` from args, or set command: [vllm, serve] explicitly",
                        severity="warning",
                    )
                )
            return cfg
        if img_engine == "tgi":
            return dispatch(_Found("tgi", items, False, entry, True))
        if img_engine is None and is_dell_enterprise_hub(image) and _DEH_TGI_ENV & set(_env_names(container)):
            # a Dell Enterprise Hub model image told TGI launcher settings in its env: its entrypoint is TGI's
            # launcher (the Hub's deployment snippets), which reads them (#[clap(long, env)])
            return dispatch(_Found("tgi", items, False, entry, True))
        if split_image(image)[0].rsplit("/", 1)[-1].startswith(HF_SERVER_MODULE):
            # kserve/huggingfaceserver(-gpu): ENTRYPOINT python -m huggingfaceserver
            if huggingface_backend(texts) in ("auto", "vllm"):
                return dispatch(_Found("kserve-hf", items, False, entry, True))
        evidence = hint == "vllm" or any(k.startswith("VLLM_") for k in _env_names(container))
        if items and image and img_engine is None and unmistakably_vllm(texts, evidence=evidence):
            # an image kvlint does not know (a placeholder, a private build) given only vLLM's arguments
            cfg = dispatch(_Found("vllm", items, True, entry, True))
            if isinstance(cfg, ServingConfig):
                tag = unreleased_tag(image) if cfg.version is None else None
                cfg.findings.append(
                    _assumed_vllm(image, texts, loc_of(container, "image") or first_loc, tag, cfg.findings)
                )
                cfg.release_noted = tag is not None
            return cfg
    if _serves_no_model(texts) and not gpu:
        return None
    if cmd and _base(texts[0]) in _IDLE:
        # `command: [sleep, infinity]`: the command replaces the image's ENTRYPOINT and only waits, as a script
        # made of such commands does (_scan_shell): this container serves nothing
        return None
    how = _join_of(texts)
    if how is not None:
        # the words run without a shell (`command: [ray, start, --address=$(LWS_LEADER_ADDRESS):6379, --block]`):
        # a worker joining its leader's engine, as the same command in a `sh -c` script is (_scan_shell)
        return _joiner(_Join(how, first_loc), container, image, env, engine_version_option)
    reason = ""
    sh = _shell_split(items)
    mounted, why, unmounted = None, "", ""
    missing: str | None = None  # why the script the container runs is not read from its ConfigMap
    if not sh and loader is not None:
        mode_of = None
        if cmd:  # the command itself (not args given to an unknown ENTRYPOINT) is what the runtime executes

            def mode_of(p: str) -> int | None:
                return _mounted_mode()(pod_spec, container, p, dict(configmaps or {}), namespace=namespace)

        mounted, why, unmounted = _mounted_script(container, items, loader, mode_of)
        if mounted is None and not why:
            at = _script_path(container, items)
            problem = loader.why_not(at[2]) if at is not None else None
            if at is not None and problem is not None:
                missing = f"{at[2]} is {problem}"
    if mounted is not None:
        # a script the container runs from a ConfigMap of the same inputs: read as ``sh -c`` with its text
        found, _why = _scan_shell(
            mounted,
            0,
            1,
            env,
            unknown=env_unknown(container, env, configmaps, namespace),
            read_file=_sourced_files(loader),
        )
        if isinstance(found, _Found):
            return dispatch(found)
        if isinstance(found, _Join):
            return _joiner(found, container, image, env, engine_version_option)
        if isinstance(found, _Unrunnable):
            return _unrunnable(found, container, image, env, engine_version_option)
    if sh:
        script_env = wrapped_env(sh[0])[0]
        found, reason = _scan_shell(
            items,
            sh[0],
            sh[1],
            script_env,
            sh[2],
            # (a wrapper that changes the environment, `env -i`: as before, the names it leaves taken as unset)
            env_unknown(container, env, configmaps, namespace) if script_env is env else (),
            _sourced_files(loader),
        )
        if isinstance(found, _Found):
            return dispatch(found, sh[0])
        if isinstance(found, _Join):
            return _joiner(found, container, image, env, engine_version_option)
        if isinstance(found, _Unrunnable):
            return _unrunnable(found, container, image, env, engine_version_option)
        if not reason or (reason == PROXY_ONLY and not gpu):
            return None  # the script only waits (sleep, trap, wait) or proxies: this container serves nothing
    elif why:
        reason = why
    elif _shell_without_script(items):
        reason = _no_script_reason(items, container)
    engine = img_engine or _command_hint(texts) or hint
    if engine is None:
        return None
    fix: str | None = None
    if not reason:
        if not items:
            reason = (
                f"the container has no command or args and the image {image or '(none)'} has no known engine "
                f"entrypoint"
            )
            if "ray" in image.lower():
                reason = (
                    f"the container runs Ray ({image}); the engine is configured by Ray Serve application code "
                    f"(serveConfigV2 / Python), which kvlint does not read"
                )
                fix = _RAY_SERVE_FIX
        else:
            reason = _reason_for(texts)
            lacks, count = _options_vllm_lacks(texts) if engine == "vllm" and not cmd else ([], 0)
            if lacks and len(lacks) < count:
                # args only, to an image kvlint does not know that names vLLM: vLLM's options but for a few
                from kvlint.engines.vllm_flags_data import VERSIONS

                reason = (
                    f"the container gives its image's entrypoint only arguments (`{_describe(texts)}`), all vLLM "
                    f"options but {', '.join(lacks)}, which no vLLM release kvlint knows ({VERSIONS[0]} to "
                    f"{VERSIONS[-1]}) "
                    "accepts, so kvlint does not take the image for vLLM's OpenAI server: a released vLLM exits "
                    "with 'unrecognized arguments' on it (a fork or a custom entrypoint may not)"
                )
                fix = (
                    f"if the image runs a released vLLM, replace {', '.join(lacks)} with the release's own "
                    f"option{'s' if len(lacks) != 1 else ''}; if it runs a fork, check the engine with `kvlint plan -- vllm serve MODEL ...` "
                    "and the options vLLM has"
                )
    version = engine_release(image, engine, engine_version_option)
    if unmounted in ("oversized", "unexecutable") and reason == why:
        # a script the runtime cannot execute or mount: the container never starts (said by _mounted_script,
        # not read back from its wording; a script past kvlint's budget is merely unread, below)
        fix = (
            "keep the script under 1 MiB, or bake it into the image"
            if unmounted == "oversized"
            else "give the ConfigMap volume defaultMode: 0755 (or its item mode: 0755) and start the script with a "
            "'#!/bin/sh' line, or run it through a shell (command: [sh, SCRIPT, ...])"
        )
        return _kv503(engine, container, image, version, env, reason, first_loc, fix, "error")
    cm_fix = None
    if unmounted == "unread" and reason == why:
        # kvlint's budget, not the container's fault: the container may run as it is
        fix = (
            "nothing to change in the container for this; lint it with fewer other containers running mounted "
            "scripts (one run reads at most the characters said), or check the engine command with `kvlint plan -- "
            "<command>`"
        )
    if missing is not None:
        from kvlint.workloads.configmaps import (
            AMBIGUOUS,
            AMBIGUOUS_FIX,
            OTHER_NAMESPACE,
            OTHER_NAMESPACE_FIX,
            UNPARSED,
            UNPARSED_FIX,
        )

        reason += f"; {missing}"
        cm_fix = (
            "pass the ConfigMap with the workload (kvlint check DEPLOYMENT.yaml CONFIGMAP.yaml) so kvlint reads "
            "the script"
            if missing.endswith("is not among the inputs")
            else UNPARSED_FIX
            if UNPARSED in missing
            else AMBIGUOUS_FIX
            if AMBIGUOUS in missing
            else OTHER_NAMESPACE_FIX
            if OTHER_NAMESPACE in missing
            else "make the ConfigMap hold the script as a string under the key the volume mounts (the container cannot start "
            "without the file); kvlint then reads the engine command in it"
        )
    if (
        fix is None
        and cm_fix is None
        and from_env
        and engine in _ENV_OPTIONS
        and (not items or reason.startswith(_RUNS_SCRIPT))
        # (a container that requests no GPU, a client, UI or exporter whose image is named after the engine, names in
        # its env the model it queries: no evidence that its entrypoint starts an engine)
        and _asks_for_gpu(container)
    ):
        # a custom image's entrypoint (or a script of the image) starting the engine from the env it is given
        launch = env_launch(engine, env, env_locs)
        if launch is None:
            from kvlint.workloads.configmaps import env_problems

            # an env the model may be named in that kvlint could not read: the ConfigMap to pass along
            unread = [
                why
                for var, why in env_problems(container, configmaps or {}, namespace)
                if var is None or var in _ENV_MODEL
            ]
            if unread:
                reason += (
                    f"; the env its entrypoint may take the model from ({', '.join(_ENV_MODEL[:4])} ...) is not all "
                    f"read: {'; '.join(unread[:3])}"
                )
                return _kv503(
                    engine,
                    container,
                    image,
                    version,
                    env,
                    "engine command cannot be read: " + reason,
                    _unread_loc(container, items, first_loc),
                    "pass the ConfigMap with the workload (kvlint check DEPLOYMENT.yaml CONFIGMAP.yaml): when its "
                    "env names the model, kvlint reads the engine command from the env; or run the engine directly "
                    f"({_DIRECT_COMMAND.get(engine, _DIRECT_COMMAND['vllm'])})",
                )
        if launch is not None:
            argv, names = launch
            where = _unread_loc(container, items, first_loc)
            cfg = dispatch(_Found(engine, argv, False, where, True, maybe_set=frozenset()))
            if cfg is not None:
                # (a finding at one of these values is said to rest on that assumption: pipeline._on_assumed_env)
                cfg.env_assumed = {vloc: n for n in names if (vloc := env_locs.get(n)) is not None}
                # (the words shown as written: a path or hub id, numbers, dtype names need no quoting)
                starter = "vllm serve" if engine == "vllm" else "python3 -m sglang.launch_server"
                shown = starter + " " + " ".join(it.text for it in argv)
                launched_from_env(
                    cfg,
                    reason,
                    clip(shown, 200),
                    names,
                    where,
                    _gpu_count(container),
                    max(group_pods, 1),
                    _non_gpu_device(container),
                )
                return cfg
    return _kv503(
        engine,
        container,
        image,
        version,
        env,
        "engine command cannot be read: " + reason,
        _unread_loc(container, items, first_loc),
        cm_fix or fix,
    )


#: The start of :func:`_reason_for`'s reason for a container that runs a script
_RUNS_SCRIPT = "the container runs the script "

#: The env variables a custom image's entrypoint is commonly given the model in, in the order read: the first that
#: holds a hub id (``org/name``) or an absolute path is the model (:func:`env_launch`)
_ENV_MODEL = ("MODEL_ID", "MODEL_PATH", "MODEL", "MODEL_NAME", "BASE_MODEL", "HF_MODEL_ID", "MODEL_REPO")
#: The engine settings :func:`env_launch` reads from env variables named after them (``MAX_MODEL_LEN``, or with the
#: engine's prefix ``VLLM_MAX_MODEL_LEN``): the model's context, the memory fraction, the GPU layout, the batch and
#: the dtypes, which size the memory plan. No variable of these names is one the engine itself reads (vLLM's
#: ``vllm/envs.py``, SGLang's ``python/sglang/srt/environ.py``).
_ENV_OPTIONS = {
    "vllm": (
        "max_model_len",
        "gpu_memory_utilization",
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "max_num_seqs",
        "max_num_batched_tokens",
        "dtype",
        "quantization",
        "kv_cache_dtype",
    ),
    "sglang": (
        "context_length",
        "mem_fraction_static",
        "tp_size",
        "pp_size",
        "dp_size",
        "max_running_requests",
        "dtype",
        "quantization",
        "kv_cache_dtype",
    ),
}
_ENV_PREFIX = {"vllm": "VLLM_", "sglang": "SGLANG_"}
#: A hub id (``org/name``) or an absolute path, as an env variable names a model
_ENV_MODEL_RE = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+|/\S*")


def env_launch(
    engine: str, env: Mapping[str, str], env_locs: Mapping[str, Loc | None]
) -> tuple[list[_Item], list[str]] | None:
    """The engine command a custom image's entrypoint would start from the container's env, when the env names the
    model: the first of :data:`_ENV_MODEL` that holds a hub id or an absolute path as ``--model`` (vLLM) or
    ``--model-path`` (SGLang), then ``--OPTION VALUE`` for each variable named after one of :data:`_ENV_OPTIONS`
    (with or without the engine's prefix; the first of two naming one option), each word at its variable's value.
    Returns the words and the names of the variables read, else None (no model named, or a value kvlint did not
    resolve). Linear in the env."""
    from kvlint.engines.shell import unresolved

    model_var = next(
        (
            n
            for n in _ENV_MODEL
            if _ENV_MODEL_RE.fullmatch(env.get(n, "").strip()) and not unresolved(env.get(n, ""))
        ),
        None,
    )
    if model_var is None:
        return None
    loc = env_locs.get(model_var)
    argv = [
        _Item("--model" if engine == "vllm" else "--model-path", loc, "env"),
        _Item(env[model_var].strip(), loc, "env"),
    ]
    names = [model_var]
    seen: set[str] = set()
    prefix = _ENV_PREFIX.get(engine, "")
    options = _ENV_OPTIONS.get(engine, ())
    for name, value in env.items():
        dest = (name[len(prefix) :] if prefix and name.startswith(prefix) else name).lower()
        if dest not in options or dest in seen or not value.strip() or unresolved(value):
            continue
        seen.add(dest)
        loc = env_locs.get(name)
        argv += [_Item("--" + dest.replace("_", "-"), loc, "env"), _Item(value.strip(), loc, "env")]
        names.append(name)
    return argv, names


def _asks_for_gpu(container: Mapping) -> bool:
    """Whether ``container`` asks for a GPU: a GPU resource with a count other than 0 (:func:`_requests_gpu`) or a
    DRA claim (``resources.claims``). :func:`env_launch` assumes an engine only in such a container: a sidecar of an
    engine-named image (``vllm-metrics-exporter``) given ``MODEL_ID`` for its own use requests none, and reading it
    as an engine made KV405 "requests no GPU resource" of an exporter."""
    res = container.get("resources")
    return _requests_gpu(container) or (isinstance(res, Mapping) and bool(res.get("claims")))


def _gpu_count(container: Mapping) -> int | None:
    """The GPUs ``container`` requests when it names one GPU resource (:func:`kvlint.gpu_resources.is_gpu_resource`)
    with a whole count in ``limits`` (else ``requests``), else None."""
    res = container.get("resources")
    if not isinstance(res, Mapping):
        return None
    for section in ("limits", "requests"):
        block = res.get(section)
        if isinstance(block, Mapping):
            counts = [digits(str(v).strip()) for k, v in block.items() if is_gpu_resource(str(k))]
            if counts:
                return counts[0] if len(counts) == 1 else None
    return None


def _non_gpu_device(container: Mapping) -> str | None:
    """The accelerator resource ``container`` requests in ``limits`` or ``requests`` when it is not a CUDA/ROCm GPU
    (AWS Neuron, TPU, Gaudi, Ascend: :data:`kvlint.gpu_resources.NON_GPU_RESOURCES`), as written; None otherwise.
    :func:`_gpu_count` counts such a request as GPUs; this says which device it is."""
    res = container.get("resources")
    if not isinstance(res, Mapping):
        return None
    for section in ("limits", "requests"):
        block = res.get(section)
        if isinstance(block, Mapping):
            for k in block:
                if str(k) in NON_GPU_RESOURCES:
                    return str(k)
    return None


def _unread_loc(container: LDict, items: Sequence[_Item], first_loc: Loc | None) -> Loc | None:
    """Where KV503 "engine command cannot be read" points: at what its reason (:func:`_reason_for`) names.
    The script of ``bash /scripts/serve.sh`` and the program of ``python3 inference_api.py`` (not the shell or
    interpreter before it); the ``image:`` key of a container with no command or args (its image's ENTRYPOINT
    is what runs, and the reason names that image); else the command's first word (``first_loc``)."""
    if not items:
        return _same_file(loc_of(container, "image"), container.loc) or first_loc
    words = [it.text for it in items]
    w0 = _base(words[0])
    if len(items) > 1 and not words[1].startswith("-"):
        if _PYTHON_RE.fullmatch(w0) or (w0 in _SHELLS and words[1].endswith(".sh")):
            return _same_file(items[1].loc, first_loc) or first_loc
    return first_loc


#: The engine parsers' KV206 reasons for an option written last with no value (:meth:`Collector.invalid`)
_NO_VALUE = ("invalid value '' for ", ": expected a value", ": expected at least one value")


def _value_appended(cfg: ServingConfig, argv: Sequence[str], locs: Sequence[Loc | None]) -> None:
    """A command that gets words appended after those kvlint read (``xargs``: :func:`arguments_not_all_read`) and
    ends with an option awaiting its value (``cat /etc/tp | xargs vllm serve M --tensor-parallel-size``): the
    first appended word is that value, so the parser's KV206 "expected a value" at the last word is not the
    engine's error; the option's setting is recorded as a value kvlint does not know (``cfg.unresolved``)."""
    if not argv or not locs or locs[-1] is None or not argv[-1].startswith("-") or "=" in argv[-1]:
        return
    last = locs[-1]
    kept: list[Finding] = []
    for f in cfg.findings:
        if (
            f.rule == "KV206"
            and f.loc == last
            and f.message.startswith(_NO_VALUE[0])
            and f.message.endswith(_NO_VALUE[1:])
        ):
            dest = str(getattr(f, "option", "") or "").lstrip("-").replace("-", "_")
            if dest:
                cfg.unresolved.setdefault(dest, last)
            continue
        kept.append(f)
    cfg.findings = kept


def _same_file(loc: Loc | None, other: Loc | None) -> Loc | None:
    """``loc`` when it is in the file of ``other`` (or ``other`` is None), else None: a container a workload reader
    merged from two documents keeps its findings in the workload's own document."""
    return loc if loc is not None and (other is None or loc.file == other.file) else None


def _extra_serve(texts: Sequence[str]) -> str:
    """What the engine does with args that start with ``serve`` on an image whose ENTRYPOINT already runs the
    server (``texts``: the args). ``vllm serve`` has one optional positional, the model tag
    (vllm@0.9.0:vllm/entrypoints/cli/serve.py::ServeSubcommand.subparser_init, ``nargs='?'``), which takes
    ``serve``: a model given next as a positional is then left over and argparse stops with 'unrecognized
    arguments: MODEL'; the older ``api_server`` has no positional and stops with 'unrecognized arguments: serve
    MODEL'. With the model given by ``--model``, ``vllm serve`` is left with a model tag named 'serve'."""
    nxt = texts[1] if len(texts) > 1 else ""
    if nxt and not nxt.startswith("-"):
        return (
            f"argument: `vllm serve` reads 'serve' as the model and stops with 'unrecognized arguments: {nxt}', "
            f"the older api_server with 'unrecognized arguments: serve {nxt}'"
        )
    return "argument and argparse stops with 'unrecognized arguments: serve' or serves a model named 'serve'"


_ENGINE_WORDS = frozenset({"vllm", "sglang", "tgi", "text-generation-inference"})

#: What names TGI in a command kvlint cannot read: its launcher, server or project name. A bare
#: ``text-generation`` is not enough: it is also the Hugging Face pipeline task that Transformers-based servers
#: take as a value (KAITO's transformers runtime ``accelerate launch ... --pipeline text-generation``, KServe's
#: ``--task text-generation``), which runs no TGI.
_TGI_WORDS = re.compile(r"text-generation-(?:launcher|server|inference)|text_generation_server")


def _command_hint(texts: Sequence[str]) -> str | None:
    """The engine a command's words name (:func:`_mentions`): vLLM, SGLang (not its router) or TGI, or None."""
    joined = " ".join(_mentions(texts)).lower()
    if "vllm" in joined:
        return "vllm"
    if "sglang" in joined and "sglang_router" not in joined and "sglang-router" not in joined:
        return "sglang"
    if _TGI_WORDS.search(joined):
        return "tgi"
    return None


def _over_arg_strlen(items: Sequence[_Item]) -> tuple[int, int] | None:
    """The index and UTF-8 size in bytes of the first word of the container's command line that ``execve(2)``
    refuses (:func:`_too_long_to_exec`), or None."""
    for i, it in enumerate(items):
        # a character is at most 4 bytes: shorter words need no encoding
        if len(it.text) * 4 + 1 > MAX_ARG_STRLEN:
            size = len(it.text.encode("utf-8", "surrogatepass"))
            if size + 1 > MAX_ARG_STRLEN:
                return i, size
    return None


def _over_env_strlen(env: Mapping[str, str]) -> tuple[str, int] | None:
    """The name and UTF-8 size in bytes of the ``NAME=value`` string of the first variable of the container's
    environment that ``execve(2)`` refuses: envp strings are copied as argv's are, each with its NUL, and one of more
    than :data:`~kvlint.engines.shell.MAX_ARG_STRLEN` bytes fails with E2BIG (linux fs/exec.c ``copy_strings`` for
    ``bprm->envc``, ``valid_arg_len``), or None."""
    for name, value in env.items():
        chars = len(name) + 1 + len(value)
        if chars * 4 + 1 > MAX_ARG_STRLEN:
            size = len(f"{name}={value}".encode("utf-8", "surrogatepass"))
            if size + 1 > MAX_ARG_STRLEN:
                return name, size
    return None


def _too_long_to_exec(
    container: LDict,
    items: Sequence[_Item],
    too_long: tuple[int, int],
    image: str,
    version: str | None,
    env: dict[str, str],
    engine: str | None,
    first_loc: Loc | None,
) -> ServingConfig | None:
    """KV503 (error) for an engine container whose command line holds a word longer than Linux passes to a
    program: ``execve(2)`` copies each argument string with its terminating NUL and refuses one of more than
    :data:`~kvlint.engines.shell.MAX_ARG_STRLEN` bytes with E2BIG (linux fs/exec.c ``copy_strings``,
    ``valid_arg_len``; include/uapi/linux/binfmts.h), so the runtime cannot start the container ('argument
    list too long') whatever the word says. Its text is not read: a ``sh -c`` script of 3 MiB took 2 - 2.8 s of
    webhook worker CPU to scan, past the review budget (admitted unchecked, failure mode open). None when
    the container is not an engine's."""
    if engine is None:
        return None
    i, size = too_long
    where = "its command" if items[i].source != "env" else "its command (after $(VAR) expansion)"
    return _kv503(
        engine,
        container,
        image,
        version,
        env,
        f"the container never starts: word {i + 1} of {where} is {size:,} bytes, and Linux's execve(2) refuses "
        f"any single argument longer than {MAX_ARG_STRLEN - 1:,} bytes (MAX_ARG_STRLEN, with the terminating "
        "NUL) with 'argument list too long'; its text is not read",
        items[i].loc or first_loc,
        "keep each argument under 128 KiB: put a long script in a ConfigMap mounted as a file, or in the image",
        "error",
    )


def _mentions(texts: Sequence[str]) -> list[str]:
    """The words of a command that can hint at the engine it runs: all but a bare engine name given as the value
    of another program's option (``--engine sglang``, ``--backend=vllm``: a sidecar or router naming the
    engine it talks to, not running it)."""
    out = []
    for i, t in enumerate(texts):
        low = t.lower()
        if low in _ENGINE_WORDS and i > 0 and texts[i - 1].startswith("--") and "=" not in texts[i - 1]:
            continue
        if low.startswith("--") and "=" in low and low.split("=", 1)[1] in _ENGINE_WORDS:
            continue
        out.append(t)
    return out


#: NVIDIA Dynamo's worker modules and the engine each one starts.
_DYNAMO = {"dynamo-vllm": "vllm", "dynamo-sglang": "sglang"}


def _as_dynamo_worker(cfg: ServingConfig, engine: str) -> ServingConfig:
    """``python3 -m dynamo.vllm ...`` / ``python3 -m dynamo.sglang ...``: NVIDIA Dynamo's worker parses its own
    options and hands every other argument to the engine's parser (ai-dynamo/dynamo
    components/src/dynamo/vllm/args.py ``parse_args``: ``parse_known_args`` for Dynamo's groups, the rest to
    vLLM's ``AsyncEngineArgs`` parser; the SGLang worker likewise with SGLang's ``ServerArgs``). kvlint reads
    the arguments with the engine's parser and takes the options the engine does not know as Dynamo's own,
    saying which (KV504); the worker serves no HTTP itself (Dynamo's frontend does). A ``--config FILE`` among the
    arguments is read as the engine reads it (``config_loader``): the SGLang worker merges it with SGLang's own
    ``ConfigArgumentMerger`` (ai-dynamo/dynamo components/src/dynamo/sglang/args.py ``parse_args``, @010ba752), after
    taking the section ``--config-key KEY`` names from it (``_extract_config_section``, @d3aac630).

    ``cfg``: the arguments of a Dynamo worker read by ``engine``'s parser (:func:`_dispatch`), reported here with
    the options ``engine`` does not know taken as Dynamo's own (no KV205; KV504 names them). ``cfg.version`` is
    the release they were read with (:func:`kvlint.engines.images.engine_release`): ``--engine-version``, else the
    engine release the image's Dynamo release carries (:data:`kvlint.engines.images.DYNAMO_ENGINES`), else None.
    Modifies and returns ``cfg``."""
    # the engine parser's unknown options (OptionFinding.unknown), by the option each is about (a word with white
    # space quoted, as KV205 shows it), not read back out of the finding's message
    unknown = [f for f in cfg.findings if isinstance(f, OptionFinding) and f.unknown]
    dynamo_opts = [repr(f.option) if any(c.isspace() for c in f.option) else f.option for f in unknown]
    cfg.findings = [f for f in cfg.findings if not (isinstance(f, OptionFinding) and f.unknown)]
    what = (
        f"; {', '.join(dynamo_opts)} {'is' if len(dynamo_opts) == 1 else 'are'} taken as Dynamo's own"
        if dynamo_opts
        else ""
    )
    # the fix names the options taken as Dynamo's; with none, there is nothing to check
    fix = (
        f"nothing to change if {', '.join(dynamo_opts)} "
        f"{'is a Dynamo option' if len(dynamo_opts) == 1 else 'are Dynamo options'}; otherwise check the spelling"
        if dynamo_opts
        else "nothing to change"
    )
    # a pinned Dynamo tag: the release kvlint assumed is said here, not again by KV208 (a moving tag keeps its
    # KV208 warning)
    tag = unreleased_tag(cfg.image, engine_tag=False)
    release = ""
    carried = (
        f"the image tag is a Dynamo release, so the {engine} version inside is not known"
        if cfg.image and dynamo_runtime(cfg.image) is not None
        else f"the image is not one kvlint knows, so the {engine} version inside is not known"
    )
    mapped = dynamo_engine_version(cfg.image) if cfg.image else None
    name = ENGINE_NAMES[engine]
    if cfg.version is not None and cfg.version == mapped:
        # the release Dynamo's support matrix says the image carries (engine_release step 3)
        carried = (
            f"the image tag is Dynamo release {dynamo_release(cfg.image)}, which carries {name} {cfg.version} "
            "(Dynamo's support matrix), the release kvlint read them with"
        )
    elif tag is not None and cfg.version is not None:
        # --engine-version named the release inside: the note says it, as the plan and every rule use it
        if mapped is not None:  # (over the one the support matrix names, which the note does not deny)
            carried = (
                f"the image tag is Dynamo release {dynamo_release(cfg.image)}, which carries {name} {mapped} "
                "(Dynamo's support matrix)"
            )
        if tag_of_unknown_image(cfg):
            # the release was read from the tag of an image kvlint does not know (engine_release step 3), not
            # named by --engine-version: KV208 says which release the plan used
            carried = (
                f"the image is not one kvlint knows, and kvlint read {name} {cfg.version} from its tag, which may "
                "be a Dynamo release or the image's own version (KV208)"
            )
        else:
            release = (
                f": kvlint applied the rules of {name} {cfg.version}, the release --engine-version names"
            )
            cfg.release_noted = True
    elif tag is not None:
        from kvlint.memory.versions import NEWEST_VLLM

        newest = (
            f"vLLM {NEWEST_VLLM}, the newest release it models"
            if engine == "vllm"
            else "the newest SGLang release it knows"
        )
        release = f": kvlint applied the rules of {newest}, unless --engine-version names another"
        pin = f"pass --engine-version with the {engine} release the image carries"
        fix = f"{fix}; {pin}" if dynamo_opts else pin
        cfg.release_noted = True
    cfg.findings.append(
        Finding(
            "KV504",
            f"the container runs NVIDIA Dynamo's {engine} worker (python -m dynamo.{engine}), which passes the "
            f"arguments it does not know itself to {engine}'s parser: kvlint read them as {engine} engine "
            f"arguments{what}; {carried}{release}",
            cfg.command_loc,
            fix=fix,
            severity="info",
        )
    )
    return cfg


def unmistakably_vllm(texts: Sequence[str], *, evidence: bool = False) -> bool:
    """Arguments only vLLM takes: every ``--option`` is one of vLLM's (any release kvlint knows, with
    ``_`` for ``-``), at least two are given, and one of them is an option neither SGLang nor TGI has, or
    ``evidence`` says vLLM otherwise (``VLLM_*`` variables in the container's env, an image placeholder
    naming vLLM) when the options are ones SGLang also accepts (``--model``, ``--tensor-parallel-size``).

    An option written as the unique prefix of one of vLLM's options (``--max-num-batched-token``) counts as
    that option: vLLM's ``FlexibleArgumentParser`` is an ``argparse.ArgumentParser`` with the default
    ``allow_abbrev=True`` (vllm@0.33.0 vllm/utils/argparse_utils.py, as :mod:`kvlint.engines.vllm` restates),
    and the parser then reports it (KV205). It is a unique prefix among the options of every release kvlint
    knows, hence in each release that has the option; it counts as an option only vLLM has when no SGLang or
    TGI option starts with it (SGLang's argparse abbreviates too)."""
    from kvlint.engines.sglang_flags_data import SGLANG_OPTIONS
    from kvlint.engines.tgi import TGI_OPTIONS
    from kvlint.engines.vllm import known_options

    opts = [t.split("=", 1)[0] for t in texts if t.startswith("--")]
    opts = ["--" + o[2:].replace("_", "-") for o in opts]
    if len(opts) < 2:
        return False
    known = known_options(None)
    long_names = sorted(o for o in known if o.startswith("--"))
    others = set(SGLANG_OPTIONS) | set(TGI_OPTIONS)
    vllm_only = False
    for o in opts:
        if o in known or (o.startswith("--no-") and "--" + o[5:] in known):
            vllm_only = vllm_only or o not in others
            continue
        # argparse's allow_abbrev: a unique prefix of one of vLLM's options sets it (KV205 says so)
        cands = prefixed(long_names, o) if len(o) > 3 else []
        if len(cands) != 1:
            return False
        # vLLM's alone only when no SGLang/TGI option starts with it either (SGLang's argparse abbreviates too)
        vllm_only = vllm_only or not any(x.startswith(o) for x in others)
    return evidence or vllm_only


def _options_vllm_lacks(texts: Sequence[str]) -> tuple[list[str], int]:
    """``(options, count)``: the ``--options`` of ``texts`` (args given to an image's entrypoint) that no vLLM
    release kvlint knows has, neither whole nor as a unique prefix (argparse's ``allow_abbrev``, as
    :func:`unmistakably_vllm` reads them), in order and each once, and how many ``--options`` ``texts`` gives;
    ``([], 0)`` unless the first word is an option (a program name is not an entrypoint's arguments)."""
    from kvlint.engines.vllm import known_options

    if not texts or not texts[0].startswith("--"):
        return [], 0
    opts = [t.split("=", 1)[0] for t in texts if t.startswith("--")]
    known = known_options(None)
    long_names = sorted(o for o in known if o.startswith("--"))
    lacks: list[str] = []
    for raw in opts:
        o = "--" + raw[2:].replace("_", "-")
        if o in known or (o.startswith("--no-") and "--" + o[5:] in known):
            continue
        if len(o) > 3 and len(prefixed(long_names, o)) == 1:
            continue
        if raw not in lacks:
            lacks.append(raw)
    return lacks, len(opts)


def _env_names(container: Mapping) -> list[str]:
    env = container.get("env")
    return [str(e.get("name")) for e in env if isinstance(e, Mapping)] if isinstance(env, list) else []


def _assumed_vllm(
    image: str,
    texts: Sequence[str],
    loc: Loc | None,
    tag: str | None = None,
    findings: Sequence[Finding] = (),
) -> Finding:
    """KV504 on an image kvlint does not know read as vLLM; with ``tag`` (:func:`unreleased_tag`), also the
    release assumed for it, which KV208 then does not repeat (``ServingConfig.release_noted``). ``findings``: the
    vLLM parser's on these arguments, whose unknown words that are no option (an unexpected positional argument)
    the text names instead of saying the arguments are vLLM's options "and nothing else": a word wholly a
    ``${VAR}`` placeholder (llm-d's ``"${VLLM_EXTRA_ARGS_D}"``, which the pipeline then reads as the renderer's,
    :func:`kvlint.engines.options.template_words`), else a word vLLM takes for no option (KV205)."""
    from kvlint.engines.images import whole_placeholder
    from kvlint.memory.versions import NEWEST_VLLM

    what = f"image '{image}'" if image else "the container (no image)"
    shown = _options_shown([t for t in texts if t.startswith("--")])
    words = [
        f.option
        for f in findings
        if isinstance(f, OptionFinding) and f.unknown and f.option and not f.option.strip().startswith("-")
    ]
    held = [w for w in dict.fromkeys(words) if whole_placeholder(w)]
    stray = [w for w in dict.fromkeys(words) if not whole_placeholder(w)]
    besides: list[str] = []
    if held:
        besides.append(
            f"{', '.join(held)}, {_a_or_some(held, 'placeholder')} for arguments kvlint cannot see"
        )
    if stray:
        besides.append(f"{', '.join(stray)}, {_a_or_some(stray, 'word')} vLLM takes for no option (KV205)")
    rest = f" besides {'; and '.join(besides)}" if besides else " and nothing else"
    release = (
        f", and its tag {tag} names no vLLM release: kvlint applied the rules of vLLM {NEWEST_VLLM}, the newest "
        "it models, unless --engine-version names another"
        if tag
        else ""
    )
    return Finding(
        "KV504",
        f"{what} is not an engine image kvlint knows, but its arguments ({shown}) are vLLM's own options{rest}: "
        f"kvlint read the container as the vLLM OpenAI server the image's entrypoint is assumed to start{release}",
        loc,
        fix="if the image runs something else, set its command explicitly; otherwise "
        + (
            "pass --engine-version with the vLLM release the image carries"
            if tag
            else "nothing to change (the known vLLM images are listed in kvlint/engines/images.py)"
        ),
        severity="info",
    )


def _options_shown(options: Sequence[str], width: int = 80) -> str:
    """The options of a command line as a note quotes them: whole words, joined by blanks, as many as fit in
    ``width`` characters, then ``...`` when some are left out. A cut inside a word (``--enable-auto-to``) would
    name an option the command does not have; only a first word longer than ``width`` is cut, its ``...``
    joined to it."""
    shown: list[str] = []
    used = 0
    for word in options:
        if not shown and len(word) > width:
            return word[:width] + "..."
        if shown and used + 1 + len(word) > width:
            return " ".join(shown) + " ..."
        shown.append(word)
        used += len(word) + (1 if len(shown) > 1 else 0)
    return " ".join(shown)


def _a_or_some(words: Sequence[str], noun: str) -> str:
    return f"a {noun}" if len(words) == 1 else f"{noun}s"


def _joiner(
    found: _Join, container: LDict, image: str, env: dict[str, str], version_option: str | None
) -> ServingConfig:
    """A multi-node worker that joins its leader's engine (``ray start --address=...``): the engine its image
    names (vLLM else), its release decided as any container's (:func:`kvlint.engines.images.engine_release`)."""
    engine = engine_of_image(image) or image_mentions_engine(image) or "vllm"
    return ServingConfig(
        engine=engine,  # type: ignore[arg-type]
        container=container,
        container_name=ref_part(str(container.get("name", ""))),
        image=image,
        version=engine_release(image, engine, version_option),
        model=None,
        env=env,
        command_loc=found.loc,
        version_loc=container.locs.get("image") if isinstance(container, LDict) else None,
        joins=JoinedEngine(found.how, found.loc),
    )


def _shell_without_script(items: Sequence[_Item]) -> bool:
    """``sh -c`` (or ``bash -c``) with nothing after ``-c``."""
    k = _shell_index(items)
    if k is None:
        return False
    rest = [it.text for it in items[k + 1 :]]
    return (
        bool(rest)
        and all(t.startswith("-") for t in rest)
        and any("c" in t[1:] for t in rest if not t.startswith("--"))
    )


def _no_script_reason(items: Sequence[_Item], container: Mapping) -> str:
    shell = " ".join(it.text for it in items)
    reason = f"`{shell}` is given no script: the shell's -c option has nothing to run, so the container exits"
    unknown = unknown_container_fields(container)
    if unknown:
        near = [f"'{k}' (did you mean '{g}'?)" if g else f"'{k}'" for k, g in unknown]
        reason += (
            f"; the container has {'fields' if len(near) != 1 else 'a field'} {', '.join(near)} that Kubernetes "
            "does not know, probably the script "
            "under a misspelt key"
        )
    elif container.get("args") is None:
        reason += "; the script belongs in args (command: [sh, -c], args: [SCRIPT])"
    return reason


def unknown_container_fields(container: Mapping) -> list[tuple[str, str | None]]:
    """``(field, closest known field or None)`` for each key of ``container`` that is not a field of the
    Kubernetes ``core/v1`` Container (:mod:`kvlint.workloads.fields`)."""
    from kvlint.workloads.fields import unknown_fields

    return unknown_fields(container, "Container")


_ENV_ASSIGN_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.S)


def _leading_env(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """``(assignments, the rest)`` of a typed command: the ``NAME=value`` words before the program, or those of an
    ``env`` program before it, behind other wrappers or not (``env [-i] [-u NAME] [NAME=value]... utility``,
    ``/usr/bin/env``, ``nohup env A=1 ...``, read by the wrapper table as in a container's list:
    :func:`kvlint.engines.shell.program_after_wrapper`; a typed command has no environment of its own for
    ``-u``/``-i`` to remove from). Later assignments win, as in a shell."""
    env: dict[str, str] = {}
    changes: list[tuple[str, int | None]] = []
    k = 0
    while k < len(words) and wrapper_name(words[k]) is not None:  # env, and any wrapper program around it
        after = program_after_wrapper(words, k, changes)
        if after is None:
            break
        k = after
    if changes:
        for text, at in changes:
            if at is not None:
                name, _, value = text.partition("=")
                env[name] = value
        return env, words[k:]
    i = 0
    while i < len(words):
        m = _ENV_ASSIGN_RE.fullmatch(words[i])
        if m is None:
            break
        env[m.group(1)] = m.group(2)
        i += 1
    return env, words[i:] if (i or env) else words


@one_reading
class LocalConfigFiles:
    """The ``--config FILE`` of a command typed to ``kvlint plan`` read from this machine, where the user who typed
    it has the file (a container's is read from the ConfigMap mounted at its path, :class:`ConfigMapFiles`, and
    never from the disk kvlint runs on: :func:`parse_container`, the webhook). Bounded as a ConfigMap is: a
    regular file only (never a FIFO or device, which would block or never end), at most
    :data:`kvlint.engines.vllm.MAX_CONFIG_FILE_BYTES` + 1 bytes read (a larger file is then refused by the engine
    parsers' :func:`kvlint.engines.vllm.config_file_too_large`, unread), decoded as UTF-8 with replacement. A
    relative path is the working directory's, as the engine started there would read it."""

    #: KV503's fix when the file cannot be read (:meth:`why_not`), said by the vLLM and SGLang readers.
    fix = "give kvlint plan the path of the --config file on this machine (kvlint plan reads it as the engine would)"

    def __call__(self, path: str) -> tuple[str, Loc | None] | None:
        import stat

        from kvlint.engines.vllm import MAX_CONFIG_FILE_BYTES

        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return None
            with open(path, "rb") as fh:
                raw = fh.read(MAX_CONFIG_FILE_BYTES + 1)
        except (OSError, ValueError):
            return None
        # line 0: the file's first line is line 1 of the positions (Loc(file, line + 0 + 1, column + 1))
        return raw.decode("utf-8", "replace"), Loc(path, 0, 1)

    def why_not(self, path: str) -> str:
        """Why ``path`` was not read (:meth:`__call__` gave None), as the readers' KV503 says it."""
        import stat

        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError) as exc:
            return f"not readable on this machine ({getattr(exc, 'strerror', None) or exc})"
        if not stat.S_ISREG(mode):
            return "not a regular file on this machine"
        return "not readable on this machine"


def parse_command_line(
    argv: Sequence[str],
    version: str | None = None,
    *,
    config_loader: Callable[[str], tuple[str, Loc | None] | None] | None = None,
) -> ServingConfig:
    """Parse a whole engine command as typed (``kvlint plan -- ...``).

    Accepts ``vllm serve MODEL ...``, ``python[3] -m vllm.entrypoints.openai.api_server --model X ...``,
    ``text-generation-launcher --model-id X ...``, ``python -m sglang.launch_server --model-path X ...``,
    ``sglang serve ...``, NVIDIA Dynamo's ``python -m dynamo.vllm|dynamo.sglang ...`` workers (read by that engine's
    parser, Dynamo's own options set aside, :func:`_as_dynamo_worker`). ``version``
    (``--engine-version``) is the engine release to check options against and to plan (None: any option, the
    newest release planned), as :func:`kvlint.engines.images.engine_release` decides it for a command without
    an image.
    Leading ``NAME=value`` environment assignments, with or without ``env`` before them, as a shell would run
    them (``VLLM_USE_V1=0 vllm serve ...``, ``env VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve ...``), become the
    engine's environment (``ServingConfig.env``), which switches the engine reads (V0/V1, the sampler, the
    attention backend) change the plan by; a start-up log's reporter often typed them so.

    ``config_loader`` reads a ``--config FILE`` the command names (``kvlint plan``: :class:`LocalConfigFiles`);
    None, the file is not read and its settings are unknown (a start-up log's command, whose file was on another
    machine).

    Raises ValueError naming what was expected when ``argv`` is none of those.
    """
    typed = [str(a) for a in argv]
    env, words = _leading_env(typed)
    m = _match_program(words)
    if m is None:
        raise ValueError(
            f"not an engine command: {' '.join(typed[:3]) or '(empty)'} — expected `vllm serve MODEL ...`, "
            f"`python -m vllm.entrypoints.openai.api_server --model MODEL ...`, `text-generation-launcher "
            f"--model-id MODEL ...` or `python -m sglang.launch_server --model-path MODEL ...`"
        )
    program, start, pos_model = m
    rest = words[start:]
    # python -m dynamo.vllm|sglang: the engine's parser, Dynamo's options set aside (_as_dynamo_worker), and
    # SGLang's worker takes --config-key as a container's does (_dispatch)
    dynamo = program in _DYNAMO
    engine = _DYNAMO.get(program, program)
    # a typed command has no image: the release given (--engine-version) is the one, as for a container
    version = engine_release("", engine, version)
    if engine == "vllm":
        grpc = _runs_grpc(words, start)
        cfg = parse_vllm_argv(
            rest,
            version=version,
            env=env,
            container=LDict(),
            positional_model=pos_model,
            grpc=grpc,
            config_loader=config_loader,
        )
        if grpc:
            _grpc_release(cfg, version, grpc)
    elif engine == "tgi":
        return parse_tgi_argv(rest, version=version, env=env, container=LDict())
    else:
        cfg = parse_sglang_argv(
            rest,
            version=version,
            env=env,
            container=LDict(),
            serve_cli=pos_model,
            config_loader=config_loader,
            config_key_option=dynamo,
        )
    return _as_dynamo_worker(cfg, engine) if dynamo else cfg
