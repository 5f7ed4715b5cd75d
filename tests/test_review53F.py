"""Review of pass 53 (fresh53), issues found reading its sources.

* SGLang's ``-mi30x`` image on AMD GPUs of another architecture: only kvlint's default ROCm fleet was narrowed to
  the image's LLVM target. A configured ``.kvlint.yaml`` fleet of MI210, MI300X and MI355X said "fits" on all
  three (KV501 info), and a pod pinned to MI355X by ``amd.com/gpu.product-name`` was sized there with no finding,
  though sgl-project/sglang ``docker/rocm.Dockerfile`` compiles sgl-kernel and AITER for the tag's target alone.
* ``kvlint plan -- --model M`` (options only, typed after ``--``) was told "--model is not an option of kvlint
  plan ... the engine's own options after ``--``": click drops the ``--``, and the words read as options typed
  before it.
* A KServe custom predictor's ``STORAGE_URI`` model was read for every container of the pod (a workload-wide
  ``derived_model``), though the storage initializer mounts ``/mnt/models`` into ``kserve-container`` alone; and an
  unnamed first container of several, which ``CustomPredictor.Default`` names ``kserve-container``, was not read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.accelerators.site import Site
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import ContainerResult


def _sglang(tmp_path: Path, image: str, node_selector: str = "") -> Path:
    f = tmp_path / "sglang.yaml"
    f.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: s}\nspec:\n  template:\n    spec:\n"
        + (f"      nodeSelector: {{amd.com/gpu.product-name: {node_selector}}}\n" if node_selector else "")
        + "      containers:\n        - name: sglang\n"
        f"          image: {image}\n"
        "          command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct,"
        " --context-length, '8192']\n"
        "          resources: {limits: {amd.com/gpu: 1}}\n"
    )
    return f


def test_a_configured_fleet_fails_the_gpus_of_another_architecture(tmp_path: Path) -> None:
    f = _sglang(tmp_path, "lmsysorg/sglang:v0.5.8-rocm700-mi30x")
    site = Site(fleet=("mi210", "mi300x", "mi355x"))
    result = run_check([str(f)], Options(allow_hub=False, site=site))
    (c,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    by_id = {e.accelerator.id: e for e in c.fleet}
    assert set(by_id) == {"amd-instinct-mi210", "amd-instinct-mi300x", "amd-instinct-mi355x"}  # not narrowed
    assert by_id["amd-instinct-mi300x"].verdict == "fits"
    for gid, target in (("amd-instinct-mi210", "gfx90a"), ("amd-instinct-mi355x", "gfx950")):
        e = by_id[gid]
        assert (e.verdict, e.refused_by) == ("fails", "KV304")
        assert (e.reason or "").startswith(
            "the mi30x image's sgl-kernel and AITER are compiled for gfx942 alone"
        )
        assert (e.reason or "").endswith(f"is {target}")
    (kv501,) = [d for d in result.diagnostics if d.rule == "KV501"]
    assert kv501.severity != "info"  # not "fits on all of the configured fleet"
    # the same fleet for SGLang's image without an architecture tag: every GPU planned
    result = run_check(
        [str(_sglang(tmp_path, "lmsysorg/sglang:v0.5.8-rocm700"))], Options(allow_hub=False, site=site)
    )
    (c,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    assert all(e.refused_by is None for e in c.fleet)


def test_a_pod_placed_on_a_gpu_of_another_architecture_is_kv304(tmp_path: Path) -> None:
    f = _sglang(tmp_path, "lmsysorg/sglang:v0.5.8-rocm700-mi30x", "AMD_Instinct_MI355X")
    result = run_check([str(f)], Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV304"]
    assert d.severity == "error"
    assert "gfx942 build but the pod is placed on AMD Instinct MI355X (gfx950;" in d.message
    assert "-mi35x tag" in (d.fix or "")
    # on its own architecture, or with the image of that one: no KV304
    for image, gpu in (
        ("lmsysorg/sglang:v0.5.8-rocm700-mi30x", "AMD_Instinct_MI300X"),
        ("lmsysorg/sglang:v0.5.8-rocm700-mi35x", "AMD_Instinct_MI355X"),
    ):
        result = run_check([str(_sglang(tmp_path, image, gpu))], Options(allow_hub=False))
        assert not [d for d in result.diagnostics if d.rule == "KV304"], (image, gpu)


@pytest.mark.parametrize(
    "words",
    [
        ["--", "--model", "Qwen/Qwen2.5-7B-Instruct"],  # the image's entrypoint's arguments, typed after `--`
        ["--", "--max-model-len", "8192", "--model", "Qwen/Qwen2.5-7B-Instruct"],
    ],
)
def test_kvlint_plan_options_after_the_double_dash_are_not_called_plan_options(words: list[str]) -> None:
    # click drops the `--`, so `kvlint plan -- --model M` reads as `kvlint plan --model M`; pass 53 said "--model
    # is not an option of kvlint plan ... the engine's own options after `--`", which the user had done. With no
    # engine executable in the words, the parser's "not an engine command" and the command forms are said.
    from click.testing import CliRunner

    from kvlint.cli import main

    result = CliRunner().invoke(main, ["plan", *words])
    assert result.exit_code == 2
    assert "is not an option of kvlint plan" not in result.output
    assert "not an engine command: --" in result.output
    assert "python -m sglang.launch_server --model-path MODEL" in " ".join(result.output.split())


@pytest.mark.parametrize(
    "words",
    [
        [
            "--max-model-len",
            "8192",
            "--",
            "vllm",
            "serve",
            "Qwen/Qwen2.5-7B-Instruct",
        ],  # click keeps this `--`
        [
            "--no-config",
            "--",
            "python3",
            "-m",
            "sglang.launch_server",
            "--model-path",
            "Qwen/Qwen2.5-7B-Instruct",
        ],
    ],
)
def test_kvlint_plan_still_names_an_option_typed_before_the_engine_command(words: list[str]) -> None:
    from click.testing import CliRunner

    from kvlint.cli import main

    result = CliRunner().invoke(main, ["plan", *words])
    assert result.exit_code == 2
    assert f"{words[0]} is not an option of kvlint plan" in result.output


# --- KServe custom predictor: STORAGE_URI is kserve-container's model, not the pod's ----------------------------

_CUSTOM = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {{name: custom}}
spec:
  predictor:
    containers:
    - {first_name}image: vllm/vllm-openai:v0.8.5
      args: [--model, /mnt/models, --max-model-len, '4096']
      env: [{{name: STORAGE_URI, value: hf://Qwen/Qwen2.5-0.5B-Instruct}}]
      resources: {{limits: {{nvidia.com/gpu: 1}}}}
    - name: second
      image: vllm/vllm-openai:v0.8.5
      args: [--model, {second_model}, --max-model-len, '4096', --port, '8001']
      resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _models_of(tmp_path: Path, first_name: str, second_model: str) -> dict[str, str | None]:
    f = tmp_path / "isvc.yaml"
    f.write_text(_CUSTOM.format(first_name=first_name, second_model=second_model))
    result = run_check([str(f)], Options(allow_hub=False))
    return {
        c.container_name: (c.model.id if c.model is not None else None)
        for c in result.containers
        if isinstance(c, ContainerResult)
    }


def test_a_second_container_keeps_its_own_model(tmp_path: Path) -> None:
    # KServe's storage initializer mounts /mnt/models into kserve-container alone (storage_initializer_injector.go);
    # pass 53 read the STORAGE_URI model for every container of the pod: a second vLLM serving
    # meta-llama/Llama-3.1-8B-Instruct was sized as Qwen/Qwen2.5-0.5B-Instruct
    models = _models_of(tmp_path, "name: kserve-container\n      ", "meta-llama/Llama-3.1-8B-Instruct")
    assert models == {
        "kserve-container": "Qwen/Qwen2.5-0.5B-Instruct",
        "second": "meta-llama/Llama-3.1-8B-Instruct",
    }
    # nor is /mnt/models in the second container the downloaded model (not mounted there)
    models = _models_of(tmp_path, "name: kserve-container\n      ", "/mnt/models")
    assert models == {"kserve-container": "Qwen/Qwen2.5-0.5B-Instruct", "second": None}


def test_an_unnamed_first_container_is_kserve_container(tmp_path: Path) -> None:
    # CustomPredictor.Default names the first container kserve-container when it is unnamed (or the only one)
    models = _models_of(tmp_path, "", "meta-llama/Llama-3.1-8B-Instruct")
    assert models == {"": "Qwen/Qwen2.5-0.5B-Instruct", "second": "meta-llama/Llama-3.1-8B-Instruct"}
