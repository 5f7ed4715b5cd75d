"""Project configuration: ``.kvlint.yaml``.

The file is found upward from the first linted path (:func:`find_config`) or named with ``--config``;
it is read with kvlint's own position-keeping loader (:func:`kvlint.load.load_text`) and validated
against the JSON Schema shipped as ``kvlint/data/kvlint-config.schema.json`` (draft 2020-12), then
against the rule catalogue (rule ids, parameter names and types). Every error names the file, the line
and column, and the key: ``.kvlint.yaml:4:5: rules.KV104.min_concurency: unknown parameter ...``.

Example::

    select: [KV1, KV2, KV4]          # ids or prefixes; absent = every rule
    ignore: [KV208]
    rules:
      KV104: {severity: error, min_concurrency: 4}
      KV105: {band: 0.10}
    default_accelerator: nvidia-l4
    engine_version: "0.11.0"
    model_paths: {/models/llama: meta-llama/Llama-3.1-8B-Instruct}
    model_dirs: [models/]
    model_catalogue: .kvlint/models  # written by `kvlint models pull` (this is the default)
    exclude: ["charts/*", "*.tmpl.yaml"]
    fail_on: warning
    exemptions: true

YAML 1.1 reads unquoted ``off``, ``no`` and ``false`` as boolean false, so ``severity: off`` arrives as
``False``: it is accepted and means ``off``; likewise ``fail_on: no`` (or ``false``) means ``never``. A
version written as a bare number (``engine_version: 0.11``) is a float to YAML and is rejected with a
hint to quote it. A key given twice in one mapping is an error naming both lines (found by re-composing
the text with ``yaml.compose``; see :func:`_duplicate_keys`).

:func:`apply_config` merges a :class:`Config` into :class:`kvlint.options.Options`; the CLI then lets
its flags override the result.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvlint.accelerators.site import Site
from kvlint.source import LDict, LList, Loc

if TYPE_CHECKING:
    from kvlint.options import Options

__all__ = [
    "CONFIG_NAMES",
    "Config",
    "ConfigError",
    "apply_config",
    "catalogue_dir",
    "config_schema",
    "find_config",
    "load_config",
    "parse_config",
    "validate_selectors",
]

#: File names searched for, in this order, in each directory from the linted path upward.
CONFIG_NAMES = (".kvlint.yaml", ".kvlint.yml")
#: Largest configuration file read (bytes): real ones are a few KB; a larger file is refused unread.
MAX_CONFIG_BYTES = 1 * 2**20
#: Most characters of a key or value from the file that a message shows (a hostile configuration, e.g. a
#: symlink to a secret, must not be echoed whole into CI logs).
SHOWN_CHARS = 40

_SEVERITIES = ("error", "warning", "info", "off")


class ConfigError(ValueError):
    """The configuration file (or a selector given on the command line) is invalid.

    The message starts with ``file:line:column:`` when the position is known and names the key
    (``rules.KV104.severity``). The CLI prints it and exits with status 2.
    """


@dataclass(frozen=True)
class Config:
    """A validated ``.kvlint.yaml``.

    Attributes:
        path: the file it was read from (None for an empty default configuration).
        select, ignore: rule ids or id prefixes (``KV1`` selects KV101..KV199), upper-case.
        severity: rule id -> ``error`` | ``warning`` | ``info`` | ``off``.
        parameters: rule id -> parameter name -> value (validated against ``rules/KVnnn.yaml``).
        default_accelerator: accelerator id/alias used when a manifest does not say.
        engine_version: engine version when the image tag does not pin one.
        model_paths: model path/name in the manifest -> hub id or local directory (relative entries
            that exist next to the config file are made absolute).
        model_dirs: directories of model configs (absolute, resolved against the config's directory).
        model_catalogue: the pulled model catalogue directory (``kvlint models pull``; absolute, resolved
            against the config's directory), or None for the default ``.kvlint/models`` beside the file.
        exclude: fnmatch path globs not to lint; one with a ``/`` anchored at the config's directory
            (:func:`_exclude_from`, as ruff reads its ``exclude``), a single name matched anywhere.
        fail_on: exit-code threshold, or None to leave the CLI default.
        offline: never ask the Hugging Face Hub (None = not set).
        exemptions: whether ``kvlint.io/ignore`` annotations may suppress findings (None = not set).
        site: ``accelerators`` (custom accelerators, node-label and node-name tables) and ``fleet`` as a
            :class:`~kvlint.accelerators.site.Site`, or None when the file declares neither.
        require_sizing: fail the run when a serving workload could not be sized (``--require-sizing``).
    """

    path: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)
    default_accelerator: str | None = None
    engine_version: str | None = None
    model_paths: dict[str, str] = field(default_factory=dict)
    model_dirs: tuple[str, ...] = ()
    model_catalogue: str | None = None
    exclude: tuple[str, ...] = ()
    #: each glob of ``exclude`` anchored at the file's directory -> the glob as the file writes it (for messages)
    exclude_written: dict[str, str] = field(default_factory=dict)
    fail_on: str | None = None
    offline: bool | None = None
    exemptions: bool | None = None
    site: Site | None = None
    require_sizing: bool = False


# --------------------------------------------------------------------------------------------------
# discovery


def find_config(paths: list[str] | tuple[str, ...], cwd: str | None = None) -> str | None:
    """The ``.kvlint.yaml`` that applies to ``paths``, or None.

    Starts at the first path that is not ``-`` (its directory when it is a file; the current directory
    when all paths are ``-``) and walks up to the filesystem root, returning the first
    :data:`CONFIG_NAMES` file found. Never raises.
    """
    start = next((p for p in paths if p != "-"), None)
    base = Path(cwd or os.getcwd())
    here = (base / start) if start else base
    try:
        here = here.resolve()
        if not here.is_dir():
            here = here.parent
    except OSError:  # a path below a directory the user cannot enter: start from its parent
        here = here.parent
    for d in (here, *here.parents):
        for name in CONFIG_NAMES:
            candidate = d / name
            try:
                if candidate.is_file():
                    return str(candidate)
            except OSError:  # an unreadable directory: look further up (the loader reports it)
                continue
    return None


# --------------------------------------------------------------------------------------------------
# loading and validation


@functools.lru_cache(maxsize=1)
def config_schema() -> dict[str, Any]:
    """The shipped JSON Schema of ``.kvlint.yaml`` (``kvlint/data/kvlint-config.schema.json``)."""
    text = resources.files("kvlint.data").joinpath("kvlint-config.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def load_config(path: str, *, discovered: bool = False) -> Config:
    """Read and validate the configuration file at ``path``.

    At most :data:`MAX_CONFIG_BYTES` bytes are read. ``discovered``: the file was found by
    :func:`find_config` (not named with ``--config``): a symlink that resolves outside the directory it was
    found in is not followed (a pull request could otherwise make CI print another file's lines as
    configuration errors), and in a git repository the local directories it names (``model_paths`` values,
    ``model_dirs``, ``model_catalogue``) must lie inside that repository (:func:`_outside_repository`: a pull
    request's own ``.kvlint.yaml`` cannot make CI read the runner's files).

    Raises:
        ConfigError: unreadable, too large or (discovered) out-of-tree file or directory, YAML error, schema
            violation, unknown rule id or parameter; the message names the file, line, column and key.
    """
    from kvlint.load import read_upto

    if discovered and os.path.islink(path):
        here = Path(path).parent.resolve()
        target = Path(path).resolve()
        if here not in target.parents:
            raise ConfigError(
                f"{path}: a symlink to a file outside {here}; kvlint does not follow a discovered configuration "
                "out of its directory tree (name the file with --config to use it)"
            )
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            data = read_upto(fh, size, MAX_CONFIG_BYTES)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read configuration file: {exc.strerror or exc}") from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{path}: configuration file larger than {MAX_CONFIG_BYTES} bytes (a .kvlint.yaml is a few KB); "
            "not read"
        )
    config = parse_config(data, path)
    if discovered:
        problem = _outside_repository(config, path)
        if problem:
            raise ConfigError(problem)
    return config


def _outside_repository(config: Config, path: str) -> str | None:
    """For a discovered configuration in a git repository: an error message naming the first local directory
    it names (a ``model_paths`` value read as a path, :func:`_model_path_target`; ``model_dirs``,
    ``model_catalogue``) that resolves
    outside the repository holding it, else None. The repository is the checked-out pull request in CI; a
    hub id (``org/name``, not an absolute path) is not a directory and is not checked."""
    from kvlint.load import repository_root
    from kvlint.paths import real_path_inside

    root = repository_root(os.path.dirname(os.path.abspath(path)), resolve=True)
    if root is None:
        return None
    named = [(f"model_paths.{_shown(k)}", v) for k, v in config.model_paths.items() if _model_path_target(v)]
    named += [("model_dirs", d) for d in config.model_dirs]
    if config.model_catalogue:
        named.append(("model_catalogue", config.model_catalogue))
    for key, directory in named:
        target = os.path.expanduser(directory) if key.startswith("model_paths.") else directory
        if not real_path_inside(target, root, resolved=True):
            return (
                f"{path}: {key}: {_shown(directory, 300)} is outside the repository {root} that holds this "
                "configuration; kvlint does not read model configs out of it for a discovered configuration "
                "(a pull request's own .kvlint.yaml could point CI at the runner's files): keep the models "
                "in the repository, pass the directory with --model-dir (the Action: args: --model-dir DIR), "
                "or name a configuration kept outside the repository with --config"
            )
    return None


def _model_path_target(value: str) -> bool:
    """Whether the ``model_paths`` value ``value`` may be read as a path on this machine, as
    :func:`kvlint.models.resolve.resolve_model` reads a target (``~`` expanded, then a path relative to the current
    directory when it exists there): an absolute path, one starting with ``~``, one with a ``..`` component
    (whether or not it exists: no configuration error tells which paths exist out of the repository), or
    another relative path that exists (a link of the repository's: ``models/leak.json -> ~/.docker/config.json``).
    A hub id (``org/name``) that names nothing here is not a path."""
    target = os.path.expanduser(value)
    if os.path.isabs(target) or ".." in target.replace("\\", "/").split("/"):
        return True
    try:
        return os.path.lexists(target)
    except (OSError, ValueError):
        return False


def _shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``value`` as a message shows it: printable characters only (others escaped) and at most ``limit``
    characters of it, with ``...`` when cut."""
    text = value if isinstance(value, str) else repr(value)
    cut = len(text) > limit
    text = text[:limit]
    text = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return text + ("..." if cut else "")


def parse_config(text: str | bytes, path: str = ".kvlint.yaml") -> Config:
    """Validate configuration text (``path`` names it in messages and anchors relative directories).

    An empty file is the default configuration. Raises :class:`ConfigError` as :func:`load_config`.
    """
    from kvlint.load import load_text

    loaded = load_text(text, path)
    # repeated keys (the loader's KV004) are reported below with their dotted names
    broken = [f for f in loaded.findings if f.rule != "KV004"]
    if broken:
        f = broken[0]
        where = f"{f.loc}" if f.loc else path
        raise ConfigError(f"{where}: invalid YAML: {_shown(f.message, 200)}")
    docs = loaded.documents
    if len(docs) > 1:
        raise ConfigError(f"{docs[1].loc}: the configuration file must hold a single YAML document")
    if not docs or docs[0].data is None:
        return Config(path=path)
    data = docs[0].data
    if not isinstance(data, LDict):
        raise ConfigError(
            f"{docs[0].loc}: the configuration must be a mapping (key: value), got {_kind(data)}"
        )
    dups = _duplicate_keys(text, path)
    if dups:
        raise ConfigError("\n".join(dups))
    errors = _schema_errors(data, path, text)
    if errors:
        raise ConfigError("\n".join(errors))
    return _build(data, path)


def _kind(value: Any) -> str:
    """A user-facing name for the YAML type of ``value``: ``a list``, ``a string``, ``a number``, ..."""
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _duplicate_keys(text: str | bytes, path: str) -> list[str]:
    """``file:line:col: key: duplicate key (first at line N)`` for every mapping key given twice.

    kvlint's loader (like PyYAML) silently keeps the last of two equal keys, so the configuration is
    re-composed with PyYAML's node composer (``yaml.compose``, no construction) and every mapping node's
    scalar keys are compared; both lines are named. Merge keys (``<<``) and non-scalar keys are skipped.
    Returns [] when the text does not compose (the loader has already reported that)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError:
        return []
    out: list[str] = []
    stack: list[tuple[Any, str]] = [(root, "")]
    seen_nodes: set[int] = set()
    while stack:
        node, prefix = stack.pop()
        if node is None or id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[str, Any] = {}
            for k, v in node.value:
                name = f"{prefix}.{k.value}" if prefix else str(k.value)
                if isinstance(k, yaml.ScalarNode) and k.value != "<<":
                    if k.value in first:
                        m0 = first[k.value].start_mark
                        m1 = k.start_mark
                        out.append(
                            f"{path}:{m1.line + 1}:{m1.column + 1}: {_shown(name, 120)}: duplicate key "
                            f"(first at line {m0.line + 1}, column {m0.column + 1}); YAML keeps only the last"
                        )
                    else:
                        first[k.value] = k
                stack.append((v, name))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((v, f"{prefix}[{i}]") for i, v in enumerate(node.value))
    return sorted(out, key=lambda m: int(m[len(path) + 1 :].split(":", 1)[0]))


def _raw_scalar(text: str | bytes, loc: Loc | None) -> str | None:
    """The scalar as written in the file at ``loc`` (``0.10``, not the float ``0.1``), or None."""
    if loc is None:
        return None
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    lines = raw.splitlines()
    if not 1 <= loc.line <= len(lines):
        return None
    m = re.match(r"[^\s,}\]#]+", lines[loc.line - 1][loc.column - 1 :])
    return m.group(0) if m else None


def _loc_at(root: Any, parts: list[Any], *, key: bool = False) -> Loc | None:
    """Position of the value (or, with ``key``, of the key) reached by ``parts`` from ``root``."""
    node = root
    loc: Loc | None = getattr(root, "loc", None)
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, LDict) and part in node:
            loc = (node.key_locs.get(part) if (last and key) else None) or node.locs.get(part) or loc
            node = node[part]
        elif isinstance(node, LList) and isinstance(part, int) and 0 <= part < len(node):
            loc = node.locs[part] if part < len(node.locs) else loc
            node = node[part]
        else:
            break
    return loc


def _dotted(parts: list[Any]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{_shown(p)}" if out else _shown(p))
    return out or "<root>"


def _closest(key: object, known: set[str]) -> str:
    """``"; did you mean 'fail_on'?"`` for a misspelt key or one written as its command-line flag (``fail-on``,
    ``--fail-on``), else ``""``."""
    import difflib

    if not isinstance(key, str) or not known:
        return ""
    flag = key[:100].lstrip("-").replace("-", "_")
    if flag in known:
        return f"; did you mean {flag!r}?"
    match = difflib.get_close_matches(flag, sorted(known), n=1, cutoff=0.8)
    return f"; did you mean {match[0]!r}?" if match else ""


def _schema_errors(data: LDict, path: str, text: str | bytes = "") -> list[str]:
    import jsonschema

    validator = jsonschema.Draft202012Validator(config_schema())
    out: list[str] = []
    for err in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        parts = list(err.absolute_path)
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            known = set(err.schema.get("properties", {})) if isinstance(err.schema, dict) else set()
            for extra in [k for k in err.instance if k not in known]:
                loc = _loc_at(data, [*parts, extra], key=True)
                allowed = ", ".join(sorted(known))
                hint = _closest(extra, known)
                out.append(
                    f"{loc or path}: {_dotted([*parts, extra])}: unknown key{hint} (allowed: {allowed})"
                )
            continue
        if err.validator == "propertyNames":
            loc = _loc_at(data, [*parts, err.instance], key=True)
            out.append(f"{loc or path}: {_dotted([*parts, err.instance])}: not a rule id (expected KVnnn)")
            continue
        loc = _loc_at(data, parts)
        # jsonschema quotes the whole value: show a short prefix of it
        msg = _shown(err.message.replace(repr(err.instance), _shown(repr(err.instance))), 200)
        if err.validator == "pattern" and parts and parts[0] in ("select", "ignore"):
            msg = f"{_shown(repr(err.instance))} is not a rule id or prefix (KV103, KV1, KV){_name_hint(err.instance)}"
        if err.validator == "enum" and isinstance(err.validator_value, list):
            # YAML 1.1 reads `off` as false, so the schema lists False for it: show what the user writes
            shown = [("off" if v is False else str(v)) for v in err.validator_value]
            allowed = ", ".join(dict.fromkeys(shown))
            msg = f"{_shown(repr(err.instance))} is not one of: {allowed}"
        if (
            parts == ["engine_version"]
            and isinstance(err.instance, (int, float))
            and not isinstance(err.instance, bool)
        ):
            written = _raw_scalar(text, loc) or str(err.instance)
            msg = (
                f"{written} is read by YAML as a number, not a version string; "
                f'quote it: write engine_version: "{written}"'
            )
        out.append(f"{loc or path}: {_dotted(parts)}: {msg}")
    return out


def _catalog_ids() -> set[str]:
    from kvlint.rules.catalog import load_catalog

    return set(load_catalog())


def _name_hint(word: object) -> str:
    """``"; it is the name of KV202: write KV202"`` when a selector that is not an id is a rule's name, as the GitHub
    annotation's title and SARIF show it (``max-model-len-unset``), else ``""``."""
    from kvlint.rules.catalog import rule_id_of

    if not isinstance(word, str) or word.strip().isdigit():
        return ""
    named = rule_id_of(word[:200])
    return f"; it is the name of {named}: write {named}" if named else ""


def validate_selectors(selectors: list[str] | tuple[str, ...], where: str = "") -> tuple[str, ...]:
    """Upper-case rule ids/prefixes, each checked to match at least one catalogue rule.

    ``where`` prefixes error messages (``--select`` or ``file:line:col: select[1]``). Raises
    :class:`ConfigError` for a selector that is not ``KV`` + up to three digits or matches no rule.
    """
    ids = _catalog_ids()
    out = []
    for s in selectors:
        sel = str(s).strip().upper()
        if not re.fullmatch(r"KV[0-9]{0,3}", sel):
            raise ConfigError(
                f"{where}: {_shown(repr(s))} is not a rule id or prefix (KV103, KV1, KV){_name_hint(s)}"
            )
        if not any(i.startswith(sel) for i in ids):
            raise ConfigError(f"{where}: {_shown(repr(s))} matches no rule; `kvlint rules` lists them")
        out.append(sel)
    return tuple(out)


def _check_param(rule: str, name: str, value: Any, where: str) -> Any:
    from kvlint.rules.catalog import get_rule

    info = get_rule(rule)
    try:
        p = info.parameter(name)
    except KeyError:
        names = ["severity", *(q.name for q in info.parameters)]
        hint = _closest(name, set(names))
        raise ConfigError(
            f"{where}: unknown parameter of {rule}{hint} (allowed: {', '.join(names)})"
        ) from None
    wrong = p.check(value, show=lambda v: _shown(repr(v)))
    if wrong:
        raise ConfigError(f"{where}: {wrong}")
    return value


def _local(base: Path, value: str) -> str:
    """``value`` resolved against ``base`` when it names an existing directory there, else unchanged (also
    when the system cannot look it up: a name longer than the file system allows, ``ENAMETOOLONG``)."""
    if os.path.isabs(value):
        return value
    candidate = base / value
    try:
        return str(candidate.resolve()) if candidate.is_dir() else value
    except OSError:
        return value


def _path_text(data: LDict, parts: list[Any], value: Any) -> str:
    """``value`` (a configured path) as text; :class:`ConfigError` at its line when it holds a NUL character,
    which no file system path can (``os.stat`` raises ``ValueError: embedded null byte``)."""
    text = str(value)
    if "\x00" in text:
        where = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in parts).replace(".[", "[")
        raise ConfigError(f"{_loc_at(data, parts)}: {_shown(where)}: a path cannot hold a NUL character")
    return text


def _site(data: LDict, path: str) -> Site:
    """The ``accelerators`` and ``fleet`` sections as a :class:`~kvlint.accelerators.site.Site`.

    Custom accelerators get ``memory`` as the device total CUDA reports (any byte quantity kvlint reads:
    ``95GiB``, ``102GB``, bytes), bf16 from compute capability >= 8.0 (vLLM's rule) and fp8 from >= 8.9 unless
    set; every accelerator a table or the fleet names must be a catalogue id/alias or a custom id. Raises
    :class:`ConfigError` naming the key and position otherwise.
    """
    from kvlint.accelerators import did_you_mean, lookup, parse_quantity
    from kvlint.types import Accelerator

    section = data.get("accelerators") or {}
    custom: dict[str, Accelerator] = {}
    for i, item in enumerate(section.get("custom") or []):
        where = f"{_loc_at(data, ['accelerators', 'custom', i])}: accelerators.custom[{i}]"
        acc_id = str(item["id"])
        if lookup(acc_id) is not None or acc_id in custom:
            raise ConfigError(
                f"{where}.id: {_shown(repr(acc_id))} is already an accelerator id or alias; choose another id"
            )
        try:
            memory = parse_quantity(item["memory"])
        except ValueError as exc:
            raise ConfigError(f"{where}.memory: {_shown(str(exc), 120)}") from None
        if memory <= 0:
            raise ConfigError(f"{where}.memory: must be positive")
        vendor = str(item.get("vendor", "nvidia"))
        cc = item.get("compute_capability")
        major_minor = tuple(int(x) for x in str(cc).split(".")) if cc else None
        custom[acc_id] = Accelerator(
            id=acc_id,
            name=str(item.get("name") or acc_id),
            vendor=vendor,
            memory_bytes=memory,
            memory_source=f"{path} accelerators.custom",
            compute_capability=str(cc) if cc else None,
            bf16=bool(item.get("bf16", vendor == "amd" or bool(major_minor and major_minor >= (8, 0)))),
            fp8=bool(item.get("fp8", vendor == "nvidia" and bool(major_minor and major_minor >= (8, 9)))),
            source=f"{path} (accelerators.custom)",
        )

    def known(ref: object, keys: list[Any], label: str) -> str:
        text = str(ref)
        if text not in custom and lookup(text) is None:
            raise ConfigError(
                f"{_loc_at(data, keys)}: {label}: unknown accelerator {_shown(repr(text))}{did_you_mean(text)}; "
                "`kvlint accelerators` lists the ids "
                "and aliases, or declare it under accelerators.custom"
            )
        return text

    labels = {
        str(k): {
            str(v): known(
                ref,
                ["accelerators", "node_labels", k, v],
                f"accelerators.node_labels.{_shown(k)}.{_shown(v)}",
            )
            for v, ref in table.items()
        }
        for k, table in (section.get("node_labels") or {}).items()
    }
    names = {
        str(n): known(ref, ["accelerators", "node_names", n], f"accelerators.node_names.{_shown(n)}")
        for n, ref in (section.get("node_names") or {}).items()
    }
    fleet = tuple(known(ref, ["fleet", i], f"fleet[{i}]") for i, ref in enumerate(data.get("fleet") or []))
    return Site(accelerators=custom, node_labels=labels, node_names=names, fleet=fleet, source=path)


def _exclude_from(config_path: str, glob: str) -> tuple[str, ...]:
    """The form(s) of a configuration file's ``exclude`` glob that the loader matches (:func:`kvlint.load._excluded`),
    as ruff reads its own ``exclude``: a glob that names a path (one with a ``/`` before its end: ``charts/*``,
    ``deploy/generated``) is relative to the directory of the configuration file, so it is anchored there (the
    directory as written, absolute, and, when a symbolic link leads to it, as resolved: the loader matches a file's
    absolute path, not its resolved one); a glob of one name (``generated``, ``*.tmpl.yaml``, ``charts/``) matches
    that name anywhere below, as before; an absolute glob is kept. A ``/**/`` stands for zero or more directories
    (:func:`_globstar_forms`), as in ruff's. Before, a path glob matched paths as typed,
    relative to the working directory: ``charts/*`` left ``charts/x.yaml`` out of ``kvlint check .`` run in the
    repository, and not out of ``kvlint check repo`` run beside it."""
    name = glob.rstrip("/") or glob
    if "/" not in name or os.path.isabs(os.path.expanduser(name)):
        return (glob,)
    here = os.path.abspath(os.path.dirname(config_path))
    dirs = dict.fromkeys((here, os.path.realpath(here)))
    return tuple(form for d in dirs for form in _globstar_forms(os.path.join(d, os.path.normpath(name))))


#: Most ``/**/`` of one glob whose every combination of zero and more directories :func:`_globstar_forms` spells
#: out (2**4 = 16 forms); past it, only "all of them" and "none of them" (a hand-written glob holds one or two).
_MAX_GLOBSTARS = 4


def _globstar_forms(glob: str) -> list[str]:
    """``glob`` and, for each ``/**/`` in it, the form where it stands for no directory (``/``): ruff's globs (globset)
    read ``/**/`` as zero or more directories, while fnmatch, which the loader matches with
    (:func:`kvlint.load._excluded`), reads it as at least one (``*`` crosses ``/`` there, but the two ``/`` stay), so
    ``REPO/**/generated/*``, a configuration's ``**/generated/*`` anchored at its directory, never matched
    ``REPO/generated/a.yaml``. Each combination when there are at most :data:`_MAX_GLOBSTARS`, else ``glob`` and
    the form with none."""
    parts = glob.split("/**/")
    stars = len(parts) - 1
    if stars == 0:
        return [glob]
    if stars > _MAX_GLOBSTARS:
        return [glob, "/".join(parts)]
    out: list[str] = []
    for mask in range(1 << stars):
        form = parts[0]
        for i, part in enumerate(parts[1:]):
            form += ("/" if mask >> i & 1 else "/**/") + part
        out.append(form)
    return out


def _build(data: LDict, path: str) -> Config:
    base = Path(path).resolve().parent
    kw: dict[str, Any] = {"path": path}
    for key in ("select", "ignore"):
        if key in data:
            items = data[key]
            sels: list[str] = []
            for i, s in enumerate(items):
                sels.extend(validate_selectors([s], f"{_loc_at(data, [key, i])}: {key}[{i}]"))
            kw[key] = tuple(sels)
    severity: dict[str, str] = {}
    params: dict[str, dict[str, Any]] = {}
    ids = _catalog_ids()
    for rule, settings in (data.get("rules") or {}).items():
        if rule not in ids:
            raise ConfigError(
                f"{_loc_at(data, ['rules', rule], key=True)}: rules.{_shown(rule)}: unknown rule id; `kvlint rules` lists them"
            )
        for name, value in settings.items():
            where = f"{_loc_at(data, ['rules', rule, name])}: rules.{_shown(rule)}.{_shown(name)}"
            if name == "severity":
                # YAML 1.1 reads an unquoted ``off``/``no``/``false`` as boolean false: it means "off"
                severity[rule] = "off" if value is False else str(value)
            else:
                params.setdefault(rule, {})[name] = _check_param(rule, name, value, where)
    kw["severity"] = severity
    kw["parameters"] = params
    site = _site(data, path) if ("accelerators" in data or "fleet" in data) else None
    kw["site"] = site
    if "default_accelerator" in data:
        from kvlint.accelerators import did_you_mean, lookup

        found = (
            site.lookup(data["default_accelerator"])
            if site is not None
            else lookup(data["default_accelerator"])
        )
        if found is None:
            raise ConfigError(
                f"{_loc_at(data, ['default_accelerator'])}: default_accelerator: unknown accelerator "
                f"{_shown(repr(data['default_accelerator']))}{did_you_mean(data['default_accelerator'])}; "
                "`kvlint accelerators` lists the ids and aliases"
            )
        kw["default_accelerator"] = data["default_accelerator"]
    if "engine_version" in data:
        from kvlint.memory.versions import engine_version_option

        try:  # as --engine-version takes it (v0.11.0 -> 0.11.0), so parser and plan read one release
            kw["engine_version"] = engine_version_option(str(data["engine_version"]))
        except ValueError as exc:
            raise ConfigError(f"{_loc_at(data, ['engine_version'])}: engine_version: {exc}") from None
    if "model_paths" in data:
        kw["model_paths"] = {
            str(k): _local(base, _path_text(data, ["model_paths", k], v))
            for k, v in data["model_paths"].items()
        }
    if "model_dirs" in data:
        kw["model_dirs"] = tuple(
            str((base / _path_text(data, ["model_dirs", i], d)).resolve())
            for i, d in enumerate(data["model_dirs"])
        )
    if "model_catalogue" in data:
        catalogue = _path_text(data, ["model_catalogue"], data["model_catalogue"])
        kw["model_catalogue"] = str((base / os.path.expanduser(catalogue)).resolve())
    if "exclude" in data:
        written: dict[str, str] = {}
        for glob in data["exclude"]:
            for g in _exclude_from(path, str(glob)):
                written.setdefault(g, str(glob))
        kw["exclude"] = tuple(written)
        kw["exclude_written"] = {g: w for g, w in written.items() if g != w}
    if "fail_on" in data:
        # YAML 1.1 reads an unquoted ``no``/``off``/``false`` as boolean false: it means "never"
        kw["fail_on"] = "never" if data["fail_on"] is False else data["fail_on"]
    for key in ("offline", "exemptions", "require_sizing"):
        if key in data:
            kw[key] = data[key]
    return Config(**kw)


# --------------------------------------------------------------------------------------------------
# merging into Options


def apply_config(options: Options, config: Config) -> Options:
    """``options`` with the configuration's settings filled in where ``options`` leaves them unset.

    The configuration only supplies defaults: fields already set on ``options`` (e.g. from command-line
    flags) win. ``model_dirs`` and ``exclude`` are concatenated (flags first); ``model_paths`` merged
    (flags win per key); the pulled model catalogue (:func:`catalogue_dir`) is added to
    ``model_catalogues``; per-rule ``severity``/``parameters`` merged per rule and name (options win).
    """
    params = {r: dict(p) for r, p in config.parameters.items()}
    for r, p in options.rule_params.items():
        params.setdefault(r, {}).update(p)
    return replace(
        options,
        default_accelerator=options.default_accelerator or config.default_accelerator,
        engine_version=options.engine_version or config.engine_version,
        model_dirs=tuple(options.model_dirs)
        + tuple(d for d in config.model_dirs if d not in options.model_dirs),
        model_paths={**config.model_paths, **options.model_paths},
        model_catalogues=tuple(options.model_catalogues)
        + tuple(c for c in (catalogue_dir(config),) if c and c not in options.model_catalogues),
        exclude=tuple(options.exclude) + tuple(g for g in config.exclude if g not in options.exclude),
        select=options.select or config.select,
        ignore=options.ignore or config.ignore,
        severity={**config.severity, **options.severity},
        rule_params=params,
        allow_hub=options.allow_hub and not config.offline,
        exemptions_allowed=options.exemptions_allowed and config.exemptions is not False,
        site=options.site or config.site,
    )


def catalogue_dir(config: Config) -> str | None:
    """The pulled model catalogue of a configuration (``kvlint models pull`` writes it, ``kvlint check``,
    ``kvlint plan`` and the webhook read it): its ``model_catalogue``, else ``.kvlint/models`` beside the
    file; None for a configuration read from no file."""
    if config.model_catalogue:
        return config.model_catalogue
    if not config.path:
        return None
    return str(Path(config.path).resolve().parent / ".kvlint" / "models")
