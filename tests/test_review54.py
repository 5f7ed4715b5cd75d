"""Review of pass 54 (fresh54): the KV001 closing-quote hint and Ray Serve LLM's runtime_env release pins.

* KV001's hint that a quote meant inside a quoted string closed it early (``_closing_quote_before``) fired on an
  error raised *inside* a double-quoted scalar right after its opening quote: ``"\\d+"`` (an escape YAML does
  not have, a regex written for the shell) was said to be a string closed early by the quote that opened it.
* A Ray Serve LLM config's ``runtime_env`` is merged over the application's key by key (ray-project/ray
  ``python/ray/llm/_internal/serve/configs/server_models.py`` ``LLMConfig.get_serve_options``: the runtime
  context's runtime_env, then ``deployment_config.ray_actor_options.runtime_env``, then ``LLMConfig.runtime_env``,
  each ``**``-spread over the one before): an LLM config's own ``pip`` list replaces the application's, so the
  application's ``vllm==X`` is not installed for the LLM's deployment.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
LWS_LMCACHE = COLLECTED / "surajssd__llm-k8s__configs__deepseek-v2.5-lmcache__k8s__lws.yaml"

_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: m
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
        env:
        - name: LOG_FILTER
          value: VALUE
"""


@pytest.mark.parametrize("value", ['"\\d+"', '"\\.json$"', '"\\s"', '["a", "\\w"]'])
def test_an_escape_error_right_after_the_opening_quote_is_not_a_string_closed_early(
    tmp_path: Path, value: str
) -> None:
    # `"\d+"`: YAML has no \d escape, and the scanner stops on the backslash right after the opening quote; the
    # quote before the mark opened the string, it did not close it
    f = tmp_path / "d.yaml"
    f.write_text(_DEPLOYMENT.replace("VALUE", value))
    result = run_check([str(f)], Options(allow_hub=False))
    (kv001,) = [d for d in result.diagnostics if d.rule == "KV001"]
    assert "escape" in kv001.message
    assert "closes the string early" not in kv001.message, kv001.message
    assert "right after the" not in kv001.message


def test_a_quote_closing_a_string_early_keeps_its_hint() -> None:
    result = run_check([str(LWS_LMCACHE)], Options(allow_hub=False))
    (kv001,) = [d for d in result.diagnostics if d.rule == "KV001"]
    assert "closes the string early" in kv001.message
