"""The check registry: rule id (and engine) -> the function that checks it.

A check is a function of one :class:`~kvlint.rules.context.RuleContext` that returns (or yields) the
rule's diagnostics for one serving container. It is registered with the :func:`check` decorator in the
module of its rule family, ``kvlint/rules/families/<category>.py``, where ``<category>`` is the rule's
``category`` in ``rules/KVnnn.yaml``::

    @check("KV403")                    # every engine the catalogue entry declares
    def gpu_count(ctx: RuleContext) -> Iterator[Diagnostic]: ...

    @check("KV401", engine="tgi")      # this engine's variant (its arithmetic and wording)
    def heads_tgi(ctx: RuleContext) -> Iterator[Diagnostic]: ...

When to run a check is data, not code: the catalogue entry's ``engines``, ``phase`` and ``consumes`` (see
:mod:`kvlint.rules.runner`). Family modules are discovered, not listed (:func:`registry` imports every
module of :mod:`kvlint.rules.families`), so adding a rule is one catalogue file, one registered function and
its fixtures (CONTRIBUTING.md).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvlint.rules.catalog import load_catalog
from kvlint.types import Diagnostic

if TYPE_CHECKING:
    from kvlint.rules.context import RuleContext

__all__ = [
    "ALL_ENGINES",
    "Check",
    "CheckFunction",
    "RegistryError",
    "check",
    "checks_for",
    "implemented",
    "missing_checks",
    "registry",
]

#: A check: one container's context in, that rule's diagnostics out. Pure: it reads, never mutates.
CheckFunction = Callable[["RuleContext"], Iterable[Diagnostic]]

#: The engines a rule declared for ``any`` applies to.
ALL_ENGINES = ("vllm", "tgi", "sglang")


class RegistryError(RuntimeError):
    """The registered checks and the catalogue disagree (a packaging or programming error, never user input)."""


@dataclass(frozen=True)
class Check:
    """One registered check.

    Attributes:
        rule: the rule id it reports (``KV403``); every diagnostic it returns carries this id.
        engine: the engine this variant is for, or None for every engine the catalogue entry declares.
        function: the check function; ``module`` the family module defining it.
    """

    rule: str
    engine: str | None
    function: CheckFunction

    @property
    def module(self) -> str:
        return self.function.__module__


_REGISTERED: list[Check] = []


def check(rule: str, *, engine: str | None = None) -> Callable[[CheckFunction], CheckFunction]:
    """Register the decorated function as the check of ``rule`` (for ``engine`` only, when given)."""

    def register(fn: CheckFunction) -> CheckFunction:
        _REGISTERED.append(Check(rule, engine, fn))
        return fn

    return register


def _declared_engines(engines: tuple[str, ...]) -> tuple[str, ...]:
    return ALL_ENGINES if "any" in engines else engines


@functools.lru_cache(maxsize=1)
def registry() -> dict[str, dict[str, Check]]:
    """Every check, ``rule id -> engine -> Check``, after importing every family module.

    Validated against the catalogue: each registered rule has a catalogue entry with ``phase: container``,
    lives in the family module named after the rule's category, names only engines the entry declares, and
    no (rule, engine) pair has two checks. Raises :class:`RegistryError` otherwise, and
    :class:`~kvlint.rules.catalog.CatalogError` when the catalogue cannot be read.
    """
    import kvlint.rules.families as families

    for info in pkgutil.iter_modules(families.__path__):
        importlib.import_module(f"{families.__name__}.{info.name}")
    catalog = load_catalog()
    generic: dict[str, Check] = {}
    variants: dict[tuple[str, str], Check] = {}
    for c in _REGISTERED:
        rule = catalog.get(c.rule)
        if rule is None:
            raise RegistryError(f"{c.module}.{c.function.__name__}: {c.rule} has no rules/{c.rule}.yaml")
        if rule.phase != "container":
            raise RegistryError(
                f"{c.rule} is emitted by the {rule.phase} stage (phase: {rule.phase}); it has no check"
            )
        if c.module.rsplit(".", 1)[-1] != rule.category:
            raise RegistryError(f"{c.rule} (category {rule.category}) is registered in {c.module}")
        if c.engine is None:
            if c.rule in generic:
                raise RegistryError(f"{c.rule} has two checks")
            generic[c.rule] = c
            continue
        if c.engine not in _declared_engines(rule.engines):
            raise RegistryError(
                f"{c.rule} is registered for {c.engine}, which rules/{c.rule}.yaml does not declare"
            )
        if (c.rule, c.engine) in variants:
            raise RegistryError(f"{c.rule} has two checks for {c.engine}")
        variants[(c.rule, c.engine)] = c
    out: dict[str, dict[str, Check]] = {}
    for rule_id in sorted({c.rule for c in _REGISTERED}):
        for e in _declared_engines(catalog[rule_id].engines):
            found = variants.get((rule_id, e)) or generic.get(rule_id)
            if found is not None:
                out.setdefault(rule_id, {})[e] = found
    return out


def missing_checks() -> dict[str, tuple[str, ...]]:
    """Catalogue rules with ``phase: container`` and the declared engines no registered check covers
    (``{}`` in a healthy installation; the test suite asserts it)."""
    catalog = load_catalog()
    reg = registry()
    out = {}
    for rule in catalog.values():
        if rule.phase != "container":
            continue
        gaps = tuple(e for e in _declared_engines(rule.engines) if e not in reg.get(rule.id, {}))
        if gaps:
            out[rule.id] = gaps
    return out


def implemented() -> frozenset[str]:
    """Rule ids that kvlint checks for every engine they declare: those found by a stage (``phase: load`` or
    ``parse``) and container rules with a registered check per declared engine."""
    gaps = missing_checks()
    return frozenset(r for r in load_catalog() if r not in gaps)


def checks_for(engine: str) -> list[Check]:
    """The checks that run for a container of ``engine``, in rule-id order."""
    return [by_engine[engine] for _, by_engine in sorted(registry().items()) if engine in by_engine]
