"""LeaderWorkerSet group sizes the LWS API refuses, or beyond what kvlint sizes: KV206 at
``leaderWorkerTemplate.size`` and nothing sized (kubernetes-sigs/lws ``LeaderWorkerTemplate.Size *int32``;
``pkg/webhooks/leaderworkerset_webhook.go`` ``generalValidate``: size below 1, replicas x size above MaxInt32).
A size of 10**12 passed silently and was sized as 10**12 pods; 0, a negative size or a string were read as no
size at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kvlint.engines.options import MAX_PARALLEL_SIZE
from kvlint.pipeline import Options, run_check
from kvlint.workloads.lws import MAX_INT32

LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm, namespace: serving}
spec:
  replicas: REPLICAS
  leaderWorkerTemplate:
    size: SIZE
    leaderTemplate:
      spec:
        containers:
        - name: leader
          image: vllm/vllm-openai:v0.11.0
          args: [--model, Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, "1", --pipeline-parallel-size, "2"]
          resources: {limits: {nvidia.com/gpu: 1}}
    workerTemplate:
      spec:
        containers:
        - name: worker
          image: vllm/vllm-openai:v0.11.0
          command: [ray, start, --block]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def _check(tmp_path: Path, size: str, replicas: str = "1") -> tuple[str, Any]:
    text = LWS.replace("SIZE", size).replace("REPLICAS", replicas)
    path = tmp_path / "lws.yaml"
    path.write_text(text)
    return text, run_check([str(path)], Options(allow_hub=False))


@pytest.mark.parametrize(
    ("size", "why"),
    [
        ("1000000000000", "32-bit integer"),
        (str(MAX_INT32 + 1), "32-bit integer"),
        ("0", "size must be equal or greater than 1"),
        ("-3", "size must be equal or greater than 1"),
        ('"two"', "takes an integer"),
        ('"2"', "takes an integer"),
        ("true", "takes an integer"),
        ("2.5", "takes an integer"),
        (str(MAX_PARALLEL_SIZE + 1), "implausibly large"),
        (str(MAX_INT32), "implausibly large"),
    ],
)
def test_a_group_size_lws_refuses_or_kvlint_cannot_size_is_a_kv206_and_not_sized(
    tmp_path: Path, size: str, why: str
) -> None:
    text, result = _check(tmp_path, size)
    (d,) = [d for d in result.diagnostics if d.rule == "KV206"]
    assert d.severity == "error" and d.loc is not None
    assert text.splitlines()[d.loc.line - 1].strip() == f"size: {size}"
    assert "leaderWorkerTemplate.size" in d.message and why in d.message
    assert not result.containers
    assert not [x for x in result.diagnostics if x.rule in ("KV403", "KV101", "KV103")]


def test_replicas_times_size_above_int32_is_refused(tmp_path: Path) -> None:
    """LWS's webhook: "the product of replicas and worker replicas must not exceed 2147483647"."""
    size = MAX_PARALLEL_SIZE
    replicas = MAX_INT32 // size + 1
    _, result = _check(tmp_path, str(size), str(replicas))
    (d,) = [d for d in result.diagnostics if d.rule == "KV206"]
    assert "product of replicas" in d.message and not result.containers
    _, result = _check(tmp_path, str(size), str(replicas - 1))
    assert not [d for d in result.diagnostics if d.rule == "KV206"]


@pytest.mark.parametrize("size", ["2", str(MAX_PARALLEL_SIZE), '"${NODES}"'])
def test_a_size_lws_takes_is_read_as_before(tmp_path: Path, size: str) -> None:
    """Sizes LWS takes, within kvlint's bound, and an envsubst placeholder (a template parameter), give no KV206
    and the templates are sized."""
    _, result = _check(tmp_path, size)
    assert not [d for d in result.diagnostics if d.rule == "KV206"]
    assert result.containers


def test_an_absent_size_is_lws_default_of_one(tmp_path: Path) -> None:
    text = LWS.replace("    size: SIZE\n", "").replace("REPLICAS", "1")
    path = tmp_path / "lws.yaml"
    path.write_text(text)
    result = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV206"]
    assert result.containers
