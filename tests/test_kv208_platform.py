"""KV208 (engine release not pinned) on accelerators other than CUDA GPUs: the fix never proposes a CUDA image
for a TPU or ROCm workload, and the message says what kvlint did with the assumed release there (on a TPU
the GPU memory rules are skipped, KV501, so it must not claim to have applied them)."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import CheckResult

_CUDA_IMAGES = ("vllm/vllm-openai", "lmsysorg/sglang", "ghcr.io/huggingface/text-generation-inference")


def _pod(tmp_path: Path, image: str, selector: str, resource: str, annotations: str = "") -> CheckResult:
    p = tmp_path / f"{image.replace('/', '_').replace(':', '_')}.yaml"
    p.write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n{annotations}spec:\n{selector}  containers:\n"
        f"  - name: vllm\n    image: {image}\n"
        '    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]\n'
        f"    resources: {{limits: {{{resource}: 1}}}}\n"
    )
    return run_check([str(p)], Options(allow_hub=False))


def _one(r: CheckResult, rule: str):  # noqa: ANN202 - Diagnostic
    (d,) = [d for d in r.diagnostics if d.rule == rule]
    return d


def test_tpu_workload_is_not_told_to_pin_a_cuda_image(tmp_path: Path) -> None:
    r = _pod(
        tmp_path,
        "vllm/vllm-tpu:latest",
        "  nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice}\n",
        "google.com/tpu",
    )
    (cr,) = r.containers
    assert cr.plan is None and _one(r, "KV501")  # the memory rules were skipped on the TPU
    d = _one(r, "KV208")
    assert not any(img in d.fix for img in _CUDA_IMAGES), d.fix
    assert "vllm/vllm-tpu" in d.fix  # pin the image the workload runs
    assert "and its memory rules" not in d.message and "skipped" in d.message, d.message


def test_rocm_workload_is_told_to_pin_its_own_image(tmp_path: Path) -> None:
    r = _pod(
        tmp_path,
        "rocm/vllm:latest",
        "",
        "amd.com/gpu",
        annotations="  annotations: {kvlint.io/accelerator: amd-instinct-mi300x}\n",
    )
    (cr,) = r.containers
    assert cr.plan is not None  # kvlint sizes ROCm GPUs: its memory rules did apply
    d = _one(r, "KV208")
    assert not any(img in d.fix for img in _CUDA_IMAGES), d.fix
    assert "rocm/vllm" in d.fix
    assert "memory rules" in d.message


def test_cuda_workload_keeps_the_release_tag_example(tmp_path: Path) -> None:
    r = _pod(
        tmp_path,
        "vllm/vllm-openai:latest",
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n",
        "nvidia.com/gpu",
    )
    d = _one(r, "KV208")
    assert "vllm/vllm-openai:v" in d.fix and "memory rules" in d.message


def test_gaudi_pod_is_not_planned_on_nvidia_and_no_false_kv304() -> None:
    """A vLLM pod requesting habana.ai/gaudi with --device hpu on a vendor image kvlint does not know: not a
    CUDA/ROCm GPU (KV501 says why, no NVIDIA fleet verdict, sizing 'not a CUDA/ROCm GPU'); placed on a Gaudi
    with --accelerator, the unknown image is no evidence of a CUDA build (no KV304); an engine's own CUDA image
    there still is."""
    from kvlint.load import load_text
    from kvlint.options import Options
    from kvlint.pipeline import run_documents
    from kvlint.sizing import sizing_of

    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: g}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: server\n        image: intel/redhat-ai-services:llm-on-openshift_1.20.0\n"
        '        command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]\n'
        '        args: ["--model=mistralai/Mistral-7B-Instruct-v0.3", "--device", "hpu"]\n'
        "        resources: {limits: {habana.ai/gaudi: 1}}\n"
    )
    res = run_documents(load_text(text, "g.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.fleet == () and sizing_of(cr) == "not a CUDA/ROCm GPU"
    (kv501,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert "--device hpu" in kv501.message and "that Intel Gaudi accelerator" in kv501.fix
    # without --device, the resource says it
    res = run_documents(
        load_text(text.replace(', "--device", "hpu"', ""), "g.yaml"), Options(allow_hub=False)
    )
    (kv501,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert "requests habana.ai/gaudi" in kv501.message
    on_gaudi = run_documents(load_text(text, "g.yaml"), Options(allow_hub=False, accelerator="gaudi2"))
    assert not [d for d in on_gaudi.diagnostics if d.rule == "KV304"]
    cuda = text.replace(
        "intel/redhat-ai-services:llm-on-openshift_1.20.0", "vllm/vllm-openai:v0.9.2"
    ).replace(', "--device", "hpu"', "")
    on_gaudi = run_documents(load_text(cuda, "c.yaml"), Options(allow_hub=False, accelerator="gaudi2"))
    assert [d for d in on_gaudi.diagnostics if d.rule == "KV304"]


def test_image_platform_memo_answers_as_the_function() -> None:
    """The platform of an image reference (memoised by the reference) is what the function answers, on repeated
    calls too, for references naming each platform word, in either case, and none."""
    from kvlint.engines.images import image_platform

    raw = image_platform.__wrapped__
    images = [
        "vllm/vllm-openai:v0.11.0",
        "rocm/vllm:latest",
        "vllm/vllm-tpu:nightly",
        "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1",
        "vault.habana.ai/gaudi-docker/1.21.0/ubuntu22.04/habanalabs/vllm:latest",
        "intel/vllm:XPU",
        "lmsysorg/sglang:v0.5.2-cu126",
        "ghcr.io/huggingface/text-generation-inference:3.3.4-rocm",
        "my.registry/AMD-build:1",
        "",
    ]
    for _ in range(2):
        for image in images:
            assert image_platform(image) == raw(image), image
    assert [image_platform(i) for i in images[:6]] == ["cuda", "rocm", "tpu", "neuron", "gaudi", "xpu"]
    assert image_platform("my.registry/AMD-build:1") == "rocm"


def test_amd64_architecture_tag_is_not_an_amd_build() -> None:
    """``amd64`` is the x86-64 architecture tag (of CUDA builds too), not AMD's ROCm (the sgl-project/ome runtimes'
    ``lmsysorg/sglang:v0.5.5.post3-cu129-amd64``)."""
    from kvlint.engines.images import image_platform

    assert image_platform("docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64") == "cuda"
    assert image_platform("registry.example/vllm-amd64-rocm:1") == "rocm"


def test_image_memos_keep_no_long_reference() -> None:
    """The memoised image readers (engine, engine mention, version, platform) answer for a reference longer
    than _CACHED_IMAGE_CHARS as the function does, without keeping it (a webhook worker reviews manifests
    whose image strings anyone can choose), and keep a short one."""
    from kvlint.engines import images

    long_ref = "registry.example/" + "a" * images._CACHED_IMAGE_CHARS + "/rocm-vllm-openai:v0.11.0"
    short_ref = "registry.example/short/vllm-openai:v0.10.2"
    for reader in (
        images.engine_of_image,
        images.image_mentions_engine,
        images.engine_version,
        images.image_platform,
    ):
        reader.cache_clear()  # type: ignore[attr-defined]
        for _ in range(2):
            assert reader(long_ref) == reader.__wrapped__(long_ref)  # type: ignore[attr-defined]
        assert reader.cache_info().currsize == 0  # type: ignore[attr-defined]
        assert reader(short_ref) == reader.__wrapped__(short_ref)  # type: ignore[attr-defined]
        assert reader.cache_info().currsize == 1  # type: ignore[attr-defined]
    assert images.image_platform(long_ref) == "rocm"


def _command_pod(tmp_path: Path, image: str) -> Path:
    # the image of neuralmagic/helm-charts' nm-vllm chart (charts/nm-vllm/values.yaml: nm-vllm-openai, tag
    # v0.1.0, nm-vllm's own release number); the rest is made up for the test
    p = tmp_path / "fork.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n"
        "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n  containers:\n"
        f"  - name: vllm\n    image: {image}\n"
        '    command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]\n'
        '    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]\n'
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return p


def test_tag_of_an_image_kvlint_does_not_know_yields_to_engine_version(tmp_path: Path) -> None:
    """An image kvlint does not know as a vLLM release image, named ``vllm`` (rtalaricw/vllm:0.1, in
    fixtures/collected), has a tag that may be its own version: KV208 says the vLLM release was read from that
    tag, and --engine-version, which its fix names, takes precedence over it (it was ignored for any tagged
    image, so the fix did not work)."""
    p = _command_pod(tmp_path, "rtalaricw/vllm:0.1")
    r = run_check([str(p)], Options(allow_hub=False))
    kv208 = _one(r, "KV208")
    # (engines52: a bare "vllm" repository's tag is vLLM's release only where its publisher says so, Intel's and
    # AWS's: this one's 0.1 is its own version, not read as vLLM 0.1)
    assert "its tag 0.1 is read as that image's own version, not as a vLLM release" in kv208.message
    assert "--engine-version" in (kv208.fix or "")
    fixed = run_check([str(p)], Options(allow_hub=False, engine_version="0.5.0"))
    (cr,) = fixed.containers
    assert cr.serving.version == "0.5.0" and cr.plan is not None
    assert not [d for d in fixed.diagnostics if d.rule == "KV208"]


def test_tag_of_a_known_release_image_wins_over_engine_version(tmp_path: Path) -> None:
    p = _command_pod(tmp_path, "vllm/vllm-openai:v0.8.5")
    (cr,) = run_check([str(p)], Options(allow_hub=False, engine_version="0.11.0")).containers
    assert cr.serving.version == "0.8.5"


def test_no_kv208_where_the_engine_command_could_not_be_read() -> None:
    # awslabs/ai-on-eks's vLLM-on-Inferentia2 RayService (fixtures/collected, source in its INDEX.csv): vLLM runs in
    # Ray Serve's Python application, so its command is unreadable (KV503) and kvlint applies no rule of any
    # release to the head or the worker. Before, both still got KV208 on the image's `latest` tag, one saying
    # "kvlint assumed 0.33.0 and its memory rules", the other pointing at a KV501 that was never reported.
    path = (
        Path(__file__).resolve().parents[1]
        / "fixtures"
        / "collected"
        / "awslabs__ai-on-eks__blueprints__inference__vllm-rayserve-inf2__vllm-rayserve-deployment.yaml"
    )
    r = run_check([str(path)], Options(allow_hub=False))
    assert sorted(cr.container_name for cr in r.containers) == ["head", "worker"]
    assert all(cr.serving.unreadable and cr.serving.image.endswith(":latest") for cr in r.containers)
    # no KV208; the worker, which requests aws.amazon.com/neuron, also gets KV501 (kvlint does not size a Neuron
    # device whatever its command: test_sizing.py)
    assert sorted(d.rule for d in r.diagnostics) == ["KV501", "KV503", "KV503"]
    assert [d.container for d in r.diagnostics if d.rule == "KV501"] == ["worker"]


def test_kv208_still_reported_for_a_command_that_names_no_model(tmp_path: Path) -> None:
    # the command was read (its flags decide option and context-length rules), so the release still matters
    p = tmp_path / "no-model.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: vllm\n"
        '    image: vllm/vllm-openai:latest\n    args: ["--max-model-len", "8192"]\n'
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    r = run_check([str(p)], Options(allow_hub=False))
    (cr,) = r.containers
    assert not cr.serving.unreadable and _one(r, "KV208")


def test_kv208_never_proposes_another_image_for_a_build_of_another_repository(tmp_path: Path) -> None:
    # llm-d-modelservice's rendered P/D example (fixtures/collected, source in its INDEX.csv) runs
    # ghcr.io/llm-d/llm-d-cuda:latest. KV208 used to say "pin the image to a release tag (e.g.
    # vllm/vllm-openai:v0.11.0)": another image, without llm-d's build. llm-d's tags are its own releases.
    path = (
        Path(__file__).resolve().parents[1]
        / "fixtures"
        / "collected"
        / "llm-d-incubation__llm-d-modelservice__examples__output-pd.yaml"
    )
    r = run_check([str(path)], Options(allow_hub=False))
    kv208 = [d for d in r.diagnostics if d.rule == "KV208"]
    assert len(kv208) == 2  # decode and prefill
    for d in kv208:
        assert "vllm/vllm-openai" not in d.fix
        assert d.fix.startswith(
            "pin ghcr.io/llm-d/llm-d-cuda to one of its release tags and pass --engine-version"
        )
    # a private build whose tags may name releases: its own repository too; vLLM's own image: a release tag of it
    for image, fix in (
        (
            "registry.example.com/team/vllm-custom:latest",
            "pin registry.example.com/team/vllm-custom to a tag",
        ),
        ("vllm/vllm-openai:latest", "pin the image to a release tag (e.g. vllm/vllm-openai:"),
    ):
        r = _pod(
            tmp_path,
            image,
            "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n",
            "nvidia.com/gpu",
        )
        assert _one(r, "KV208").fix.startswith(fix), image


def test_a_fork_tag_is_its_own_version_not_vllms(tmp_path: Path) -> None:
    """Neural Magic's nm-vllm-openai (neuralmagic/helm-charts charts/nm-vllm/values.yaml, tag v0.1.0, nm-vllm's
    own release number) is not read as vLLM 0.1.0: the release is unknown (KV208 says the newest modelled one
    was planned), not a vLLM release older than the ones kvlint models."""
    p = _command_pod(tmp_path, "ghcr.io/neuralmagic/nm-vllm-openai:v0.1.0")
    r = run_check([str(p)], Options(allow_hub=False))
    (cr,) = r.containers
    assert cr.serving.version is None
    assert not [
        d
        for d in r.diagnostics
        if d.rule == "KV208" and ("older than" in d.message or "read from" in d.message)
    ]
