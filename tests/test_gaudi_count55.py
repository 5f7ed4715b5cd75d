"""KV403 counts an Intel Gaudi pod's ``habana.ai/gaudi`` request in Gaudi HPUs (branch gpus55). Habana's device plugin
advertises whole HPUs, and vLLM and TGI on Gaudi run one worker (shard) on each, so the count is compared as GPUs
are; but the finding said "the pod requests 8 GPUs (habana.ai/gaudi: 8) ... 7 GPUs sit idle" of a pod with no GPU.
Neuron (NeuronCores) and TPU (JAX devices) requests keep their own counts (tests/test_rayserve_neuron.py)."""

from __future__ import annotations

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers:
  - name: a
    image: vllm/vllm-openai:v0.11.0
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, "4096", --tensor-parallel-size, "{tp}"]
    resources: {{limits: {{{resource}: {n}}}}}
"""


def _kv403(resource: str, n: int, tp: int) -> list[str]:
    res = run_documents(
        load_text(_POD.format(resource=resource, n=n, tp=tp), "p.yaml"), Options(allow_hub=False)
    )
    return [d.message for d in res.diagnostics if d.rule == "KV403"]


def test_a_gaudi_pod_is_counted_in_hpus_and_a_gpu_pod_in_gpus() -> None:
    (idle,) = _kv403("habana.ai/gaudi", 8, 1)
    assert "the pod requests 8 Gaudi HPUs (habana.ai/gaudi: 8)" in idle and "7 Gaudi HPUs sit idle" in idle
    assert "GPU" not in idle.split(";")[0]
    (short,) = _kv403("habana.ai/gaudi", 2, 4)
    assert "needs 4 Gaudi HPUs but the pod requests 2 (habana.ai/gaudi: 2)" in short
    (gpus,) = _kv403("nvidia.com/gpu", 8, 1)
    assert "the pod requests 8 GPUs (nvidia.com/gpu: 8)" in gpus and "7 GPUs sit idle" in gpus
