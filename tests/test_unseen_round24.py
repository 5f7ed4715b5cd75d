"""Real public manifests kvlint had not seen (new-user pass 24, fixtures/collected: KAITO InferenceSet and
Workspace examples, NIM operator samples, KServe LLMInferenceService samples, AIBrix's brixbench deployments of
vLLM, llm-d and Dynamo, KubeAI models, an llm-d SGLang StatefulSet, AMD ROCm Helm charts). What a first run on
them showed to be wrong, each checked on the file itself."""

from __future__ import annotations

from pathlib import Path

from kvlint.engines.images import dynamo_runtime, engine_version
from kvlint.pipeline import Options, run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
DYNAMO_MIRROR = COLLECTED / (
    "vllm-project__aibrix__brixbench__benchmark__testdata__deployments__dynamo__qwen3-32b-round-robin-4p8d-vke.yaml"
)


def _rule(path: Path, rule: str, **kw: object) -> list:
    res = run_check([str(path)], Options(allow_hub=False, **kw))  # type: ignore[arg-type]
    return [d for d in res.diagnostics if d.rule == rule]


def test_a_mirrored_dynamo_runtime_image_tag_is_a_dynamo_release() -> None:
    """AIBrix's brixbench Dynamo deployment pulls NVIDIA Dynamo's vLLM runtime from its own registry, with the path
    flattened: ``<registry>/aibrix/ai-dynamo-vllm-runtime:1.2.0``. kvlint did not know it as a Dynamo runtime image
    and read the Dynamo release 1.2.0 in its tag as vLLM 1.2.0: a KV208 warning on each worker ("vLLM 1.2.0 ... is
    newer than the releases kvlint models"), and a KV504 that said kvlint applied "the rules of vLLM 1.2.0, the
    release --engine-version names" when no --engine-version was given. The tag is now a Dynamo release (1.2.0 is
    not in Dynamo's support matrix that kvlint read, so the vLLM inside is unknown and KV504 says so once)."""
    text = DYNAMO_MIRROR.read_text()
    image = "aibrix-public-release-cn-beijing.cr.volces.com/aibrix/ai-dynamo-vllm-runtime:1.2.0"
    assert text.count(f"image: {image}") == 3
    assert dynamo_runtime(image) == "vllm"
    assert dynamo_runtime("registry.example.com/team/ai-dynamo-sglang-runtime:1.0.1") == "sglang"
    assert engine_version(image) is None  # a Dynamo release kvlint's table does not list: the vLLM is unknown
    assert _rule(DYNAMO_MIRROR, "KV208") == []
    notes = _rule(DYNAMO_MIRROR, "KV504")
    assert len(notes) == 2  # the prefill and decode workers
    for d in notes:
        assert "the release --engine-version names" not in d.message and "vLLM 1.2.0" not in d.message
        assert "the image tag is a Dynamo release, so the vllm version inside is not known" in d.message
        assert "unless --engine-version names another" in d.message


def test_dynamo_worker_on_an_unknown_image_does_not_claim_engine_version(tmp_path: Path) -> None:
    """The same worker on an image kvlint does not know, whose tag it reads as the engine's release: KV504 said that
    release was the one --engine-version names. It says where the release was read, and with --engine-version
    given, that it applied that one."""
    manifest = tmp_path / "w.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: w\n        image: registry.example.com/team/custom-vllm:1.2.0\n"
        "        command: [python3, -m, dynamo.vllm, --model, Qwen/Qwen3-8B]\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (d,) = _rule(manifest, "KV504")
    assert "--engine-version" not in d.message
    assert (
        "kvlint read vLLM 1.2.0 from its tag, which may be a Dynamo release or the image's own version"
        in d.message
    )
    (pinned,) = _rule(manifest, "KV504", engine_version="0.19.0")
    assert pinned.message.endswith(
        "kvlint applied the rules of vLLM 0.19.0, the release --engine-version names"
    )
