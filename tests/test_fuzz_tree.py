"""Structure-aware fuzzing of ``kvlint check`` (``tools/fuzz_tree.py``): the minimised reproducers it found,
each failing before its fix, and a small seeded budget of its cases run through the command line in-process.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("fuzz_tree", ROOT / "tools" / "fuzz_tree.py")
assert _spec is not None and _spec.loader is not None
F = importlib.util.module_from_spec(_spec)
sys.modules["fuzz_tree"] = F
_spec.loader.exec_module(F)

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: '1'}\n"
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: [--model, meta-llama/Llama-3.1-8B-Instruct, --tensor-parallel-size, '3']
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def check(text: str, *extra: str) -> tuple[int, str, str]:
    """``kvlint check --offline --no-config -`` on ``text``: exit status, stdout, stderr (no exception)."""
    res = CliRunner().invoke(
        main,
        ["check", "--offline", "--no-config", "--stdin-filename", "fz.yaml", *extra, "-"],
        input=text.encode("utf-8"),
    )
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.stdout, res.stderr


def rules(text_report: str) -> list[str]:
    """The rule ids of a text report's findings, in order."""
    return re.findall(r"^fz\.yaml:\d+:\d+: \w+ (KV\d+)", text_report, re.M)


@pytest.mark.parametrize("kind", ["{a: 1}", "[Deployment]", "[]"])
def test_a_kind_that_is_a_mapping_or_a_list_is_no_traceback_and_hides_no_other_document(kind: str) -> None:
    # kind: {a: 1} raised TypeError (unhashable LDict) in render.strategic_merge_patch_finding, out of the CLI
    # as a traceback, and the other documents of the file were never reported
    code, out, err = check(f"kind: {kind}\n---\n{DEPLOYMENT}")
    assert "Traceback" not in out + err
    assert code == 1, out + err
    alone = check(DEPLOYMENT)[1]
    assert rules(alone) and rules(out) == rules(alone)  # the Deployment's findings are all still there
    for fmt in ("json", "sarif", "junit", "markdown", "github", "jsonl"):
        assert check(f"kind: {kind}\n", "--format", fmt)[0] == 0


def test_seeded_tree_mutations_cover_every_kind_of_mutation() -> None:
    kinds = Counter(
        name for c in F.cases(F.default_paths(), 7, 200) for name in c.desc.split(" ")[1].split("+")
    )
    assert set(F.MUTATIONS) <= set(kinds), set(F.MUTATIONS) - set(kinds)
    assert kinds["broken-doc"] > 0


def test_seeded_tree_mutants_give_no_traceback_no_hidden_exception_and_hide_no_document(
    tmp_path: Path,
) -> None:
    failures, n = F.fuzz(F.default_paths(), seed=23, count=40, limit_s=10.0, factor=50.0)
    assert n == 40
    assert not failures, "\n\n".join(failures[:5])


def test_the_hiding_oracle_sees_a_document_that_a_broken_one_hides(tmp_path: Path) -> None:
    """The fuzzer's hiding check is not vacuous: findings present with the broken document removed and absent
    with it present are reported."""
    docs = [CONFIGMAP, DEPLOYMENT]
    whole = F.run_cli(F.join_docs(docs), "fz.yaml", str(tmp_path))
    absent = F.run_cli(F.join_docs(F.removed(docs, 0)), "fz.yaml", str(tmp_path))
    bases = [(whole.diags, docs), (absent.diags, F.removed(docs, 0))]
    assert F._by_doc(whole.diags, docs).get(1)  # the Deployment has findings
    assert F.hidden(bases, whole.diags, docs, 0) == []
    lost = F.hidden(bases, absent.diags[:0], [CONFIGMAP, "a: b\n"], 0)
    assert lost and {j for j, _ in lost} == {1}


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ('model_dirs: [models, "a\\0b"]\n', ":1:22: model_dirs[1]: a path cannot hold a NUL character"),
        ('model_catalogue: "a\\0b"\n', ":1:18: model_catalogue: a path cannot hold a NUL character"),
        ('model_paths:\n  /m: "a\\0b"\n', ":2:7: model_paths./m: a path cannot hold a NUL character"),
    ],
)
def test_a_configured_path_holding_nul_is_a_configuration_error_at_its_line(
    tmp_path: Path, config: str, where: str
) -> None:
    # model_dirs and model_catalogue raised ValueError (embedded null byte) out of Path.resolve, a traceback;
    # model_paths' NUL was silently taken as a hub id
    (tmp_path / ".kvlint.yaml").write_text(config)
    (tmp_path / "d.yaml").write_text(DEPLOYMENT)
    res = CliRunner().invoke(main, ["check", "--offline", str(tmp_path / "d.yaml")])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code == 2
    assert f"kvlint: configuration error: {tmp_path / '.kvlint.yaml'}{where}" in res.stderr


def test_a_model_path_longer_than_the_file_system_allows_is_a_hub_id_not_a_traceback(tmp_path: Path) -> None:
    # _local's Path.is_dir raised OSError ENAMETOOLONG on a 5,000-character model_paths value
    (tmp_path / ".kvlint.yaml").write_text(f"model_paths:\n  /m: {'x' * 5000}\n")
    (tmp_path / "d.yaml").write_text(DEPLOYMENT)
    res = CliRunner().invoke(main, ["check", "--offline", str(tmp_path / "d.yaml")])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code == 1 and "d.yaml:" in res.stdout  # the Deployment's findings (TP 3 over 1 GPU)


def test_seeded_configuration_mutants_are_a_configuration_or_a_configuration_error() -> None:
    assert F.readme_config()["accelerators"]["node_labels"]  # README's example holds every section
    failures, n = F.fuzz_config(seed=23, count=150)
    assert n == 150
    assert not failures, "\n\n".join(failures[:5])
