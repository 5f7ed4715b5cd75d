"""The JSON report quotes a manifest's values as findings do, each word at most 256 characters: a 200 KB
nodeSelector value was echoed whole (twice) in ``accelerator_how`` and a 200 KB image whole in ``image``,
while the text, SARIF and other reports clipped them."""

from __future__ import annotations

import json
from pathlib import Path

from kvlint.pipeline import Options, run_check
from kvlint.report import render

LONG = "x" * 200_000


def _json(tmp_path: Path, selector: str, image: str) -> dict:
    f = tmp_path / "d.yaml"
    f.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: v}\nspec:\n  template:\n    spec:\n"
        f"      nodeSelector:\n        cloud.google.com/gke-accelerator: {selector}\n"
        f"      containers:\n      - name: vllm\n        image: {image}\n"
        '        args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]\n'
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return json.loads(render("json", run_check([str(f)], Options(allow_hub=False))))


def test_long_label_and_image_are_clipped_in_the_json_report(tmp_path: Path) -> None:
    (w,) = _json(tmp_path, "nvidia-l4" + LONG, "vllm/vllm-openai:v0.10.2" + LONG)["workloads"]
    assert "nvidia-l4xxx" in w["accelerator_how"] and len(w["accelerator_how"]) < 2_000, len(
        w["accelerator_how"]
    )
    assert w["image"].startswith("vllm/vllm-openai:v0.10.2xxx") and len(w["image"]) <= 256, len(w["image"])


def test_real_values_are_quoted_whole(tmp_path: Path) -> None:
    (w,) = _json(tmp_path, "nvidia-l4", "vllm/vllm-openai:v0.10.2")["workloads"]
    assert w["image"] == "vllm/vllm-openai:v0.10.2"
    assert w["accelerator"] == "nvidia-l4" and "nvidia-l4" in w["accelerator_how"]


def test_long_model_and_refusal_are_clipped_in_the_markdown_report(tmp_path: Path) -> None:
    # the Markdown report (the Action's step summary) echoed a container's model reference and its plan refusal
    # whole in the container's section: a 100 KB value each, where the JSON report and the findings clip them
    long = "x" * 100_000  # (an argument under execve's 128 KiB, else the command is not read at all)
    f = tmp_path / "d.yaml"
    f.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: v}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}\n"
        "      containers:\n      - name: a\n        image: vllm/vllm-openai:v0.34.0\n"
        f'        args: ["--model", "Qwen/{long}"]\n'
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
        "      - name: b\n        image: vllm/vllm-openai:v0.34.0\n"
        '        args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]\n'
        f"        env: [{{name: VLLM_USE_V2_MODEL_RUNNER, value: '{long}'}}]\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    md = render("markdown", run_check([str(f)], Options(allow_hub=False)))
    assert "model `Qwen/xxx" in md and "VLLM_USE_V2_MODEL_RUNNER=xxx" in md, md[:2000]
    assert max(len(line) for line in md.splitlines()) < 2_000, sorted(len(line) for line in md.splitlines())[
        -3:
    ]
