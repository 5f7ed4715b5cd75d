"""The rule catalogue: kvlint's rule documentation, read from the top-level ``rules/`` directory.

Each rule is one YAML file ``rules/KVnnn.yaml`` (id, name, severity, engines, category, summary,
rationale, fix, example, references, version range, parameters, ...) that must satisfy
``rules/schema.json`` (JSON Schema draft 2020-12). This module turns those files into frozen
:class:`RuleInfo` records, renders them for ``kvlint explain KVnnn`` (:func:`render_rule_text`) and for
``docs/rules.md`` (:func:`render_rules_markdown`, written by ``tools/gen_rules_doc.py``).

The layout follows three established linters: ruff's ``ruff rule X`` sections (what it does, why it
matters, example, fix), kube-linter's split between check *templates* (the check functions in
``kvlint.rules``) and their configured *parameters* (``parameters`` here), and cfn-lint's per-rule id,
short and long description and source URL (``summary``, ``rationale``, ``references``).

Loading is cheap (libyaml ``CSafeLoader``, a few structural checks, cached per directory) so it can run
at every start-up; full JSON-Schema validation imports ``jsonschema`` lazily and runs only from
:func:`validate_catalog` / ``load_catalog(strict=True)`` (tests, ``--strict``).
"""

from __future__ import annotations

import functools
import json
import math
import re
import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml

try:  # libyaml bindings: ~10x faster than the pure-Python loader.
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

__all__ = [
    "RULES_DOC_URL",
    "CatalogError",
    "Parameter",
    "Reference",
    "RuleInfo",
    "find_rules_dir",
    "get_rule",
    "load_catalog",
    "match_rule",
    "render_rule_text",
    "render_rules_markdown",
    "rule_help_uri",
    "severity_of",
    "validate_catalog",
]

#: Base URL of the generated rule documentation. The one place it is spelled: each rule's ``help_uri``
#: is ``RULES_DOC_URL + "#" + id.lower()`` unless its file overrides it (placeholder until the project
#: has a permanent home).
RULES_DOC_URL = "https://github.com/kvlint/kvlint/blob/main/docs/rules.md"

SEVERITIES = ("error", "warning", "info")
ENGINES = ("vllm", "tgi", "sglang", "any")
PHASES = ("load", "parse", "container")
CONSUMABLES = ("pod", "command", "gpus", "model", "gpu", "plan")
CATEGORIES = (
    "parse",
    "capacity",
    "limits",
    "flags",
    "hardware",
    "parallelism",
    "resolution",
    "tgi",
    "sglang",
)

_ID_RE = re.compile(r"^KV[0-9]{3}$")
_REQUIRED = (
    "id",
    "name",
    "severity",
    "engines",
    "category",
    "summary",
    "rationale",
    "fix",
    "example",
    "example_fixed",
    "references",
    "since",
    "phase",
)
_CATEGORY_TITLES = {
    "parse": "Parsing",
    "capacity": "Memory and KV-cache capacity",
    "limits": "Context and batch limits",
    "flags": "Engine flags",
    "hardware": "Hardware and dtypes",
    "parallelism": "Parallelism and pod resources",
    "resolution": "Resolution (what kvlint could not determine)",
    "tgi": "TGI",
    "sglang": "SGLang",
}


class CatalogError(ValueError):
    """A rule file is missing, unreadable or malformed; the message names the file and the key."""


@dataclass(frozen=True)
class Reference:
    """A source backing a rule: engine source file at a version, or a documentation page."""

    title: str
    url: str


def number_text(value: float) -> str:
    """A parameter's number as messages write it: ``1,000,000``, ``0.05``, ``nan``."""
    if (
        isinstance(value, (int, float))
        and math.isfinite(value)
        and float(value).is_integer()
        and abs(value) < 1e15
    ):
        return f"{int(value):,}"
    return f"{value:g}" if isinstance(value, float) else repr(value)


@dataclass(frozen=True)
class Parameter:
    """A configurable threshold of a rule (set in ``.kvlint.yaml``).

    ``type`` is the JSON type name (``integer``, ``number``, ``string``, ``boolean``); ``default`` is a
    value of that type, in the unit the description states. ``minimum``/``maximum`` bound a numeric value
    (``minimum`` excluded when ``exclusive_minimum``); without ``minimum`` a numeric value must not be
    negative. :meth:`check` is the one validation of a value, for ``.kvlint.yaml`` and the command line alike.
    """

    name: str
    type: str
    default: int | float | str | bool
    description: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False

    def check(self, value: Any, show: Callable[[Any], str] = repr) -> str | None:
        """Why ``value`` is not acceptable for this parameter (a sentence without the key, the value as
        ``show`` writes it), or None.

        Checks the type, then for numbers finiteness (YAML's ``.inf``/``.nan``, ``float("nan")`` from the
        command line: a non-finite threshold makes every comparison with it meaningless) and the bounds.
        """
        ok = {
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
            "string": isinstance(value, str),
            "boolean": isinstance(value, bool),
        }.get(self.type, True)
        if not ok:
            return f"{show(value)} is not of type {self.type} ({self.description})"
        if self.type not in ("integer", "number"):
            return None
        if not math.isfinite(value):
            return f"{show(value)} is not a finite number ({self.description})"
        low = 0.0 if self.minimum is None else self.minimum
        if value < low or (self.exclusive_minimum and value == low):
            if self.minimum is None:
                return f"{show(value)} must not be negative"
            return f"{show(value)} must be {'greater than' if self.exclusive_minimum else 'at least'} {number_text(low)}"
        if self.maximum is not None and value > self.maximum:
            return f"{show(value)} must be at most {number_text(self.maximum)}"
        return None

    def range_text(self) -> str:
        """The values a numeric parameter accepts, as :meth:`check` holds them (``greater than 0, at most
        1,000,000``); empty for other types."""
        if self.type not in ("integer", "number"):
            return ""
        if self.minimum is None:
            low = "not negative"
        else:
            low = f"{'greater than' if self.exclusive_minimum else 'at least'} {number_text(self.minimum)}"
        return low + (f", at most {number_text(self.maximum)}" if self.maximum is not None else "")


@dataclass(frozen=True)
class RuleInfo:
    """One rule's documentation, as read from ``rules/<id>.yaml``.

    Attributes:
        id: stable id (``KV103``); equals the file stem.
        name: kebab-case name (``max-model-len-exceeds-kv-capacity``).
        severity: default severity (``error`` | ``warning`` | ``info``).
        engines: engines the rule applies to (``vllm``, ``tgi``, ``sglang`` or ``any``).
        category: one of :data:`CATEGORIES`.
        summary: one line, what the rule detects.
        rationale: why it matters, with the engine's behaviour and exact error text where there is one.
        fix: how to fix it.
        example, example_fixed: a failing fragment and the same fragment fixed.
        example_format: ``yaml`` | ``shell`` | ``text`` (syntax of the examples).
        references: sources (engine files at a version, documentation pages).
        versions: engine -> version specifier (``(("vllm", ">=0.8.0"),)``); empty = all versions.
        parameters: configurable thresholds with their defaults.
        since: kvlint version that introduced the rule.
        phase: where the rule is found: ``load`` (reading files and suppression comments), ``parse`` (reading
            the engine command) or ``container`` (a registered check per serving container, after planning).
        consumes: what a ``container`` check needs beyond the engine command; the runner skips it when one is
            missing: ``pod`` (a Kubernetes object, absent for ``kvlint plan``), ``command`` (the engine's command
            was read: a model or at least one setting), ``gpus`` (a GPU count),
            ``model`` (a resolved config.json), ``gpu`` (a known accelerator), ``plan`` (a memory plan).
        before_loading: an error of this rule means the engine stops before loading any weights, so rules that
            consume the plan are not run for the container.
        help_uri: URL of the rule's section in docs/rules.md.
        source: path of the YAML file it was read from (not part of equality).
    """

    id: str
    name: str
    severity: Literal["error", "warning", "info"]
    engines: tuple[str, ...]
    category: str
    summary: str
    rationale: str
    fix: str
    example: str
    example_fixed: str
    references: tuple[Reference, ...]
    since: str
    help_uri: str
    phase: str = "container"
    consumes: tuple[str, ...] = ()
    before_loading: bool = False
    versions: tuple[tuple[str, str], ...] = ()
    parameters: tuple[Parameter, ...] = ()
    example_format: str = "yaml"
    source: str = ""

    @property
    def title(self) -> str:
        """``KV103 max-model-len-exceeds-kv-capacity (error)``: the heading used everywhere."""
        return f"{self.id} {self.name} ({self.severity})"

    def parameter(self, name: str) -> Parameter:
        """The parameter called ``name``. Raises KeyError naming the rule and its parameters."""
        for p in self.parameters:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.parameters) or "none"
        raise KeyError(f"rule {self.id} has no parameter {name!r} (parameters: {known})")

    def defaults(self) -> dict[str, Any]:
        """Parameter name -> default value (e.g. ``{"min_concurrency": 2}`` for KV104)."""
        return {p.name: p.default for p in self.parameters}

    def version_spec(self, engine: str) -> str | None:
        """The version specifier for ``engine`` (``">=0.8.0"``), or None when the rule names none."""
        return dict(self.versions).get(engine)


def match_rule(rule: str, selectors: tuple[str, ...] | list[str]) -> bool:
    """Whether ``rule`` (``KV104``) is named by any selector (an id or a prefix such as ``KV1``)."""
    return any(rule.startswith(s) for s in selectors)


def rule_id_of(word: str) -> str | None:
    """The id of the rule ``word`` names by its name as reports show it (``max-model-len-unset``: the GitHub
    annotation's title, SARIF's rule name), in any case and with ``_`` for ``-``, or by its number alone (``202``),
    else None."""
    key = word.strip().lower().replace("_", "-")
    catalog = _load_cached(_default_rules_dir())
    if key.isdigit() and len(key) <= 3:
        rule = f"KV{int(key):03d}"
        return rule if rule in catalog else None
    return next((rid for rid, info in catalog.items() if info.name == key), None)


def rule_help_uri(rule_id: str) -> str:
    """Documentation URL of a rule: ``RULES_DOC_URL#kv103`` (anchor = lower-case id)."""
    return f"{RULES_DOC_URL}#{rule_id.lower()}"


# --------------------------------------------------------------------------------------------------
# locating and loading


def find_rules_dir() -> Path:
    """The directory holding ``KVnnn.yaml`` and ``schema.json``.

    In a source checkout that is ``<repo>/rules`` (``Path(kvlint.__file__).parents[1] / "rules"``, taken
    when it sits next to ``pyproject.toml``); when installed, the package ``kvlint._rules`` (pyproject maps
    ``rules/`` there via ``package-dir``). Raises CatalogError when neither exists.
    """
    import kvlint

    checkout = Path(kvlint.__file__).resolve().parents[1]
    candidate = checkout / "rules"
    if (checkout / "pyproject.toml").is_file() and (candidate / "schema.json").is_file():
        return candidate
    try:
        traversable = resources.files("kvlint._rules")
    except ModuleNotFoundError as exc:
        raise CatalogError(
            f"kvlint rule catalogue not found: neither {candidate} nor the installed package kvlint._rules exists"
        ) from exc
    return Path(str(traversable))


def _rule_files(rules_dir: Path) -> list[Path]:
    return sorted(p for p in rules_dir.glob("*.yaml") if p.is_file())


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read rule file: {exc.strerror or exc}") from exc
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - CSafeLoader/SafeLoader only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise CatalogError(f"{path}{where}: invalid YAML: {problem}") from exc


def _str_field(path: Path, data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CatalogError(f"{path}: key {key!r} must be a non-empty string, got {value!r}")
    return value


def _build(path: Path, data: Any) -> RuleInfo:
    """Turn one parsed rule file into a RuleInfo; structural checks only (no jsonschema)."""
    if not isinstance(data, dict):
        raise CatalogError(f"{path}: a rule file must hold a mapping, got {type(data).__name__}")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise CatalogError(
            f"{path}: missing required key{'s' if len(missing) != 1 else ''}: {', '.join(missing)}"
        )
    rule_id = _str_field(path, data, "id")
    if not _ID_RE.match(rule_id) or rule_id != path.stem:
        raise CatalogError(f"{path}: key 'id' is {rule_id!r}; it must be KVnnn and equal the file name")
    severity = _str_field(path, data, "severity")
    if severity not in SEVERITIES:
        raise CatalogError(f"{path}: key 'severity' is {severity!r}; expected one of {', '.join(SEVERITIES)}")
    engines = data["engines"]
    if not isinstance(engines, list) or not engines or any(e not in ENGINES for e in engines):
        raise CatalogError(f"{path}: key 'engines' must be a non-empty list of {', '.join(ENGINES)}")
    category = _str_field(path, data, "category")
    if category not in CATEGORIES:
        raise CatalogError(f"{path}: key 'category' is {category!r}; expected one of {', '.join(CATEGORIES)}")
    refs_raw = data["references"]
    if not isinstance(refs_raw, list) or not all(
        isinstance(r, dict) and isinstance(r.get("title"), str) and isinstance(r.get("url"), str)
        for r in refs_raw
    ):
        raise CatalogError(f"{path}: key 'references' must be a list of {{title, url}} mappings")
    versions_raw = data.get("versions") or {}
    if not isinstance(versions_raw, dict):
        raise CatalogError(f"{path}: key 'versions' must be a mapping engine -> specifier")
    params_raw = data.get("parameters") or []
    if not isinstance(params_raw, list) or not all(
        isinstance(p, dict) and {"name", "type", "default", "description"} <= p.keys() for p in params_raw
    ):
        raise CatalogError(f"{path}: key 'parameters' must be a list of {{name, type, default, description}}")
    help_uri = data.get("help_uri") or rule_help_uri(rule_id)
    phase = _str_field(path, data, "phase")
    if phase not in PHASES:
        raise CatalogError(f"{path}: key 'phase' is {phase!r}; expected one of {', '.join(PHASES)}")
    consumes = data.get("consumes") or []
    if not isinstance(consumes, list) or any(x not in CONSUMABLES for x in consumes):
        raise CatalogError(f"{path}: key 'consumes' must be a list of {', '.join(CONSUMABLES)}")
    before_loading = data.get("before_loading", False)
    if not isinstance(before_loading, bool):
        raise CatalogError(f"{path}: key 'before_loading' must be true or false")
    parameters = tuple(
        Parameter(
            name=p["name"],
            type=p["type"],
            default=p["default"],
            description=p["description"].strip(),
            minimum=p.get("minimum"),
            maximum=p.get("maximum"),
            exclusive_minimum=bool(p.get("exclusive_minimum", False)),
        )
        for p in params_raw
    )
    for param in parameters:
        wrong = param.check(param.default)
        if wrong:
            raise CatalogError(f"{path}: parameter {param.name!r}: its default {wrong}")
    return RuleInfo(
        id=rule_id,
        name=_str_field(path, data, "name"),
        severity=severity,  # type: ignore[arg-type]
        engines=tuple(engines),
        category=category,
        summary=_str_field(path, data, "summary").strip(),
        rationale=_str_field(path, data, "rationale").strip(),
        fix=_str_field(path, data, "fix").strip(),
        example=_str_field(path, data, "example").rstrip("\n"),
        example_fixed=_str_field(path, data, "example_fixed").rstrip("\n"),
        example_format=str(data.get("example_format", "yaml")),
        references=tuple(Reference(title=r["title"], url=r["url"]) for r in refs_raw),
        since=str(data["since"]),
        help_uri=str(help_uri),
        phase=phase,
        consumes=tuple(consumes),
        before_loading=before_loading,
        versions=tuple((str(k), str(v)) for k, v in versions_raw.items()),
        parameters=parameters,
        source=str(path),
    )


@functools.lru_cache(maxsize=8)
def _load_cached(rules_dir: str) -> dict[str, RuleInfo]:
    directory = Path(rules_dir)
    files = _rule_files(directory)
    if not files:
        raise CatalogError(f"{directory}: no rule files (KVnnn.yaml) found")
    catalog: dict[str, RuleInfo] = {}
    names: dict[str, str] = {}
    for path in files:
        info = _build(path, _read_yaml(path))
        if info.name in names:
            raise CatalogError(f"{path}: key 'name' {info.name!r} is already used by {names[info.name]}")
        names[info.name] = info.id
        catalog[info.id] = info
    return catalog


def load_catalog(rules_dir: str | Path | None = None, *, strict: bool = False) -> dict[str, RuleInfo]:
    """All rules, id -> RuleInfo, sorted by id.

    Args:
        rules_dir: directory of rule files; default :func:`find_rules_dir`.
        strict: also validate every file against ``schema.json`` (imports jsonschema; slower).

    Reads are cached per directory (a fresh dict is returned each call, the RuleInfo objects are shared).
    Raises CatalogError naming the file (and line, or key) when a file is unreadable or malformed, and,
    with ``strict``, listing every schema violation.
    """
    if rules_dir is None and not strict:
        return dict(_load_cached(_default_rules_dir()))
    directory = Path(rules_dir) if rules_dir is not None else find_rules_dir()
    if strict:
        errors = validate_catalog(directory)
        if errors:
            raise CatalogError("rule catalogue is invalid:\n  " + "\n  ".join(errors))
    return dict(_load_cached(str(directory.resolve())))


@functools.lru_cache(maxsize=1)
def _default_rules_dir() -> str:
    """:func:`find_rules_dir`, resolved once per process (the hot path of every ``load_catalog()``)."""
    return str(find_rules_dir().resolve())


def severity_of(rule_id: str) -> Literal["error", "warning", "info"]:
    """Default severity of ``rule_id`` from its catalogue file (``rules/KVnnn.yaml``).

    The catalogue is the only source: an id it does not hold raises KeyError (see :func:`get_rule`), and an
    unreadable catalogue raises :class:`CatalogError` (a packaging error, not something to fall back from).
    """
    return get_rule(rule_id).severity


def get_rule(rule_id: str) -> RuleInfo:
    """The catalogue entry for ``rule_id`` (case-insensitive: ``kv103`` works).

    Raises KeyError with a message listing the known id range when the id is not in the catalogue.
    """
    catalog = _load_cached(_default_rules_dir())  # shared, read here only (load_catalog returns a copy)
    found = catalog.get(rule_id)
    if found is not None:
        return found
    key = rule_id.strip().upper()
    try:
        return catalog[key]
    except KeyError:
        ids = sorted(catalog)
        raise KeyError(
            f"unknown rule id {rule_id!r}: the catalogue has {len(ids)} rules ({ids[0]}..{ids[-1]}); "
            "see `kvlint explain --list` or docs/rules.md"
        ) from None


# --------------------------------------------------------------------------------------------------
# validation (jsonschema, imported lazily)


def _json_path(parts: Iterable[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def validate_catalog(rules_dir: str | Path | None = None) -> list[str]:
    """Validate every rule file against ``schema.json`` plus the catalogue-wide invariants.

    Checks: the schema itself is valid draft 2020-12; each ``*.yaml`` parses and satisfies the schema;
    ``id`` equals the file stem; ids and names are unique. Returns human-readable errors, each starting
    with the file path and naming the key (``rules/KV103.yaml: severity: 'fatal' is not one of [...]``);
    an empty list means the catalogue is valid. Never raises for bad rule files.
    """
    import jsonschema  # lazy: only tests and --strict pay for it

    directory = Path(rules_dir) if rules_dir is not None else find_rules_dir()
    schema_path = directory / "schema.json"
    errors: list[str] = []
    try:
        schema = json.loads(schema_path.read_text(encoding="utf-8"))
        validator_cls = jsonschema.Draft202012Validator
        validator_cls.check_schema(schema)
    except (OSError, ValueError, jsonschema.SchemaError) as exc:
        return [f"{schema_path}: unusable schema: {getattr(exc, 'message', exc)}"]
    validator = validator_cls(schema, format_checker=validator_cls.FORMAT_CHECKER)

    files = _rule_files(directory)
    if not files:
        errors.append(f"{directory}: no rule files (KVnnn.yaml) found")
    names: dict[str, Path] = {}
    for path in files:
        try:
            data = _read_yaml(path)
        except CatalogError as exc:
            errors.append(str(exc))
            continue
        for err in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
            errors.append(f"{path}: {_json_path(err.absolute_path)}: {err.message}")
        if not isinstance(data, dict):
            continue
        rule_id = data.get("id")
        if isinstance(rule_id, str) and rule_id != path.stem:
            errors.append(f"{path}: id: {rule_id!r} does not match the file name {path.name!r}")
        name = data.get("name")
        if isinstance(name, str):
            if name in names:
                errors.append(f"{path}: name: {name!r} is already used by {names[name]}")
            names[name] = path
    return errors


# --------------------------------------------------------------------------------------------------
# rendering


def _paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]


def _wrap(text: str, width: int, indent: str) -> str:
    """Wrap prose paragraph by paragraph for the terminal.

    A line starting with ``- `` opens a bullet item (wrapped with a hanging indent); other lines
    continue the current prose block or item, so YAML line breaks inside a sentence do not matter.
    """

    def fill(body: str, first: str, rest: str) -> str:
        return textwrap.fill(
            body,
            width=width,
            initial_indent=first,
            subsequent_indent=rest,
            break_on_hyphens=False,
            break_long_words=False,
        )

    out: list[str] = []
    for para in _paragraphs(text):
        blocks: list[list[str]] = []  # [kind, text]
        for line in para.splitlines():
            stripped = line.strip()
            if stripped.startswith("- "):
                blocks.append(["item", stripped[2:]])
            elif blocks:
                blocks[-1][1] += " " + stripped
            else:
                blocks.append(["prose", stripped])
        for kind, body in blocks:
            if kind == "item":
                out.append(fill(body, indent + "- ", indent + "  "))
            else:
                out.append(fill(body, indent, indent))
        out.append("")
    return "\n".join(out).rstrip("\n")


def _fmt_default(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _versions_text(info: RuleInfo) -> str:
    return ", ".join(f"{eng} {spec}" for eng, spec in info.versions) or "all versions"


def render_rule_text(info: RuleInfo, width: int = 100) -> str:
    """Terminal text for ``kvlint explain KV103`` (in the manner of ``ruff rule``).

    Layout: the title line ``KV103 max-model-len-exceeds-kv-capacity (error)``, a facts line (engines,
    category, versions, since), then sections What it does / Why it matters / How to fix / Example /
    References / Parameters, prose wrapped at ``width`` columns. Ends with the documentation URL.
    """
    ind = "    "
    parts = [
        info.title,
        "",
        f"Engines: {', '.join(info.engines)}   Category: {info.category}   "
        f"Applies to: {_versions_text(info)}   Since: kvlint {info.since}",
        "",
        "What it does",
        _wrap(info.summary, width, ind),
        "",
        "Why it matters",
        _wrap(info.rationale, width, ind),
        "",
        "How to fix",
        _wrap(info.fix, width, ind),
        "",
        "Example",
        textwrap.indent(info.example, ind),
        "",
        "Use instead",
        textwrap.indent(info.example_fixed, ind),
        "",
        "References",
        *(f"{ind}- {r.title}\n{ind}  {r.url}" for r in info.references),
    ]
    if info.parameters:
        parts += ["", "Parameters (.kvlint.yaml)"]
        for p in info.parameters:
            shown = f"{p.type}, default {_fmt_default(p.default)}" + (
                f"; {p.range_text()}" if p.minimum is not None or p.maximum is not None else ""
            )
            parts.append(f"{ind}{p.name} ({shown})")
            parts.append(_wrap(p.description, width, ind + "    "))
    parts += ["", f"Docs: {info.help_uri}"]
    return "\n".join(parts) + "\n"


def _md_block(text: str, fmt: str) -> str:
    lang = {"yaml": "yaml", "shell": "console", "text": "text"}.get(fmt, "text")
    fence = "````" if "```" in text else "```"
    return f"{fence}{lang}\n{text}\n{fence}"


def render_rules_markdown(catalog: Mapping[str, RuleInfo]) -> str:
    """The text of ``docs/rules.md``: an index table, then one section per rule, ordered by id.

    Each rule's section heading is its bare id (``## KV103``) so the GitHub anchor is ``#kv103``, the
    anchor :func:`rule_help_uri` points at. Deterministic (same catalogue -> same bytes).
    """
    rules = [catalog[k] for k in sorted(catalog)]
    lines = [
        "<!-- Generated by tools/gen_rules_doc.py from rules/*.yaml. Do not edit by hand. -->",
        "",
        "# kvlint rules",
        "",
        f"{len(rules)} rules. Each has a stable id; its default severity can be changed, and its parameters "
        "set, in `.kvlint.yaml`. Suppress one finding on an object with the annotation "
        '`kvlint.io/ignore: "KV104=reason"`. `kvlint explain KV103` prints a rule in the terminal.',
        "",
        "| id | name | severity | engines | summary |",
        "|---|---|---|---|---|",
    ]
    for r in rules:
        summary = r.summary.replace("|", "\\|")
        lines.append(
            f"| [{r.id}](#{r.id.lower()}) | {r.name} | {r.severity} | {', '.join(r.engines)} | {summary} |"
        )
    current = None
    for r in rules:
        if r.category != current:
            current = r.category
            lines += ["", f"# {_CATEGORY_TITLES.get(current, current)}"]
        lines += [
            "",
            f"## {r.id}",
            "",
            f"**{r.name}** · severity `{r.severity}` · engines: {', '.join(r.engines)} · "
            f"applies to: {_versions_text(r)} · since kvlint {r.since}",
            "",
            f"*{r.summary}*",
            "",
            "### Why it matters",
            "",
            r.rationale,
            "",
            "### How to fix",
            "",
            r.fix,
            "",
            "### Example",
            "",
            _md_block(r.example, r.example_format),
            "",
            "Use instead:",
            "",
            _md_block(r.example_fixed, r.example_format),
        ]
        if r.parameters:
            lines += [
                "",
                "### Parameters",
                "",
                "| name | type | default | description |",
                "|---|---|---|---|",
            ]
            for p in r.parameters:
                desc = " ".join(p.description.split()).replace("|", "\\|")
                if p.minimum is not None or p.maximum is not None:
                    desc += f" Accepted: {p.range_text()}."
                lines.append(f"| `{p.name}` | {p.type} | `{_fmt_default(p.default)}` | {desc} |")
        lines += ["", "### References", ""]
        lines += [f"- [{ref.title}]({ref.url})" for ref in r.references]
    return "\n".join(lines) + "\n"
