"""Real public manifests kvlint had not seen (new-user pass 13, fixtures/collected): what a first run on them
showed to be wrong, each checked on the file itself."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check
from kvlint.sizing import summarise
from kvlint.source import LDict, Loc
from kvlint.types import Document
from kvlint.workloads.kthena import _go_value
from kvlint.workloads.operators import unread_kind_note

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
BOOSTERS = (
    "volcano-sh__kthena__docs__kthena__docs__assets__examples__model-booster__Qwen2.5-Coder-32B-Instruct.yaml",
    "volcano-sh__kthena__docs__kthena__docs__assets__examples__model-booster__nixl-pd-disaggregation.yaml",
    "volcano-sh__kthena__docs__kthena__docs__assets__examples__model-booster__Deepseek-R1-Distill-llama-8B.yaml",
)


def _check(name: str, **opts):
    return run_check([str(COLLECTED / name)], Options(allow_hub=False, **opts))


def test_kthena_model_booster_is_read_as_the_pods_kthena_generates() -> None:
    """Kthena's ModelBooster (workload.serving.volcano.sh) names its vLLM backend, model URI and GPU workers;
    kthena's controller turns it into a ModelServing. kvlint reads ModelServing but had nothing for
    ModelBooster: '0 errors, 0 warnings, 0 workloads', a clean pass on a file that deploys an LLM. Its engine
    pods are now restated: the NIXL P/D example's prefill and decode workers are each a vLLM container on one
    GPU, planned on Qwen/Qwen3-0.6B (its hf:// modelURI), with the worker config as flags; the Ascend example
    is read too, and is not sized because its image is an Ascend build."""
    res = _check(BOOSTERS[1])
    assert [cr.workload.path for cr in res.containers] == [
        "spec.backend.workers[0]",
        "spec.backend.workers[1]",
    ]
    text = (COLLECTED / BOOSTERS[1]).read_text().splitlines()
    for cr, role in zip(res.containers, ("prefill", "decode"), strict=True):
        assert cr.serving.engine == "vllm" and cr.fleet
        assert cr.workload.derived_model == "Qwen/Qwen3-0.6B"
        assert text[cr.container.loc.line - 1].strip() == f"- type: {role}"
        words = list(cr.container["command"])
        assert words[:4] == ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model"]
        assert words[4] == "/tmp/cache/" + hashlib.md5(b"hf://Qwen/Qwen3-0.6B").hexdigest()
        # config keys sorted, as ConvertVLLMArgsFromJson writes them
        assert words[5::2] == [
            "--kv-transfer-config",
            "--served-model-name",
            "--tensor-parallel-size",
            "--uvicorn-log-level",
        ]
        assert words[words.index("--tensor-parallel-size") + 1] == "1"
    assert summarise(res).sized == 2 and summarise(res).not_read == 0
    ascend = _check(BOOSTERS[0])
    assert summarise(ascend).not_sized == {"not a CUDA/ROCm GPU": 1}
    assert summarise(ascend).not_read == 0


def test_model_booster_from_s3_takes_the_model_from_the_uri_name() -> None:
    """Kthena's Deepseek-R1-Distill-llama-8B example downloads s3://model-bucket/deepseek-r1-distill-llama-8b
    into a digest-named directory: the model is the catalogued one that URI is named after, said in a KV505
    that names Kthena's downloader and the URI (not KServe's storage initializer), and sized; its camelCase
    config key maxModelLen, which Kthena writes as --maxModelLen, is a KV205 error naming that key."""
    res = _check(BOOSTERS[2])
    (cr,) = res.containers
    assert cr.model is not None and cr.model.id == "deepseek-ai/DeepSeek-R1-Distill-Llama-8B"
    assert cr.fleet
    (kv505,) = [d for d in res.diagnostics if d.rule == "KV505"]
    assert "Kthena's model downloader" in kv505.message and "KServe" not in kv505.message
    assert "s3://model-bucket/deepseek-r1-distill-llama-8b" in kv505.message
    (kv205,) = [d for d in res.diagnostics if d.rule == "KV205"]
    assert "--maxModelLen" in kv205.message and "config.maxModelLen" in kv205.message


def _booster(backend_type: str, pods: int = 1, config: str = "{}") -> str:
    """A ModelBooster written for these tests, in the shape of kthena's examples."""
    return (
        "apiVersion: workload.serving.volcano.sh/v1alpha1\nkind: ModelBooster\nmetadata:\n  name: b\nspec:\n"
        f"  backend:\n    name: b\n    type: {backend_type}\n    modelURI: hf://Qwen/Qwen3-8B\n"
        "    cacheURI: pvc://model-cache\n    replicas: 2\n    workers:\n      - type: server\n"
        f"        image: vllm/vllm-openai:v0.10.0\n        replicas: 3\n        pods: {pods}\n"
        "        resources:\n          limits:\n            nvidia.com/gpu: 2\n"
        f"        config: {config}\n"
    )


def test_model_booster_config_values_are_written_as_kthena_writes_them(tmp_path: Path) -> None:
    """Booleans as Go writes them, numbers from 10^6 in Go's exponent form, an empty string as a flag alone,
    underscores as dashes; the pods are backend.replicas x the worker's replicas."""
    path = tmp_path / "b.yaml"
    cfg = '{max_model_len: 1000000, enforce-eager: true, gpu-memory-utilization: 0.9, trust-remote-code: ""}'
    path.write_text(_booster("vLLM", config=cfg), encoding="utf-8")
    res = run_check([str(path)], Options(allow_hub=False))
    (cr,) = res.containers
    words = list(cr.container["command"])
    assert words[4] == "/model-cache/" + hashlib.md5(b"hf://Qwen/Qwen3-8B").hexdigest()
    assert words[5:] == [
        "--enforce-eager",
        "true",
        "--gpu-memory-utilization",
        "0.9",
        "--max-model-len",
        "1e+06",
        "--trust-remote-code",
    ]
    assert cr.workload.replicas == 6


def test_model_booster_read_on_an_image_that_names_no_engine_has_no_unread_note(tmp_path: Path) -> None:
    """The note about objects kvlint does not read is for the ModelBoosters it does not read, not for one read
    whose image is a private build that does not name vLLM."""
    path = tmp_path / "b.yaml"
    text = _booster("vLLM").replace("vllm/vllm-openai:v0.10.0", "registry.example.com/engine:1")
    path.write_text(text, encoding="utf-8")
    res = run_check([str(path)], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.serving.engine == "vllm"
    assert not [d for d in res.diagnostics if d.message.startswith("kvlint does not read this")]


def test_model_booster_config_findings_name_the_config_key(tmp_path: Path) -> None:
    """A finding on a flag Kthena wrote from a config key names that key: a whole number of a million or more,
    which Go prints as 1e+06 and vLLM refuses, is to be quoted; a key that is no engine option (camelCase
    maxModelLen, as kthena's own Deepseek-R1-Distill-llama-8B example writes it) is the key to correct."""
    path = tmp_path / "b.yaml"
    path.write_text(_booster("vLLM", config="{max-model-len: 1000000, maxNumSeqs: 8}"), encoding="utf-8")
    res = run_check([str(path)], Options(allow_hub=False))
    (kv206,) = [d for d in res.diagnostics if d.rule == "KV206"]
    assert "'1e+06'" in kv206.message and "config.max-model-len: 1000000 as 1e+06" in kv206.message
    assert kv206.fix == 'quote the value: max-model-len: "1000000" (Kthena writes a string as it is)'
    (kv205,) = [d for d in res.diagnostics if d.rule == "KV205"]
    assert "--maxNumSeqs" in kv205.message and "spec.backend.workers[0].config.maxNumSeqs" in kv205.message
    assert kv205.fix is not None and kv205.fix.startswith(
        "correct or remove maxNumSeqs in spec.backend.workers[0]"
    )
    line = path.read_text(encoding="utf-8").splitlines()[kv206.loc.line - 1]
    assert "max-model-len: 1000000" in line


@pytest.mark.parametrize(("backend_type", "pods"), [("SGLang", 1), ("MindIE", 1), ("vLLM", 2)])
def test_model_booster_kvlint_does_not_read_keeps_its_note(
    tmp_path: Path, backend_type: str, pods: int
) -> None:
    """Backends kthena's controller does not convert (SGLang, MindIE), and a server worker of several pods (a
    Ray cluster its script builds), give no pod: the KV503 note says so and the object counts as not read."""
    path = tmp_path / "b.yaml"
    path.write_text(_booster(backend_type, pods), encoding="utf-8")
    res = run_check([str(path)], Options(allow_hub=False))
    assert not res.containers
    (note,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert note.severity == "info" and "kubectl get modelserving" in note.message
    assert summarise(res).not_read == 1


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e6, "1e+06"),
        (1048576, "1.048576e+06"),
        (131072, "131072"),
        (0.9, "0.9"),
        (0.00001, "1e-05"),
        (0, "0"),
        (-2.5, "-2.5"),
        (0.0001, "0.0001"),
        (-0.0, "-0"),
    ],
)
def test_go_float_formatting(value: float, text: str) -> None:
    """Go's %v of a float64 (strconv.FormatFloat 'g', shortest): exponent form when exp < -4 or exp >= 6; a
    negative zero keeps its sign (Kthena's formatting is Helm's, kvlint.workloads.stack_values.go_float)."""
    assert _go_value(value) == text


def test_kthena_and_helm_print_nil_depth_and_overflow_as_each_did() -> None:
    """Kthena's %v (json.Unmarshal into interface{}) and Helm's template printing share stack_values.go_text; what
    differs is said by its parameters: Go's <nil> against sprig's "", nesting cut at Kthena's depth, and a number
    beyond float64 (which json.Unmarshal refuses) against Helm's digits of a huge integer."""
    from kvlint.workloads.kthena import _GO_VALUE_DEPTH
    from kvlint.workloads.stack_values import go_text

    assert _go_value(None) == "<nil>" and go_text(None) == ""
    assert _go_value({"b": [None, True], "a": 1e6}) == "map[a:1e+06 b:[<nil> true]]"
    assert go_text({"b": [None, True], "a": 1e6}) == "map[a:1e+06 b:[ true]]"
    deep: object = 1
    for _ in range(_GO_VALUE_DEPTH + 1):
        deep = [deep]
    assert _go_value(deep) == "[" * (_GO_VALUE_DEPTH + 1) + "..." + "]" * (_GO_VALUE_DEPTH + 1)
    assert go_text(deep) == "[" * (_GO_VALUE_DEPTH + 1) + "1" + "]" * (_GO_VALUE_DEPTH + 1)
    assert _go_value(2**1024) == "<out of range>" and go_text(2**1024) == str(2**1024)
    assert _go_value(2**1023) == go_text(float(2**1023)) and go_text(2**1023) == str(2**1023)


def test_model_booster_of_another_group_gets_no_note() -> None:
    """The note is for Kthena's kind: an object of another API group that happens to be called ModelBooster is
    not described by it."""
    data = LDict({"apiVersion": "example.com/v1", "kind": "ModelBooster", "spec": LDict({"backend": "vllm"})})
    doc = Document("x.yaml", 0, data, Loc("x.yaml", 1, 1))
    assert unread_kind_note(doc) is None
    kthena = LDict({**data, "apiVersion": "workload.serving.volcano.sh/v1alpha1"})
    assert unread_kind_note(Document("x.yaml", 0, kthena, Loc("x.yaml", 1, 1))) is not None


GPU_RECIPES_VALUES = {
    "AI-Hypercomputer__gpu-recipes__inference__a3mega__deepseek-r1-671b__sglang-serving-gke__values.yaml": (
        "job.image.repository"
    ),
    "AI-Hypercomputer__gpu-recipes__inference__a3mega__llama-4__vllm-serving-gke__values.yaml": "job.image.repository",
    "AI-Hypercomputer__gpu-recipes__inference__a4x__multi-host-serving__sglang__values_kimi_k3.yaml": (
        "workload.framework: sglang and workload.image"
    ),
    "AI-Hypercomputer__gpu-recipes__inference__a4x__single-host-serving__gemma-4-31b__vllm__v0_23_x__4gpus-bf16-"
    "isl1024-osl500__recipe__values.yaml": "workload.framework: vllm and workload.image",
}


def test_gpu_recipes_values_are_values_files_not_a_clean_pass() -> None:
    """AI-Hypercomputer/gpu-recipes' serving recipes are Helm values for its inference charts: the image left
    empty for --set (``job.image: {repository:, tag:}``) or the engine picked by ``workload.framework: sglang``
    beside ``workload.image``. None of the values shapes kvlint knew matched, so each came back '0 workloads,
    0 warnings': a clean pass on a file that deploys DeepSeek-R1 on 16 GPUs. Each is now a values file (KV002,
    with what made it one) counted as not read."""
    for name, why in GPU_RECIPES_VALUES.items():
        res = _check(name)
        (kv002,) = [d for d in res.diagnostics if d.rule == "KV002"]
        assert "is a Helm values file" in kv002.message and why in kv002.message, name
        assert summarise(res).not_read == 1


@pytest.mark.parametrize(
    "text",
    [
        # written for this test: an image mapping whose repository is empty but that has no tag key
        "job:\n  image:\n    repository:\n  gpus: 8\n",
        # written for this test: an engine chooser without an image (an engine's or a benchmark's own config)
        "workload:\n  framework: vllm\n  model: meta-llama/Llama-3.1-8B\n",
        # written for this test: a chooser naming no engine kvlint models
        "workload:\n  framework: pytorch\n  image: nvcr.io/nvidia/pytorch:24.01\n",
    ],
)
def test_values_near_misses_stay_quiet(tmp_path: Path, text: str) -> None:
    path = tmp_path / "file.yaml"
    path.write_text(text, encoding="utf-8")
    result = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV002"]


# written for this test: ModelBoosters of the wrong shapes and types (a worker that is a string, a non-string
# image, a list config, non-numeric pods, an infinite number, nested values, a list backend)
_HOSTILE_BOOSTERS = """apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelBooster
metadata: {name: h}
spec:
  backend:
    type: vLLM
    modelURI: 12
    cacheURI: "::::"
    replicas: -3
    env: {a: b}
    workers:
      - "x"
      - {type: server, pods: "abc", replicas: 99999999999999999999, config: [1, 2], resources: [a], image: {x: 1}}
---
apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelBooster
metadata: {name: h2}
spec:
  backend:
    type: vLLMDisaggregated
    modelURI: hf://Qwen/Qwen3-8B
    workers:
      - {type: prefill, image: vllm/vllm-openai:v0.10.0, config: {tensor-parallel-size: .inf, x: null, y: {a: [1]}}, resources: {limits: {nvidia.com/gpu: 1}}}
      - {type: decode}
---
apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelBooster
metadata: {name: h3}
spec:
  backend: [1,2]
"""


def test_model_boosters_of_wrong_shapes_are_findings_not_a_traceback(tmp_path: Path) -> None:
    from kvlint.pipeline import INTERNAL_ERROR

    path = tmp_path / "b.yaml"
    path.write_text(_HOSTILE_BOOSTERS, encoding="utf-8")
    res = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in res.diagnostics if INTERNAL_ERROR in d.message]
    assert [d for d in res.diagnostics if d.rule == "KV206" and "'+Inf'" in d.message]
    assert summarise(res).not_read == 1  # the list backend
    assert all(isinstance(cr.container.get("image"), str) for cr in res.containers)


def test_a_model_booster_cache_uri_that_does_not_parse_is_no_traceback(tmp_path: Path) -> None:
    """Kthena's GetCachePath returns "" for a cacheURI Go's url.ParseRequestURI refuses (an unclosed ``[`` in
    the host); Python's urlsplit raised ValueError there and took ``kvlint check`` down with a traceback. The
    engine then reads the model from ``/<md5 of modelURI>``, as Kthena writes it."""
    path = tmp_path / "b.yaml"
    path.write_text(_booster("vLLM").replace("pvc://model-cache", "'hostpath://[cache/x'"), encoding="utf-8")
    res = run_check([str(path)], Options(allow_hub=False))
    (cr,) = res.containers
    digest = hashlib.md5(b"hf://Qwen/Qwen3-8B", usedforsecurity=False).hexdigest()
    assert f"/{digest}" in [str(w) for w in cr.container.get("command")]
