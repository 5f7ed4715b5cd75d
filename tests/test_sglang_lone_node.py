"""SGLang ``--nnodes 2`` in the only pod of its object (no LeaderWorkerSet group, no Ray): node rank 0 joins a
torch.distributed rendezvous sized for both nodes (sglang@0.5.5 ``ModelRunner.init_torch_distributed``) and waits for
ranks no pod runs. KV403 counted the engine over two pods (8 GPUs x 2 = 16 for ``--tp 16``) and said nothing."""

from __future__ import annotations

import pytest

from kvlint.pipeline import Options, run_check

_DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: sg}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{a: b}}}}
  template:
    metadata: {{labels: {{a: b}}}}
    spec:
      containers:
      - name: sglang
        image: lmsysorg/sglang:v0.5.5
        command: [python3, -m, sglang.launch_server]
        args: [--model-path, Qwen/Qwen2.5-7B-Instruct, --tp, "8", --context-length, "8192"{extra}]
        resources: {{limits: {{nvidia.com/gpu: 4}}}}
"""


def _kv403(tmp_path, extra: list[str], replicas: int = 1):
    words = "".join(f', "{w}"' for w in extra)
    f = tmp_path / "m.yaml"
    f.write_text(_DEPLOY.format(replicas=replicas, extra=words))
    res = run_check([str(f)], Options(allow_hub=False, accelerator="h100"))
    return [d for d in res.diagnostics if d.rule == "KV403"]


@pytest.mark.parametrize("rank", [[], ["--node-rank", "0"]])
def test_lone_node_without_address_is_an_error(tmp_path, rank):
    (found,) = _kv403(tmp_path, ["--nnodes", "2", *rank])
    assert found.severity == "error" and "no pod runs" in found.message and "127.0.0.1" in found.message


def test_with_an_address_it_is_a_warning(tmp_path):
    (found,) = _kv403(tmp_path, ["--nnodes", "2", "--dist-init-addr", "sg-0.sg:5000"])
    assert found.severity == "warning" and "sg-0.sg:5000" in found.message


@pytest.mark.parametrize(
    ("extra", "replicas"),
    [
        (["--nnodes", "2", "--node-rank", "1", "--dist-init-addr", "sg-0.sg:5000"], 1),  # a follower: counted
        (["--nnodes", "2", "--dist-init-addr", "sg-0.sg:5000"], 2),  # more than one pod: not this finding
    ],
)
def test_not_reported_as_lone(tmp_path, extra, replicas):
    assert not [d for d in _kv403(tmp_path, extra, replicas) if "no pod runs" in d.message]


def test_one_node_is_counted_as_before(tmp_path):
    """``--tp 8`` on 4 GPUs without --nnodes: the usual KV403 (too few GPUs)."""
    (found,) = _kv403(tmp_path, [])
    assert "needs 8 GPUs" in found.message


def test_node_rank_from_a_variable_is_not_read_as_rank_0(tmp_path):
    """``--node-rank $(RANK)``: the rank comes from something kvlint does not see (an operator's env, a pod index);
    kvlint read it as unset, i.e. rank 0, and reported the pod as a lone node 0 (an error)."""
    assert not [
        d for d in _kv403(tmp_path, ["--nnodes", "2", "--node-rank", "$(RANK)"]) if "no pod runs" in d.message
    ]
