"""The admission webhook over real TLS (``kvlint webhook serve`` in a child process, as in test_webhook_trust.py):

* with the admin's ``--no-exemptions``, ``kvlint.io/accelerator: h200`` on a pod pinned to L4 by its nodeSelector no
  longer silences the L4's KV103 (it worked as a ``kvlint.io/ignore`` the admin could not turn off): the review is
  denied for the error the pod has on its own GPU, and KV005 says the annotation was not applied; with exemptions
  allowed the same pod is admitted, with KV005's warning that the scheduler does not follow the annotation;
* a KV502 about a config in the admin's ``--model-dir`` names the model, not the server's path.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")
pytest.importorskip("httpx")

from test_webhook_hostile import review, workload_object  # noqa: E402
from test_webhook_trust import _answer, _serve  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PINNED = ROOT / "fixtures" / "config" / "annotations" / "accelerator-vs-nodeselector.yaml"
#: A config.json with no hidden_size: kvlint refuses it (KV502), naming what it read.
BROKEN_CONFIG = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("srv-models")
    (root / "acme--tiny-llm").mkdir()
    (root / "acme--tiny-llm" / "config.json").write_text(json.dumps(BROKEN_CONFIG))
    return root


@pytest.fixture(scope="module")
def closed(tls: dict[str, Any], model_dir: Path) -> Iterator[tuple[str, ssl.SSLContext]]:
    """The server with exemptions off and a model directory of its own."""
    with _serve(tls, "--no-exemptions", "--model-dir", str(model_dir)) as (url, ctx, _):
        yield url, ctx


def _messages(answer: dict[str, Any]) -> str:
    return json.dumps(answer)


def test_closed_server_denies_the_error_of_the_pods_own_gpu(closed: tuple[str, ssl.SSLContext]) -> None:
    answer = _answer(closed, review(workload_object(PINNED)))
    assert answer["allowed"] is False
    text = answer["status"]["message"]
    assert "KV103" in text and "NVIDIA L4" in text
    warnings = " ".join(answer.get("warnings", []))
    assert "KV005" in warnings and "kvlint.io/accelerator: h200" in warnings and "not applied" in warnings


def test_open_server_admits_it_with_the_contradiction_said(tls: dict[str, Any]) -> None:
    with _serve(tls) as (url, ctx, _):
        answer = _answer((url, ctx), review(workload_object(PINNED)))
    assert answer["allowed"] is True
    warnings = " ".join(answer.get("warnings", []))
    assert "KV005" in warnings and "contradicts the pod's own scheduling" in warnings
    assert "KV103" not in warnings


def test_kv502_names_the_model_not_the_servers_model_dir(
    closed: tuple[str, ssl.SSLContext], model_dir: Path
) -> None:
    obj = workload_object(PINNED)
    obj["spec"]["template"]["metadata"]["annotations"] = {}
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container["args"] = ["--model", "acme/tiny-llm", "--max-model-len", "4096"]
    answer = _answer(closed, review(obj))
    text = _messages(answer)
    assert "KV502" in text and "acme/tiny-llm" in text and "hidden_size" in text
    assert str(model_dir) not in text and str(model_dir.resolve()) not in text
    assert "acme--tiny-llm" not in text
