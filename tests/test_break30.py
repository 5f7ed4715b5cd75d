"""Hostile inputs found by the break30 adversarial pass: Dynamic Resource Allocation claims of the wrong type in a
container's ``resources.claims``, and a pod naming no namespace whose many claims are looked up among many claims
of other namespaces; many OME InferenceServices among many runtimes (the selection made once per
model, a bound on the comparisons of a run, the runtimes that match too counted past five; KServe's auto-selected
runtime chosen once per format); ``kvlint verify
--record`` naming a file it cannot write. Expected figures come from kvlint's own functions, never from engine numbers;
work is counted, never timed."""

from __future__ import annotations

import json
import shutil
import subprocess
import tracemalloc
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import kvlint.workloads.kserve as kserve
import kvlint.workloads.ome_select as ome_select
from kvlint.cli import main
from kvlint.engines.sglang import _config_file_argv
from kvlint.engines.vllm import _config_argv
from kvlint.memory import sglang_graphs
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import is_internal_error
from kvlint.workloads.dra import ClaimIndex

ROOT = Path(__file__).resolve().parents[1]
OME = ROOT / "fixtures" / "collected" / "trees" / "sgl-project-ome-glm-fp8" / "config"

_CLAIMED = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpus}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly: {deviceClassName: gpu.nvidia.com, count: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: gpus
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: ["--model", "meta-llama/Llama-3.1-70B-Instruct"]
        resources:
          claims: CLAIMS
"""


def _check(tmp_path: Path, text: str):
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return run_check([str(path)], Options(allow_hub=False))


@pytest.mark.parametrize(
    "claims", ["-1", "1.5e308", "true", "{name: gpu}", "[{name: [gpu]}]", "[{name: {a: 1}}]"]
)
def test_container_claims_of_the_wrong_type_are_no_internal_error(tmp_path: Path, claims: str) -> None:
    """A 70B model on one L4 is a KV101 error whatever the container's claims hold; a number there was iterated
    and a list or mapping as a claim's name looked up in a dict, a TypeError that the pipeline turned into a
    KV503 warning in place of the error (fail-open admits it)."""
    result = _check(tmp_path, _CLAIMED.replace("CLAIMS", claims))
    assert not [d for d in result.diagnostics if is_internal_error(d.rule, d.message)], result.diagnostics
    assert [d for d in result.diagnostics if d.rule == "KV101" and d.severity == "error"], result.diagnostics


def test_claims_of_a_pod_naming_no_namespace_are_looked_up_without_a_scan_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pod naming no namespace looks its claims up in any namespace: each of its ``resourceClaims`` entries
    scanned every claim among the inputs (6,000 entries among 6,000 claims of other namespaces: 12 s). Now the
    claims are listed once a run, and a claim of another namespace is still found."""
    n = 300
    claims = [
        f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {{name: c{i}, namespace: ns{i}}}\n"
        "spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, count: 1}}]}}}\n"
        for i in range(n)
    ]
    entries = "".join(f"      - {{name: e{i}, resourceClaimTemplateName: zz{i}}}\n" for i in range(n))
    entries += f"      - {{name: gpu, resourceClaimTemplateName: c{n - 1}}}\n"
    pod = (
        _CLAIMED.split("---\n")[1]
        .replace("      resourceClaims:\n      - name: gpu\n        resourceClaimTemplateName: gpus\n", "")
        .replace("      containers:", "      resourceClaims:\n" + entries + "      containers:")
        .replace("CLAIMS", "[{name: gpu}]")
    )
    seen = [0]
    real = ClaimIndex.items

    def counting(self: ClaimIndex) -> object:
        for kv in real(self):
            seen[0] += 1
            yield kv

    monkeypatch.setattr(ClaimIndex, "items", counting)
    result = _check(tmp_path, "---\n".join([*claims, pod]))
    assert seen[0] <= n, seen[0]
    (cr,) = [c for c in result.containers if c.serving is not None]
    assert "gpu" in cr.workload.dra_claims and not [
        d for d in result.diagnostics if is_internal_error(d.rule, d.message)
    ]


def _ome_input(models: int, services: int, runtimes: int) -> str:
    """sgl-project/ome's GLM-4.7-FP8 ClusterBaseModel as ``models`` copies ``m0``, ``m1``..., its
    ClusterServingRuntime as ``runtimes`` copies (all matching every model), and ``services`` InferenceServices
    naming no runtime, service ``i`` on model ``i % models``."""
    model = (OME / "models/zai-org/GLM-4.7-FP8.yaml").read_text()
    runtime = (OME / "runtimes/srt/zai-org/glm-text-fp8-tp8-rt.yaml").read_text()
    docs = [model.replace("name: glm-4-7-fp8", f"name: m{i}") for i in range(models)]
    docs += [runtime.replace("name: srt-glm-text-fp8-tp8", f"name: rt-{i:04d}") for i in range(runtimes)]
    docs += [
        f"apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {{name: isvc-{i}}}\n"
        f"spec:\n  model: {{name: m{i % models}}}\n  engine: {{minReplicas: 1}}\n"
        for i in range(services)
    ]
    return "---\n".join(docs)


@pytest.fixture
def evaluations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the runtimes OME's selector evaluates (the real function runs)."""
    calls = [0]
    real = ome_select._evaluate

    def counting(*args: object) -> object:
        calls[0] += 1
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ome_select, "_evaluate", counting)
    return calls


def test_services_of_one_model_are_selected_for_once(
    tmp_path: Path, evaluations: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 services of one model among 40 runtimes: each runtime is evaluated once, and its note's text made
    once, not once per service (1,600 evaluations, twice that for a directory, and 3,120 runtime labels were a
    time quadratic in the input: 1,500 of each took 40 s)."""
    labels = [0]
    real = ome_select.Candidate.label

    def counting(self: ome_select.Candidate) -> str:
        labels[0] += 1
        return real.fget(self)  # type: ignore[attr-defined,no-any-return]

    monkeypatch.setattr(ome_select.Candidate, "label", property(counting))
    result = _check(tmp_path, _ome_input(1, 40, 40))
    assert evaluations[0] == 40
    assert labels[0] <= 2 * 40, labels[0]
    notes = [d for d in result.diagnostics if d.rule == "KV504"]
    assert len(notes) == 40 and all("'rt-0000'" in d.message for d in notes)
    # the 39 runtimes that match too are named five at a time, the rest counted (each message held all 39 twice)
    for d in notes:
        assert d.message.count("'rt-00") == 1 + 5 + 5, d.message
        assert (
            "'rt-0005' (score 15) and 34 more" in d.message
            and "'rt-0005' and 34 more match as well" in d.message
        )


def test_comparisons_of_a_run_are_bounded(
    tmp_path: Path, evaluations: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Services of distinct models among many runtimes compare each model with every runtime's formats; past
    the run's limit the rest are not selected (a KV503 warning each) rather than compared."""
    per_selection = 20 * (1 + 2)  # 20 runtimes of two supported formats each
    monkeypatch.setattr(ome_select, "MAX_COMPARISONS", 5 * per_selection)
    result = _check(tmp_path, _ome_input(12, 12, 20))
    assert evaluations[0] == 5 * 20
    planned = [d for d in result.diagnostics if d.rule == "KV504"]
    unplanned = [d for d in result.diagnostics if d.rule == "KV503" and "did not select" in d.message]
    assert len(planned) == 5 and len(unplanned) == 7
    assert all(d.severity == "warning" and not is_internal_error(d.rule, d.message) for d in unplanned)


@pytest.mark.parametrize("target", ["", "missing/case.yaml"])
def test_verify_record_to_a_path_it_cannot_write_is_a_usage_error(tmp_path: Path, target: str) -> None:
    """A directory, or a file in a missing directory: the open() raised IsADirectoryError or FileNotFoundError
    out of the command, a traceback with exit status 1."""
    where = tmp_path / target if target else tmp_path
    r = CliRunner().invoke(
        main,
        [
            "verify",
            "--offline",
            str(ROOT / "fixtures" / "logs" / "gt-210.log"),
            "--model",
            "Qwen/Qwen2-7B-Instruct",
        ]
        + ["--accelerator", "a100-80gb", "--record", str(where)],
    )
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 2 and f"cannot write the case to {where}" in r.output, r.output


def test_prefill_graph_sizes_are_counted_not_listed() -> None:
    """The reserve counts SGLang's capture sizes (``capture_count``, the same number as the list for every
    maximum) without making the list: ``--piecewise-cuda-graph-max-tokens 10**20`` made one of 2 x 10**17 sizes
    (a MemoryError), 10**8 one of 195,000."""
    for v in ((0, 5, 8), (0, 5, 9), (0, 5, 23)):
        for top in (*range(-4, 10_000, 13), 4608, 5119, 5120):
            sizes = sglang_graphs.capture_sizes(top, v)
            assert sglang_graphs.capture_count(top, v) == len(sizes)
            assert sglang_graphs.capture_count(top, v, aligned=True) == len({(s + 7) // 8 * 8 for s in sizes})
    for deepep in (False, True):
        graphs = sglang_graphs.PrefillGraphs(True, "test", max_tokens=10**8, deepep_align=deepep)
        tracemalloc.start()
        try:
            mib, _note = graphs.reserve_mib(8192, amd=False)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 1 << 20, peak
        assert (
            mib
            == sglang_graphs.capture_count(10**8, graphs.version, aligned=deepep) * sglang_graphs.PER_SIZE_MIB
        )


@pytest.mark.parametrize("option", ["--piecewise-cuda-graph-max-tokens", "--cuda-graph-max-bs-prefill"])
def test_plan_with_a_prefill_graph_maximum_of_10_to_the_20_is_answered(option: str) -> None:
    r = CliRunner().invoke(
        main,
        ["plan", "--offline", "--accelerator", "h200", "--engine-version", "0.5.15", "--", "python3", "-m"]
        + ["sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct", option, str(10**20)],
    )
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code in (0, 1) and "prefill CUDA graphs" in r.output, r.output


_MERGED = """\
common: &common
  tp-size: 2
  context-length: 16384
  served-model-name: [a, b]
extra: &extra {mem-fraction-static: 0.8, tp-size: 4}
prefill:
  <<: *common
  disaggregation-mode: prefill
decode:
  <<: [*common, *extra]
  context-length: 8192
  disaggregation-mode: decode
"""


def _as_loaded(argv: list[str]) -> dict[str, list[str]]:
    """``--key value...`` words by key (the values of a key given once)."""
    out: dict[str, list[str]] = {}
    key = ""
    for word in argv:
        if word.startswith("--"):
            key = word[2:]
            assert key not in out, f"{key} given twice: {argv}"
            out[key] = []
        else:
            out[key].append(word)
    return out


def _expected(mapping: dict) -> dict[str, list[str]]:
    """What the engines pass on for a mapping ``yaml.safe_load`` gave (a list as its items, a scalar as text)."""
    return {k: [str(x) for x in v] if isinstance(v, list) else [str(v)] for k, v in mapping.items()}


@pytest.mark.parametrize("section", ["prefill", "decode"])
def test_config_file_merge_keys_are_applied_as_yaml_safe_load_applies_them(section: str) -> None:
    """Dynamo's SGLang worker (``--config-key``) and SGLang read the file with ``yaml.safe_load``, which applies
    ``<<`` (the explicit key winning, the first of several merged mappings winning): kvlint read ``<<`` as an
    option and missed the merged options (a section taking its model from a shared anchor had "no model")."""
    argv, _locs, _src = _config_file_argv(_MERGED, lambda line, col: None, section)
    assert _as_loaded(argv) == _expected(yaml.safe_load(_MERGED)[section])


def test_vllm_config_file_merge_keys_are_applied_as_yaml_safe_load_applies_them() -> None:
    """vLLM's ``load_config_file`` reads the file with ``yaml.safe_load`` too: ``<<`` was an error KV205
    ``unknown option --<<``."""
    text = "common: &c {max-model-len: 8192, gpu-memory-utilization: 0.85}\n<<: *c\nmax-model-len: 4096\n"
    argv, _locs, _src = _config_argv(text, None, lambda line, col: None)
    got = _as_loaded(argv)
    assert got.pop("common") == [json.dumps(yaml.safe_load(text)["common"])]
    assert got == _expected({k: v for k, v in yaml.safe_load(text).items() if k != "common"})


def test_merge_keys_yaml_safe_load_refuses_or_empties() -> None:
    with pytest.raises(ValueError, match="merge key"):
        _config_file_argv("a: &a {x: 1}\nb:\n  <<: 5\n", lambda line, col: None, "b")
    # a mapping merging itself: safe_load drops the merge key first and gives {}
    assert yaml.safe_load("a: &a\n  <<: *a\n") == {"a": {}}
    assert _config_file_argv("a: &a\n  <<: *a\n", lambda line, col: None, "a") == ([], [], [])


def test_junit_names_show_bidi_overrides_escaped(tmp_path: Path) -> None:
    """Object and file names quoted in JUnit testcase names and class names go through ``printable`` as the
    messages do: a runtime named with U+202E (RIGHT-TO-LEFT OVERRIDE) was written raw in the testcase names."""
    tree = tmp_path / "tree\u2066"
    tree.mkdir()
    text = (OME / "runtimes/srt/zai-org/glm-text-fp8-tp8-rt.yaml").read_text()
    (tree / "rt.yaml").write_text(text.replace("name: srt-glm-text-fp8-tp8", 'name: "srt\\u202egnp.exe"'))
    r = CliRunner().invoke(main, ["check", "--offline", "--format", "junit", str(tree / "rt.yaml")])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "testcase" in r.output and "srt\\u202egnp.exe" in r.output and "\\u2066" in r.output
    assert not any(ch in r.output for ch in "\u202e\u2066"), r.output


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_text_shows_control_characters_and_bidi_overrides_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kvlint diff`` printed the findings' lines and the touched workloads' names raw: a Deployment named
    with an escape sequence and a right-to-left override recoloured the CI log and reordered the line."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    (tmp_path / "keep.txt").write_text("base\n")
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "base"]):
        subprocess.run([*git, *args], cwd=tmp_path, check=True, capture_output=True)
    doc = yaml.safe_load(_CLAIMED.replace("CLAIMS", "[]").split("---\n")[1])
    doc["metadata"]["name"] = "chat\u202egnp.exe\x1b[31m"
    (tmp_path / "chat.yaml").write_text(yaml.safe_dump(doc))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["diff", "HEAD", "--offline"])
    assert r.exit_code in (0, 1), r.output
    assert "chat\\u202egnp.exe\\x1b[31m" in r.output and "KV101" in r.output
    assert not any(ch in r.output for ch in "\u202e\x1b"), r.output


def test_a_selection_goes_over_only_the_runtimes_of_its_scope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Services of 30 namespaces among 30 ServingRuntimes of another namespace and one ClusterServingRuntime:
    each selection considers the cluster runtime and its own namespace's, not every runtime of the input (those
    of other namespaces were skipped one by one, services x runtimes, outside the comparisons' budget)."""
    runtime = (OME / "runtimes/srt/zai-org/glm-text-fp8-tp8-rt.yaml").read_text()
    namespaced = runtime.replace("kind: ClusterServingRuntime", "kind: ServingRuntime").replace(
        "  name: srt-glm-text-fp8-tp8", "  name: NAME\n  namespace: elsewhere"
    )
    docs = [(OME / "models/zai-org/GLM-4.7-FP8.yaml").read_text(), runtime]
    docs += [namespaced.replace("NAME", f"rt-{i}") for i in range(30)]
    docs += [
        f"apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {{name: s, namespace: ns{i}}}\n"
        "spec:\n  model: {name: glm-4-7-fp8}\n  engine: {minReplicas: 1}\n"
        for i in range(30)
    ]
    considered = [0]
    real = ome_select.select_runtime

    def counting(runtimes, model, isvc):  # type: ignore[no-untyped-def]
        considered[0] += len(runtimes)
        return real(runtimes, model, isvc)

    monkeypatch.setattr(ome_select, "select_runtime", counting)
    result = _check(tmp_path, "---\n".join(docs))
    assert considered[0] == 30, considered[0]
    notes = [d for d in result.diagnostics if d.rule == "KV504"]
    assert len(notes) == 30 and all("'srt-glm-text-fp8-tp8'" in d.message for d in notes)


def test_kserve_services_of_one_format_choose_their_runtime_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KServe InferenceServices naming no runtime take the auto-selected one of their model format: each service
    (asked twice: what it consumes, then its workloads) went over every runtime auto-selecting that format."""
    runtime = (
        "apiVersion: serving.kserve.io/v1alpha1\nkind: ClusterServingRuntime\nmetadata: {name: rt-NAME}\n"
        "spec:\n  supportedModelFormats: [{name: huggingface, autoSelect: true, priority: 1}]\n"
        "  containers: [{name: kserve-container, image: kserve/huggingfaceserver:v0.15.0}]\n"
    )
    services = (ROOT / "fixtures" / "kserve" / "huggingface-isvc.yaml").read_text().split("---\n")[0]
    docs = [runtime.replace("NAME", str(i)) for i in range(30)]
    docs += [services.replace("name: huggingface-llama3", f"name: s{i}") for i in range(30)]
    looked = [0]
    real = kserve.get_in

    def counting(data: object, *keys: object) -> object:
        looked[0] += keys == ("spec", "workerSpec")
        return real(data, *keys)

    monkeypatch.setattr(kserve, "get_in", counting)
    result = _check(tmp_path, "---\n".join(docs))
    assert looked[0] <= 2 * 30, looked[0]  # (each runtime once; a multi-node predictor would ask again)
    assert len([c for c in result.containers if c.workload.kind == "InferenceService"]) == 30
