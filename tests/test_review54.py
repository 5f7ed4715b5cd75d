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
from kvlint.types import ContainerResult

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


# --- a Ray Serve LLM config's runtime_env replaces the application's pip list --------------------------------------

GPT_OSS_RAY = COLLECTED / "jimmyshah83__gpt-oss-k8s-gpu-inferencing__k8s__gpt-oss-20b-deploy.yaml"
_PIN_LINE = '                pip: ["vllm==0.10.1+gptoss"]\n'


def _ray_run(text: str, tmp_path: Path) -> tuple[ContainerResult, list]:
    f = tmp_path / "rayservice.yaml"
    f.write_text(text)
    result = run_check([str(f)], Options(allow_hub=False))
    (c,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    return c, result.diagnostics


def test_the_llm_configs_pip_list_replaces_the_applications_pin(tmp_path: Path) -> None:
    # the application pins vllm==0.9.2, the LLM config's own pip list installs transformers only: Ray spreads the
    # LLM config's runtime_env over the application's, so its pip list is the deployment's and vLLM stays the image's
    text = GPT_OSS_RAY.read_text()
    assert _PIN_LINE in text and '            - "vllm"\n' in text
    text = text.replace('            - "vllm"\n', '            - "vllm==0.9.2"\n')
    c, diags = _ray_run(
        text.replace(_PIN_LINE, _PIN_LINE.replace('"vllm==0.10.1+gptoss"', '"transformers"')), tmp_path
    )
    assert c.serving is not None and c.serving.version != "0.9.2"
    assert not [d for d in diags if d.rule == "KV504" and "0.9.2" in d.message]
    assert any(d.rule == "KV208" and "Python environment of the Ray image" in d.message for d in diags)
    # without a pip list of its own the LLM config inherits the application's, and its pin is the release
    c, diags = _ray_run(text.replace(_PIN_LINE, ""), tmp_path)
    assert c.serving is not None and c.serving.version == "0.9.2"
    assert any(d.rule == "KV504" and "vLLM 0.9.2 is read from runtime_env.pip" in d.message for d in diags)


def test_a_pin_in_the_deployment_configs_ray_actor_options_runtime_env(tmp_path: Path) -> None:
    # deployment_config.ray_actor_options.runtime_env sits between the application's and the LLM config's
    text = GPT_OSS_RAY.read_text().replace(_PIN_LINE, "")
    marker = "              deployment_config:\n"
    assert marker in text
    text = text.replace(
        marker,
        marker
        + '                ray_actor_options:\n                  runtime_env:\n                    pip: ["vllm==0.9.1"]\n',
    )
    c, diags = _ray_run(text, tmp_path)
    assert c.serving is not None and c.serving.version == "0.9.1"
    (kv504,) = [d for d in diags if d.rule == "KV504" and "0.9.1" in d.message]
    assert "llm_configs[0].deployment_config.ray_actor_options.runtime_env.pip" in kv504.message


# --- KV409 on a resource key that is a placeholder to fill in -------------------------------------------------------

_LIMITS = """\
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
        resources:
          limits:
            KEY: 1
"""


@pytest.mark.parametrize(
    "key",
    [
        "${GPU_RESOURCE:-nvidia.com/gpu}",  # envsubst with a default
        "nvidia.com/${GPU_KIND}",
        "$(GPU_VENDOR).com/gpu",  # a kustomize var
        '"{{ .Values.gpuVendor }}.com/gpu"',  # a Helm action left unrendered (KV002 says so)
    ],
)
def test_a_placeholder_resource_key_is_not_said_to_be_refused(tmp_path: Path, key: str) -> None:
    # the name is known once the template is rendered; "the API server rejects the pod" is said of a name it sees
    f = tmp_path / "d.yaml"
    f.write_text(_LIMITS.replace("KEY", key))
    result = run_check([str(f)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV409"], result.diagnostics


@pytest.mark.parametrize("key", ["NVIDIA.com/gpu", "'://amd.com'", "nvidia.com//gpu"])
def test_a_literal_unqualified_gpu_key_stays_kv409(tmp_path: Path, key: str) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(_LIMITS.replace("KEY", key))
    result = run_check([str(f)], Options(allow_hub=False))
    (kv409,) = [d for d in result.diagnostics if d.rule == "KV409"]
    assert "API server rejects" in kv409.message


# --- kvlint plan given kvlint check's option and standard input -----------------------------------------------------


@pytest.mark.parametrize("verb", ["plan", "simulate"])
def test_check_options_then_standard_input_says_to_use_check(verb: str) -> None:
    # `cat deploy.yaml | kvlint plan --no-config -`: - is kvlint check's standard input, as `kvlint plan -` says
    from click.testing import CliRunner

    from kvlint.cli import main

    result = CliRunner().invoke(main, [verb, "--no-config", "-"], input="kind: Deployment\n")
    assert result.exit_code == 2
    out = " ".join(result.output.split())
    assert "- is standard input" in out and "lint them with `kvlint check -`" in out
    assert f"--no-config is not an option of kvlint {verb}" in out
    assert "not an engine command" not in out


@pytest.mark.parametrize(
    "doc",
    [
        'env:\n  "HF_TOKEN" abc\n',  # a missing colon after a quoted key
        'env:\n- name: "HF_TOKEN" value: x\n',  # two fields written on one line
        "a: 'x' y\n",
    ],
)
def test_a_word_after_a_string_that_ends_where_it_was_meant_to_is_no_early_close(
    tmp_path: Path, doc: str
) -> None:
    # no quote follows on the line, so none of the string was left outside it: the mistake is elsewhere (a colon,
    # a line break), and "a quote meant inside it closes the string early" with a fix to escape quotes misleads
    f = tmp_path / "d.yaml"
    f.write_text(doc)
    result = run_check([str(f)], Options(allow_hub=False))
    (kv001,) = [d for d in result.diagnostics if d.rule == "KV001"]
    assert "closes the string early" not in kv001.message, kv001.message


@pytest.mark.parametrize(
    "doc",
    [
        'command: ["sh", "-c", "vllm serve m --x "y" z"]\n',
        "a: 'it's here'\n",
        'args:\n- "--kv-transfer-config {"kv_connector":"LMCacheConnector"}"\n',
    ],
)
def test_a_quote_inside_a_string_that_ends_it_early_keeps_the_hint(tmp_path: Path, doc: str) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(doc)
    result = run_check([str(f)], Options(allow_hub=False))
    (kv001,) = [d for d in result.diagnostics if d.rule == "KV001"]
    assert "closes the string early" in kv001.message, kv001.message
