"""KServe's Hugging Face runtime (modelFormat: huggingface) read as the vLLM engine it starts
(kvlint.engines.kserve, kvlint.workloads.kserve)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines.images import KSERVE_HF_VLLM, engine_version
from kvlint.engines.kserve import huggingface_backend, to_vllm_argv
from kvlint.load import load_text
from kvlint.memory.versions import parse_version
from kvlint.pipeline import Options, run_check, run_documents
from kvlint.sizing import unread

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "kserve" / "huggingface-isvc.yaml"
COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
CORPUS = SHARED / "corpus/manifests"


def test_server_options_are_dropped_and_the_model_comes_first() -> None:
    words = [
        "--model_name=llama3",
        "--model_id",
        "org/m",
        "--max_length=4096",
        "--model_revision",
        "abc",
        "--backend=vllm",
        "--disable_lower_case",
        "--tensor-parallel-size",
        "2",
    ]
    assert to_vllm_argv(words) == [
        ("--model", 2),
        ("org/m", 2),
        ("--max-model-len", 3),
        ("4096", 3),
        ("--revision", 4),
        ("abc", 5),
        ("--tensor-parallel-size", 8),
        ("2", 9),
    ]
    # no --model_id: --model_dir, else KServe's default /mnt/models (where storageUri is downloaded)
    assert to_vllm_argv(["--model_dir=/data/m"])[:2] == [("--model", 0), ("/data/m", 0)]
    assert to_vllm_argv([])[:2] == [("--model", None), ("/mnt/models", None)]
    assert huggingface_backend(["--backend", "HuggingFace"]) == "huggingface"
    assert huggingface_backend([]) == "auto"


def test_inference_services_become_vllm_containers() -> None:
    res = run_check([str(FIX)], Options(allow_hub=False))
    by = {cr.workload.name: cr for cr in res.containers}
    llama = by["huggingface-llama3"]
    assert llama.serving.engine == "vllm" and llama.serving.model is not None
    assert llama.serving.model.value == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    assert llama.serving.model.loc is not None and llama.serving.model.loc.line == 14  # the --model_id arg
    assert llama.serving.get("gpu_memory_utilization") == 0.9
    qwen = by["qwen-storage"]
    assert qwen.model is not None and qwen.model.id.lower() == "qwen/qwen2.5-7b-instruct"  # from storageUri
    assert qwen.serving.get("max_model_len") == 8192  # KServe's --max_model_len spelling
    rules = {(d.object.split("/")[-1], d.rule) for d in res.diagnostics}
    assert ("huggingface-llama3", "KV103") in rules and ("qwen-storage", "KV403") in rules
    # the runtime's memory-backed /dev/shm is there (no KV404), the server's own options are not KV205
    assert not {r for _, r in rules} & {"KV404", "KV205", "KV503"}
    kv208 = [d for d in res.diagnostics if d.rule == "KV208"]
    assert kv208 and all("kserve-huggingfaceserver" in d.message for d in kv208)


def test_huggingface_backend_is_not_vllm() -> None:
    text = (
        FIX.read_text()
        .split("---\n")[0]
        .replace("- --model_name=llama3", "- --model_name=llama3\n        - --backend=huggingface")
    )
    res = run_documents(load_text(text, "b.yaml"), Options(allow_hub=False))
    assert res.containers == []
    # not silent: a KV503 note at the --backend argument, and the object counted as not read
    (d,) = res.diagnostics
    assert d.rule == "KV503" and d.severity == "info" and d.loc is not None
    assert text.splitlines()[d.loc.line - 1].strip() == "- --backend=huggingface"
    assert "Transformers" in d.message and "not vLLM" in d.message
    assert [why for _, why in unread(res)] == ["operator settings not read"]
    # --backend=vllm (or none) is vLLM: sized, no note
    res = run_documents(load_text(text.replace("=huggingface", "=vllm"), "b.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.plan is not None and not [d for d in res.diagnostics if d.rule == "KV503"]


def test_the_kserve_sample_with_the_transformers_backend_is_not_read() -> None:
    """kserve/kserve docs/samples/storage/hf/hf_isvc.yaml (fixtures/load, source in its SOURCE.md): a
    Llama-2 predictor on ``--backend=huggingface``, through ``kvlint check``."""
    from click.testing import CliRunner

    from kvlint.cli import main

    p = (
        Path(__file__).resolve().parents[1]
        / "fixtures/load/kserve__kserve__docs__samples__storage__hf__hf_isvc.yaml"
    )
    line = p.read_text().splitlines().index("      - --backend=huggingface") + 1
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--require-sizing", str(p)])
    assert r.exit_code == 1, r.output
    assert f"{p}:{line}:9: info KV503 kvlint does not read this InferenceService" in r.stdout
    assert "not read: 1 " in r.stdout


def test_a_deployment_of_the_server_image_is_read_too() -> None:
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: hf}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
        - name: kserve-container
          image: kserve/huggingfaceserver:v0.15.0-gpu
          args: ["--model_name=m", "--model_id=Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len=4096"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""
    res = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.serving.engine == "vllm" and cr.plan is not None and cr.plan.max_model_len == 4096


def test_serving_runtime_templates_get_gpus_from_the_inference_service() -> None:
    """KV405 (no GPU limit) is for what is deployed as written; a ServingRuntime's container is a template
    whose resources the InferenceService supplies."""
    runtime = """\
apiVersion: serving.kserve.io/v1alpha1
kind: {kind}
metadata: {{name: vllm-runtime}}
spec:
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.11.0
      args: ["--model", "/mnt/models", "--max-model-len", "4096"]
"""
    for kind, expected in (("ClusterServingRuntime", False), ("ServingRuntime", False), ("Pod", True)):
        text = runtime.format(kind=kind)
        res = run_documents(load_text(text, "r.yaml"), Options(allow_hub=False))
        assert ("KV405" in {d.rule for d in res.diagnostics}) is expected, kind


def test_model_id_wins_over_storage_uri_and_revisions_and_custom_runtimes() -> None:
    base = FIX.read_text().split("---\n")[1]  # qwen-storage: hf://Qwen/Qwen2.5-7B-Instruct
    both = base.replace(
        "- --max_model_len=8192",
        "- --max_model_len=8192\n        - --model_id=meta-llama/Llama-3.1-8B-Instruct",
    )
    (cr,) = run_documents(load_text(both, "b.yaml"), Options(allow_hub=False)).containers
    assert cr.model is not None and cr.model.id.lower() == "meta-llama/llama-3.1-8b-instruct"
    rev = base.replace("hf://Qwen/Qwen2.5-7B-Instruct", "hf://Qwen/Qwen2.5-7B-Instruct:main")
    (cr,) = run_documents(load_text(rev, "r.yaml"), Options(allow_hub=False)).containers
    assert cr.model is not None and cr.model.id.lower() == "qwen/qwen2.5-7b-instruct"
    custom = base.replace("      modelFormat:\n", "      runtime: my-vllm-runtime\n      modelFormat:\n")
    res = run_documents(load_text(custom, "c.yaml"), Options(allow_hub=False))
    assert res.containers == [] and not [
        d for d in res.diagnostics if "kserve-huggingfaceserver" in d.message
    ]
    # ... and says that the runtime it names is not among the inputs (issue 16)
    assert [
        d.rule for d in res.diagnostics if "my-vllm-runtime" in d.message and "not among" in d.message
    ] == ["KV503"]


def test_runtime_template_model_is_an_info_note() -> None:
    text = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: vllm-runtime}
spec:
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.11.0
      args: ["--model", "/mnt/models", "--max-model-len", "4096"]
"""
    res = run_documents(load_text(text, "r.yaml"), Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV502"]
    # one note on the runtime (issue 16): its model and GPUs come from the InferenceService that uses it
    assert d.severity == "info" and "come from the InferenceService" in d.message and "GPU" in d.message


def test_oci_modelcar_images_are_read_by_the_model_name_they_carry() -> None:
    """A modelcar (``storageUri: oci://...``) is served from /mnt/models, which kvlint cannot open: the model is
    the catalogued one the image's repository name or tag names (dots and dashes alike), stated as an
    assumption (KV505); an image that names no catalogued model says so (KV502), and generic names never match."""
    from kvlint.models.resolve import oci_named_model

    assert oci_named_model("oci://quay.io/x/modelcar-qwen3-8b:1.0")[0] == "Qwen/Qwen3-8B"
    assert (
        oci_named_model("oci://quay.io/x/modelcar-catalog:qwen2-5-7b-instruct")[0]
        == "Qwen/Qwen2.5-7B-Instruct"
    )
    assert oci_named_model("oci://quay.io/x/qwen2.5-0.5b-quantized.w8a8-modelcar:0.0.1")[0] == (
        "x/qwen2.5-0.5b-quantized.w8a8"
    )
    assert oci_named_model("oci://quay.io/x/models:v1") is None
    assert oci_named_model("oci://quay.io/x/modelcar-no-such-model-7b:1") is None

    base = FIX.read_text().split("---\n")[1]  # qwen-storage: hf://Qwen/Qwen2.5-7B-Instruct
    oci = base.replace(
        "hf://Qwen/Qwen2.5-7B-Instruct", "oci://quay.io/example/modelcar-qwen2.5-7b-instruct:1.5"
    )
    res = run_documents(load_text(oci, "o.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B-Instruct"
    kv505 = [d for d in res.diagnostics if d.rule == "KV505"]
    assert len(kv505) == 1 and "modelcar-qwen2.5-7b-instruct" in kv505[0].message
    unknown = base.replace("hf://Qwen/Qwen2.5-7B-Instruct", "oci://quay.io/example/modelcar-catalog:latest")
    res = run_documents(load_text(unknown, "u.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.model is None
    assert any(d.rule == "KV502" and "cannot open OCI images" in d.message for d in res.diagnostics)


@pytest.mark.parametrize(
    ("tag", "vllm"),
    [
        # ARG VLLM_VERSION of python/huggingface_server.Dockerfile at each kserve/kserve tag (its last
        # `pip install vllm==${VLLM_VERSION}` step)
        ("v0.13.0", "0.4.2"),
        ("v0.15.0-gpu", "0.8.1"),
        ("v0.15.2-gpu", "0.8.5"),
        ("v0.16.0", "0.9.2"),
        ("v0.20.0", "0.24.0"),
        ("v0.12.1", None),  # a release kvlint has not read: not guessed
        ("latest-gpu", None),
    ],
)
def test_kserve_release_tags_name_the_vllm_inside(tag: str, vllm: str | None) -> None:
    assert engine_version(f"kserve/huggingfaceserver:{tag}") == vllm


def test_a_pinned_kserve_image_is_planned_with_its_vllm_release() -> None:
    # Before, the version of a kserve/huggingfaceserver container was always unknown and kvlint planned
    # KServe 0.15's vLLM 0.8.x with the newest release's rules.
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: hf}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
        - name: kserve-container
          image: kserve/huggingfaceserver:v0.15.2-gpu
          args: ["--model_name=m", "--model_id=Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len=4096"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""
    (cr,) = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False)).containers
    assert cr.serving.version == engine_version("kserve/huggingfaceserver:v0.15.2-gpu")
    assert cr.plan is not None and cr.plan.engine_version == cr.serving.version


def test_kv208_on_latest_kserve_server_proposes_a_kserve_tag() -> None:
    # kserve/kserve docs/samples/fluid (fixtures/collected, sources in its INDEX.csv): the runtime runs
    # kserve/huggingfaceserver:latest. KV208 used to say "pin the image to a release tag (e.g.
    # vllm/vllm-openai:v0.11.0)", an image that has no KServe model server in it.
    # (the sample's InferenceService and the runtime it names; the directory also holds the sample's kserve-isvc.yaml)
    fluid = [
        COLLECTED / f"kserve__kserve__docs__samples__fluid__{n}.yaml"
        for n in ("fluid-isvc", "kserve-huggingfaceserver")
    ]
    assert all(p.is_file() for p in fluid)
    res = run_check([str(p) for p in fluid], Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV208"]
    assert "kserve/huggingfaceserver:latest" in d.message
    assert "vllm/vllm-openai" not in d.fix and "pin kserve/huggingfaceserver to a KServe release tag" in d.fix
    newest = max(KSERVE_HF_VLLM, key=parse_version)
    assert f"v{newest}" in d.fix and KSERVE_HF_VLLM[newest] in d.fix


@pytest.mark.parametrize("tag", ["v0.99.0", "v0.12.1-gpu", "latest-gpu"])
def test_kv208_on_a_kserve_tag_whose_vllm_kvlint_does_not_know(tag: str) -> None:
    # A KServe tag outside images.KSERVE_HF_VLLM leaves the vLLM release unknown, as `latest` does: it was
    # planned as the newest release with only an assumption line and no KV208.
    text = f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: hf}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      containers:
        - name: kserve-container
          image: kserve/huggingfaceserver:{tag}
          args: ["--model_name=m", "--model_id=Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len=4096"]
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""
    res = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.serving.version is None
    (d,) = [d for d in res.diagnostics if d.rule == "KV208"]
    assert f"KServe tag {tag}" in d.message and d.loc is not None and d.loc.line == 10
    assert "pin kserve/huggingfaceserver to a KServe release tag" in d.fix
    # a tag kvlint knows stays quiet, and so does --engine-version
    known = text.replace(tag, "v" + max(KSERVE_HF_VLLM, key=parse_version))
    assert not [
        d
        for d in run_documents(load_text(known, "d.yaml"), Options(allow_hub=False)).diagnostics
        if d.rule == "KV208"
    ]
    pinned = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False, engine_version="0.20.0"))
    assert not [d for d in pinned.diagnostics if d.rule == "KV208"]


MULTINODE_RUNTIME = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "load"
    / "kserve__kserve__config__runtimes__kserve-huggingfaceserver-multinode.yaml"
)
MULTINODE_ISVC = Path(__file__).resolve().parents[1] / "fixtures" / "kserve" / "multinode-isvc.yaml"


def _multinode_with_args(tmp_path: Path, args: list[str], drop: str | None = None) -> list:
    """The multi-node guide's InferenceService (``workerSpec`` tensorParallelSize 1, pipelineParallelSize 2)
    with ``args`` added to its model (and the ``drop`` line removed), checked with KServe's multi-node
    runtime; the KV207 diagnostics."""
    text = MULTINODE_ISVC.read_text()
    if drop is not None:
        assert drop in text
        text = text.replace(drop, "")
    listed = "".join(f"        - {a}\n" for a in args)
    text = text.replace("      storageUri:", f"      args:\n{listed}      storageUri:")
    path = tmp_path / "isvc.yaml"
    path.write_text(text)
    result = run_check([str(path), str(MULTINODE_RUNTIME)], Options(allow_hub=False))
    return [d for d in result.diagnostics if d.rule == "KV207"]


def test_args_overriding_kserves_tensor_parallel_env_is_a_kv207(tmp_path: Path) -> None:
    # KServe sets TENSOR_PARALLEL_SIZE from workerSpec.tensorParallelSize and the runtime's script passes
    # --tensor-parallel-size=${TENSOR_PARALLEL_SIZE} before the args ($0 $@): vLLM's argparse keeps the last
    # (kserve/kserve components/predictor.go multiNodeProcess; config/runtimes/kserve-huggingfaceserver-multinode.yaml)
    (d,) = _multinode_with_args(tmp_path, ["--tensor-parallel-size=4"])
    assert d.severity == "warning"
    lines = (tmp_path / "isvc.yaml").read_text().splitlines()
    assert d.loc.file.endswith("isvc.yaml") and lines[d.loc.line - 1].strip() == "- --tensor-parallel-size=4"
    assert (
        "${TENSOR_PARALLEL_SIZE}" in d.message
        and "InferenceService's workerSpec.tensorParallelSize" in d.message
    )
    assert "--tensor-parallel-size 1" in d.message and "uses the last one (4)" in d.message
    assert "workerSpec.tensorParallelSize" in (d.fix or "")


def test_runtime_default_parallel_size_names_the_key_to_set(tmp_path: Path) -> None:
    # pipelineParallelSize 1 comes from the runtime's workerSpec here; the InferenceService no longer sets it
    (d,) = _multinode_with_args(
        tmp_path, ["--pipeline-parallel-size", "4"], drop="      pipelineParallelSize: 2\n"
    )
    assert (
        "the runtime's workerSpec.pipelineParallelSize" in d.message and "uses the last one (4)" in d.message
    )


def test_args_agreeing_with_kserves_env_are_no_conflict(tmp_path: Path) -> None:
    assert _multinode_with_args(tmp_path, ["--tensor-parallel-size=1", "--max-model-len=4096"]) == []


def test_an_inference_service_without_worker_spec_is_not_put_on_a_multinode_runtime() -> None:
    # KServe auto-selects a multi-node runtime (one with a workerSpec) only for a predictor with a workerSpec
    # (predictor_model.go GetSupportingRuntimes: IsMultiNodeRuntime() == isMultinode); kvlint merged qwen-storage
    # (no workerSpec) into kserve-huggingfaceserver-multinode, so its --tensor-parallel-size=2 met the runtime's
    # --tensor-parallel-size=${TENSOR_PARALLEL_SIZE}
    result = run_check([str(FIX), str(MULTINODE_RUNTIME)], Options(allow_hub=False))
    (cr,) = [c for c in result.containers if c.workload.name == "qwen-storage"]
    env = {e.get("name") for e in cr.workload.pod_spec["containers"][0].get("env") or []}
    assert "TENSOR_PARALLEL_SIZE" not in env and cr.workload.role is None
    assert not [d for d in result.diagnostics if d.rule == "KV207"]
    alone = run_check([str(FIX)], Options(allow_hub=False))
    mine = sorted((d.rule, d.loc.line) for d in result.diagnostics if d.loc.file == str(FIX))
    assert mine == sorted((d.rule, d.loc.line) for d in alone.diagnostics)


@pytest.mark.parametrize(
    ("field", "value"),
    [("tensorParallelSize", "0"), ("pipelineParallelSize", "-1"), ("tensorParallelSize", '"2"')],
)
def test_a_worker_size_kserve_refuses_is_a_kv206_and_not_sized(
    tmp_path: Path, field: str, value: str
) -> None:
    """KServe's InferenceService webhook refuses workerSpec sizes below 1 (``validateMultiNodeVariables``) and
    its schema a non-integer: KV206 at the field, and no pod sized (the multi-node guide's InferenceService,
    checked with KServe's multi-node runtime)."""
    text = MULTINODE_ISVC.read_text()
    old = {"tensorParallelSize": "tensorParallelSize: 1", "pipelineParallelSize": "pipelineParallelSize: 2"}[
        field
    ]
    assert old in text
    text = text.replace(old, f"{field}: {value}")
    path = tmp_path / "isvc.yaml"
    path.write_text(text)
    result = run_check([str(path), str(MULTINODE_RUNTIME)], Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV206"]
    assert d.severity == "error" and d.loc is not None and d.loc.file == str(path)
    assert text.splitlines()[d.loc.line - 1].strip() == f"{field}: {value}"
    assert f"workerSpec.{field}" in d.message and "not size" in d.message
    assert not [cr for cr in result.containers if cr.workload.doc.path == str(path)]
    # the guide's own sizes are sized (leader and worker)
    result = run_check([str(MULTINODE_ISVC), str(MULTINODE_RUNTIME)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV206"]
    assert [cr for cr in result.containers if cr.workload.doc.path == str(MULTINODE_ISVC)]


@pytest.mark.parametrize(
    ("field", "value"),
    [("tensorParallelSize", "0"), ("pipelineParallelSize", "-1"), ("tensorParallelSize", '"2"')],
)
def test_a_runtime_worker_size_kserve_refuses_is_a_kv206(tmp_path: Path, field: str, value: str) -> None:
    """KServe's ServingRuntime/ClusterServingRuntime webhook refuses the runtime's own workerSpec sizes below 1
    (servingruntime_webhook.go ``validateMultiNodeSpec``) and its schema a non-integer: KV206 at the runtime's
    field, linted alone and with the multi-node guide's InferenceService (then not sized: the runtime is never
    created)."""
    text = MULTINODE_RUNTIME.read_text()
    old = f"    {field}: 1\n"
    assert old in text
    text = text.replace(old, f"    {field}: {value}\n")
    rt = tmp_path / "runtime.yaml"
    rt.write_text(text)
    line = text.splitlines().index(f"    {field}: {value}") + 1
    for inputs in ([rt], [MULTINODE_ISVC, rt]):
        result = run_check([str(p) for p in inputs], Options(allow_hub=False))
        (d,) = [d for d in result.diagnostics if d.rule == "KV206"]
        assert d.severity == "error" and d.loc is not None and (d.loc.file, d.loc.line) == (str(rt), line)
        assert f"invalid value {value.strip(chr(34))!r} for workerSpec.{field}" in d.message
        assert "ClusterServingRuntime" in d.message and "no InferenceService runs on it" in d.message
        assert not [cr for cr in result.containers if cr.plan is not None]
    assert "does not size the predictor that uses it" in d.message
    assert not [cr for cr in result.containers if cr.workload.doc.path == str(MULTINODE_ISVC)]


def test_a_disabled_runtime_or_valid_sizes_are_not_refused(tmp_path: Path) -> None:
    """The webhook lets a disabled runtime through unchecked; the shipped runtime's sizes (1, 1) are valid."""
    text = MULTINODE_RUNTIME.read_text().replace("    tensorParallelSize: 1\n", "    tensorParallelSize: 0\n")
    assert "\nspec:\n" in text
    rt = tmp_path / "runtime.yaml"
    rt.write_text(text.replace("\nspec:\n", "\nspec:\n  disabled: true\n", 1))
    for inputs in ([rt], [MULTINODE_RUNTIME], [MULTINODE_ISVC, MULTINODE_RUNTIME]):
        result = run_check([str(p) for p in inputs], Options(allow_hub=False))
        assert not [d for d in result.diagnostics if d.rule == "KV206"], inputs
