"""End-to-end pipeline behaviour on small manifests (fixtures/pipeline/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kvlint.pipeline import Options, run_check

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "pipeline"


def test_config_file_from_configmap_is_applied_and_located() -> None:
    result = run_check([str(FIX / "config-from-configmap.yaml")], Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.serving.model is not None and cr.serving.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert cr.serving.get("max_model_len") == 200000
    kv201 = [d for d in result.diagnostics if d.rule == "KV201"]
    assert len(kv201) == 1
    # the value's line inside the ConfigMap's block scalar
    assert kv201[0].loc is not None and kv201[0].loc.line == 12
    assert "131072" in kv201[0].message


def test_several_candidate_gpus_worst_case_decides_and_each_is_named() -> None:
    result = run_check([str(FIX / "affinity-two-gpus.yaml")], Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.placement is not None and len(cr.placement.candidates) == 2
    assert cr.placement.accelerator is not None and cr.placement.accelerator.id == "nvidia-l4"
    (kv103,) = [d for d in result.diagnostics if d.rule == "KV103"]
    assert "NVIDIA L4 fails (KV103)" in kv103.message
    assert "H100" in kv103.message and "fits" in kv103.message


def test_kv_cache_memory_bytes_fixes_kv_size_and_ignores_utilization() -> None:
    """vLLM >= 0.10.2 uses exactly --kv-cache-memory-bytes per GPU (engine-memory-model §1.2.1 step 8)."""
    from kvlint.capacity.plan_command import plan_command

    opts = Options(allow_hub=False, accelerator="h100", engine_version="0.11.0")
    base = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
    ok = plan_command([*base, "--kv-cache-memory-bytes", "10G"], opts)
    assert ok.verdict == "ok" and ok.result.plan is not None
    assert ok.result.plan.kv_cache_bytes == 10 * 2**30
    assert ok.result.plan.capacity_tokens == 10 * 2**30 // (128 * 1024) // 16 * 16
    too_big = plan_command([*base, "--kv-cache-memory-bytes", "70G"], opts)
    (kv101,) = [d for d in too_big.diagnostics if d.rule == "KV101"]
    assert "more than the 79.20 GiB" in kv101.message and too_big.verdict == "fail"
    import re

    m = re.search(r"--kv-cache-memory-bytes (\d+) or less", kv101.fix)
    assert m
    fixed = plan_command([*base, "--kv-cache-memory-bytes", m.group(1)], opts)
    assert fixed.verdict == "ok"


def _variant(tmp_path: Path, old: str, new: str) -> str:
    src = (Path(__file__).resolve().parents[1] / "fixtures" / "cases" / "b09-clean.yaml").read_text()
    assert old in src
    out = tmp_path / "variant.yaml"
    out.write_text(src.replace(old, new))
    return str(out)


def test_invalid_gpu_limit_is_reported_not_mistaken_for_missing(tmp_path: Path) -> None:
    for raw in ('"1.5"', "abc", "-1"):
        result = run_check(
            [_variant(tmp_path, "nvidia.com/gpu: 1", f"nvidia.com/gpu: {raw}")], Options(allow_hub=False)
        )
        (d,) = [d for d in result.diagnostics if d.rule == "KV405"]
        assert d.severity == "error" and "not a positive whole number" in d.message
        assert "KV403" not in {x.rule for x in result.diagnostics}
    # zero is a valid quantity (the pod is created) that gives the container no GPU
    result = run_check(
        [_variant(tmp_path, "nvidia.com/gpu: 1", "nvidia.com/gpu: 0")], Options(allow_hub=False)
    )
    (d,) = [d for d in result.diagnostics if d.rule == "KV405"]
    assert d.severity == "error" and "gives the container no GPU" in d.message


def test_gpu_request_without_or_unequal_to_its_limit_is_kv405(tmp_path: Path) -> None:
    """The API server's extended-resource rules (ValidateResourceRequirements): a GPU request without a limit
    is refused unless a webhook adds the limit (warning), one that differs from its limit is refused (error);
    an equal request is fine, and the GPU count is still read for the other rules."""
    src = (Path(__file__).resolve().parents[1] / "fixtures" / "cases" / "b09-clean.yaml").read_text()
    limits = src[src.index("limits:") :].split("\n", 1)[0]
    indent = src[: src.index("limits:")].rsplit("\n", 1)[1]
    cases = {
        "requests-only": ("limits:", "requests:", "warning", "in resources.requests only"),
        "unequal": (
            limits,
            f"requests: {{nvidia.com/gpu: 2}}\n{indent}{limits}",
            "error",
            "differs from its limit 1",
        ),
        "equal": (limits, f"requests: {{nvidia.com/gpu: 1}}\n{indent}{limits}", None, ""),
    }
    for name, (old, new, severity, text) in cases.items():
        result = run_check([_variant(tmp_path, old, new)], Options(allow_hub=False))
        found = [d for d in result.diagnostics if d.rule == "KV405"]
        if severity is None:
            assert not found and result.diagnostics == [], name
            continue
        (d,) = found
        assert d.severity == severity and text in d.message, (name, d.message)
        (cr,) = result.containers
        assert cr.placement is not None and cr.placement.gpus is not None


def test_engine_version_outside_the_modelled_range_is_kv208(tmp_path: Path) -> None:
    result = run_check([_variant(tmp_path, "v0.11.0", "v0.99.0")], Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV208"]
    assert "newer than the releases kvlint models" in d.message
    clean = run_check([_variant(tmp_path, "v0.11.0", "v0.11.0")], Options(allow_hub=False))
    assert clean.diagnostics == []


def test_float16_refused_for_gemma2_from_vllm_0_9() -> None:
    """KV303: vLLM's _check_valid_dtype refuses float16 for gemma2/gemma3/glm4 (engine-memory-model §1.7)."""
    from kvlint.capacity.plan_command import plan_command

    cmd = ["vllm", "serve", "google/gemma-2-9b", "--dtype", "half", "--max-model-len", "4096"]
    new = plan_command(cmd, Options(allow_hub=False, accelerator="l4", engine_version="0.11.0"))
    assert [d.rule for d in new.diagnostics if d.rule == "KV303"] == ["KV303"]
    old = plan_command(cmd, Options(allow_hub=False, accelerator="l4", engine_version="0.6.6"))
    assert not [d for d in old.diagnostics if d.rule == "KV303"]
    bf16 = plan_command(
        ["vllm", "serve", "google/gemma-2-9b", "--dtype", "bfloat16", "--max-model-len", "4096"],
        Options(allow_hub=False, accelerator="l4", engine_version="0.11.0"),
    )
    assert not [d for d in bf16.diagnostics if d.rule == "KV303"]


def test_odd_volume_shapes_do_not_crash(tmp_path: Path) -> None:
    src = (Path(__file__).resolve().parents[1] / "fixtures" / "cases" / "b02-tp2-no-shm.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(src.replace("      containers:", "      volumes: 5\n      containers:", 1))
    result = run_check([str(bad)], Options(allow_hub=False))
    assert "KV404" in {d.rule for d in result.diagnostics}


def test_a_failing_check_is_reported_and_other_workloads_still_linted(monkeypatch, tmp_path: Path) -> None:
    from kvlint.rules.registry import Check, registry

    real = registry()["KV404"]["vllm"]

    def boom(ctx):
        if ctx.cr.workload.name == "qwen-7b":
            raise TypeError("unexpected shape")
        return real.function(ctx)

    monkeypatch.setitem(registry()["KV404"], "vllm", Check("KV404", None, boom))
    cases = Path(__file__).resolve().parents[1] / "fixtures" / "cases"
    result = run_check(
        [str(cases / "b02-tp2-no-shm.yaml"), str(cases / "b03-tp4-one-gpu.yaml")], Options(allow_hub=False)
    )
    by_rule = {d.rule: d for d in result.diagnostics}
    assert "kvlint could not finish checking this workload" in by_rule["KV503"].message
    assert by_rule["KV503"].object == "Deployment/qwen-7b"
    assert "KV403" in by_rule  # the other file's workload is still checked


def test_wrapper_script_from_configmap_runs_the_engine_with_the_container_args() -> None:
    """A container whose command is a script mounted from a ConfigMap of the inputs (``/scripts/startup.sh``,
    or ``bash run.sh`` under its workingDir through the volume's items) is read as the script: its
    ``exec vllm serve --model=X "$@"`` gets the container's args (before: KV503 'runs the script', not
    sized)."""
    result = run_check([str(FIX / "wrapper-script-from-configmap.yaml")], Options(allow_hub=False))
    by_name = {cr.workload.name: cr for cr in result.containers}
    assert set(by_name) == {"qwen", "qwen-bash"}
    for cr in by_name.values():
        assert cr.serving.engine == "vllm"
        assert cr.serving.model is not None and cr.serving.model.value == "Qwen/Qwen2.5-7B-Instruct"
        assert cr.plan is not None
    assert by_name["qwen"].serving.get("max_model_len") == 65536
    assert by_name["qwen"].serving.get("gpu_memory_utilization") == 0.9
    assert by_name["qwen-bash"].serving.get("max_model_len") == 8192
    assert not [d for d in result.diagnostics if d.rule == "KV503"]
    (kv201,) = [d for d in result.diagnostics if d.rule == "KV201"]
    assert kv201.loc is not None and (kv201.loc.line, kv201.loc.column) == (40, 15)  # the args item


def test_script_not_mounted_from_a_configmap_stays_unread(tmp_path: Path) -> None:
    """The same container without the ConfigMap among the inputs: the script cannot be read (KV503)."""
    text = (FIX / "wrapper-script-from-configmap.yaml").read_text()
    lone = tmp_path / "no-configmap.yaml"
    lone.write_text(text.split("---\n", 1)[1])
    result = run_check([str(lone)], Options(allow_hub=False))
    assert all(cr.serving.model is None for cr in result.containers)
    assert len([d for d in result.diagnostics if d.rule == "KV503"]) == 2


def test_a_mounted_script_the_runtime_cannot_execute_is_an_error_not_sized(tmp_path: Path) -> None:
    """A script that is the container's ``command`` is execve'd without a shell: with no execute bit (the
    ConfigMap volume default 0644) or without a ``#!`` line the container never starts, so it is not sized as
    if it ran (KV503 error, naming the cause). Run through ``bash`` (the second Deployment) it needs neither.
    A ``#!`` naming another interpreter (python3) is not read as shell words."""
    text = (FIX / "wrapper-script-from-configmap.yaml").read_text()
    assert "            defaultMode: 0755\n" in text and "    #!/bin/bash\n" in text

    def check(variant: str) -> tuple[dict[str, Any], list[Any]]:
        p = tmp_path / "v.yaml"
        p.write_text(variant)
        result = run_check([str(p)], Options(allow_hub=False))
        return {cr.workload.name: cr for cr in result.containers}, [
            d for d in result.diagnostics if d.rule == "KV503"
        ]

    for variant, cause in (
        (text.replace("            defaultMode: 0755\n", ""), "permission denied"),
        (
            text.replace("            defaultMode: 0755\n", "            defaultMode: 0640\n"),
            "permission denied",
        ),
        (text.replace("    #!/bin/bash\n", ""), "exec format error"),
    ):
        by_name, kv503 = check(variant)
        assert by_name["qwen"].serving.model is None
        (d,) = kv503
        assert d.severity == "error" and cause in d.message and d.object == "Deployment/qwen"
        assert by_name["qwen-bash"].serving.model is not None  # bash run.sh: neither matters
    # an item's own mode wins over the volume's default
    by_name, kv503 = check(
        text.replace(
            "            defaultMode: 0755\n",
            "            defaultMode: 0644\n            items: [{key: startup.sh, path: startup.sh, mode: 0755}]\n",
        )
    )
    assert by_name["qwen"].serving.model is not None and not kv503
    by_name, kv503 = check(text.replace("    #!/bin/bash\n", "    #!/usr/bin/env python3\n"))
    assert by_name["qwen"].serving.model is None
    (d,) = kv503
    assert d.severity == "warning" and "runs the script" in d.message


def test_a_mounted_script_larger_than_a_configmap_can_hold_is_not_read(tmp_path: Path) -> None:
    """A ConfigMap holds at most 1 MiB (the API server's MaxSecretSize): a larger script is never mounted, so
    it is not read as the container's command (KV503 error naming the limit) -- which also keeps one huge
    script shared by many containers from being read once per container. One just under the limit is read."""
    from kvlint.engines.command import CONFIGMAP_MAX_BYTES

    text = (FIX / "wrapper-script-from-configmap.yaml").read_text()
    for size, read in ((CONFIGMAP_MAX_BYTES - 200, True), (CONFIGMAP_MAX_BYTES + 1, False)):
        p = tmp_path / "big.yaml"
        # a comment line after 'set -e' making the script's value ``size`` bytes long or more
        p.write_text(text.replace("    set -e\n", "    set -e\n    # " + "x" * (size - 2) + "\n"))
        result = run_check([str(p)], Options(allow_hub=False))
        by_name = {cr.workload.name: cr for cr in result.containers}
        assert (by_name["qwen"].serving.model is not None) is read, size
        kv503 = [d for d in result.diagnostics if d.rule == "KV503"]
        if read:
            assert not kv503
        else:
            assert len(kv503) == 2 and all(
                d.severity == "error" and "1,048,576 bytes" in d.message for d in kv503
            )
