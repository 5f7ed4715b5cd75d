"""New-user pass 53 (fresh53) on manifests kvlint had not seen (fixtures/collected, INDEX.csv rows of pass 53).

* A model cache laid out ``<root>/<org>/<name>/<revision>`` (Kelvinskell/k8s-llm-serving-platform's cache warmer
  downloads each model to ``/models/<model id>/<revision>``, ``main`` by default): the last component is a
  revision, not a model name, and the path was "config.json not found" (KV502, not sized) though the two folders
  above it spell a catalogued hub id.
* KV405's fix on a ROCm container (umesh-khatiwada/aibrix-vllm-deployment's ``vllm/vllm-omni-rocm`` Deployments,
  GPUs reached through privileged ``/dev/kfd`` mounts) named ``nvidia.com/gpu``; KV501 beside it said
  ``amd.com/gpu``.
* A KServe custom predictor whose ``kserve-container`` names its model in the ``STORAGE_URI`` env (ahmedwaleedmalik's
  modelcar InferenceService, ``oci://ghcr.io/ahmedwaleedmalik/qwen2.5-0.5b@sha256:...``) and loads ``/mnt/models``
  was KV502 "config.json not found", not sized: KServe's storage initializer puts that model there.
* SGLang's ROCm images are built for one AMD architecture (``-mi30x``: gfx942); umesh-khatiwada's StormService on
  ``lmsysorg/sglang:v0.5.8-rocm700-mi30x`` was planned on MI210, MI250X and MI355X too.
* ``kvlint plan --no-config -- vllm serve M`` said "not an engine command: --no-config vllm serve".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.models import resolve_model
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import ContainerResult, ModelUnavailable

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
KELVINSKELL = "Kelvinskell__k8s-llm-serving-platform__kubernetes__serving__"


@pytest.mark.parametrize(
    ("ref", "hub_id"),
    [
        ("/models/TinyLlama/TinyLlama-1.1B-Chat-v1.0/main", "TinyLlama/TinyLlama-1.1B-Chat-v1.0"),
        ("/models/microsoft/phi-2/main/", "microsoft/phi-2"),
        ("/models/microsoft/Phi-3-mini-4k-instruct/main", "microsoft/Phi-3-mini-4k-instruct"),
    ],
)
def test_a_revision_folder_under_org_and_name_is_that_model(ref: str, hub_id: str) -> None:
    spec = resolve_model(ref, allow_hub=False)
    assert spec.id == hub_id
    assert spec.notes[0].startswith(f"ASSUMPTION (path named after the model): {ref} was not read")
    assert "revision 'main'" in spec.notes[0]
    assert spec.assumption == spec.notes[0]
    # the webhook reads the name alone too
    assert resolve_model(ref, allow_hub=False, allow_local_paths=False).id == hub_id


def test_a_commit_folder_is_the_requested_revision() -> None:
    sha = "fe8a4ea1ffedaf415f4da2f062534de366a451e6"
    spec = resolve_model(f"/cache/TinyLlama/TinyLlama-1.1B-Chat-v1.0/{sha}", allow_hub=False)
    assert spec.id == "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
    assert any(f"revision {sha} requested" in n for n in spec.notes)


@pytest.mark.parametrize(
    "ref",
    [
        "/models/TinyLlama/TinyLlama-1.1B-Chat-v1.0/v2",  # not a revision spelling kvlint reads
        "/models/acme/TinyLlama-1.1B-Chat-v1.0-ft/main",  # not a catalogued <org>/<name>
        "/app/main",  # too short to name <org>/<name>
        "/models/main",
    ],
)
def test_other_paths_ending_in_a_revision_stay_unknown(ref: str) -> None:
    with pytest.raises(ModelUnavailable):
        resolve_model(ref, allow_hub=False)


@pytest.mark.parametrize(
    ("name", "hub_id"),
    [
        ("vllm__tinyllama-deployment.yaml", "TinyLlama/TinyLlama-1.1B-Chat-v1.0"),
        ("kserve__auto__phi-chat-2.yaml", "microsoft/phi-2"),
        ("kserve__manual__phi-chat-3.yaml", "microsoft/Phi-3-mini-4k-instruct"),
    ],
)
def test_kelvinskell_cache_warmer_paths_are_sized(name: str, hub_id: str) -> None:
    result = run_check([str(COLLECTED / (KELVINSKELL + name))], Options(allow_hub=False))
    rules = {d.rule for d in result.diagnostics}
    assert "KV502" not in rules
    assert "KV505" in rules  # the assumption is said
    (c,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    assert c.model is not None and c.model.id == hub_id
    assert c.plan is not None or c.fleet


def test_a_storage_location_ending_in_a_revision_says_so() -> None:
    from kvlint.models.resolve import resolve_stored_model

    spec = resolve_stored_model(
        "s3://cache/TinyLlama/TinyLlama-1.1B-Chat-v1.0/main", "/mnt/models", allow_hub=False
    )
    assert spec is not None and spec.id == "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
    assert "'main' is a revision of the catalogued TinyLlama/TinyLlama-1.1B-Chat-v1.0" in spec.notes[0]


def test_kv405_fix_names_the_amd_resource_on_a_rocm_container() -> None:
    f = COLLECTED / "umesh-khatiwada__aibrix-vllm-deployment__manifests__amd__multi_model_amd.yaml"
    result = run_check([str(f)], Options(allow_hub=False))
    kv405 = [d for d in result.diagnostics if d.rule == "KV405"]
    assert len(kv405) == 2
    for d in kv405:
        assert "amd.com/gpu" in (d.fix or "")
        assert "nvidia.com/gpu" not in (d.fix or "")
    # a CUDA image keeps NVIDIA's resource
    cuda = COLLECTED / "trees" / "paytm-temp-deepseek-vllm-chart" / "vllm-chart"
    result = run_check([str(cuda)], Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV405"]
    assert "nvidia.com/gpu" in (d.fix or "")


# --- KServe custom predictor: the model of its container's STORAGE_URI env --------------------------------------

MODELCAR = (
    COLLECTED
    / "trees"
    / "ahmedwaleedmalik-k8s-llm-inference-platform"
    / "serving"
    / "kserve"
    / "inferenceservice-modelcar.yaml"
)

_ISVC = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: custom
{annotations}spec:
  predictor:
    containers:
      - name: kserve-container
        image: vllm/vllm-openai:v0.10.1
        args: [{args}]
        env:
          - name: STORAGE_URI
            value: "{uri}"
        resources:
          limits:
            nvidia.com/gpu: "1"
"""


def _model_of(tmp_path: Path, uri: str, args: str, annotations: str = "") -> tuple[str | None, set[str]]:
    f = tmp_path / "isvc.yaml"
    f.write_text(_ISVC.format(uri=uri, args=args, annotations=annotations))
    result = run_check([str(f)], Options(allow_hub=False))
    (c,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    return (c.model.id if c.model is not None else None), {d.rule for d in result.diagnostics}


def test_a_modelcar_storage_uri_env_names_the_model() -> None:
    # the repository's modelcar InferenceService: STORAGE_URI oci://ghcr.io/ahmedwaleedmalik/qwen2.5-0.5b@sha256:...
    # on kserve-container, vLLM reading --model=/mnt/models (KV502 "config.json not found" before)
    assert "name: STORAGE_URI" in MODELCAR.read_text()
    result = run_check([str(MODELCAR)], Options(allow_hub=False))
    rules = {d.rule for d in result.diagnostics}
    assert "KV502" not in rules and "KV505" in rules
    (c,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    assert c.model is not None and c.model.id == "Qwen/Qwen2.5-0.5B"
    assert c.fleet


def test_an_hf_or_stored_storage_uri_env_names_the_model(tmp_path: Path) -> None:
    hf = _model_of(tmp_path, "hf://Qwen/Qwen2.5-7B-Instruct", '"--model=/mnt/models"')
    assert hf[0] == "Qwen/Qwen2.5-7B-Instruct" and "KV502" not in hf[1]
    stored = _model_of(tmp_path, "s3://bucket/models/Qwen2.5-7B-Instruct", "--model, /mnt/models/")
    assert stored[0] == "Qwen/Qwen2.5-7B-Instruct" and "KV505" in stored[1]


def test_a_storage_uri_env_the_engine_does_not_read_is_not_its_model(tmp_path: Path) -> None:
    # the engine loads a hub id: the download to /mnt/models is not what it serves
    assert _model_of(tmp_path, "hf://Qwen/Qwen2.5-7B-Instruct", '"--model=Qwen/Qwen2.5-0.5B-Instruct"')[
        0
    ] == ("Qwen/Qwen2.5-0.5B-Instruct")
    # /mnt/models-old is another folder
    assert _model_of(tmp_path, "hf://Qwen/Qwen2.5-7B-Instruct", '"--model=/mnt/models-old"')[0] is None
    # the user's kvlint.io/model annotation names the model over it
    annotated = _model_of(
        tmp_path,
        "hf://Qwen/Qwen2.5-7B-Instruct",
        '"--model=/mnt/models"',
        "  annotations:\n    kvlint.io/model: Qwen/Qwen2.5-0.5B-Instruct\n",
    )
    assert annotated[0] == "Qwen/Qwen2.5-0.5B-Instruct"


@pytest.mark.parametrize(
    "words",
    [
        ["--no-config", "--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"],  # kvlint check's option
        [
            "--offline",
            "--max-model-len=8192",
            "--",
            "vllm",
            "serve",
            "Qwen/Qwen2.5-7B-Instruct",
        ],  # the engine's
    ],
)
def test_kvlint_plan_names_an_option_it_does_not_have(words: list[str]) -> None:
    # a new user typing `kvlint plan --no-config -- vllm serve M` (as for kvlint check) was told "not an engine
    # command: --no-config vllm serve" with the engine command forms
    from click.testing import CliRunner

    from kvlint.cli import main

    result = CliRunner().invoke(main, ["plan", *words])
    assert result.exit_code == 2
    name = next(w for w in words if w != "--offline").split("=", 1)[0]
    assert f"{name} is not an option of kvlint plan" in result.output
    assert "not an engine command" not in result.output


# --- SGLang's ROCm images are built for one AMD architecture ----------------------------------------------------

STORMSERVICE = COLLECTED / (
    "umesh-khatiwada__aibrix-vllm-deployment__v2__aibrix__stormservice__multi-node-inference-with-pd.yaml"
)


@pytest.mark.parametrize(
    ("image", "target"),
    [
        ("lmsysorg/sglang:v0.5.8-rocm700-mi30x", ("gfx942", "mi30x")),
        ("docker.io/rocm/sgl-dev:v0.5.5.post3-rocm700-mi30x-20251123", ("gfx942", "mi30x")),
        ("lmsysorg/sglang:v0.5.8-rocm700-mi35x", ("gfx950", "mi35x")),
        ("lmsysorg/sglang:v0.5.17-rocm1000-mi45x", ("gfx1250", "mi45x")),
        ("lmsysorg/sglang:latest", None),
        ("lmsysorg/sglang:v0.5.8-cu129-amd64", None),
        (
            "rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4",
            None,
        ),  # not a one-architecture tag kvlint reads
        ("example.com/team/sglang:v0.5.8-rocm700-mi30x", None),  # another repository's tag says nothing sure
    ],
)
def test_rocm_build_target(image: str, target: tuple[str, str] | None) -> None:
    from kvlint.engines.images import rocm_build_target

    assert rocm_build_target(image) == target


def test_an_mi30x_sglang_image_is_planned_on_gfx942_gpus_only() -> None:
    # lmsysorg/sglang:v0.5.8-rocm700-mi30x on amd.com/gpu with no GPU named: planned on MI210 and MI250X (gfx90a)
    # and MI355X (gfx950) too, where the image's kernels do not run
    assert "lmsysorg/sglang:v0.5.8-rocm700-mi30x" in STORMSERVICE.read_text()
    result = run_check([str(STORMSERVICE)], Options(allow_hub=False))
    sized = [c for c in result.containers if isinstance(c, ContainerResult) and c.fleet]
    assert len(sized) == 2
    for c in sized:
        assert {e.accelerator.id for e in c.fleet} == {"amd-instinct-mi300x", "amd-instinct-mi325x"}
    kv501 = [d for d in result.diagnostics if d.rule == "KV501"]
    assert kv501 and all("its gfx942 GPUs only" in d.message for d in kv501)


def test_an_mi35x_image_is_planned_on_gfx950_and_other_images_on_the_whole_rocm_fleet(tmp_path: Path) -> None:
    from kvlint.accelerators.site import DEFAULT_ROCM_FLEET

    def fleet_of(image: str) -> set[str]:
        f = tmp_path / "sglang.yaml"
        f.write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: s}\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: sglang\n"
            f"          image: {image}\n"
            "          command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct,"
            " --context-length, '8192']\n"
            "          resources: {limits: {amd.com/gpu: 1}}\n"
        )
        result = run_check([str(f)], Options(allow_hub=False))
        (c,) = [c for c in result.containers if isinstance(c, ContainerResult)]
        return {e.accelerator.id for e in c.fleet}

    assert fleet_of("lmsysorg/sglang:v0.5.8-rocm700-mi35x") == {"amd-instinct-mi355x"}
    assert fleet_of("lmsysorg/sglang:v0.5.8-rocm700") == set(DEFAULT_ROCM_FLEET)
