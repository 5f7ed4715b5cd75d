"""Real public manifests kvlint had not seen (new-user pass 16, fixtures/collected: TPU, AMD, Gaudi, Neuron,
quantized checkpoints, LoRA): what a first run on them showed to be wrong, each checked on the file itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check
from kvlint.rules.families.parallelism import TPU_DEVICES_PER_CHIP
from kvlint.sizing import summarise, unread

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
RECIPES = (
    "AI-Hypercomputer__tpu-recipes__inference__ironwood__vLLM__Gemma4__gemma4-server.yaml",
    "AI-Hypercomputer__tpu-recipes__inference__ironwood__vLLM__Qwen3.5-397B__qwen3_5-server.yaml",
)
QWEN = RECIPES[1]


def _kv403(path: Path) -> list:
    res = run_check([str(path)], Options(allow_hub=False))
    return [d for d in res.diagnostics if d.rule == "KV403"]


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    """The Qwen3.5 Ironwood recipe with one exact line changed (the text must be there once)."""
    text = (COLLECTED / QWEN).read_text()
    assert text.count(old) == 1
    out = tmp_path / "variant.yaml"
    out.write_text(text.replace(old, new))
    return out


@pytest.mark.parametrize("name", RECIPES)
def test_ironwood_recipes_get_two_tpu_devices_a_chip(name: str) -> None:
    """Google's own TPU7x (Ironwood) vLLM recipes run tensor-parallel-size 8 (Qwen3.5) and TP 2 x DP 4 (Gemma 4)
    on a 4-chip tpu7x-standard-4t node: each TPU7x chip has two TensorCores, each a JAX device, so
    google.com/tpu: 4 gives vLLM 8 devices. KV403 compared the workers with the 4 chips as if they were GPUs and
    reported an error that the engine does not start, with the CUDA world-size message."""
    assert TPU_DEVICES_PER_CHIP["tpu7x"] == 2
    text = (COLLECTED / name).read_text()
    assert "cloud.google.com/gke-tpu-accelerator: tpu7x" in text and "google.com/tpu: '4'" in text
    assert _kv403(COLLECTED / name) == []


def test_single_core_tpu_with_too_few_chips_is_counted_in_tpu_devices(tmp_path: Path) -> None:
    """The same pod on TPU v6e (one TensorCore, one JAX device a chip) has 4 devices for 8 workers: still a
    KV403 error, now in TPU devices and chips, without the CUDA world-size message vLLM prints on GPUs."""
    (d,) = _kv403(_variant(tmp_path, "gke-tpu-accelerator: tpu7x", "gke-tpu-accelerator: tpu-v6e-slice"))
    assert d.severity == "error"
    assert d.message.startswith("--tensor-parallel-size 8 needs 8 TPU devices but the pod gets 4")
    assert "google.com/tpu: 4 chips" in d.message and "GPUs" not in d.message
    assert d.fix is not None and d.fix.startswith("request 8 chips per pod (google.com/tpu)")


def test_ironwood_with_more_workers_than_devices(tmp_path: Path) -> None:
    """On TPU7x the remedy asks for the chips that give the devices: 16 workers need 8 chips, not 16."""
    (d,) = _kv403(_variant(tmp_path, "--tensor-parallel-size=8", "--tensor-parallel-size=16"))
    assert d.message.startswith("--tensor-parallel-size 16 needs 16 TPU devices but the pod gets 8")
    assert "2 TensorCores (JAX devices) per tpu7x chip" in d.message
    assert d.fix is not None and d.fix.startswith("request 8 chips per pod")


def test_ironwood_idle_devices_are_a_warning(tmp_path: Path) -> None:
    """Fewer workers than the chips' devices leave devices idle: a warning counted in devices (4 of 8)."""
    (d,) = _kv403(_variant(tmp_path, "--tensor-parallel-size=8", "--tensor-parallel-size=4"))
    assert d.severity == "warning"
    assert d.message.startswith("the pod gets 8 TPU devices")
    assert "uses only 4; 4 devices sit idle" in d.message
    assert d.fix is not None and d.fix.startswith("request 2 chips per pod (google.com/tpu)")


def test_tpu_of_no_known_generation_is_bounded_by_two_devices_a_chip(tmp_path: Path) -> None:
    """Without a TPU generation (no gke-tpu-accelerator nodeSelector) the chips may be TPU7x: TP 8 on 4 chips is
    not reported, TP 16 on 4 chips (more than two devices a chip) is."""
    fits = _variant(tmp_path, "        cloud.google.com/gke-tpu-accelerator: tpu7x\n", "")
    assert _kv403(fits) == []
    text = fits.read_text().replace("--tensor-parallel-size=8", "--tensor-parallel-size=16")
    fits.write_text(text)
    (d,) = _kv403(fits)
    assert d.severity == "error"
    assert d.message.startswith("--tensor-parallel-size 16 needs 16 TPU devices but the pod gets at most 8")
    assert "the pod names no TPU generation" in d.message


PATCHES = (
    "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-serving-gemma__vllm__vllm-7b-awq__patch.yaml",
    "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-serving-gemma__vllm__vllm-7b-kvcache__patch.yaml",
)


@pytest.mark.parametrize("name", PATCHES)
def test_kustomize_patch_alone_is_a_kv002_not_a_clean_pass(name: str) -> None:
    """GKE's Gemma samples set vLLM's --quantization=awq and --kv-cache-dtype=fp8 in strategic-merge patches: a
    Deployment without spec.selector whose container has args but no image. Linted alone it was '0 errors, 0
    warnings, 0 serving containers', a clean pass; it is now a KV002 saying it is a patch, and the summary counts
    it as not read."""
    res = run_check([str(COLLECTED / name)], Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV002"]
    assert "is a kustomize strategic-merge patch" in d.message and d.loc is not None and d.loc.line == 15
    assert d.fix is not None and "kvlint check DIR" in d.fix
    assert summarise(res).not_read == 1 and res.serving == 0
    assert [why for _, why in unread(res)] == ["kustomize patch not applied"]


def test_a_deployment_with_a_selector_or_an_image_is_not_taken_for_a_patch(tmp_path: Path) -> None:
    """Either a selector or one container's image makes the document an object, linted as one."""
    text = (COLLECTED / PATCHES[0]).read_text()
    with_image = text.replace(
        "      - name: inference-server\n", "      - name: inference-server\n        image: x\n"
    )
    with_selector = text.replace(
        "spec:\n  template:", "spec:\n  selector: {matchLabels: {a: b}}\n  template:"
    )
    for i, variant in enumerate((with_image, with_selector)):
        assert variant != text
        path = tmp_path / f"v{i}.yaml"
        path.write_text(variant)
        res = run_check([str(path)], Options(allow_hub=False))
        assert not [d for d in res.diagnostics if "strategic-merge patch" in d.message]


def test_one_chip_is_said_in_the_singular(tmp_path: Path) -> None:
    """TP 2 on a 4-chip TPU7x pod needs one chip: the remedy says "request 1 chip per pod" (was "1 chips")."""
    (d,) = _kv403(_variant(tmp_path, "--tensor-parallel-size=8", "--tensor-parallel-size=2"))
    assert d.severity == "warning"
    assert d.fix is not None and d.fix.startswith("request 1 chip per pod (google.com/tpu)"), d.fix
