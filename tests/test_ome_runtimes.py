"""OME serving runtimes that name their model are sized on it and on the GPUs they declare (kvlint.workloads.ome).

Inputs are sgl-project/ome's own runtimes (``config/runtimes``): one in fixtures/collected, the others in the
shared corpus (skipped without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.sizing import outcomes

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "corpus" / "manifests"
GEMMA = (
    REPO
    / "fixtures"
    / "collected"
    / "sgl-project__ome__config__runtimes__srt__google__gemma-2-27b-it-rt.yaml"
)


def _check(path: Path):
    return run_check([str(path)], Options(allow_hub=False))


def _line_of(path: Path, text: str) -> int:
    """1-based line of the first line of ``path`` containing ``text``."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_served_model_name_sizes_the_runtime_with_a_note_at_that_line() -> None:
    result = _check(GEMMA)
    assert outcomes(result.containers) == ["fleet"] or outcomes(result.containers) == ["plan"]
    notes = [d for d in result.diagnostics if d.rule == "KV505"]
    assert len(notes) == 1 and notes[0].severity == "info"
    assert "'google/gemma-2-27b-it' (its --served-model-name)" in notes[0].message
    assert "nvidia.com/gpu: 2" in notes[0].message
    assert notes[0].loc.line == _line_of(GEMMA, "- google/gemma-2-27b-it")
    assert not [d for d in result.diagnostics if d.rule == "KV502"]


def test_runtime_naming_no_model_stays_a_template(tmp_path: Path) -> None:
    text = GEMMA.read_text().replace("- google/gemma-2-27b-it", "- my-model")
    path = tmp_path / "rt.yaml"
    path.write_text(text)
    result = _check(path)
    assert outcomes(result.containers) == ["runtime template"]
    assert [d.rule for d in result.diagnostics if d.rule in ("KV502", "KV505")] == ["KV502"]


def test_runtime_declaring_no_gpus_stays_a_template(tmp_path: Path) -> None:
    text = GEMMA.read_text().replace("nvidia.com/gpu: 2", "cpu: 2")
    path = tmp_path / "rt.yaml"
    path.write_text(text)
    result = _check(path)
    assert outcomes(result.containers) == ["runtime template"]
    assert not [d for d in result.diagnostics if d.rule == "KV505"]


def test_model_of_another_architecture_is_not_taken(tmp_path: Path) -> None:
    # OME selects this runtime only for a BaseModel of its supportedModelFormats' architecture
    text = GEMMA.read_text().replace(
        "modelArchitecture: Gemma2ForCausalLM", "modelArchitecture: LlamaForCausalLM"
    )
    assert text != GEMMA.read_text()
    path = tmp_path / "rt.yaml"
    path.write_text(text)
    assert outcomes(_check(path).containers) == ["runtime template"]


def test_kserve_serving_runtime_is_unchanged(tmp_path: Path) -> None:
    text = GEMMA.read_text().replace("apiVersion: ome.io/v1beta1", "apiVersion: serving.kserve.io/v1alpha1")
    path = tmp_path / "rt.yaml"
    path.write_text(text)
    assert "runtime template" in outcomes(_check(path).containers)


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs the shared corpus beside the checkout")
@pytest.mark.parametrize(
    "name, model",
    [
        ("srt__Qwen__Qwen2.5-72B-Instruct-rt.yaml", "Qwen/Qwen2.5-72B-Instruct"),
        ("srt__Qwen__qwen3-30b-a3b-rt.yaml", "Qwen/Qwen3-30B-A3B"),
        ("srt__deepseek-rdma-rt.yaml", "deepseek-ai/DeepSeek-V3"),
    ],
)
def test_corpus_runtimes_are_sized(name: str, model: str) -> None:
    path = SHARED / f"sgl-project__ome__config__runtimes__{name}"
    result = _check(path)
    sized = outcomes(result.containers)
    assert sized and all(s in ("plan", "fleet") for s in sized)
    notes = [d for d in result.diagnostics if d.rule == "KV505"]
    assert len(notes) == len(sized) and all(f"'{model}'" in d.message for d in notes)


def test_parallelism_size_is_the_gpus_ome_gives_the_pod(tmp_path: Path) -> None:
    # OME sets PARALLELISM_SIZE = GPUs per pod x (1 + worker.size) (components/engine.go setParallelismEnvVarForEngine)
    text = GEMMA.read_text().replace(
        '- --tp-size\n        - "2"', "- --tp-size\n        - $(PARALLELISM_SIZE)"
    )
    assert text != GEMMA.read_text()
    path = tmp_path / "rt.yaml"
    path.write_text(text)
    result = _check(path)
    (cr,) = result.containers
    assert cr.serving.get("tp_size") == 2
    assert not [d for d in result.diagnostics if d.rule == "KV503"]


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs the shared corpus beside the checkout")
def test_multi_node_runtime_gets_ome_and_lws_env() -> None:
    # srt-deepseek-rdma: leader and worker.size 1, 8 GPUs each: --tp-size $(PARALLELISM_SIZE) is 16 over
    # --nnodes $(LWS_GROUP_SIZE) 2 (OME runs a multi-node engine as a LeaderWorkerSet of worker.size + 1 pods)
    result = _check(SHARED / "sgl-project__ome__config__runtimes__srt__deepseek-rdma-rt.yaml")
    assert [cr.serving.get("tp_size") for cr in result.containers] == [16, 16]
    assert [cr.serving.get("nnodes") for cr in result.containers] == [2, 2]
    assert [cr.serving.get("node_rank") for cr in result.containers] == [0, 1]
    assert not [d for d in result.diagnostics if d.rule == "KV503"]


RDMA = REPO / "fixtures" / "load" / "sgl-project__ome__config__runtimes__srt__deepseek-rdma-rt.yaml"


def _rdma_with_worker_size(tmp_path: Path, size: str) -> tuple[Path, object]:
    """srt-deepseek-rdma (leader + worker, worker.size 1) with its worker.size replaced by ``size``."""
    text = RDMA.read_text()
    assert text.count("    worker:\n      size: 1\n") == 1
    path = tmp_path / "rt.yaml"
    path.write_text(text.replace("    worker:\n      size: 1\n", f"    worker:\n      size: {size}\n"))
    return path, _check(path)


@pytest.mark.parametrize("size, severity", [("-5", "error"), ("0", "warning"), ('"two"', "error")])
def test_worker_size_that_is_not_positive_is_said_at_its_line_and_not_sized(
    tmp_path: Path, size: str, severity: str
) -> None:
    # OME runs leader + worker as a LeaderWorkerSet of worker.size + 1 pods and sets PARALLELISM_SIZE to the GPUs
    # per pod x (1 + worker.size), checking neither (components/engine.go getWorkerSize): -5 was read as TP 1
    path, result = _rdma_with_worker_size(tmp_path, size)
    (d,) = [d for d in result.diagnostics if d.rule == "KV206"]
    assert d.severity == severity and "spec.engineConfig.worker.size" in d.message
    assert d.loc.line == _line_of(path, f"size: {size}")
    # no parallel size is made up: PARALLELISM_SIZE is left unset and the runtime is not sized on its model
    assert outcomes(result.containers) == ["runtime template", "runtime template"]
    assert all(cr.serving.get("tp_size") is None for cr in result.containers)
    assert not [d for d in result.diagnostics if d.rule in ("KV403", "KV505")]


@pytest.mark.parametrize(
    "size, shown",
    [("true", "is true,"), ("{a: 1}", "is {a: 1},"), ("[1, two]", "is [1, two],"), ('"two"', "is 'two',")],
)
def test_worker_size_of_another_type_is_shown_as_yaml_spells_it(
    tmp_path: Path, size: str, shown: str
) -> None:
    # the message names the value as the manifest's YAML spells it, not as Python prints it ('True', {'a': 1})
    path, result = _rdma_with_worker_size(tmp_path, size)
    (d,) = [d for d in result.diagnostics if d.rule == "KV206"]
    assert f"spec.engineConfig.worker.size {shown} not an integer" in d.message
    assert d.loc.line == _line_of(path, f"size: {size}")


def test_positive_worker_size_is_no_finding(tmp_path: Path) -> None:
    _, result = _rdma_with_worker_size(tmp_path, "3")
    assert not [d for d in result.diagnostics if d.rule == "KV206"]
    assert [cr.serving.get("tp_size") for cr in result.containers] == [32, 32]


def test_inference_service_worker_size_is_checked_too(tmp_path: Path) -> None:
    # an OME InferenceService's engine takes the same leader/worker fields (pkg/apis/ome/v1beta1 WorkerSpec.Size)
    path = tmp_path / "isvc.yaml"
    path.write_text(
        "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: deepseek-v3\nspec:\n"
        "  model:\n    name: deepseek-v3\n  engine:\n    leader:\n      runner:\n        name: ome-container\n"
        "        image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64\n"
        "        resources:\n          limits:\n            nvidia.com/gpu: 8\n"
        "    worker:\n      size: -1\n      runner:\n        name: ome-container\n"
        "        image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64\n"
    )
    (d,) = [d for d in _check(path).diagnostics if d.rule == "KV206"]
    assert d.severity == "error" and "spec.engine.worker.size is -1" in d.message
    assert d.loc.line == _line_of(path, "size: -1")


# OME edits the runner's env (PARALLELISM_SIZE through UpdateEnvVars: the container's own entry takes OME's value in
# its place), then LWS creates the pods with its variables at the head of each env, replacing the container's own
# of the same names (sgl-project/ome utils/container.go; kubernetes-sigs/lws v0.5.1, OME's go.mod). kvlint appended
# them all and kept the container's values, so a runner's own LWS_GROUP_SIZE or PARALLELISM_SIZE was read, and an
# entry of its own built on $(LWS_WORKER_INDEX) stayed unresolved.
_LEADER_ENV = "        env:\n          - name: MC_TE_METRIC\n"


def _rdma_leader_env(tmp_path: Path, entries: str, args: tuple[str, str] | None = None):
    text = RDMA.read_text()
    assert text.count(_LEADER_ENV) == 2  # the leader's runner, then the worker's
    text = text.replace(_LEADER_ENV, "        env:\n" + entries + "          - name: MC_TE_METRIC\n", 1)
    if args is not None:
        assert text.count(args[0]) >= 1
        text = text.replace(args[0], args[1], 1)
    path = tmp_path / "rt.yaml"
    path.write_text(text)
    return _check(path)


def test_lws_variables_replace_the_runners_own(tmp_path: Path) -> None:
    result = _rdma_leader_env(tmp_path, '          - name: LWS_GROUP_SIZE\n            value: "1"\n')
    assert [cr.serving.get("nnodes") for cr in result.containers] == [2, 2]


def test_ome_parallelism_size_replaces_the_runners_own(tmp_path: Path) -> None:
    result = _rdma_leader_env(tmp_path, '          - name: PARALLELISM_SIZE\n            value: "4"\n')
    assert [cr.serving.get("tp_size") for cr in result.containers] == [16, 16]


def test_an_entry_built_on_an_lws_variable_reads_it(tmp_path: Path) -> None:
    result = _rdma_leader_env(
        tmp_path,
        "          - name: RANK\n            value: $(LWS_WORKER_INDEX)\n",
        (
            "          - --node-rank\n          - $(LWS_WORKER_INDEX)\n",
            "          - --node-rank\n          - $(RANK)\n",
        ),
    )
    assert [cr.serving.get("node_rank") for cr in result.containers] == [0, 1]
    assert not [d for d in result.diagnostics if d.rule == "KV503"]
