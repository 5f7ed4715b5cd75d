"""tools/new_rule.py: the scaffold of a new rule, run on a temporary copy of the repository.

The scaffold writes a schema-valid catalogue stub, a registered check skeleton and fixture skeletons, all
marked ``TODO(KVnnn)``; :func:`new_rule.scaffold_leftovers` (asserted empty for the real repository below)
reports the markers, so an unfinished rule fails the suite. Filled in with a trivial but real check, the copy's
catalogue loads, its registry accepts the check for the declared engines only, the runner reports it on the
``*-fail`` fixture and not on the ``*-pass`` one, and ``tools/gen_rules_doc.py`` documents it. Nothing is
written into the repository itself.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kvlint.rules.catalog import validate_catalog

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
try:
    import new_rule
finally:
    sys.path.remove(str(ROOT / "tools"))

RULE = "KV950"
NAME = "engine-memory-limit-missing"


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A copy of the parts of the repository a rule touches (and what kvlint needs to run from it)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("rules", "kvlint"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=ignore)
    if (ROOT / "fixtures" / "rules").is_dir():
        shutil.copytree(ROOT / "fixtures" / "rules", tmp_path / "fixtures" / "rules", ignore=ignore)
    (tmp_path / "tools").mkdir()
    shutil.copy2(ROOT / "tools" / "gen_rules_doc.py", tmp_path / "tools")
    shutil.copy2(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / "docs").mkdir()
    return tmp_path


def _scaffold(repo: Path, *extra: str, rule: str = RULE, name: str = NAME) -> int:
    return new_rule.main(
        [
            rule,
            "--name",
            name,
            "--category",
            "parallelism",
            "--engines",
            "vllm,tgi",
            *extra,
            "--repo",
            str(repo),
        ]
    )


def _snapshot(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_the_repository_has_no_unfinished_scaffold() -> None:
    """The coverage check every scaffolded rule must pass: no TODO(KVnnn) marker left anywhere it writes."""
    assert new_rule.scaffold_leftovers(ROOT) == []
    assert not (ROOT / "rules" / f"{RULE}.yaml").exists()


def test_stub_is_schema_valid_and_flagged_until_filled(repo: Path) -> None:
    assert _scaffold(repo, "--severity", "warning") == 0
    assert validate_catalog(repo / "rules") == []  # the catalogue still loads with the stub in it
    left = new_rule.scaffold_leftovers(repo)
    where = {line.split(":", 1)[0] for line in left}
    assert where == {
        f"rules/{RULE}.yaml",
        "kvlint/rules/families/parallelism.py",
        f"fixtures/rules/{RULE}/vllm.yaml",
        f"fixtures/rules/{RULE}/tgi.yaml",
    }
    stub = (repo / "rules" / f"{RULE}.yaml").read_text()
    assert "severity: warning" in stub and "engines: [vllm, tgi]" in stub and "category: parallelism" in stub
    assert not (repo / "fixtures" / "rules" / RULE / "sglang.yaml").exists()  # only the declared engines
    module = (repo / "kvlint" / "rules" / "families" / "parallelism.py").read_text()
    assert module.count(f'@check("{RULE}")') == 1 and f"def {NAME.replace('-', '_')}(" in module
    for engine in ("vllm", "tgi"):
        text = (repo / "fixtures" / "rules" / RULE / f"{engine}.yaml").read_text()
        assert f"name: kv950-{engine}-fail" in text and f"name: kv950-{engine}-pass" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["KV101", "--name", "fresh-name", "--category", "capacity", "--engines", "vllm"], "KV101 exists"),
        (
            ["KV950", "--name", "gpu-count-mismatch", "--category", "capacity", "--engines", "vllm"],
            "already used",
        ),
        (["KV950", "--name", "fresh-name", "--category", "memory", "--engines", "vllm"], "unknown category"),
        (
            ["KV950", "--name", "fresh-name", "--category", "parse", "--engines", "vllm"],
            "no registered check",
        ),
        (["KV950", "--name", "Fresh_Name", "--category", "capacity", "--engines", "vllm"], "kebab-case"),
        (
            ["KV950", "--name", "fresh-name", "--category", "capacity", "--engines", "triton"],
            "engines must be",
        ),
        (["KV950", "--name", "fresh-name", "--category", "capacity", "--engines", "any,vllm"], "'any'"),
        (["KV95", "--name", "fresh-name", "--category", "capacity", "--engines", "vllm"], "not a rule id"),
        (
            [
                "KV950",
                "--name",
                "fresh-name",
                "--category",
                "capacity",
                "--engines",
                "vllm",
                "--consumes",
                "node",
            ],
            "consumes must be",
        ),
    ],
)
def test_refusals_write_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    before = _snapshot(repo)
    assert new_rule.main([*args, "--repo", str(repo)]) == 2
    assert message in capsys.readouterr().err
    assert _snapshot(repo) == before


def test_an_id_with_a_check_or_fixtures_already_is_refused(repo: Path) -> None:
    assert _scaffold(repo) == 0
    (repo / "rules" / f"{RULE}.yaml").unlink()  # the check and the fixtures remain
    with pytest.raises(new_rule.ScaffoldError, match="registered check"):
        new_rule.validate(
            new_rule.Request(RULE, "other-name", "capacity", ("vllm",)),
            repo,
        )


# -------------------------------------------------------------------------------------------------------------
# filled in: a trivial but real check (the engine container has no memory limit)

_CHECK = '''
@check("KV950")
def engine_memory_limit_missing(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV950: the engine container sets no ``resources.limits.memory`` (test rule of tests/test_new_rule.py)."""
    from kvlint.rules.facts import memory_limit

    if memory_limit(ctx.container) is None:
        yield ctx.finding("the engine container has no resources.limits.memory", fix="set a memory limit")
'''


def _fill(repo: Path) -> None:
    """Do what the rule's author does, programmatically: texts, consumes, the check body, the fixtures."""
    path = repo / "rules" / f"{RULE}.yaml"
    text = path.read_text()
    text = re.sub(r"^#.*\n", "", text, flags=re.M)
    text = text.replace("consumes: [command]", "consumes: [pod]")
    text = text.replace(
        '"TODO(KV950): one line, what the rule detects (at most 140 characters)."',
        '"The engine container sets no memory limit (a rule made up by the scaffold test)."',
    )
    text = re.sub(
        r"TODO\(KV950\): [^\n\"]*", "Written by tests/test_new_rule.py to exercise the scaffold.", text
    )
    text = text.replace(
        "https://example.invalid/TODO(KV950)", "https://kubernetes.io/docs/concepts/configuration/"
    )
    path.write_text(text)

    module = repo / "kvlint" / "rules" / "families" / "parallelism.py"
    src = module.read_text()
    start = src.index('\n\n@check("KV950")')
    module.write_text(src[:start] + "\n\n" + _CHECK)

    for engine in ("vllm", "tgi"):
        fx = repo / "fixtures" / "rules" / RULE / f"{engine}.yaml"
        lines = [ln for ln in fx.read_text().splitlines(keepends=True) if not ln.startswith("#")]
        body = "".join(lines)
        fail, passing = body.split("---\n")
        passing = passing.replace("nvidia.com/gpu: 1\n", "nvidia.com/gpu: 1\n          memory: 32Gi\n")
        header = "# Made up by tests/test_new_rule.py: the pass workload differs only by its memory limit.\n"
        fx.write_text(header + fail + "---\n" + passing)


_PROBE = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import kvlint
    from kvlint.load import load_text
    from kvlint.pipeline import Options, run_check, run_documents
    from kvlint.rules.catalog import load_catalog
    from kvlint.rules.registry import missing_checks, registry

    repo = Path(sys.argv[1])
    out = {"kvlint": kvlint.__file__}
    catalog = load_catalog(strict=True)
    out["rule"] = catalog["KV950"].summary
    out["engines"] = sorted(registry()["KV950"])
    out["missing"] = missing_checks()
    found = {}
    for engine in ("vllm", "tgi"):
        res = run_check([str(repo / "fixtures" / "rules" / "KV950" / f"{engine}.yaml")], Options(allow_hub=False))
        found[engine] = sorted(d.object for d in res.diagnostics if d.rule == "KV950")
    sglang = (repo / "fixtures" / "rules" / "KV950" / "vllm.yaml").read_text().split("---")[0]
    sglang = sglang.replace("kv950-vllm-fail", "kv950-sglang-fail").replace("name: vllm", "name: sglang")
    sglang = sglang.replace("vllm/vllm-openai:v0.11.0", "lmsysorg/sglang:v0.5.5").replace(
        'args: ["--model",', 'command: ["python3", "-m", "sglang.launch_server"]\\n      args: ["--model-path",'
    )
    res = run_documents(load_text(sglang, "sglang.yaml"), Options(allow_hub=False))
    found["sglang"] = sorted(d.object for d in res.diagnostics if d.rule == "KV950")
    found["sglang_containers"] = [c.serving.engine for c in res.containers]
    out["found"] = found
    print(json.dumps(out))
    """
)


def test_a_check_body_left_as_the_skeleton_is_flagged(repo: Path) -> None:
    assert _scaffold(repo) == 0
    module = repo / "kvlint" / "rules" / "families" / "parallelism.py"
    module.write_text(module.read_text().replace("TODO(KV950)", "(text written)"))
    left = [x for x in new_rule.scaffold_leftovers(repo) if x.startswith("kvlint/")]
    assert len(left) == 1 and "return; yield" in left[0]


def test_filled_rule_loads_registers_and_runs_for_its_engines(repo: Path) -> None:
    assert _scaffold(repo, "--severity", "warning") == 0
    assert new_rule.scaffold_leftovers(repo) != []
    _fill(repo)
    assert new_rule.scaffold_leftovers(repo) == []
    assert validate_catalog(repo / "rules") == []

    env = {**os.environ, "PYTHONPATH": str(repo)}
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, str(repo)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert Path(out["kvlint"]).is_relative_to(repo)  # the copy's kvlint, with the new rule, ran
    assert out["rule"].startswith("The engine container sets no memory limit")
    assert out["engines"] == ["tgi", "vllm"] and out["missing"] == {}
    found = out["found"]
    assert found["vllm"] == ["Pod/kv950-vllm-fail"]
    assert found["tgi"] == ["Pod/kv950-tgi-fail"]
    assert found["sglang_containers"] == ["sglang"] and found["sglang"] == []  # not a declared engine

    gen = subprocess.run(
        [sys.executable, str(repo / "tools" / "gen_rules_doc.py")],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert gen.returncode == 0, gen.stderr
    doc = (repo / "docs" / "rules.md").read_text()
    assert "## KV950" in doc and NAME in doc


def test_a_function_name_already_in_the_module_gets_the_rule_id(repo: Path) -> None:
    """``gpu-count`` is not a rule name, but ``gpu_count`` is KV403's check in parallelism.py."""
    assert _scaffold(repo, name="gpu-count") == 0
    module = (repo / "kvlint" / "rules" / "families" / "parallelism.py").read_text()
    assert module.count("\ndef gpu_count(") == 1 and "\ndef gpu_count_kv950(" in module
