"""Findings that blame the right thing (msgs10): each test reads a finding as a user would and fails on the
wording or position kvlint had before."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check

REPO = Path(__file__).resolve().parents[1]
COLLECTED = REPO / "fixtures" / "collected"
NEURON = (
    COLLECTED
    / "aws-samples__sample-genai-on-eks-starter-kit__components__llm-model__vllm__model-qwen3-8b-neuron-trn1.template.yaml"
)


def _check(*paths: Path):
    return run_check([str(p) for p in paths], Options(allow_hub=False))


def test_kv505_on_an_unsized_neuron_container_does_not_say_sized() -> None:
    """The Neuron build gets KV501 (capacity rules skipped) and no plan: KV505 must not say the model was sized."""
    r = _check(NEURON)
    (cr,) = r.containers
    assert cr.plan is None and cr.model is not None
    (note,) = [d for d in r.diagnostics if d.rule == "KV505"]
    assert "sized" not in note.message
    assert "made no memory plan for this container" in note.message and "from its path" in note.message
    assert any(d.rule == "KV501" for d in r.diagnostics)


def test_kv505_on_a_sized_container_still_says_sized() -> None:
    r = _check(REPO / "fixtures" / "rules" / "KV505" / "vllm.yaml")
    notes = [d for d in r.diagnostics if d.rule == "KV505"]
    assert notes and all(d.message.startswith("kvlint sized this model from its path") for d in notes)


_PRIVATE = """apiVersion: apps/v1
kind: Deployment
metadata: {name: private}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
      containers:
        - name: server
          image: registry.example.com/ml/llm-server:TAG
          args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, "8192", --gpu-memory-utilization, "0.9"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def _private(tmp_path: Path, tag: str):
    p = tmp_path / "private.yaml"
    p.write_text(_PRIVATE.replace("TAG", tag))
    r = _check(p)
    return [d for d in r.diagnostics if d.rule == "KV504"], [d for d in r.diagnostics if d.rule == "KV208"]


def test_private_image_release_is_said_once_by_kv504(tmp_path: Path) -> None:
    """A private image read as vLLM (KV504) pinned to a tag that names no release: the KV504 says which release
    was assumed and asks for --engine-version; no KV208 info repeats it at the same line."""
    (note,), kv208 = _private(tmp_path, "2025.10")
    assert kv208 == []
    assert "its tag 2025.10 names no vLLM release: kvlint applied the rules of vLLM" in note.message
    assert "--engine-version" in note.fix


def test_private_image_on_a_moving_tag_keeps_its_kv208_warning(tmp_path: Path) -> None:
    (note,), kv208 = _private(tmp_path, "latest")
    assert [d.severity for d in kv208] == ["warning"]
    assert "kvlint applied the rules" not in note.message  # KV208 says the release, once


_RUNTIME = """apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: vllm-runtime}
spec:
  supportedModelFormats: [{name: vLLM, autoSelect: true}]
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.8.5
      command: [python, -m, vllm.entrypoints.openai.api_server]
      args: [--port, "8080", --model, /mnt/models, --served-model-name, "{{.Name}}"]
---
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: qwen}
spec:
  predictor:
    nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
    model:
      modelFormat: {name: vLLM}
      runtime: vllm-runtime
      image: IMAGE
      storageUri: hf://Qwen/Qwen2.5-7B-Instruct
      args: [--max-model-len, "8192"]
      resources: {limits: {nvidia.com/gpu: 1}}
"""


def _isvc(tmp_path: Path, text: str):
    p = tmp_path / "isvc.yaml"
    p.write_text(text)
    return p, _check(p)


def test_isvc_image_over_its_runtime_gives_the_engine_release(tmp_path: Path) -> None:
    """KServe merges the InferenceService's model container, its image included, over the runtime's
    kserve-container (buildPodSpec -> MergeRuntimeContainers): the engine is the runtime's command with the
    InferenceService's image, so the release is the InferenceService's tag, not the runtime's."""
    _, r = _isvc(tmp_path, _RUNTIME.replace("IMAGE", "vllm/vllm-openai:v0.11.0"))
    (cr,) = r.containers
    assert cr.serving.image == "vllm/vllm-openai:v0.11.0" and cr.serving.version == "0.11.0"
    assert cr.serving.model is not None and cr.plan is not None  # the runtime's --model, hf:// storageUri
    assert not [d for d in r.diagnostics if d.rule in ("KV503", "KV208")]


def test_isvc_image_with_a_moving_tag_gets_kv208_at_its_own_image(tmp_path: Path) -> None:
    p, r = _isvc(tmp_path, _RUNTIME.replace("IMAGE", "vllm/vllm-openai:latest"))
    (kv208,) = [d for d in r.diagnostics if d.rule == "KV208"]
    assert "vllm/vllm-openai:latest" in kv208.message and kv208.severity == "warning"
    line = next(
        i for i, t in enumerate(p.read_text().splitlines(), 1) if "image: vllm/vllm-openai:latest" in t
    )
    assert kv208.loc is not None and kv208.loc.line == line
    assert not [d for d in r.diagnostics if d.rule == "KV503"]


_HF = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: qwen-hf}
spec:
  predictor:
    nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
    model:
      modelFormat: {name: huggingface}
      image: kserve/huggingfaceserver:v0.15.2-gpu
      storageUri: hf://Qwen/Qwen2.5-7B-Instruct
      args: [--max-model-len, "8192"]
      resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_isvc_huggingfaceserver_image_replaces_the_runtime_image(tmp_path: Path) -> None:
    """A huggingface model naming its own kserve/huggingfaceserver tag runs KServe's Hugging Face runtime with
    that image: the vLLM of that KServe release, the hf:// model, and no 'chosen by the runtime' KV208."""
    _, r = _isvc(tmp_path, _HF)
    (cr,) = r.containers
    assert cr.serving.image == "kserve/huggingfaceserver:v0.15.2-gpu"
    assert cr.serving.version is not None and cr.plan is not None
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B-Instruct"
    assert not [d for d in r.diagnostics if d.rule in ("KV208", "KV502")]


def _at(path: Path, needle: str) -> tuple[int, int]:
    """(line, column), 1-based, of the first ``needle`` in ``path``."""
    text = path.read_text()
    pos = text.index(needle)
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _kv503(path: Path):
    r = _check(path)
    return [d for d in r.diagnostics if d.rule == "KV503" and d.severity == "warning"]


_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: engine\n"


def test_kv503_no_model_without_command_points_at_the_image(tmp_path: Path) -> None:
    """No command or args: vllm/vllm-openai's ENTRYPOINT starts vLLM with no model; the finding is at the image
    that does so, not at the container's name."""
    p = tmp_path / "pod.yaml"
    p.write_text(_POD + "    image: vllm/vllm-openai:v0.11.0\n    resources: {limits: {nvidia.com/gpu: 1}}\n")
    (d,) = _kv503(p)
    assert "names no model" in d.message
    assert (d.loc.line, d.loc.column) == _at(p, "vllm/vllm-openai:v0.11.0")


def test_kv503_script_points_at_the_script_not_the_shell() -> None:
    p = REPO / "fixtures" / "rules" / "KV503" / "sglang.yaml"
    (d,) = [d for d in _kv503(p) if "the script /scripts/serve.sh" in d.message]
    assert (d.loc.line, d.loc.column) == _at(p, '"/scripts/serve.sh"')


def test_kv503_tgi_no_model_points_at_env_from() -> None:
    """TGI takes MODEL_ID from the env: with no model read, the envFrom ConfigMap kvlint did not read is where
    the model is likely set."""
    p = REPO / "fixtures" / "rules" / "KV503" / "tgi.yaml"
    (d,) = [d for d in _kv503(p) if "no model in its arguments or env" in d.message]
    assert (d.loc.line, d.loc.column) == _at(p, "envFrom:")


def _hf_args(tmp_path: Path, args: str):
    text = _HF.replace("      image: kserve/huggingfaceserver:v0.15.2-gpu\n", "").replace(
        'args: [--max-model-len, "8192"]', f"args: {args}"
    )
    p = tmp_path / "hf.yaml"
    p.write_text(text)
    return _check(p)


def test_kv207_on_an_option_huggingfaceserver_wrote_names_the_users_option(tmp_path: Path) -> None:
    """KServe's huggingfaceserver passes --max_length to vLLM as --max-model-len: given with --max-model-len as
    well, KV207 says the server wrote one from --max_length, and the fix names the option the user wrote."""
    r = _hf_args(tmp_path, '["--max_length=4096", "--max-model-len=8192"]')
    (d,) = [d for d in r.diagnostics if d.rule == "KV207"]
    assert "huggingfaceserver writes --max-model-len 4096 from --max_length" in d.message
    assert (
        d.fix == "keep one: set --max_length to the value you mean and remove --max-model-len 8192 from args"
    )


def test_kv206_on_max_length_names_max_length(tmp_path: Path) -> None:
    r = _hf_args(tmp_path, '["--max_length=abc"]')
    (d,) = [d for d in r.diagnostics if d.rule == "KV206"]
    assert "huggingfaceserver writes it from --max_length" in d.message
    assert "--max_length" in d.fix and "--max-model-len" not in d.fix


_KAITO = """apiVersion: v1
kind: ConfigMap
metadata: {name: ds-inference-params}
data:
  inference_config.yaml: |
    vllm:
      swap-space: 4
      gpu-memory-utilisation: 0.9
      max-num-seqs: many
---
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata: {name: ws}
resource:
  instanceType: "Standard_NC24ads_A100_v4"
inference:
  preset: {name: "deepseek-r1-distill-qwen-14b"}
  config: "ds-inference-params"
"""


def test_kaito_config_entries_are_named_as_the_user_wrote_them(tmp_path: Path) -> None:
    """KAITO passes the vllm: entries of the inference config ConfigMap to vLLM as options: KV205/KV206 on them
    name the entry and the ConfigMap (inference.config), and the fix edits the entry, not a flag nobody typed."""
    p = tmp_path / "kaito.yaml"
    p.write_text(_KAITO)
    r = _check(p)
    found = {
        d.rule + ":" + d.message.split(" in its vllm:")[0]: d
        for d in r.diagnostics
        if d.rule in ("KV205", "KV206")
    }
    swap = found[
        "KV205:the KAITO inference config (the ConfigMap that a Workspace's inference.config names) sets swap-space"
    ]
    assert "which KAITO passes to vLLM as --swap-space" in swap.message
    assert swap.fix.endswith("remove swap-space from the vllm: section of that ConfigMap")
    typo = next(d for k, d in found.items() if "gpu-memory-utilisation" in k)
    assert typo.fix.startswith("write gpu-memory-utilization in place of gpu-memory-utilisation")
    bad = next(d for k, d in found.items() if k.startswith("KV206"))
    assert bad.fix == "write max-num-seqs as a plain integer"
    assert all(d.loc is not None and d.loc.line in (7, 8, 9) for d in found.values())  # at the entries


def test_version_range_kv205_on_an_engine_kwarg_names_the_key(tmp_path: Path) -> None:
    """Ray Serve LLM: an engine_kwargs key only older vLLM releases accept, on an image that does not say the
    release, is removed from engine_kwargs under the key as written (swap_space), not as a --swap-space flag."""
    src = COLLECTED / "ray-project__kuberay__ray-operator__config__samples__ray-service.llm-serve.yaml"
    text = src.read_text().replace("rayproject/ray-llm:2.52.0-py311-cu128", "rayproject/ray-llm:latest")
    text = text.replace("            device: auto\n", "            device: auto\n            swap_space: 4\n")
    p = tmp_path / "ray.yaml"
    p.write_text(text)
    r = _check(p)
    (d,) = [d for d in r.diagnostics if d.rule == "KV205" and "--swap-space" in d.message]
    assert "accepted only by vLLM" in d.message and "Ray Serve LLM refuses it" in d.message
    assert d.fix.endswith("remove swap_space from engine_kwargs")


def test_isvc_image_without_its_runtime_does_not_claim_no_model(tmp_path: Path) -> None:
    """The runtime the model names is not among the inputs: its own image does not make the InferenceService's
    args the whole command (KServe takes the command and arguments from the runtime), so no 'names no model'."""
    text = _RUNTIME.split("---\n", 1)[1].replace("IMAGE", "vllm/vllm-openai:v0.11.0")
    _, r = _isvc(tmp_path, text)
    (d,) = [d for d in r.diagnostics if d.rule == "KV503"]
    assert "'vllm-runtime', which is not among the inputs" in d.message
    assert "sets only the image, vllm/vllm-openai:v0.11.0" in d.message
    assert not r.containers


def test_engine_version_option_is_the_release_the_options_are_read_with(tmp_path: Path) -> None:
    """--engine-version names the release of an unpinned image: an option only older releases accept is then
    fine (0.10.0) or refused by that release (0.20.0), not 'the image does not say which release runs'."""
    p = tmp_path / "pod.yaml"
    p.write_text(
        _POD
        + '    image: vllm/vllm-openai:latest\n    args: [--model, Qwen/Qwen2.5-7B-Instruct, --swap-space, "4"]\n'
        + "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )

    def kv205(version: str | None):
        r = run_check([str(p)], Options(allow_hub=False, engine_version=version))
        return [d for d in r.diagnostics if d.rule == "KV205"]

    (unpinned,) = kv205(None)
    assert "the image does not say which release runs" in unpinned.message
    assert kv205("0.10.0") == []
    (refused,) = kv205("0.20.0")
    assert refused.severity == "error" and "unknown vLLM 0.20.0 option --swap-space" in refused.message


def test_kv206_on_the_max_model_len_kaito_writes_says_kaito_wrote_it(tmp_path: Path) -> None:
    """KAITO writes --max-model-len=auto into every preset command; read as vLLM 0.10.0 (which takes 'auto'
    only from 0.14) the KV206 says KAITO wrote it and the fix is not an edit of a flag the user never typed."""
    p = tmp_path / "kaito.yaml"
    p.write_text(_KAITO)
    r = run_check([str(p)], Options(allow_hub=False, engine_version="0.10.0"))
    (d,) = [d for d in r.diagnostics if d.rule == "KV206" and "'auto'" in d.message]
    assert "KAITO writes --max-model-len=auto into the preset's vLLM command" in d.message
    assert d.fix.startswith("nothing in the Workspace removes it: check that --engine-version names")
    line = next(i for i, t in enumerate(_KAITO.splitlines(), 1) if "instanceType" in t)
    assert d.loc is not None and d.loc.line == line  # KAITO writes it with the SKU's command


def test_kaito_config_entry_fix_gives_no_image_to_pin(tmp_path: Path) -> None:
    """A Workspace runs KAITO's own untagged image: the fix of a version-range KV205 on a config entry asks for
    --engine-version, not an image tag the Workspace cannot set."""
    p = tmp_path / "kaito.yaml"
    p.write_text(_KAITO)
    r = _check(p)
    (d,) = [d for d in r.diagnostics if d.rule == "KV205" and "swap-space" in d.message]
    assert "image tag" not in d.fix and "a Workspace has no image to pin" in d.fix
