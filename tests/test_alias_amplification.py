"""Alias amplification (found by an adversarial probe): a ``kind: List`` whose ``items`` alias one small pod
thousands of times turned a 30 KB file into 10,000 fully analysed pods. The loader now bounds the values a
document's aliases expand to by the document's own text (:data:`kvlint.load.ALIAS_FLOOR`)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kvlint import checkrun
from kvlint.cli import main
from kvlint.load import ALIAS_FLOOR, MAX_NODES, load_text

POD = (
    "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, "
    "image: 'vllm/vllm-openai:v0.11.0', args: [--model, meta-llama/Llama-3.1-8B-Instruct], "
    "resources: {limits: {nvidia.com/gpu: 1}}}]}}"
)


def _list(n: int) -> str:
    return f"apiVersion: v1\nkind: List\nx: &p {POD}\nitems: [" + ",".join(["*p"] * n) + "]\n"


@pytest.mark.parametrize("n", [1_000, 10_000])
def test_aliased_list_is_one_finding_and_no_documents(n):
    text = _list(n)
    # far below the old bound: it is the amplification, not the count, that is refused
    assert n * 30 < MAX_NODES
    r = load_text(text, "list.yaml")
    assert [f.rule for f in r.findings] == ["KV001"]
    assert "alias bomb" in r.findings[0].message
    assert r.findings[0].loc.line == 4  # the items list that receives the aliases
    assert r.documents == []


def test_aliased_list_stops_reading_early():
    """The refusal comes within the budget: at most (text length) values are expanded, not n pods'."""
    text = _list(10_000)
    r = load_text(text + "---\nkind: Service\n", "list.yaml")
    # the next document still loads
    assert [d.kind for d in r.documents] == ["Service"]
    budget = int(r.findings[0].message.split("more than ")[1].split()[0])
    assert budget <= len(text)


def test_nested_aliases_count_their_expansion():
    text = (
        f"apiVersion: v1\nkind: List\nx: &p {POD}\n"
        "x2: &q [" + ",".join(["*p"] * 100) + "]\nitems: [" + ",".join(["*q"] * 100) + "]\n"
    )
    r = load_text(text, "nested.yaml")
    assert [f.rule for f in r.findings] == ["KV001"] and r.documents == []


def test_small_aliased_lists_still_load():
    """A few aliases of a pod (what the text itself could hold) are read as before, item by item."""
    r = load_text(_list(3), "list.yaml")
    assert r.findings == []
    assert [d.kind for d in r.documents] == ["Pod"] * 3


def test_real_alias_use_within_budget():
    env = "".join(f"        - name: VAR_{i}\n          value: 'value {i}'\n" for i in range(30))
    text = (
        "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
        "      - name: a\n        env: &env\n"
        + env
        + "".join(f"      - name: c{i}\n        env: *env\n" for i in range(5))
    )
    r = load_text(text, "dep.yaml")
    assert r.findings == []
    cs = r.documents[0].data["spec"]["template"]["spec"]["containers"]
    assert len(cs) == 6 and all(len(c["env"]) == 30 for c in cs)


def test_tiny_document_floor():
    """A short document may expand aliases to ALIAS_FLOOR values, not one more."""
    anchor = "[" + ",".join(["1"] * 9) + "]"  # 10 values
    uses = ALIAS_FLOOR // 10
    ok = f"a: &a {anchor}\nb: [" + ",".join(["*a"] * uses) + "]\n"
    assert len(ok) < ALIAS_FLOOR
    assert load_text(ok, "ok.yaml").findings == []
    over = f"a: &a {anchor}\nb: [" + ",".join(["*a"] * (uses + 1)) + "]\n"
    assert [f.rule for f in load_text(over, "over.yaml").findings] == ["KV001"]


def test_check_analyses_no_pod_of_an_aliased_list(tmp_path):
    p = tmp_path / "list.yaml"
    p.write_text(_list(10_000))
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--format", "json", str(p)])
    assert r.exit_code == 1, r.output
    out = json.loads(r.output)
    assert [d["rule"] for d in out["diagnostics"]] == ["KV001"]
    assert out["summary"]["documents"] == 0 and out["summary"]["workloads"] == 0


def test_memory_exhaustion_is_a_clean_error(tmp_path, monkeypatch):
    """MemoryError (or CPython's 'error return without exception set' SystemError that replaces it when the
    interpreter cannot allocate the error) ends the run with a one-line message and status 2."""
    p = tmp_path / "pod.yaml"
    p.write_text("kind: Pod\n")
    for exc in (MemoryError(), SystemError("error return without exception set")):

        def boom(*a, exc=exc, **k):
            raise exc

        monkeypatch.setattr(checkrun, "run_paths", boom)
        r = CliRunner().invoke(main, ["check", "--offline", "--no-config", str(p)])
        assert r.exit_code == 2
        assert "ran out of memory while checking" in r.output and str(p) in r.output
        assert "Traceback" not in r.output and r.exception is None or isinstance(r.exception, SystemExit)
    monkeypatch.setattr(checkrun, "run_paths", lambda *a, **k: (_ for _ in ()).throw(SystemError("other")))
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", str(p)])
    assert isinstance(r.exception, SystemError)  # a genuine internal error is not disguised
