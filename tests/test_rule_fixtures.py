"""One failing and one passing manifest per rule and engine (fixtures/rules/<ID>/<engine>.yaml).

Each fixture file holds documents whose workload name ends in ``-fail`` (the rule must report it) or ``-pass``
(the smallest change that fixes it: the rule must stay silent). ``any.yaml`` is for rules declared for ``any``
engine (the load/parse rules); other files are named after the engine, and their workloads must be read as
that engine. ``expected.txt`` beside them is the rule's own output over the directory in the text format,
paths relative to the repository root; ``KVLINT_UPDATE_SNAPSHOTS=1`` rewrites it (review the diff before
committing).

The coverage test walks the catalogue (:func:`kvlint.rules.catalog.load_catalog`), never a list written
here: a new rule, or a new engine on an old rule, fails it until its fixtures exist and fire.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from kvlint.config import apply_config, load_config
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.report.text import format_diagnostic
from kvlint.rules.catalog import load_catalog
from kvlint.rules.registry import ALL_ENGINES
from kvlint.types import CheckResult, Diagnostic

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "rules"
SNAPSHOT = "expected.txt"
UPDATE = os.environ.get("KVLINT_UPDATE_SNAPSHOTS") == "1"

_NAME = re.compile(r"^\s*name:\s*[\"']?([A-Za-z0-9.-]+-(?:fail|pass))[\"']?\s*$", re.M)
_SEPARATOR = re.compile(r"^---\s*$")


@dataclass(frozen=True)
class Doc:
    """One YAML document of a fixture file: its workload name and 1-based line range (inclusive)."""

    name: str
    first: int
    last: int

    @property
    def failing(self) -> bool:
        return self.name.endswith("-fail")


def _docs(path: Path) -> list[Doc]:
    """The documents of ``path`` by text (a document that does not parse, KV001's case, still has a range)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    bounds, start = [], 1
    for i, line in enumerate(lines, start=1):
        if _SEPARATOR.match(line):
            bounds.append((start, i - 1))
            start = i + 1
    bounds.append((start, len(lines)))
    out = []
    for first, last in bounds:
        text = "\n".join(lines[first - 1 : last])
        m = _NAME.search(text)
        assert m, f"{path.relative_to(ROOT)}:{first}: document without a workload named *-fail or *-pass"
        out.append(Doc(m.group(1), first, last))
    return out


def _rel(path: str) -> str:
    return Path(path).resolve().relative_to(ROOT).as_posix()


def _options(rule_dir: Path) -> Options:
    """Offline, default options; a ``.kvlint.yaml`` in the rule's directory (a rule parameter) applies."""
    options = Options(allow_hub=False)
    config = rule_dir / ".kvlint.yaml"
    return apply_config(options, load_config(str(config))) if config.exists() else options


@functools.cache
def _run(rule: str) -> CheckResult:
    """kvlint over the rule's directory, once per test session."""
    rule_dir = FIXTURES / rule
    return run_check([str(rule_dir)], _options(rule_dir))


def _own(rule: str, path: Path) -> list[Diagnostic]:
    """The diagnostics of ``rule`` located in ``path``."""
    return [
        d for d in _run(rule).diagnostics if d.rule == rule and d.loc and Path(d.loc.file).resolve() == path
    ]


def _doc_of(docs: list[Doc], line: int) -> Doc | None:
    return next((d for d in docs if d.first <= line <= d.last), None)


def _fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("KV*/*.yaml"))


def _fired_fail_docs(path: Path) -> set[str]:
    """Names of the ``-fail`` workloads of ``path`` the rule of its directory reports."""
    docs = _docs(path)
    lines = [d.loc.line for d in _own(path.parent.name, path) if d.loc is not None]
    return {doc.name for line in lines if (doc := _doc_of(docs, line)) is not None and doc.failing}


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_rule_fires_on_fail_and_not_on_pass(path: Path) -> None:
    rule = path.parent.name
    catalog = load_catalog()
    assert rule in catalog, f"{rule}: fixture directory of a rule the catalogue does not have"
    info = catalog[rule]
    engine = path.stem
    if "any" in info.engines:
        assert engine in ("any", *ALL_ENGINES), f"{path.name}: name it any.yaml or after an engine"
    else:
        assert engine in info.engines, f"{rule} declares {info.engines}, not {engine}"
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"# {rule} ("), (
        f"{path.relative_to(ROOT)}: start with a '# {rule} (engine): ...' header"
    )

    docs = _docs(path)
    assert any(d.failing for d in docs) and any(not d.failing for d in docs), (
        "need a -fail and a -pass workload"
    )
    assert len({d.name for d in docs}) == len(docs), "workload names repeat"

    by_doc: dict[str, list[Diagnostic]] = {d.name: [] for d in docs}
    for diag in _own(rule, path):
        assert diag.loc is not None
        doc = _doc_of(docs, diag.loc.line)
        assert doc is not None, f"{format_diagnostic(diag)}: outside every document"
        if diag.object:
            assert diag.object.rsplit("/", 1)[-1] == doc.name, (
                f"{format_diagnostic(diag)}: in {doc.name}'s lines"
            )
        by_doc[doc.name].append(diag)
    for doc in docs:
        found = "\n".join(format_diagnostic(d) for d in by_doc[doc.name])
        if doc.failing:
            assert by_doc[doc.name], f"{rule} does not report {doc.name} ({path.name}:{doc.first})"
        else:
            assert not by_doc[doc.name], f"{rule} reports the passing neighbour {doc.name}:\n{found}"

    if engine != "any":
        result = _run(rule)
        for doc in docs:
            engines = {
                cr.serving.engine
                for cr in result.containers
                if cr.workload.name == doc.name
                and cr.workload.loc
                and Path(cr.workload.loc.file).resolve() == path
            }
            assert engines == {engine}, f"{doc.name} in {path.name} is read as {engines or 'no engine'}"


@pytest.mark.parametrize("rule", sorted(p.name for p in FIXTURES.glob("KV*") if p.is_dir()))
def test_snapshot(rule: str) -> None:
    """The rule's own diagnostics over its fixtures, as ``kvlint check`` prints them, match expected.txt."""
    lines = []
    for d in _run(rule).diagnostics:
        if d.rule != rule or d.loc is None:
            continue
        lines.append(format_diagnostic(replace(d, loc=d.loc._replace(file=_rel(d.loc.file)))))
    got = "\n".join(lines) + "\n"
    snapshot = FIXTURES / rule / SNAPSHOT
    if UPDATE:
        snapshot.write_text(got, encoding="utf-8")
        return
    assert snapshot.exists(), f"{snapshot.relative_to(ROOT)} is missing: run with KVLINT_UPDATE_SNAPSHOTS=1"
    want = snapshot.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(
            difflib.unified_diff(
                want.splitlines(keepends=True),
                got.splitlines(keepends=True),
                fromfile=f"{rule}/{SNAPSHOT}",
                tofile=f"{rule} (kvlint now)",
            )
        )
        pytest.fail(
            f"{rule}: output differs from the snapshot (KVLINT_UPDATE_SNAPSHOTS=1 rewrites it)\n{diff}"
        )


def test_every_rule_and_engine_has_a_failing_fixture() -> None:
    """Every catalogue rule has a fixture that fires for each engine it declares; ``any`` (the load and parse
    rules) needs one case."""
    missing = []
    for rule in load_catalog().values():
        rule_dir = FIXTURES / rule.id
        files = {p.stem: p for p in rule_dir.glob("*.yaml")} if rule_dir.is_dir() else {}
        fired = {stem for stem, p in files.items() if _fired_fail_docs(p)}
        if "any" in rule.engines:
            if not fired:
                missing.append(f"{rule.id}: no failing case (any.yaml)")
            continue
        missing += [f"{rule.id}: no failing {e}.yaml" for e in rule.engines if e not in fired]
    assert missing == []


def test_no_fixture_directory_without_a_rule() -> None:
    catalog = load_catalog()
    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name not in catalog) == []


@pytest.mark.parametrize(("fraction", "fires"), [("suggested", False), ("0.50", True)])
def test_kv106_shared_gpu_fraction_boundary(tmp_path: Path, fraction: str, fires: bool) -> None:
    """Two vLLM replicas on one time-shared L4: the fraction KV106 suggests lets both start, while 0.50 each
    does not (vLLM compares the free memory after its own CUDA context with utilization x total)."""
    source = FIXTURES / "KV106" / "vllm.yaml"
    fail = [d for d in _own("KV106", source) if d.object.endswith("-fail")]
    assert len(fail) == 1
    if fraction == "suggested":
        m = re.search(r"set --gpu-memory-utilization (\d\.\d\d) or less", fail[0].fix)
        assert m, fail[0].fix
        fraction = m.group(1)
    text = source.read_text(encoding="utf-8").split("\n---\n")[0]
    old = '"--max-model-len", "8192"]'
    assert text.count(old) == 1
    path = tmp_path / "shared.yaml"
    path.write_text(
        text.replace(old, f'"--max-model-len", "8192", "--gpu-memory-utilization", "{fraction}"]')
    )
    found = [d for d in run_check([str(path)], Options(allow_hub=False)).diagnostics if d.rule == "KV106"]
    assert bool(found) == fires, [format_diagnostic(d) for d in found]


def test_kv106_vllm_0_34_0_extensible_kv_cache(tmp_path: Path) -> None:
    """On vLLM 0.34.0 the extensible KV cache (default) claims utilization 1.0 and skips the free >= requested check
    (vllm@0.34.0:vllm/v1/worker/utils.py::request_memory), so KV106 states that outcome, not 0.33.0's error."""
    text = (FIXTURES / "KV106" / "vllm.yaml").read_text(encoding="utf-8").split("\n---\n")[0]
    assert text.count("vllm/vllm-openai:v0.11.0") == 1
    path = tmp_path / "shared.yaml"
    path.write_text(text.replace("vllm/vllm-openai:v0.11.0", "vllm/vllm-openai:v0.34.0"))
    (found,) = [d for d in run_check([str(path)], Options(allow_hub=False)).diagnostics if d.rule == "KV106"]
    assert "gpu-memory-utilization 1.00" in found.message
    assert "does not check the claim against the free memory" in found.message
    assert "less than desired" not in found.message
