"""Findings on the manifests added to fixtures/collected in the fresh51 pass (sources in its INDEX.csv).

KV403's remedy for an SGLang engine whose tensor parallelism spans more GPUs than one node: zhaotyer/lws_usage
``k8s_sglang.yaml`` is a StatefulSet of 2 pods of 8 GPUs whose command gives ``--dist-init-addr`` and
``--tensor-parallel-size 16`` but no ``--nnodes``, so each pod starts all 16 ranks on its 8 GPUs (KV403, true).
The remedy told it to keep tensor parallelism within a node and span nodes with pipeline parallelism, where SGLang
spans tensor parallelism over ``--nnodes`` itself (sglang@0.5.23:python/sglang/srt/entrypoints/engine.py::
_calculate_rank_ranges): the missing ``--nnodes 2`` and ``--node-rank`` are the fix."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures/collected"
STS = COLLECTED / "zhaotyer__lws_usage__k8s_sglang.yaml"
RAY_VLLM = COLLECTED / "zhaotyer__lws_usage__k8s_vllm.yaml"


def _kv403(path: Path) -> list:
    res = run_check([str(path)], Options(allow_hub=False))
    return [d for d in res.diagnostics if d.rule == "KV403"]


def test_sglang_tensor_parallelism_beyond_a_node_is_told_the_missing_nnodes() -> None:
    text = STS.read_text()
    assert "--dist-init-addr sglang-master-pod:5100" in text and "--tensor-parallel-size 16" in text
    assert "--nnodes" not in text and "nvidia.com/gpu: 8" in text
    (d,) = _kv403(STS)
    assert d.severity == "error" and "needs 16 GPUs but the pod requests 8" in d.message
    assert "names --dist-init-addr but no --nnodes" in d.fix
    assert "--nnodes 2" in d.fix and "--node-rank 0 to 1" in d.fix
    assert "pipeline parallelism" not in d.fix


def test_the_multinode_form_whole_without_dist_init_addr_and_the_old_remedy_where_it_does_not_divide(
    tmp_path: Path,
) -> None:
    text = STS.read_text()
    bare = tmp_path / "bare.yaml"
    bare.write_text(text.replace("--dist-init-addr sglang-master-pod:5100 \\\n", ""))
    assert "--dist-init-addr" not in bare.read_text()
    (d,) = _kv403(bare)
    assert "--nnodes 2" in d.fix and "--dist-init-addr ADDRESS:PORT of rank 0" in d.fix
    assert "LeaderWorkerSet of size 2" in d.fix and "names --dist-init-addr" not in d.fix
    # 12 ranks do not make pods of 8 GPUs: SGLang's even split does not apply, the general remedy stays
    odd = tmp_path / "odd.yaml"
    odd.write_text(text.replace("--tensor-parallel-size 16", "--tensor-parallel-size 12"))
    (d,) = _kv403(odd)
    assert "needs 12 GPUs" in d.message and "--nnodes" not in d.fix and "pipeline parallelism" in d.fix


def test_vllm_beyond_a_node_keeps_the_pipeline_remedy() -> None:
    found = _kv403(RAY_VLLM)
    assert found and all("--nnodes" not in d.fix and "pipeline parallelism" in d.fix for d in found)


# --------------------------------------------------------------------------------------------------
# an engine --config file kvlint cannot read: its settings are unknown, not the engine defaults

WELLFLAT = COLLECTED / "wellflat__k8s-dev__vllm__deployment.yaml"
WELLFLAT_CM = COLLECTED / "wellflat__k8s-dev__vllm__vllm-configmap.yaml"


def test_vllm_config_file_not_among_the_inputs_is_not_read_as_the_defaults() -> None:
    """wellflat/k8s-dev runs ``vllm serve ${MODEL_ID} --config /etc/vllm/config.yaml`` on 2 GPUs; the file (its
    ConfigMap, vllm-configmap.yaml beside it) sets ``tensor-parallel-size: 2`` and ``max-model-len: 16384``. Linted
    alone, kvlint said the file's settings were unknown (KV503) and then planned TP 1 with the model's full context:
    KV403 "the pod requests 2 GPUs but tensor-parallel-size 1 uses only 1" and KV202 "no --max-model-len", both
    false. vLLM turns each key of the file into an option (FlexibleArgumentParser.load_config_file), so the
    sizes and the context limit are unknown: not sized ("parallel size unknown"), no KV403 or KV202."""
    assert (
        "--config /etc/vllm/config.yaml" in WELLFLAT.read_text()
        and "nvidia.com/gpu: 2" in WELLFLAT.read_text()
    )
    assert "tensor-parallel-size: 2" in WELLFLAT_CM.read_text()
    res = run_check([str(WELLFLAT)], Options(allow_hub=False))
    rules = {d.rule for d in res.diagnostics}
    assert "KV503" in rules and not rules & {"KV403", "KV202"}, rules
    (kv503,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert "the GPU layout may be set there, so the container is not sized" in kv503.message
    (cr,) = res.containers
    assert cr.plan is None and not cr.fleet
    assert "tensor_parallel_size" in cr.serving.unresolved and "max_model_len" in cr.serving.unresolved
    # with its ConfigMap the file is read: TP 2 on the 2 GPUs, planned
    both = run_check([str(WELLFLAT), str(WELLFLAT_CM)], Options(allow_hub=False))
    (cr,) = both.containers
    assert cr.serving.get("tensor_parallel_size") == 2 and not cr.serving.unresolved
    assert not {d.rule for d in both.diagnostics} & {"KV403", "KV202", "KV503"}
    assert cr.fleet


_SGLANG_CONFIG = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: sg}
spec:
  selector: {matchLabels: {app: sg}}
  template:
    metadata: {labels: {app: sg}}
    spec:
      containers:
      - name: sglang
        image: lmsysorg/sglang:v0.5.5
        command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct, --config,
                  /etc/sglang/config.yaml%s]
        resources: {limits: {nvidia.com/gpu: 2}}
        volumeMounts: [{name: cfg, mountPath: /etc/sglang}]
      volumes: [{name: cfg, configMap: {name: sglang-config}}]
"""


def test_sglang_config_file_not_among_the_inputs_leaves_the_command_line_values_known(tmp_path: Path) -> None:
    """The same for SGLang's --config (0.5.3 and later): the unread file may set --tp-size, so 2 GPUs and no
    --tp on the command line is not KV403's "tp 1 uses only 1"; a --tp-size the command line gives is still read
    (the command line wins over the file), the sizes it does not give stay unknown."""
    bare = tmp_path / "bare.yaml"
    bare.write_text(_SGLANG_CONFIG % "")
    res = run_check([str(bare)], Options(allow_hub=False))
    rules = {d.rule for d in res.diagnostics}
    assert "KV503" in rules and not rules & {"KV403", "KV202"}, rules
    (cr,) = res.containers
    assert "tp_size" in cr.serving.unresolved and cr.plan is None and not cr.fleet
    assert any(d.rule == "KV503" and "so the container is not sized" in d.message for d in res.diagnostics)
    given = tmp_path / "given.yaml"
    given.write_text(_SGLANG_CONFIG % ", --tp-size, '2', --context-length, '8192'")
    (cr,) = run_check([str(given)], Options(allow_hub=False)).containers
    assert cr.serving.get("tp_size") == 2 and "tp_size" not in cr.serving.unresolved
    assert "context_length" not in cr.serving.unresolved and "pp_size" in cr.serving.unresolved


# --------------------------------------------------------------------------------------------------
# nvidia.com/gpu is advertised on NVIDIA nodes only: the fleet a pod requesting it is planned on

PD = COLLECTED / "zhaotyer__lws_usage__vllm_pd.yaml"


def test_a_pod_requesting_nvidia_gpus_is_planned_on_nvidia_gpus_whatever_its_image_name_says() -> None:
    """zhaotyer/lws_usage's P/D LeaderWorkerSets run ``harbor.transwarp.io/aip-amd/xpu-nvidia/vllm-openai:v0.11.2``
    on ``nvidia.com/gpu: 1`` with no GPU named. "amd" in the registry namespace made kvlint plan them on its
    default ROCm fleet (AMD Instinct MI210 ... MI355X), GPUs the pod can never land on, and its fix asked for AMD
    node labels. NVIDIA's device plugin advertises nvidia.com/gpu on NVIDIA nodes only, as AMD's amd.com/gpu on AMD
    ones (already planned on the AMD fleet whatever the image): the NVIDIA fleet, NVIDIA labels."""
    text = PD.read_text()
    assert "aip-amd/xpu-nvidia/vllm-openai:v0.11.2" in text and 'nvidia.com/gpu: "1"' in text
    res = run_check([str(PD)], Options(allow_hub=False))
    planned = [cr for cr in res.containers if cr.fleet]
    assert len(planned) == 2
    for cr in planned:
        assert cr.placement is not None and cr.placement.resource == "nvidia.com/gpu"
        assert {e.accelerator.vendor for e in cr.fleet} == {"nvidia"}
        assert not any(e.refused_by == "KV304" for e in cr.fleet)
    kv501 = [d for d in res.diagnostics if d.rule == "KV501" and "planned on" in d.message]
    assert len(kv501) == 2
    assert all("ROCm fleet" not in d.message and "nvidia.com/gpu.product" in d.fix for d in kv501)
    assert not any("amd.com/gpu.product-name" in d.fix for d in kv501)


def test_vllm_in_a_ray_cluster_is_told_the_ray_executor() -> None:
    """review51F: zhaotyer/lws_usage's k8s_vllm.yaml runs ``ray start --address='ray-head:6379'`` then ``vllm serve
    ... -tp 16`` on 8 GPUs, beside a Ray head Deployment of 8 GPUs: 16 GPUs in the Ray cluster. vLLM 0.13.0 and
    later refuse the world size over the node's GPUs unless ``--distributed-executor-backend ray`` is given (their
    own error says so); through 0.12.0 vLLM chose Ray itself (vllm/config/parallel.py::ParallelConfig.__post_init__),
    so with the release pinned before 0.13 there is nothing to report."""
    text = RAY_VLLM.read_text()
    assert "ray start --address='ray-head:6379'" in text and "-tp 16" in text
    assert "distributed-executor-backend" not in text
    (d,) = _kv403(RAY_VLLM)
    assert "--distributed-executor-backend ray" in d.fix and "Ray cluster" in d.fix
    old = run_check([str(RAY_VLLM)], Options(allow_hub=False, engine_version="0.12.0"))
    assert not [d for d in old.diagnostics if d.rule == "KV403"]
    new = run_check([str(RAY_VLLM)], Options(allow_hub=False, engine_version="0.13.0"))
    assert [d for d in new.diagnostics if d.rule == "KV403"]
