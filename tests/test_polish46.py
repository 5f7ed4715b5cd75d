"""Leftovers of the engine-release and option-reading reviews (polish46)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check


def _run(path: Path):  # type: ignore[no-untyped-def]
    return run_check([str(path)], Options(allow_hub=False))


def _manifest(tmp_path: Path, image: str, extra: str, gpus: int = 1) -> Path:
    m = tmp_path / "m.yaml"
    m.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  template:\n    spec:\n"
        f"      containers:\n      - name: api\n        image: {image}\n"
        f"        args: [--model, HuggingFaceTB/SmolLM2-135M-Instruct{extra}]\n"
        f"        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n"
    )
    return m


@pytest.mark.parametrize(
    ("image", "build"),
    [("vllm/vllm-openai:v0.8.5", "CUDA"), ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "ROCm")],
)
def test_kv501_on_a_gpu_build_started_with_device_cpu_says_the_build_decides(
    tmp_path: Path, image: str, build: str
) -> None:
    """vLLM picks its platform from the build (vllm/platforms/__init__.py, ``cpu_platform_plugin``: "cpu" in
    version("vllm")), not ``--device cpu``: KV501 said "vllm is started with --device cpu" as if that made a CPU
    run, on vLLM's own CUDA image. It now says the flag does not make the GPU build run on the CPU."""
    (d,) = [d for d in _run(_manifest(tmp_path, image, ", --device, cpu")).diagnostics if d.rule == "KV501"]
    assert f"is vLLM's {build} build" in d.message
    assert "picks its platform from the build" in d.message
    assert "--device cpu" in d.fix


def test_kv501_on_a_cpu_image_started_with_device_cpu_keeps_the_plain_wording(tmp_path: Path) -> None:
    (d,) = [
        d
        for d in _run(
            _manifest(tmp_path, "ghcr.io/stackhpc/vllm-cpu:v0.8.5", ", --device, cpu", 0)
        ).diagnostics
        if d.rule == "KV501"
    ]
    assert "is started with --device cpu" in d.message
    assert "picks its platform" not in d.message


def _installing(tmp_path: Path, image: str, install: str) -> Path:
    """A 1-GPU Pod whose ``bash -c`` script runs ``install`` (line 2 of the file's script, line 9 of the file)
    and then vLLM's OpenAI server module."""
    m = tmp_path / "p.yaml"
    m.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        f"    image: {image}\n    command: [/bin/bash, -c]\n    args:\n    - |\n"
        "      set -e\n"
        f"      {install}\n"
        "      python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-0.5B-Instruct\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return m


def test_kv208_on_a_release_the_script_pins_names_the_pin_and_its_line(tmp_path: Path) -> None:
    """``pip install vllm==0.3.3`` before the engine sets the release (kvlint.engines.command._pip_pinned); KV208
    said "check the image tag" of vllm/vllm-openai:v0.10.2, whose release no longer runs."""
    res = _run(_installing(tmp_path, "vllm/vllm-openai:v0.10.2", "pip install vllm==0.3.3"))
    (d,) = [d for d in res.diagnostics if d.rule == "KV208"]
    assert (
        "vLLM 0.3.3, installed by the container's script ('pip install vllm==0.3.3' at line 12)" in d.message
    )
    assert d.loc is not None and d.loc.line == 12
    assert "image tag" not in d.fix and "pip install" in d.fix


@pytest.mark.parametrize(
    "install", ["pip install -U vllm", "pip install --upgrade vllm", "uv pip install -U 'vllm>=0.8'"]
)
def test_an_unpinned_upgrade_makes_the_release_unknown(tmp_path: Path, install: str) -> None:
    """``pip install -U vllm`` on vLLM's v0.10.2 image installs the newest release on the day the pod starts: the
    tag's 0.10.2 no longer runs, and the release is unknown (KV208 says so, at the pip command)."""
    res = _run(_installing(tmp_path, "vllm/vllm-openai:v0.10.2", install))
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.serving.version is None
    (d,) = [d for d in res.diagnostics if d.rule == "KV208"]
    assert "upgrades vLLM without pinning a release" in d.message and "at line 12" in d.message
    assert "in place of the vLLM 0.10.2 image" in d.message
    assert d.loc is not None and d.loc.line == 12


@pytest.mark.parametrize(
    "install", ["pip install vllm", "pip install -U transformers", "pip install -U vllm==0.8.5"]
)
def test_an_install_that_keeps_or_pins_the_release_is_not_unknown(tmp_path: Path, install: str) -> None:
    """Without -U pip leaves the image's vLLM alone ("Requirement already satisfied"); upgrading another package
    changes nothing of vLLM; a pinned upgrade runs that pin."""
    res = _run(_installing(tmp_path, "vllm/vllm-openai:v0.10.2", install))
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.serving.version == ("0.8.5" if "==" in install else "0.10.2")
    assert not [d for d in res.diagnostics if d.rule == "KV208"]


def test_an_unpinned_upgrade_on_an_image_without_vllm_names_no_carried_release(tmp_path: Path) -> None:
    res = _run(_installing(tmp_path, "nvcr.io/nvidia/pytorch:24.01-py3", "pip install -U vllm"))
    (d,) = [d for d in res.diagnostics if d.rule == "KV208"]
    assert "upgrades vLLM without pinning a release" in d.message
    assert "in place of" not in d.message


@pytest.mark.parametrize(
    ("image", "option", "value", "accepts"),
    [
        # choices read in the wheels: RunnerOption (0.10.1+), ConvertOption (0.10.1+; "reward" up to 0.14,
        # "mm_encoder_only" in 0.14 only), TaskOption (0.6.6-0.12.0)
        ("vllm/vllm-openai:v0.20.0", "--runner", "Pooling", "auto, draft, generate, pooling"),
        ("vllm/vllm-openai:v0.20.0", "--convert", "bogus", "auto, classify, embed, none"),
        ("vllm/vllm-openai:v0.20.0", "--convert", "reward", "auto, classify, embed, none"),
        ("vllm/vllm-openai:v0.11.0", "--task", "bogus", "auto, classify, draft, embed, embedding, generate"),
        ("vllm/vllm-openai:v0.6.6.post1", "--task", "transcription", "auto, classify, embed, embedding"),
    ],
)
def test_kv206_refuses_a_runner_convert_or_task_outside_the_release_choices(
    tmp_path: Path, image: str, option: str, value: str, accepts: str
) -> None:
    """argparse refuses ``--runner Pooling`` ("invalid choice"): the value was read as given and planned."""
    m = _manifest(tmp_path, image, f", {option}, {value}")
    found = [d for d in _run(m).diagnostics if d.rule == "KV206" and option in d.message]
    assert found, [d.message for d in _run(m).diagnostics]
    assert accepts in found[0].message


@pytest.mark.parametrize(
    ("image", "option", "value"),
    [
        ("vllm/vllm-openai:v0.20.0", "--runner", "pooling"),
        ("vllm/vllm-openai:v0.12.0", "--convert", "reward"),
        ("vllm/vllm-openai:v0.14.0", "--convert", "mm_encoder_only"),
        ("vllm/vllm-openai:v0.8.5", "--task", "embed"),
        ("vllm/vllm-openai:v0.12.0", "--task", "draft"),
    ],
)
def test_a_runner_convert_or_task_the_release_accepts_is_not_refused(
    tmp_path: Path, image: str, option: str, value: str
) -> None:
    m = _manifest(tmp_path, image, f", {option}, {value}")
    assert not [d for d in _run(m).diagnostics if d.rule == "KV206" and option in d.message]


def test_a_pooler_config_naming_only_the_sequence_type_keeps_the_class_token_default() -> None:
    """From vLLM 0.14.0 ``ModelConfig.__post_init__`` fills each of ``seq_pooling_type``/``tok_pooling_type`` the
    ``--pooler-config`` leaves unset from the model class's default: Qwen2ForProcessRewardModel keeps its STEP
    token pooling (``@default_pooling_type(tok_pooling_type="STEP")``), so chunked prefill stays off."""
    from kvlint.memory.pooling import vllm_pooling_chunked_prefill
    from kvlint.memory.versions import parse_version

    chunked, why = vllm_pooling_chunked_prefill(
        parse_version("0.14.0"),
        ("Qwen2ForProcessRewardModel",),
        {},
        pooler_config='{"seq_pooling_type": "LAST"}',
    )
    assert not chunked and "STEP token pooling" in why and "model class's default" in why
    # before 0.14.0 one pooling_type: the one given replaces the class's
    assert vllm_pooling_chunked_prefill(
        parse_version("0.11.0"), ("Qwen2ForProcessRewardModel",), {}, pooler_config='{"pooling_type": "LAST"}'
    )[0]
    # a token type given wins over the class's token default
    assert vllm_pooling_chunked_prefill(
        parse_version("0.20.0"),
        ("Qwen2ForProcessRewardModel",),
        {},
        pooler_config='{"tok_pooling_type": "ALL"}',
    )[0]


@pytest.mark.parametrize(
    ("image", "config", "clash"),
    [
        (
            "vllm/vllm-openai:v0.14.0",
            '{"pooling_type": "MEAN", "seq_pooling_type": "LAST"}',
            "seq_pooling_type",
        ),
        (
            "vllm/vllm-openai:v0.34.0",
            '{"pooling_type": "LAST", "tok_pooling_type": "STEP"}',
            "tok_pooling_type",
        ),
        ("vllm/vllm-openai:v0.34.0", '{"pooling_type": "LAST", "seq_pooling_type": null}', None),
        ("vllm/vllm-openai:v0.34.0", '{"seq_pooling_type": "MEAN", "tok_pooling_type": "ALL"}', None),
    ],
)
def test_kv206_refuses_pooling_type_beside_a_split_type(
    tmp_path: Path, image: str, config: str, clash
) -> None:  # type: ignore[no-untyped-def]
    """vLLM 0.14.0+ ``PoolerConfig.__post_init__`` raises "Cannot set both `pooling_type` and `seq_pooling_type`"."""
    m = _manifest(tmp_path, image, f", --runner, pooling, --pooler-config, '{config}'")
    found = [d for d in _run(m).diagnostics if d.rule == "KV206" and "--pooler-config" in d.message]
    if clash is None:
        assert not found
    else:
        (d,) = found
        assert f"Cannot set both `pooling_type` and `{clash}`" in d.message and d.severity == "error"
