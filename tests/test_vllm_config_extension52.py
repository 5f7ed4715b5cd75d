"""vLLM loads a ``--config`` file only when the text after the last ``.`` of its path is ``yaml`` or ``yml``:
``FlexibleArgumentParser.load_config_file`` raises "Config file must be of a yaml/yml type." (and the extension, as a
tuple before the message became an f-string) before it opens the file (vllm 0.7.3 sdist vllm/utils.py, 0.11.0 vllm/utils/__init__.py, 0.34.0
vllm/utils/argparse_utils.py). KV206 at the path, and the file's settings are not applied."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.options import Options
from kvlint.pipeline import run_documents

DOC = """\
apiVersion: v1
kind: ConfigMap
metadata: {{name: cfg}}
data:
  {key}: |
    tensor-parallel-size: 2
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: v}}
spec:
  selector: {{matchLabels: {{app: v}}}}
  template:
    metadata: {{labels: {{app: v}}}}
    spec:
      volumes: [{{name: c, configMap: {{name: cfg}}}}]
      containers:
      - name: v
        image: vllm/vllm-openai:{tag}
        args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--config", "/etc/vllm/{key}", "--max-model-len", "8192"]
        volumeMounts: [{{name: c, mountPath: /etc/vllm}}]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _run(key: str, tag: str = "v0.11.0"):  # type: ignore[no-untyped-def]
    return run_documents(load_text(DOC.format(key=key, tag=tag), "d.yaml"), Options(allow_hub=False))


@pytest.mark.parametrize(
    ("key", "ext", "fix"),
    [
        ("config.json", "json", "--config /etc/vllm/config.yaml"),
        ("vllm-config", "/etc/vllm/vllm-config", "--config /etc/vllm/vllm-config.yaml"),
        ("config.YAML", "YAML", "--config /etc/vllm/config.yaml"),
    ],
)
def test_a_config_file_not_named_yaml_is_refused(key: str, ext: str, fix: str) -> None:
    res = _run(key)
    (d,) = [d for d in res.diagnostics if d.rule == "KV206"]
    assert d.severity == "error" and d.loc is not None and d.loc.line == 20, d
    # the words every release prints (0.7.3 and 0.11.0 print the %s-template and the extension as a tuple, not
    # "... json supplied")
    assert '"Config file must be of a yaml/yml type."' in d.message and f"'{ext}'" in d.message, d.message
    assert fix in (d.fix or ""), d.fix
    # the file is never read: its tensor-parallel-size 2 is not applied, the layout is not assumed either
    (cr,) = res.containers
    assert "tensor_parallel_size" not in cr.serving.flags
    assert "tensor_parallel_size" in cr.serving.unresolved


@pytest.mark.parametrize("key", ["config.yaml", "config.yml", "vllm.config.yml"])
def test_a_yaml_config_file_is_read(key: str) -> None:
    res = _run(key)
    assert not [d for d in res.diagnostics if d.rule == "KV206"]
    (cr,) = res.containers
    assert cr.serving.flags["tensor_parallel_size"].value == 2
