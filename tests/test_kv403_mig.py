"""KV403 on MIG slices (``nvidia.com/mig-<profile>``, the device plugin's mixed strategy): CUDA enumerates one MIG
device per process whatever number of slices the container gets (NVIDIA MIG User Guide, "CUDA Device
Enumeration"), so an engine of more than one GPU worker a pod sees one GPU and its workers beyond it fail
(:func:`kvlint.rules.families.parallelism._mig_slices`). The counts agreeing (TP 2 on 2 slices) used to pass."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

OFFLINE = Options(allow_hub=False)

ARGS = {
    "vllm": (
        "vllm/vllm-openai:v0.19.0",
        '["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"{tp}]',
    ),
    "sglang": (
        "lmsysorg/sglang:v0.5.5",
        '["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct", '
        '"--context-length", "8192"{tp}]',
    ),
    "tgi": (
        "ghcr.io/huggingface/text-generation-inference:3.3.4",
        '["--model-id", "Qwen/Qwen2.5-7B-Instruct", "--max-total-tokens", "8192"{tp}]',
    ),
}
TP = {
    "vllm": ', "--tensor-parallel-size", "{n}"',
    "sglang": ', "--tp-size", "{n}"',
    "tgi": ', "--num-shard", "{n}"',
}


def _manifest(engine: str, tp: int, resource: str, count: int) -> str:
    image, args = ARGS[engine]
    key = "command" if engine == "sglang" else "args"
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {engine}-mig
spec:
  selector: {{matchLabels: {{app: a}}}}
  template:
    metadata: {{labels: {{app: a}}}}
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
      containers:
      - name: engine
        image: {image}
        {key}: {args.format(tp=TP[engine].format(n=tp) if tp > 1 else "")}
        resources:
          limits:
            {resource}: {count}
        volumeMounts:
        - {{name: dshm, mountPath: /dev/shm}}
      volumes:
      - name: dshm
        emptyDir: {{medium: Memory, sizeLimit: 16Gi}}
"""


def _kv403(text: str) -> list:
    return [d for d in run_documents(load_text(text, "mig.yaml"), OFFLINE).diagnostics if d.rule == "KV403"]


@pytest.mark.parametrize("engine", ["vllm", "sglang", "tgi"])
def test_tp2_on_two_mig_slices_sees_one_gpu(engine):
    found = _kv403(_manifest(engine, 2, "nvidia.com/mig-3g.40gb", 2))
    assert len(found) == 1, [d.message for d in found]
    d = found[0]
    assert d.severity == "error"
    assert "MIG slices" in d.message and "one MIG device per process" in d.message, d.message
    assert "nvidia.com/mig-3g.40gb: 2" in d.message
    assert "nvidia.com/gpu: 2" in (d.fix or "")
    if engine == "vllm":
        assert "World size (2) is larger than the number of available GPUs (1)" in d.message


@pytest.mark.parametrize("engine", ["vllm", "sglang", "tgi"])
def test_neighbours_pass(engine):
    # one worker on one slice, and two workers on two whole GPUs
    assert _kv403(_manifest(engine, 1, "nvidia.com/mig-3g.40gb", 1)) == []
    assert _kv403(_manifest(engine, 2, "nvidia.com/gpu", 2)) == []


def test_the_one_slice_remedy_only_when_it_fits():
    """The engine on one slice is offered when kvlint's re-plan on that slice starts: a 7B model in bf16 fits a
    3g.40gb slice, not a 1g.10gb one (15.2 GB of weights)."""
    fits = _kv403(_manifest("vllm", 2, "nvidia.com/mig-3g.40gb", 2))
    assert "on one slice" in (fits[0].fix or "")
    small = _kv403(_manifest("vllm", 2, "nvidia.com/mig-1g.10gb", 2))
    assert len(small) == 1 and "on one slice" not in (small[0].fix or ""), small[0].fix


def _placement(text: str, options: Options = OFFLINE):
    (c,) = run_documents(load_text(text, "mig.yaml"), options).containers
    return c.placement


def test_a_mig_slice_is_named_as_the_device_the_engine_sees(tmp_path):
    """The plan sized on a slice's memory names the slice (as NVML names a MIG device), not the whole board:
    the Markdown report (the Action's job summary) read '1 × NVIDIA A100-SXM4-80GB' over a 39.25 GiB total."""
    from click.testing import CliRunner

    from kvlint.cli import main

    one = _manifest("vllm", 1, "nvidia.com/mig-3g.40gb", 1)
    p = _placement(one)
    assert p.mig_profile == "3g.40gb"
    assert p.device_name == "NVIDIA A100-SXM4-80GB MIG 3g.40gb"
    assert p.memory_bytes == p.memory_bytes_override
    whole = _placement(_manifest("vllm", 1, "nvidia.com/gpu", 1))
    assert whole.mig_profile is None and whole.device_name == "NVIDIA A100-SXM4-80GB"
    # --gpu-memory replaces the slice's memory: the slice is no longer what the plan is sized on
    mem = _placement(one, Options(allow_hub=False, gpu_memory_bytes=30 << 30))
    assert mem.mig_profile is None and mem.device_name == "NVIDIA A100-SXM4-80GB"
    f = tmp_path / "mig.yaml"
    f.write_text(one)
    out = CliRunner().invoke(main, ["check", str(f), "--format", "markdown"]).output
    assert "1 × NVIDIA A100-SXM4-80GB MIG 3g.40gb ·" in out, out


def _on_labels(selector: str, tp: int) -> str:
    """A vLLM engine of ``tp`` workers on ``nvidia.com/gpu: tp`` where the node labels say the GPUs are MIG slices."""
    return _manifest("vllm", tp, "nvidia.com/gpu", tp).replace(
        "nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB", selector
    )


@pytest.mark.parametrize(
    "selector",
    [
        # the device plugin's single strategy: nvidia.com/gpu are MIG devices, GFD names the product '-MIG-<profile>'
        "nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-3g.40gb",
        # GKE: nvidia.com/gpu on a node pool partitioned by gpu_partition_size
        "cloud.google.com/gke-accelerator: nvidia-a100-80gb\n        cloud.google.com/gke-gpu-partition-size: 3g.40gb",
    ],
)
def test_mig_slices_named_by_node_labels_are_slices_too(selector):
    """The one-device enumeration is CUDA's, whatever resource name hands out the slices: the single strategy's
    ``nvidia.com/gpu`` and GKE's partitions (the plan already sizes them on the slice, ``Placement.mig_profile``)
    were not reported, only ``nvidia.com/mig-<profile>``."""
    assert _placement(_on_labels(selector, 1)).mig_profile == "3g.40gb"
    found = _kv403(_on_labels(selector, 2))
    assert len(found) == 1 and "MIG slices" in found[0].message, [d.message for d in found]
    assert "nvidia.com/gpu: 2" in found[0].message
    assert _kv403(_on_labels(selector, 1)) == []


def test_a_label_that_is_no_mig_profile_is_not_named_as_one(tmp_path):
    """GFD's product label is the manifest author's text: a '-MIG-' suffix that is no MIG profile (here 5,000
    characters) still sizes the plan on the memory label, but is not printed as the device's name (the Markdown
    heading, the Action's job summary, carried it whole)."""
    from click.testing import CliRunner

    from kvlint.cli import main

    junk = "Z" * 5000
    text = _manifest("vllm", 1, "nvidia.com/gpu", 1).replace(
        "nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB",
        f"nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-{junk}\n        nvidia.com/gpu.memory: '40192'",
    )
    p = _placement(text)
    assert p.memory_bytes == 40192 << 20  # the slice's memory from the label, as before
    assert p.mig_profile is None and p.device_name == "NVIDIA A100-SXM4-80GB"
    f = tmp_path / "mig.yaml"
    f.write_text(text)
    out = CliRunner().invoke(main, ["check", str(f), "--format", "markdown", "--offline"]).output
    assert junk not in out and "1 × NVIDIA A100-SXM4-80GB ·" in out, out[:2000]


def test_the_json_report_names_the_slice(tmp_path):
    """The JSON report's workload entry carries the MIG profile the plan was sized on (``mig_profile``), as the
    Markdown heading names it: before, only ``accelerator_how``'s prose said so, next to the whole board's id."""
    import json

    from click.testing import CliRunner

    from kvlint.cli import main

    def workload(text: str, *extra: str) -> dict:
        f = tmp_path / "w.yaml"
        f.write_text(text)
        out = CliRunner().invoke(main, ["check", str(f), "--format", "json", "--offline", *extra]).output
        (w,) = json.loads(out)["workloads"]
        return w

    one = _manifest("vllm", 1, "nvidia.com/mig-3g.40gb", 1)
    w = workload(one)
    assert w["mig_profile"] == "3g.40gb" and w["accelerator"] == "nvidia-a100-sxm4-80gb"
    assert workload(_manifest("vllm", 1, "nvidia.com/gpu", 1))["mig_profile"] is None
    assert workload(one, "--gpu-memory", "30GiB")["mig_profile"] is None  # not sized on the slice


def _tgi_default(count: int, env: str = "") -> str:
    """TGI with no --num-shard on ``count`` 3g.40gb slices (``env``: an env list item for the container)."""
    text = _manifest("tgi", 1, "nvidia.com/mig-3g.40gb", count)
    if env:
        text = text.replace("        resources:", f"        env: [{env}]\n        resources:")
    return text


def test_tgi_at_its_default_shard_count_counts_the_slices():
    """TGI without ``--num-shard`` starts one shard per entry of ``NVIDIA_VISIBLE_DEVICES`` (``launcher/src/
    main.rs::num_cuda_devices``), where the device plugin lists each slice's MIG UUID: two slices, two shards, the
    same start as ``--num-shard 2``, which KV403 reported while the default went unreported (only KV404's /dev/shm
    spoke of "2 shard(s), one per visible GPU")."""
    found = _kv403(_tgi_default(2))
    assert len(found) == 1, [d.message for d in found]
    d = found[0]
    assert (
        d.severity == "error"
        and "TGI without --num-shard" in d.message
        and "NVIDIA_VISIBLE_DEVICES" in d.message
    )
    assert "MIG slices" in d.message and "Each process is one gpu" in d.message
    assert "--num-shard to 1" in (d.fix or "")
    assert _kv403(_tgi_default(1)) == []  # one slice, one shard
    # a container that names its devices itself: TGI counts that list, not the plugin's
    assert _kv403(_tgi_default(2, "{name: CUDA_VISIBLE_DEVICES, value: '0'}")) == []
    assert _kv403(_manifest("tgi", 1, "nvidia.com/gpu", 2)) == []  # whole GPUs: one shard each


def test_gpu_memory_does_not_make_slices_whole_gpus():
    """``--gpu-memory`` replaces the memory the plan is sized on, not the device: a TP 2 engine on the single
    strategy's slices (``nvidia.com/gpu`` on a GFD ``-MIG-3g.40gb`` product label) was reported without it and
    silently passed with it, as the option dropped ``Placement.mig_profile``, the only sign of slices."""
    text = _on_labels("nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-3g.40gb", 2)
    mem = Options(allow_hub=False, gpu_memory_bytes=40 << 30)
    p = _placement(text, mem)
    assert p.mig_profile is None and p.mig_slices == "3g.40gb"
    found = [d for d in run_documents(load_text(text, "mig.yaml"), mem).diagnostics if d.rule == "KV403"]
    assert len(found) == 1 and "MIG slices" in found[0].message, [d.message for d in found]
    # and a whole GPU stays one under --gpu-memory
    whole = _manifest("vllm", 2, "nvidia.com/gpu", 2)
    assert [
        d for d in run_documents(load_text(whole, "mig.yaml"), mem).diagnostics if d.rule == "KV403"
    ] == []
