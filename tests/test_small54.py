"""Three inputs the API server, a Kubernetes quantity or GFD read otherwise than kvlint did (branch small54)."""

from __future__ import annotations

import click
import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.webhook.cli import build_settings

_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
%s  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.8.5
    args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]
    resources:
      limits:
%s"""


def _findings(node: str, limits: str) -> list[tuple[str, str, str, int | None]]:
    res = run_documents(load_text(_POD % (node, limits), "p.yaml"), Options(allow_hub=False))
    return [(d.rule, d.severity, d.message, d.loc.line if d.loc else None) for d in res.diagnostics]


def test_a_requests_prefixed_gpu_resource_name_is_refused_as_the_api_server_refuses_it() -> None:
    """Kubernetes' ``IsExtendedResourceName`` (pkg/apis/core/helper/helpers.go) refuses a container resource name
    starting with ``requests.`` (the prefix a ResourceQuota gives one): the pod is rejected ("doesn't follow
    extended resource name standard"). KV409 said nothing of ``requests.nvidia.com/gpu``; it is now an error at
    its line, suggesting nvidia.com/gpu, while a non-GPU ``requests.`` name and nvidia.com/gpu itself are left."""
    got = _findings("", "        requests.nvidia.com/gpu: 1\n        nvidia.com/gpu: 1\n")
    kv409 = [f for f in got if f[0] == "KV409"]
    assert len(kv409) == 1, got
    rule, severity, message, line = kv409[0]
    assert severity == "error" and line == 11, kv409  # the requests.nvidia.com/gpu line
    assert "requests.nvidia.com/gpu" in message and "IsExtendedResourceName" in message, message
    assert "did you mean nvidia.com/gpu" in message, message
    plain = _findings("", "        nvidia.com/gpu: 1\n        requests.example.com/widget: 1\n")
    assert not [f for f in plain if f[0] == "KV409"], plain


def test_a_lower_case_m_worker_memory_is_a_usage_error_not_megabytes() -> None:
    """``--worker-memory 512m`` was read as 512 MB; in a Kubernetes quantity ``m`` is milli. It is refused, the
    error naming the flag and both spellings meant; ``512Mi`` and ``512M`` still read as before."""
    with pytest.raises(click.UsageError) as exc:
        build_settings(worker_memory="512m")
    text = exc.value.format_message()
    assert "--worker-memory" in text and "512Mi" in text and "512M " in text and "milli" in text, text
    with pytest.raises(click.UsageError):
        build_settings(max_request_bytes="3m")
    assert build_settings(worker_memory="512Mi").worker_memory_bytes == 512 * 2**20
    assert build_settings(worker_memory="512M").worker_memory_bytes == 512 * 10**6


def test_a_size_is_read_in_one_ascii_grammar_and_a_milli_with_a_byte_suffix_is_refused_too() -> None:
    """``512mb`` and ``512mB`` were read as 512 MB (the ``b`` dropped, then ``m`` as mega), though ``512m`` is refused
    as a Kubernetes milli; Python's own number syntax let ``1_024Mi``, ``+512Mi`` and other scripts' digits
    (``\u0665\u0661\u0662Mi``, Arabic-Indic 512) through, which no Kubernetes quantity and not the chart read. Each is
    now a usage error naming the flag; the spellings the chart reads are unchanged."""
    for text in ("512mb", "512mB", "512 mb"):
        with pytest.raises(click.UsageError) as exc:
            build_settings(worker_memory=text)
        assert "milli" in exc.value.format_message() and "--worker-memory" in exc.value.format_message(), text
    for text in (
        "1_024Mi",
        "+512Mi",
        "\u0665\u0661\u0662Mi",
        "\uff15\uff11\uff12Mi",
        "512 Mi",
        "0x200Mi",
        "1e400",
    ):
        with pytest.raises(click.UsageError) as exc:
            build_settings(worker_memory=text)
        assert "--worker-memory" in exc.value.format_message(), text
    for text, size in (("512MB", 512 * 10**6), ("512MiB", 512 * 2**20), ("1.5gi", 3 * 2**29), ("5.36870912e8", 536870912),
                       (" 512Mi ", 512 * 2**20), (".5Gi", 2**29), ("536870912", 536870912)):  # fmt: skip
        assert build_settings(worker_memory=text).worker_memory_bytes == size, text


@pytest.mark.parametrize("product", ["NVIDIA-Acme-X9000", None])
def test_a_gfd_memory_label_of_a_few_mib_is_a_kv501_not_a_silent_zero_byte_gpu(product: str | None) -> None:
    """``nvidia.com/gpu.memory: '1'`` (1 MiB) beside an unknown GFD product (or alone) made a GPU of 0 bytes once
    the driver's reserve was taken off: no plan and no finding at all. A label of no more than that reserve is
    refused with a KV501 saying it is too small to hold any model, as a label of 0 is."""
    labels = "      nvidia.com/gpu.memory: '1'\n"
    if product:
        labels = f"      nvidia.com/gpu.product: {product}\n" + labels
    got = _findings("  nodeSelector:\n" + labels, "        nvidia.com/gpu: 1\n")
    kv501 = [f for f in got if f[0] == "KV501" and "nvidia.com/gpu.memory='1'" in f[2]]
    assert kv501 and "too small to hold any model" in kv501[0][2], got
