"""Report formats: content of text, json, sarif (validated against the official SARIF 2.1.0 schema),
github workflow commands, junit and markdown; plus verified remedies of the capacity rules."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from kvlint.load import load_text
from kvlint.pipeline import CheckResult, Options, run_check, run_documents
from kvlint.report import render
from kvlint.report.github import escape_property, format_command
from kvlint.report.text import render_text, use_color
from kvlint.rules.catalog import load_catalog
from kvlint.types import Diagnostic

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "fixtures" / "examples"
CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"
SCHEMA_PATHS = (
    ROOT / "fixtures" / "sarif" / "sarif-schema-2.1.0.json",
    ROOT.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json",
)
OFF = Options(allow_hub=False)


@pytest.fixture(scope="module")
def examples() -> CheckResult:
    return run_check([str(EXAMPLES)], OFF)


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.Draft4Validator:
    path = next((p for p in SCHEMA_PATHS if p.is_file()), None)
    if path is None:
        pytest.skip(f"official SARIF 2.1.0 schema not found at {' or '.join(map(str, SCHEMA_PATHS))}")
    schema = json.loads(path.read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def _errors(v: jsonschema.Draft4Validator, doc: dict) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in v.iter_errors(doc)]


# ---------------------------------------------------------------------------------------------- sarif


def test_sarif_examples_valid_with_real_positions(examples: CheckResult, sarif_validator) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(render("sarif", examples))
    assert _errors(sarif_validator, doc) == []
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(load_catalog())
    assert all(r["helpUri"].endswith("#" + r["id"].lower()) for r in rules)
    assert len(run["results"]) == len(examples.diagnostics) > 0
    for res, d in zip(run["results"], examples.diagnostics, strict=True):
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"] == d.rule
        region = res["locations"][0]["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"]) == (d.loc.line, d.loc.column)
        assert res["level"] == {"error": "error", "warning": "warning", "info": "note"}[d.severity]
        assert res["message"]["text"].startswith(d.message)
    # the KV103 of chat-8b-l4.yaml sits on the container's args: key (line 22: the vLLM command's line)
    kv103 = next(r for r in run["results"] if r["ruleId"] == "KV103")
    assert kv103["locations"][0]["physicalLocation"]["region"]["startLine"] == 22
    assert kv103["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("chat-8b-l4.yaml")


def test_sarif_clean_run_has_empty_results(sarif_validator) -> None:  # type: ignore[no-untyped-def]
    res = run_check([str(EXAMPLES / "llama-8b-h100-ok.yaml")], OFF)
    assert res.diagnostics == []
    doc = json.loads(render("sarif", res))
    assert doc["runs"][0]["results"] == []
    assert _errors(sarif_validator, doc) == []


def test_sarif_relative_paths_use_srcroot(sarif_validator) -> None:  # type: ignore[no-untyped-def]
    text = (EXAMPLES / "chat-8b-l4.yaml").read_text()
    res = run_documents(load_text(text, "deploy/my app.yaml"), OFF)
    doc = json.loads(render("sarif", res))
    art = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert art == {"uri": "deploy/my%20app.yaml", "uriBaseId": "%SRCROOT%"}
    assert _errors(sarif_validator, doc) == []


def test_sarif_paths_are_from_the_repository_root_in_a_subdirectory_run(
    sarif_validator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Code scanning reads a relative ``uri`` from the repository's root: a run in ``repo/sub`` (a workflow step's
    ``working-directory``) naming ``../deploy/x.yaml`` wrote ``../deploy/x.yaml`` under a ``%SRCROOT%`` of
    ``repo/sub/`` (review50G), which GitHub cannot place; the ``github`` format already wrote ``deploy/x.yaml``."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")
    text = (EXAMPLES / "chat-8b-l4.yaml").read_text()
    for name, uri, base in (
        ("../deploy/my app.yaml", "deploy/my%20app.yaml", "%SRCROOT%"),
        ("here.yaml", "sub/here.yaml", "%SRCROOT%"),
        ("../../outside.yaml", (tmp_path / "outside.yaml").resolve().as_uri(), None),
    ):
        doc = json.loads(render("sarif", run_documents(load_text(text, name), OFF)))
        run = doc["runs"][0]
        art = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        assert art == ({"uri": uri, "uriBaseId": base} if base else {"uri": uri}), (name, art)
        assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
        assert _errors(sarif_validator, doc) == []


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"public manifest corpus not found at {CORPUS}")
def test_sarif_corpus_valid(sarif_validator) -> None:  # type: ignore[no-untyped-def]
    res = run_check([str(CORPUS)], OFF)
    doc = json.loads(render("sarif", res))
    assert _errors(sarif_validator, doc) == []
    results = doc["runs"][0]["results"]
    assert len(results) == len(res.diagnostics) > 50
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results]
    assert sum(1 for n in lines if n > 1) >= 0.9 * len(lines)


# ---------------------------------------------------------------------------------------------- text/json


def test_text_colour_rules(examples: CheckResult, monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty:
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(Tty()) is True  # type: ignore[arg-type]
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color(Tty()) is False  # type: ignore[arg-type]
    assert use_color(Tty(), force=True) is True  # type: ignore[arg-type]
    plain = render_text(examples)
    assert "\x1b[" not in plain
    assert "\x1b[31merror\x1b[0m" in render_text(examples, color=True)
    c = examples.counts()
    last = plain.rstrip("\n").splitlines()[-1]
    assert last.startswith(f"{c['error']} errors, {c['warning']} warning")
    assert last.endswith("; 0 suppressed")
    assert f"{EXAMPLES / 'chat-8b-l4.yaml'}:22:11: error KV103 " in plain


def test_json_is_versioned_and_consistent(examples: CheckResult) -> None:
    doc = json.loads(render("json", examples))
    assert doc["schema_version"] == 2
    s = doc["summary"]
    assert (s["error"], s["warning"]) == (
        sum(d["severity"] == "error" for d in doc["diagnostics"]),
        sum(d["severity"] == "warning" for d in doc["diagnostics"]),
    )
    assert s["suppressed"] == 0 and doc["suppressed"] == [] and s["exemptions_allowed"] is True
    assert {w["name"] for w in doc["workloads"]} >= {"chat-8b", "llama-8b-h100"}


# ---------------------------------------------------------------------------------------------- github


def test_github_commands(examples: CheckResult) -> None:
    out = render("github", examples).splitlines()
    assert len(out) == len(examples.diagnostics) + 2
    assert out[-2].startswith("::notice title=kvlint sizing::sized 4 of 4 serving containers")
    pat = re.compile(
        r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=(\d+),title=(KV\d{3}) ([a-z0-9-]+)::(.+)$"
    )
    for line, d in zip(out[:-2], examples.diagnostics, strict=True):
        m = pat.match(line)
        assert m, line
        assert m.group(1) == {"error": "error", "warning": "warning", "info": "notice"}[d.severity]
        assert (int(m.group(3)), int(m.group(4))) == (d.loc.line, d.loc.column)
        assert m.group(5) == d.rule and m.group(6) == load_catalog()[d.rule].name
        assert "\n" not in m.group(7)
    assert out[-1].endswith("0 suppressed")


def test_github_escaping() -> None:
    from kvlint.source import Loc

    d = Diagnostic("KV104", "info", "50% used\nsecond, line: x", Loc("a,b:c.yaml", 3, 4), fix="f")
    line = format_command(d, "low-concurrency-at-max-len")
    assert line.startswith(
        "::notice file=a%2Cb%3Ac.yaml,line=3,col=4,title=KV104 low-concurrency-at-max-len::"
    )
    assert line.endswith("50%25 used%0Asecond, line: x%0Afix: f")
    assert escape_property("x\r") == "x%0D"


# ---------------------------------------------------------------------------------------------- junit / markdown


def test_junit(examples: CheckResult) -> None:
    root = ET.fromstring(render("junit", examples))
    assert root.tag == "testsuites"
    failures = root.findall(".//failure")
    assert len(failures) == sum(d.severity in ("error", "warning") for d in examples.diagnostics)
    assert int(root.get("failures", "-1")) == len(failures)
    assert {f.get("type") for f in failures} <= {"error", "warning"}
    ok = [tc for tc in root.iter("testcase") if tc.get("name", "").endswith(" ok")]
    assert any("llama-8b-h100" in tc.get("name", "") for tc in ok)
    assert int(root.get("tests", "0")) == len(list(root.iter("testcase")))


def test_markdown_breakdown(examples: CheckResult) -> None:
    md = render("markdown", examples)
    assert md.startswith("## kvlint\n")
    for c in examples.containers:
        assert f"### {c.object_ref} · container `{c.container_name}`" in md
    chat = next(c for c in examples.containers if c.workload.name == "chat-8b")
    p = chat.plan
    assert p is not None
    section = md.split("### Deployment/serving/chat-8b")[1].split("###")[0]
    assert f"| weights | {p.weights_bytes / 2**30:.2f} |" in section
    assert f"| KV cache | {p.kv_cache_bytes / 2**30:.2f} |" in section
    assert f"{p.capacity_tokens:,} tokens" in section
    assert "| ❌ error | KV103 |" in md


# ---------------------------------------------------------------------------------------------- remedies

_CHAT = (EXAMPLES / "chat-8b-l4.yaml").read_text()


def _variant(args: list[str], gpus: int = 1) -> str:
    text = _CHAT.replace(
        "            - --gpu-memory-utilization=0.90\n", "".join(f"            - {a}\n" for a in args)
    )
    return text.replace("nvidia.com/gpu: 1", f"nvidia.com/gpu: {gpus}")


_REMEDY = {
    "max_model_len": re.compile(r"--max-model-len (\d+) fits"),
    "gpu_memory_utilization": re.compile(r"--gpu-memory-utilization (0\.\d+) fits"),
    "tensor_parallel_size": re.compile(r"--tensor-parallel-size (\d+) \(and"),
    "kv_cache_dtype": re.compile(r"--kv-cache-dtype (fp8) halves"),
}


@pytest.mark.parametrize(
    ("rule", "args", "options", "need"),
    [
        ("KV101", ["--gpu-memory-utilization=0.60", "--max-model-len=8192"], OFF, 1.0),
        ("KV102", ["--gpu-memory-utilization=0.70", "--max-model-len=8192"], OFF, 1.0),
        ("KV103", ["--gpu-memory-utilization=0.90"], OFF, 1.0),
        ("KV104", ["--max-model-len=20000"], OFF, 2.0),
        (
            "KV104",
            ["--max-model-len=6144"],
            Options(allow_hub=False, rule_params={"KV104": {"min_concurrency": 8}}),
            8.0,
        ),
        ("KV105", ["--max-model-len=25000"], OFF, 1.25),
    ],
)
def test_capacity_remedies_replan_as_fitting(
    rule: str, args: list[str], options: Options, need: float
) -> None:
    """Each capacity finding states the per-GPU arithmetic and >= 1 numeric remedy; applying each remedy
    to the container's settings and planning again gives a plan that fits at the required concurrency."""
    from kvlint.memory.vllm import plan_vllm

    res = run_documents(load_text(_variant(args), "chat.yaml"), options)
    (d,) = [d for d in res.diagnostics if d.rule == rule]
    assert "per GPU" in d.message
    (cr,) = res.containers
    found = 0
    for field, pat in _REMEDY.items():
        m = pat.search(d.fix)
        if not m:
            continue
        found += 1
        value: object = (
            m.group(1) if field == "kv_cache_dtype" else (float if "." in m.group(1) else int)(m.group(1))
        )
        acc = cr.placement.accelerator
        p2 = plan_vllm(
            replace(cr.settings, **{field: value}),
            cr.model,
            cr.placement.memory_bytes,
            gpu_name=acc.name,
            compute_capability=acc.compute_capability,
        )
        assert p2.kv_cache_bytes > 0 and p2.max_concurrency >= need, (field, value, p2.max_concurrency)
    assert found >= 1, d.fix


def test_markdown_shows_manifest_text_instead_of_rendering_it_as_html() -> None:
    """A suppression reason comes from the manifest (a pull request can write anything there): the job
    summary must show it as text, not inject HTML."""
    text = (Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "chat-8b-l4.yaml").read_text()
    text = text.replace(
        "metadata:\n",
        'metadata:\n  annotations:\n    kvlint.io/ignore: "KV202=<img src=x onerror=alert(1)> a | b"\n',
        1,
    )
    md = render("markdown", run_documents(load_text(text, "m.yaml"), Options(allow_hub=False)))
    assert "<img" not in md
    assert "&lt;img src=x onerror=alert(1)&gt; a \\| b" in md


_SGLANG_ON_H100 = """# made up for the test: an SGLang server of a catalogued model on one H100
apiVersion: apps/v1
kind: Deployment
metadata: {name: sglang-8b}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      containers:
        - name: sglang
          image: lmsysorg/sglang:v0.5.2
          command: [python3, -m, sglang.launch_server, --model-path, meta-llama/Llama-3.1-8B-Instruct,
                    --mem-fraction-static, "0.8", --context-length, "8192"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_markdown_budget_row_names_each_engines_own_knob(tmp_path: Path) -> None:
    """The per-GPU table's budget row said "gpu-memory-utilization" for TGI and SGLang workloads too, then the
    engines' field names (``mem_fraction_static``) where vLLM's row has its option's spelling; it names the option
    each engine has as the engine spells it: SGLang ``mem-fraction-static``, TGI ``cuda-memory-fraction`` or
    ``CUDA_MEMORY_FRACTION=`` as the container writes its TGI settings (kvlint.engines.tgi.tgi_option)."""
    from kvlint.engines.tgi import tgi_option

    (tmp_path / "sglang.yaml").write_text(_SGLANG_ON_H100, encoding="utf-8")
    root = Path(__file__).resolve().parents[1] / "fixtures"
    spellings: set[str] = set()
    for where, engine in ((root / "tgi", "tgi"), (tmp_path, "sglang")):
        result = run_check([str(where)], Options(allow_hub=False))
        conts = [c for c in result.containers if c.plan is not None and c.plan.engine == engine]
        assert conts, engine
        md = render("markdown", result)
        rows = [ln for ln in md.splitlines() if ln.startswith("| budget (")]
        assert len(rows) == len(conts), rows
        for c in conts:
            knob = (
                tgi_option(c.serving, "cuda_memory_fraction").removeprefix("--")
                if engine == "tgi"
                else "mem-fraction-static"
            )
            spellings.add(knob)
            assert any(f"| budget ({knob}" in r for r in rows), (knob, rows)
        assert not any("gpu-memory-utilization" in r or "_fraction" in r for r in rows), rows
    assert "CUDA_MEMORY_FRACTION" in spellings, spellings  # the TGI fixtures set their TGI settings in env
    # a typed launcher command (kvlint plan --format markdown) writes options
    from kvlint.capacity.plan_command import plan_command

    argv = ["text-generation-launcher", "--model-id", "meta-llama/Llama-3.1-8B-Instruct"]
    md = plan_command([*argv, "--cuda-memory-fraction", "0.9"], Options(allow_hub=False, accelerator="h100"))
    rows = [ln for ln in md.render_markdown().splitlines() if ln.startswith("| budget (")]
    assert len(rows) == 1 and rows[0].startswith("| budget (cuda-memory-fraction 0.9"), rows


def test_github_format_names_files_from_the_repository_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `kvlint check . --format github` printed `file=./deploy/chat.yaml`, and a run started in a subdirectory named
    # files relative to it; GitHub places an annotation by the path from the repository root (the Action already
    # wrote it so): the CLI's format now does the same; outside a repository, relative to the current directory
    import shutil
    import subprocess

    from click.testing import CliRunner

    from kvlint.cli import main

    repo = tmp_path / "infra"
    (repo / "deploy").mkdir(parents=True)
    shutil.copy(
        Path(__file__).resolve().parent.parent / "fixtures" / "rules" / "KV104" / "vllm.yaml",
        repo / "deploy" / "chat.yaml",
    )
    plain = tmp_path / "plain"
    shutil.copytree(repo, plain)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for cwd, paths, want in (
        (repo, ".", "deploy/chat.yaml"),
        (repo, "./deploy", "deploy/chat.yaml"),
        (repo / "deploy", ".", "deploy/chat.yaml"),
        (repo / "deploy", "./chat.yaml", "deploy/chat.yaml"),
        (plain, "./deploy/chat.yaml", "deploy/chat.yaml"),
        (plain / "deploy", ".", "chat.yaml"),
    ):
        monkeypatch.chdir(cwd)
        r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--format", "github", paths])
        files = set(re.findall(r"^::\w+ file=([^,]+),", r.output, re.MULTILINE))
        assert files == {want}, (cwd, paths, r.output)


def test_github_path_through_a_symlinked_directory_is_from_the_repository_root(tmp_path: Path) -> None:
    # the root is compared with links resolved; an absolute path given through a link to the checkout
    # (`kvlint check $WORKSPACE/deploy` with $WORKSPACE a symbolic link) stayed absolute, which GitHub places nowhere;
    # the file's own name is kept (a link committed in the repository is annotated where it is committed)
    from kvlint.report.github import repository_path

    real = tmp_path / "real"
    (real / "deploy").mkdir(parents=True)
    (real / "deploy" / "chat.yaml").write_text("a: 1\n")
    (real / "deploy" / "link.yaml").symlink_to(real / "deploy" / "chat.yaml")
    (tmp_path / "ws").symlink_to(real)
    root = os.path.realpath(real)
    for path, want in (
        (str(tmp_path / "ws" / "deploy" / "chat.yaml"), "deploy/chat.yaml"),
        (str(tmp_path / "ws" / "deploy" / "link.yaml"), "deploy/link.yaml"),
        ("./deploy/link.yaml", "deploy/link.yaml"),
        (str(tmp_path / "elsewhere.yaml"), str(tmp_path / "elsewhere.yaml")),
    ):
        assert repository_path(path, str(tmp_path / "ws"), root) == want, path
