#!/usr/bin/env python3
"""Scaffold a new kvlint rule: its catalogue file, a registered check and its fixtures.

Usage (from the repository root or anywhere):

    python tools/new_rule.py KV408 --name my-rule-name --category parallelism --engines vllm,tgi \\
        [--severity warning] [--consumes pod,command] [--before-loading]

writes

* ``rules/KV408.yaml``: a catalogue entry that satisfies ``rules/schema.json`` (so the catalogue loads and
  the registry accepts the check) with every text left as ``TODO(KV408)``;
* a check skeleton appended to ``kvlint/rules/families/<category>.py``, registered with ``@check("KV408")``
  for every engine the entry declares, which reports nothing yet;
* ``fixtures/rules/KV408/<engine>.yaml`` for each declared engine: a workload ``kv408-<engine>-fail`` and its
  passing neighbour ``kv408-<engine>-pass`` to be edited into a real case.

Every placeholder carries the marker ``TODO(KV408)``; ``tests/test_new_rule.py`` fails while any marker is
left in ``rules/``, ``kvlint/rules/families/`` or ``fixtures/rules/`` (:func:`scaffold_leftovers`), so a
scaffolded rule cannot be merged half-written. CONTRIBUTING.md lists the steps that follow.

The scaffold refuses an id that is already used (a catalogue file, a registered check or a fixture
directory), a category the schema does not know or that has no checks (``parse``: those rules are found by
the loader), a name another rule already has, and engines or inputs the schema does not list. It writes
nothing when it refuses. ``--repo`` points it at another copy of the repository (the tests use this).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]

#: The marker every placeholder carries; ``TODO(KV408)``.
MARKER_RE = re.compile(r"TODO\(KV[0-9]{3}\)")
_ID_RE = re.compile(r"^KV[0-9]{3}$")
_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
#: Names the check skeleton uses; each family module with checks imports them.
_NEEDED_IMPORTS = {
    "Iterator": "from collections.abc import Iterator",
    "RuleContext": "from kvlint.rules.context import RuleContext",
    "check": "from kvlint.rules.registry import check",
    "Diagnostic": "from kvlint.types import Diagnostic",
}
#: A workload per engine the fixtures start from: image, how the engine is started, the model argument.
#: The model is one kvlint resolves offline (kvlint/data/models); the GPU is named by its GFD label.
_ENGINE_POD = {
    "vllm": ("vllm/vllm-openai:v0.11.0", None, ["--model", "meta-llama/Llama-3.1-8B-Instruct"]),
    "tgi": (
        "ghcr.io/huggingface/text-generation-inference:3.3.6",
        None,
        ["--model-id", "meta-llama/Llama-3.1-8B-Instruct"],
    ),
    "sglang": (
        "lmsysorg/sglang:v0.5.5",
        ["python3", "-m", "sglang.launch_server"],
        ["--model-path", "meta-llama/Llama-3.1-8B-Instruct"],
    ),
}


class ScaffoldError(ValueError):
    """The scaffold refuses the request; the message says why. Nothing has been written."""


@dataclass(frozen=True)
class Request:
    """What to scaffold: the rule's id, kebab-case name, category, engines, severity and runner inputs."""

    rule: str
    name: str
    category: str
    engines: tuple[str, ...]
    severity: str = "error"
    consumes: tuple[str, ...] = ("command",)
    before_loading: bool = False

    @property
    def fixture_engines(self) -> tuple[str, ...]:
        """The engines that get a fixture file (``any`` = all three)."""
        return ("vllm", "tgi", "sglang") if "any" in self.engines else self.engines

    @property
    def function(self) -> str:
        """The check function's name: the rule name in snake case."""
        return self.name.replace("-", "_")


def _schema_enum(schema: dict, *path: str) -> tuple[str, ...]:
    node = schema["properties"]
    for key in path:
        node = node[key]
    return tuple(node["enum"])


def _kvlint_version(repo: Path) -> str:
    """The ``version`` of ``[project]`` in pyproject.toml (the rule's ``since``)."""
    text = (repo / "pyproject.toml").read_text(encoding="utf-8")
    project = text.split("[project]", 1)[-1]
    m = re.search(r'^version\s*=\s*"([0-9]+\.[0-9]+\.[0-9]+)"', project, re.M)
    if m is None:
        raise ScaffoldError("pyproject.toml has no [project] version X.Y.Z for the rule's 'since'")
    return m.group(1)


def validate(req: Request, repo: Path = REPO) -> None:
    """Raise :class:`ScaffoldError` when ``req`` cannot be scaffolded in ``repo`` (see the module docstring)."""
    schema = json.loads((repo / "rules" / "schema.json").read_text(encoding="utf-8"))
    if not _ID_RE.match(req.rule):
        raise ScaffoldError(f"{req.rule!r} is not a rule id (KVnnn)")
    if (repo / "rules" / f"{req.rule}.yaml").exists():
        raise ScaffoldError(f"{req.rule} exists: rules/{req.rule}.yaml")
    families = repo / "kvlint" / "rules" / "families"
    for module in sorted(families.glob("*.py")):
        if f'@check("{req.rule}"' in module.read_text(encoding="utf-8"):
            raise ScaffoldError(f"{req.rule} already has a registered check in {module.relative_to(repo)}")
    if (repo / "fixtures" / "rules" / req.rule).exists():
        raise ScaffoldError(f"{req.rule} already has fixtures: fixtures/rules/{req.rule}/")
    categories = _schema_enum(schema, "category")
    if req.category not in categories:
        raise ScaffoldError(f"unknown category {req.category!r}; the schema has: {', '.join(categories)}")
    if req.category == "parse":
        raise ScaffoldError(
            "category 'parse' holds the rules the loader and the suppression pass find (phase: load); "
            "they have no registered check, so there is nothing to scaffold"
        )
    if not _NAME_RE.match(req.name) or len(req.name) > 60:
        raise ScaffoldError(f"name {req.name!r} is not kebab-case (a-z, 0-9, single dashes; at most 60)")
    for path in sorted((repo / "rules").glob("KV*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("name") == req.name:
            raise ScaffoldError(f"name {req.name!r} is already used by {path.stem}")
    engines = _schema_enum(schema, "engines", "items")
    if not req.engines or len(set(req.engines)) != len(req.engines) or set(req.engines) - set(engines):
        raise ScaffoldError(f"engines must be distinct values of: {', '.join(engines)}")
    if "any" in req.engines and len(req.engines) > 1:
        raise ScaffoldError("'any' already means every engine; list it alone")
    severities = _schema_enum(schema, "severity")
    if req.severity not in severities:
        raise ScaffoldError(f"severity must be one of: {', '.join(severities)}")
    consumables = _schema_enum(schema, "consumes", "items")
    if len(set(req.consumes)) != len(req.consumes) or set(req.consumes) - set(consumables):
        raise ScaffoldError(f"consumes must be distinct values of: {', '.join(consumables)}")


def catalogue_stub(req: Request, since: str) -> str:
    """The text of ``rules/<id>.yaml``: schema-valid, every text a ``TODO(<id>)`` placeholder."""
    t = f"TODO({req.rule})"
    return f"""\
# Scaffolded by tools/new_rule.py. Replace every {t} (tests/test_new_rule.py fails while one is left),
# then run: python tools/gen_rules_doc.py
id: {req.rule}
name: {req.name}
severity: {req.severity}
engines: [{", ".join(req.engines)}]
category: {req.category}
phase: container
# What the check needs beyond the engine command; the runner skips the check when one is missing:
# pod, command, gpus, model, gpu, plan. {t}: keep exactly what the check reads, then delete this line.
consumes: [{", ".join(req.consumes)}]
# true when an error of this rule means the engine stops before loading any weights (the capacity rules are
# then not run for the container).
before_loading: {"true" if req.before_loading else "false"}
summary: "{t}: one line, what the rule detects (at most 140 characters)."
rationale: |
  {t}: why it matters: what the engine does, with its exact error text where there is one, and the
  releases in which that behaviour was read.
fix: |
  {t}: how to fix it, in the engine's own flag names.
example: |
  {t}: a small failing manifest fragment.
example_fixed: |
  {t}: the same fragment, fixed.
references:
  - title: "{t}: engine repository, file and function, at a release"
    url: https://example.invalid/{t}
since: {since}
"""


def check_stub(req: Request) -> str:
    """The check skeleton appended to the family module: registered, reporting nothing yet."""
    t = f"TODO({req.rule})"
    return f'''

@check("{req.rule}")
def {req.function}(ctx: RuleContext) -> Iterator[Diagnostic]:
    """{req.rule}: {t} what the check reports, and the engine source it restates (repository, file, function,
    release)."""
    # {t}: read ctx.serving / ctx.model / ctx.placement / ctx.plan (what rules/{req.rule}.yaml consumes) and
    # yield ctx.finding(message, loc, fix=...) when the condition holds; the message states the figures.
    return
    yield
'''


def fixture_stub(req: Request, engine: str) -> str:
    """``fixtures/rules/<id>/<engine>.yaml``: a failing workload and its passing neighbour, to be edited."""
    image, command, args = _ENGINE_POD[engine]
    low = req.rule.lower()
    t = f"TODO({req.rule})"
    docs = []
    for verdict in ("fail", "pass"):
        cmd = f"\n      command: {json.dumps(command)}" if command else ""
        docs.append(
            f"""apiVersion: v1
kind: Pod
metadata:
  name: {low}-{engine}-{verdict}
spec:
  nodeSelector:
    nvidia.com/gpu.product: NVIDIA-L4
  containers:
    - name: {engine}
      image: {image}{cmd}
      args: {json.dumps(args)}
      resources:
        limits:
          nvidia.com/gpu: 1
"""
        )
    return (
        f"# {req.rule} ({req.name}) on {engine}. {t}: make {low}-{engine}-fail report {req.rule} (and nothing it\n"
        f"# should not) and {low}-{engine}-pass the nearest configuration that does not; then write expected.txt\n"
        "# with KVLINT_UPDATE_SNAPSHOTS=1 (CONTRIBUTING.md). Name where each value comes from (a public manifest:\n"
        "# repository, path, commit, licence; or the engine source the case restates) in a comment here.\n"
        + "---\n".join(docs)
    )


def _ensure_imports(text: str) -> str:
    """``text`` with the imports the check skeleton needs added after the last top-level import."""
    missing = [
        line for name, line in _NEEDED_IMPORTS.items() if not re.search(rf"\bimport\b.*\b{name}\b", text)
    ]
    if not missing:
        return text
    lines = text.splitlines(keepends=True)
    last = max((i for i, ln in enumerate(lines) if ln.startswith(("import ", "from "))), default=-1)
    if last < 0:
        raise ScaffoldError("the family module has no imports to extend; add the check by hand")
    return "".join(lines[: last + 1] + [m + "\n" for m in missing] + lines[last + 1 :])


def scaffold(req: Request, repo: Path = REPO) -> list[Path]:
    """Write the three parts of a new rule into ``repo``; return the paths written or changed.

    Raises :class:`ScaffoldError` (before writing anything) when the request is refused.
    """
    validate(req, repo)
    since = _kvlint_version(repo)
    module = repo / "kvlint" / "rules" / "families" / f"{req.category}.py"
    if not module.exists():
        raise ScaffoldError(f"{module.relative_to(repo)} does not exist; create the family module first")
    text = _ensure_imports(module.read_text(encoding="utf-8"))
    function = req.function
    if re.search(rf"^def {function}\(", text, re.M):
        function = f"{function}_{req.rule.lower()}"
    stub = check_stub(req).replace(f"def {req.function}(", f"def {function}(")
    written = []
    rule_file = repo / "rules" / f"{req.rule}.yaml"
    rule_file.write_text(catalogue_stub(req, since), encoding="utf-8")
    written.append(rule_file)
    module.write_text(text.rstrip("\n") + "\n" + stub, encoding="utf-8")
    written.append(module)
    fixtures = repo / "fixtures" / "rules" / req.rule
    fixtures.mkdir(parents=True)
    for engine in req.fixture_engines:
        path = fixtures / f"{engine}.yaml"
        path.write_text(fixture_stub(req, engine), encoding="utf-8")
        written.append(path)
    return written


def scaffold_leftovers(repo: Path = REPO) -> list[str]:
    """Every ``TODO(KVnnn)`` marker left in the catalogue, the family modules and the rule fixtures, and every
    check whose body is still the skeleton's ``return`` + ``yield``, as ``path:line: text`` (relative to
    ``repo``); empty when every scaffolded rule has been filled in."""
    paths = sorted((repo / "rules").glob("*.yaml"))
    paths += sorted((repo / "kvlint" / "rules" / "families").glob("*.py"))
    rule_fixtures = repo / "fixtures" / "rules"
    if rule_fixtures.is_dir():
        paths += sorted(p for p in rule_fixtures.rglob("*") if p.is_file())
    out = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        lines = text.splitlines()
        for i, line in enumerate(lines, 1):
            if MARKER_RE.search(line):
                out.append(f"{path.relative_to(repo)}:{i}: {line.strip()}")
            elif path.suffix == ".py" and line == "    return" and lines[i : i + 1] == ["    yield"]:
                out.append(
                    f"{path.relative_to(repo)}:{i}: a check whose body is still the scaffold's `return; yield`"
                )
    return out


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit code (0 written, 2 refused)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("rule", help="new rule id, KVnnn")
    parser.add_argument("--name", required=True, help="kebab-case rule name")
    parser.add_argument("--category", required=True, help="catalogue category (the family module)")
    parser.add_argument("--engines", required=True, help="comma-separated: vllm, tgi, sglang, or any")
    parser.add_argument("--severity", default="error", help="error (default), warning or info")
    parser.add_argument(
        "--consumes",
        default="command",
        help="comma-separated runner inputs the check needs (default: command)",
    )
    parser.add_argument(
        "--before-loading", action="store_true", help="an error stops the engine before loading"
    )
    parser.add_argument(
        "--repo", type=Path, default=REPO, help="repository to write into (default: this one)"
    )
    args = parser.parse_args(argv)
    req = Request(
        rule=args.rule.strip().upper(),
        name=args.name.strip(),
        category=args.category.strip(),
        engines=tuple(e.strip() for e in args.engines.split(",") if e.strip()),
        severity=args.severity.strip(),
        consumes=tuple(c.strip() for c in args.consumes.split(",") if c.strip()),
        before_loading=args.before_loading,
    )
    try:
        written = scaffold(req, args.repo.resolve())
    except ScaffoldError as exc:
        print(f"new_rule: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(args.repo.resolve())}")
    print(
        f"next (CONTRIBUTING.md): replace every TODO({req.rule}), write the check, make the fixtures real, "
        "write their snapshot with KVLINT_UPDATE_SNAPSHOTS=1, then run python tools/gen_rules_doc.py"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
