"""SGLang attention DP on several nodes (a LeaderWorkerSet group, ``--nnodes``), as wide-EP DeepSeek / Kimi-K2
deployments run it (sgl-project/ome ``config/runtimes/srt/kimi-k2-pd-rt.yaml``: ``--tp-size`` and ``--dp-size``
``$(PARALLELISM_SIZE)`` = 8 GPUs x 12 pods, ``--enable-dp-attention``, ``--nnodes $(LWS_GROUP_SIZE)``).

The attention-DP ranks are the tensor-parallel workers, spread over the ``--nnodes`` pods (``tp_size`` must be
divisible by the number of nodes, sglang@0.5.5 ``server_args.py::ServerArgs.check_server_args``), so the pod runs
``tp / nnodes`` of them. KV403 compared the whole ``--tp-size`` with one pod's GPUs (the per-pod rule of vLLM's
``--data-parallel-size-local``, which attention DP's ``dp_local`` 1 also met) and reported
"--tp-size 96 needs 96 GPUs but the pod requests 8".

KV401 (SGLang) likewise divided the attention heads by the whole ``--tp-size`` ("--tp-size 96 does not divide the 64
attention heads of moonshotai/Kimi-K2-Instruct"), where the architectures that build their attention over the
attention-TP group under DP attention (``kvlint.memory.sglang.attention_over_attn_tp``: sglang@0.5.5
``models/deepseek_v2.py::DeepseekV2AttentionMLA.__init__`` asserts ``num_heads % attn_tp_size == 0``, with
``attn_tp_size = tp_size // dp_size``, ``layers/dp_attention.py::compute_dp_attention_world_info``) split them over
``tp / dp`` ranks only. Llama keeps its attention over the whole TP group (``models/llama.py::LlamaAttention``
asserts ``total_num_heads % tp_size == 0``), so it is still reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

MODEL_DIRS = (str(Path(__file__).resolve().parent.parent / "fixtures" / "plan" / "models"),)

LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: wide-ep}
spec:
  leaderWorkerTemplate:
    size: SIZE
    leaderTemplate:
      spec:
        nodeSelector: {nvidia.com/gpu.product: NVIDIA-H200}
        volumes: [{name: dshm, emptyDir: {medium: Memory}}]
        containers:
        - name: leader
          image: lmsysorg/sglang:v0.5.5
          command: [python3, -m, sglang.launch_server, --model-path, deepseek-ai/DeepSeek-V3, --trust-remote-code,
                    ARGS, --dist-init-addr, "$(LWS_LEADER_ADDRESS):5757", --nnodes, "$(LWS_GROUP_SIZE)",
                    --node-rank, "$(LWS_WORKER_INDEX)"]
          volumeMounts: [{name: dshm, mountPath: /dev/shm}]
          resources: {limits: {nvidia.com/gpu: 8}}
    workerTemplate:
      spec:
        nodeSelector: {nvidia.com/gpu.product: NVIDIA-H200}
        volumes: [{name: dshm, emptyDir: {medium: Memory}}]
        containers:
        - name: worker
          image: lmsysorg/sglang:v0.5.5
          command: [python3, -m, sglang.launch_server, --model-path, deepseek-ai/DeepSeek-V3, --trust-remote-code,
                    ARGS, --dist-init-addr, "$(LWS_LEADER_ADDRESS):5757", --nnodes, "$(LWS_GROUP_SIZE)",
                    --node-rank, "$(LWS_WORKER_INDEX)"]
          volumeMounts: [{name: dshm, mountPath: /dev/shm}]
          resources: {limits: {nvidia.com/gpu: 8}}
"""


def _diags(
    tmp_path: Path, size: int, args: str, rule: str, model: str = "deepseek-ai/DeepSeek-V3"
) -> list[str]:
    path = tmp_path / "lws.yaml"
    path.write_text(
        LWS.replace("SIZE", str(size)).replace("ARGS", args).replace("deepseek-ai/DeepSeek-V3", model)
    )
    diags = run_check([str(path)], Options(allow_hub=False, model_dirs=MODEL_DIRS)).diagnostics
    return [d.message for d in diags if d.rule == rule]


def _kv403(tmp_path: Path, size: int, args: str) -> list[str]:
    return _diags(tmp_path, size, args, "KV403")


@pytest.mark.parametrize(
    ("size", "args"),
    [
        (2, "--tp-size, '16', --dp-size, '16', --enable-dp-attention"),
        (4, "--tp-size, '32', --dp-size, '8', --enable-dp-attention"),
        (2, "--tp-size, '16'"),  # without attention DP: held before the fix too
    ],
)
def test_attention_dp_over_the_group_fits_its_gpus(tmp_path: Path, size: int, args: str) -> None:
    """tp x pp workers over ``size`` pods of 8 GPUs: exactly the group's GPUs, no KV403."""
    assert _kv403(tmp_path, size, args) == []


def test_attention_dp_beyond_the_group_is_still_reported(tmp_path: Path) -> None:
    """32 tensor-parallel ranks on 2 pods of 8 GPUs: 16 GPUs short, reported with the group's GPUs."""
    msgs = _kv403(tmp_path, 2, "--tp-size, '32', --dp-size, '32', --enable-dp-attention")
    assert len(msgs) == 2, msgs  # the leader's and the worker's
    assert all("needs 32 GPUs" in m and "x 2 pods" in m for m in msgs), msgs


def test_attention_heads_split_over_the_attention_tp_group(tmp_path: Path) -> None:
    """DeepSeek-V3's 128 heads at --tp-size 96 --dp-size 96 with DP attention (12 pods of 8 GPUs): attention TP 1,
    which divides them: neither KV401 nor KV403."""
    args = "--tp-size, '96', --dp-size, '96', --enable-dp-attention"
    assert _diags(tmp_path, 12, args, "KV401") == []
    assert _kv403(tmp_path, 12, args) == []


def test_attention_heads_still_checked_over_attention_tp_and_for_llama(tmp_path: Path) -> None:
    """What SGLang still refuses: DeepSeek-V3's 128 heads over an attention-TP group of 3 (--tp-size 48 --dp-size 16
    on 6 pods), and Llama-3.1-70B's 64 heads over its whole --tp-size 96 (its attention ignores DP attention)."""
    dsv3 = _diags(tmp_path, 6, "--tp-size, '48', --dp-size, '16', --enable-dp-attention", "KV401")
    assert dsv3 and all("128 attention heads" in m for m in dsv3), dsv3
    llama = _diags(
        tmp_path,
        12,
        "--tp-size, '96', --dp-size, '96', --enable-dp-attention",
        "KV401",
        "meta-llama/Llama-3.1-70B",
    )
    assert llama and all("--tp-size 96 does not divide the 64 attention heads" in m for m in llama), llama


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: one-node}
spec:
  selector: {matchLabels: {app: s}}
  template:
    metadata: {labels: {app: s}}
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H200}
      volumes: [{name: dshm, emptyDir: {medium: Memory}}]
      containers:
      - name: s
        image: lmsysorg/sglang:VERSION
        command: [python3, -m, sglang.launch_server, --model-path, MODEL, ARGS]
        volumeMounts: [{name: dshm, mountPath: /dev/shm}]
        resources: {limits: {nvidia.com/gpu: 8}}
"""


def _one_node(tmp_path: Path, version: str, args: str, model: str = "deepseek-ai/DeepSeek-V3") -> list[str]:
    path = tmp_path / "one-node.yaml"
    path.write_text(DEPLOYMENT.replace("VERSION", version).replace("ARGS", args).replace("MODEL", model))
    diags = run_check([str(path)], Options(allow_hub=False, model_dirs=MODEL_DIRS)).diagnostics
    return [f"{d.rule} {d.message}" for d in diags if d.rule.startswith("KV40")]


@pytest.mark.parametrize(
    ("version", "args"),
    [
        ("v0.5.5", "--tp-size, '8', --dp-size, '3', --enable-dp-attention"),
        ("v0.4.10", "--tp-size, '8', --dp-size, '3', --enable-dp-attention"),
        ("v0.5.23", "--tp-size, '8', --dp-size, '3', --enable-dp-attention"),
        ("v0.5.23", "--tp-size, '8', --attn-dp-size, '3'"),
    ],
)
def test_attention_dp_not_dividing_tp_is_refused(tmp_path: Path, version: str, args: str) -> None:
    """With DP attention SGLang asserts tp_size % dp_size == 0 (attn_dp_size from 0.5.22) before loading: --tp-size 8
    with an attention DP of 3 does not start. kvlint fell back to the whole --tp-size for the heads (128 % 8 == 0)
    and said nothing."""
    msgs = _one_node(tmp_path, version, args)
    assert len(msgs) == 1 and msgs[0].startswith(
        "KV401 SGLang --tp-size 8 is not a multiple of the attention DP size"
    )
    assert "3" in msgs[0].split("(", 1)[1], msgs


@pytest.mark.parametrize(
    ("version", "args", "model"),
    [
        # 0.4.3 / 0.4.4 set dp_size = tp_size with --enable-dp-attention: nothing to refuse
        ("v0.4.4", "--tp-size, '8', --dp-size, '3', --enable-dp-attention", "deepseek-ai/DeepSeek-V3"),
        # without DP attention --dp-size counts replicas: 8 x 3 GPUs (KV403), not this assert
        ("v0.5.5", "--tp-size, '8', --dp-size, '3'", "deepseek-ai/DeepSeek-V3"),
        ("v0.5.5", "--tp-size, '8', --dp-size, '4', --enable-dp-attention", "deepseek-ai/DeepSeek-V3"),
    ],
)
def test_attention_dp_dividing_tp_or_forced_is_not_refused(
    tmp_path: Path, version: str, args: str, model: str
) -> None:
    msgs = _one_node(tmp_path, version, args, model)
    assert not [m for m in msgs if "not a multiple of the attention DP size" in m], msgs


def test_single_node_tp_beyond_the_pod_still_reported(tmp_path: Path) -> None:
    """The single-node mistake KV403 exists for, with and without DP attention and with --nnodes 1: --tp-size 16 on
    a pod of 8 GPUs."""
    for args in (
        "--tp-size, '16'",
        "--tp-size, '16', --dp-size, '16', --enable-dp-attention",
        "--tp-size, '16', --dp-size, '16', --enable-dp-attention, --nnodes, '1'",
    ):
        msgs = _one_node(tmp_path, "v0.5.5", args)
        assert any(m.startswith("KV403 --tp-size 16 needs 16 GPUs but the pod requests 8") for m in msgs), (
            args,
            msgs,
        )


def test_dsa_model_on_0_5_5_has_its_dp_size_set_to_tp(tmp_path: Path) -> None:
    """DeepSeek V3.2 (sparse attention) on 0.5.3 - 0.5.5: ``_handle_model_specific_adjustments`` sets dp_size =
    tp_size before the assert, so --dp-size 3 is not refused there; 0.5.9 keeps it and asserts."""
    args = "--tp-size, '8', --dp-size, '3', --enable-dp-attention"
    refused = "not a multiple of the attention DP size"
    assert not [m for m in _one_node(tmp_path, "v0.5.5", args, "deepseek-ai/DeepSeek-V3.2") if refused in m]
    assert [m for m in _one_node(tmp_path, "v0.5.9", args, "deepseek-ai/DeepSeek-V3.2") if refused in m]
