"""KV106 under an MPS memory cap, engine by engine (review of branch gpus55). Branch gpus55 held every engine's
memory fraction of the whole GPU to the cap NVIDIA's device plugin gives each MPS client, on the premise that the
client reads the whole GPU as its total but finds at most the cap free. That premise fails vLLM's start-up check
(``request_memory``: free >= gpu_memory_utilization x total), but TGI and SGLang size their memory from what they find
free, never more:

- TGI ``get_cuda_free_memory``: ``max(0, free - (1 - cuda_memory_fraction) x total)`` (text-generation-inference
  ``server/text_generation_server/utils/import_utils.py``), so at its default 1.0 it takes the free memory, the cap;
  a lower fraction takes (1 - fraction) of the whole GPU out of the cap and can leave nothing.
- SGLang ``profile_max_num_token``: ``available - total_gpu_memory x (1 - mem_fraction_static)`` where
  ``total_gpu_memory`` is the memory free when it started (``min_per_gpu_memory``), the cap.

So an MPS client of TGI or SGLang does not run out of memory at the cap, and the remedy gpus55 offered ("set
cuda_memory_fraction 0.23 or less") is the one that breaks TGI."""

from __future__ import annotations

import json

from click.testing import CliRunner

from kvlint.accelerators import registry as cat
from kvlint.cli import main

_MPS = (
    "nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4, nvidia.com/gpu.sharing-strategy: mps, "
    "nvidia.com/gpu.replicas: '4'}"
)
_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  {mps}
  containers:
  - name: a
    image: {image}
    args: [{args}]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""
_TGI = "ghcr.io/huggingface/text-generation-inference:3.3.6"
_TGI_ARGS = (
    "--model-id, meta-llama/Llama-3.2-1B-Instruct, --max-input-tokens, '2048', --max-total-tokens, '4096'"
)
_SGLANG = "lmsysorg/sglang:v0.5.5"
_SGLANG_ARGS = "python3, -m, sglang.launch_server, --model-path, meta-llama/Llama-3.2-1B-Instruct, --context-length, '4096'"


def _kv106(tmp_path, name: str, image: str, args: str) -> list[dict]:
    f = tmp_path / f"{name}.yaml"
    text = _POD.format(name=name, mps=_MPS, image=image, args=args)
    if image == _SGLANG:
        text = text.replace("    args: [", "    command: [")
    f.write_text(text)
    r = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--format", "json", "--fail-on", "never", str(f)]
    )
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["workloads"][0]["sharing_strategy"] == "mps"
    return [d for d in out["diagnostics"] if d["rule"] == "KV106"]


def test_tgi_and_sglang_at_their_defaults_on_an_mps_replica_are_not_an_error(tmp_path) -> None:
    """TGI at cuda_memory_fraction 1.0 and SGLang at its default take what they find free (the cap): no KV106 error
    (a warning may say the plan on the whole GPU overstates their KV cache)."""
    for name, image, args in (("tgi", _TGI, _TGI_ARGS), ("sglang", _SGLANG, _SGLANG_ARGS)):
        found = _kv106(tmp_path, name, image, args)
        assert not [d for d in found if d["severity"] == "error"], (name, found)
        assert all("cap" in d["message"] for d in found)
        # never the remedy that lowers the fraction
        assert not any("or less" in (d.get("fix") or "") for d in found), found


def test_tgi_whose_fraction_takes_more_than_the_cap_out_of_it_is_told_so(tmp_path) -> None:
    """cuda_memory_fraction 0.5 on an L4 of 4 MPS replicas: TGI keeps (1 - 0.5) x the whole GPU free, more than the
    cap it may allocate, so it finds no memory for its KV cache beyond its warmup batch's blocks (a warning: it
    starts, with about one prefill batch of cache), and the remedy is the default 1.0, not a lower fraction."""
    l4 = cat.require("nvidia-l4")
    cap = (cat.nvml_total_mib(l4) // 4) * 2**20
    assert 0.5 * l4.memory_bytes > cap  # the arithmetic the test rests on
    (d,) = _kv106(tmp_path, "tgi05", _TGI, _TGI_ARGS + ", --cuda-memory-fraction, '0.5'")
    assert d["severity"] == "warning"
    assert "get_cuda_free_memory" in d["message"] and "warmup batch" in d["message"]
    assert "1.0" in d["fix"]


def test_vllm_is_still_held_to_the_cap(tmp_path) -> None:
    """vLLM's start-up check compares its claim of the whole GPU with the free memory: the error stands."""
    args = "vllm, serve, meta-llama/Llama-3.2-1B-Instruct, --max-model-len, '4096'"
    f = tmp_path / "v.yaml"
    f.write_text(
        _POD.format(name="v", mps=_MPS, image="vllm/vllm-openai:v0.11.0", args=args).replace(
            "args: [", "command: ["
        )
    )
    r = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--format", "json", "--fail-on", "never", str(f)]
    )
    (d,) = [d for d in json.loads(r.stdout)["diagnostics"] if d["rule"] == "KV106"]
    assert d["severity"] == "error" and "Free memory on device" in d["message"]


def test_a_utilization_remedy_on_an_mps_replica_stays_within_the_cap(tmp_path) -> None:
    """Qwen2.5-7B (14.19 GiB of weights) on an L4 of 2 MPS replicas (a 11.25 GiB cap): no --gpu-memory-utilization
    both holds its weights and fits the cap, so KV101 must not offer one KV106 then refuses (it offered 0.83). With
    Qwen2.5-3B at 0.3, a utilization under the cap fraction that fits is still offered, and it fits the cap."""
    l4 = cat.require("nvidia-l4")
    cap = (cat.nvml_total_mib(l4) // 2) * 2**20
    ceiling = (cap - 0.6 * 2**30) / l4.memory_bytes  # KV106's most, before rounding down
    mps2 = _MPS.replace("'4'", "'2'")

    def diags(name: str, model: str, util: str) -> list[dict]:
        f = tmp_path / f"{name}.yaml"
        args = f"vllm, serve, {model}, --max-model-len, '32768', --gpu-memory-utilization, '{util}'"
        f.write_text(
            _POD.format(name=name, mps=mps2, image="vllm/vllm-openai:v0.11.0", args=args).replace(
                "args: [", "command: ["
            )
        )
        r = CliRunner().invoke(
            main, ["check", "--offline", "--no-config", "--format", "json", "--fail-on", "never", str(f)]
        )
        return json.loads(r.stdout)["diagnostics"]

    import re

    def offered(ds: list[dict]) -> list[float]:
        return [
            float(m)
            for d in ds
            if d["rule"] != "KV106"
            for m in re.findall(r"--gpu-memory-utilization (\d\.\d\d) (?:fits|starts)", d.get("fix") or "")
        ]

    big = diags("big", "Qwen/Qwen2.5-7B-Instruct", "0.5")
    assert [d for d in big if d["rule"] == "KV101"]
    assert all(u <= ceiling for u in offered(big)), offered(big)
    small = diags("small", "Qwen/Qwen2.5-3B-Instruct", "0.3")
    assert [d for d in small if d["rule"] == "KV103"]
    assert offered(small) and all(u <= ceiling for u in offered(small))


def test_no_remedy_asks_for_more_gpus_per_pod_on_mps_nodes(tmp_path) -> None:
    """On nodes selected by GFD's nvidia.com/gpu.sharing-strategy: mps, the device plugin gives a container one MPS
    replica at most (KV410), so a remedy of --tensor-parallel-size 2 "and 2 GPUs per pod" is refused at admission;
    the same pod without the MPS label is offered it."""
    args = "vllm, serve, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '32768', --gpu-memory-utilization, '0.5'"

    def fixes(name: str, sel: str) -> str:
        f = tmp_path / f"{name}.yaml"
        f.write_text(
            _POD.format(name=name, mps=sel, image="vllm/vllm-openai:v0.11.0", args=args).replace(
                "args: [", "command: ["
            )
        )
        r = CliRunner().invoke(
            main, ["check", "--offline", "--no-config", "--format", "json", "--fail-on", "never", str(f)]
        )
        return " ".join(d.get("fix") or "" for d in json.loads(r.stdout)["diagnostics"])

    assert "--tensor-parallel-size 2" in fixes("plain", "nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}")
    on_mps = fixes("mps", _MPS.replace("'4'", "'2'"))
    assert "--tensor-parallel-size" not in on_mps and "2 GPUs per pod" not in on_mps, on_mps


def test_vllm_with_the_extensible_kv_cache_sizes_from_the_cap_and_is_not_an_error(tmp_path) -> None:
    """vLLM >= 0.34.0 with its extensible KV cache (on by default) skips the free >= requested check and sizes the
    pool from the free memory it measures (``extensible_kv_cache.py::measure_kv_cache_blocks``, init_free, the
    cap): not a start-up failure, a KV cache smaller than the plan. Off (--no-enable-extensible-kv-cache) the check
    stands and so does the error."""
    base = "vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, '4096'"

    def kv106(name: str, args: str) -> list[dict]:
        f = tmp_path / f"{name}.yaml"
        f.write_text(
            _POD.format(name=name, mps=_MPS, image="vllm/vllm-openai:v0.34.0", args=args).replace(
                "args: [", "command: ["
            )
        )
        r = CliRunner().invoke(
            main, ["check", "--offline", "--no-config", "--format", "json", "--fail-on", "never", str(f)]
        )
        return [d for d in json.loads(r.stdout)["diagnostics"] if d["rule"] == "KV106"]

    on = kv106("on", base)
    assert on and all(d["severity"] == "warning" for d in on), on
    (off,) = kv106("off", base + ", --no-enable-extensible-kv-cache")
    assert off["severity"] == "error" and "Free memory on device" in off["message"]
