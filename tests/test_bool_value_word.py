"""A vLLM boolean option given a value as a separate word (``--enforce-eager true``), as Kthena's ModelBooster
writes a ``config`` boolean (``--key %v``) and as hand-written args do. From vLLM 0.10 every boolean option is
a ``BooleanOptionalAction`` or ``store_true`` (``nargs=0``, vllm/engine/arg_utils.py ``_compute_kwargs``): argparse
sets the option and leaves the word as a positional, and ``parse_args`` exits with "unrecognized arguments"
(vllm/utils/argparse_utils.py). kvlint says so (KV206 at the word) instead of reading the word as the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines.options import version_tuple
from kvlint.engines.vllm_flags_data import VERSIONS
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import CheckResult, Diagnostic

ROOT = Path(__file__).resolve().parents[1]
#: Kthena's ModelBooster example (fixtures/collected, volcano-sh/kthena; source in its INDEX.csv)
BOOSTER = (
    ROOT
    / "fixtures"
    / "collected"
    / "volcano-sh__kthena__docs__kthena__docs__assets__examples__model-booster__Deepseek-R1-Distill-llama-8B.yaml"
)


def _booster(tmp_path: Path, image: str, extra: str) -> tuple[Path, str]:
    text = BOOSTER.read_text()
    assert 'image: "vllm/vllm-openai:v0.7.1"' in text and "maxModelLen: 12288\n" in text
    text = text.replace("v0.7.1", image).replace("maxModelLen: 12288\n", f"maxModelLen: 12288\n{extra}")
    p = tmp_path / "booster.yaml"
    p.write_text(text)
    return p, text


def test_a_modelbooster_boolean_config_is_an_unrecognized_argument(tmp_path: Path) -> None:
    p, text = _booster(tmp_path, "v0.10.1", "          enforce_eager: true\n")
    result = run_check([str(p)], Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV206"]
    assert d.severity == "error" and d.loc is not None
    assert text.splitlines()[d.loc.line - 1].strip() == "enforce_eager: true"
    assert "--enforce-eager" in d.message and "unrecognized arguments: true" in d.message
    # the remedy is in the object's config, where Kthena wrote the option from
    assert d.fix is not None and "enforce_eager in spec.backend.workers[0].config" in d.fix
    (cr,) = result.containers
    assert cr.serving.get("enforce_eager") is True  # what argparse sets


def test_false_as_a_word_is_not_read_as_false(tmp_path: Path) -> None:
    p, _ = _booster(tmp_path, "v0.11.0", "          enable_prefix_caching: false\n")
    result = run_check([str(p)], Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV206"]
    assert "unrecognized arguments: false" in d.message
    (cr,) = result.containers
    assert cr.serving.get("enable_prefix_caching") is True  # argparse set the flag; the word is left over


def test_hand_written_args_name_the_flag_form_to_write(tmp_path: Path) -> None:
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: v}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
        args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--enforce-eager", "true", "--enable-prefix-caching", "false"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""
    p = tmp_path / "d.yaml"
    p.write_text(text)
    result = run_check([str(p)], Options(allow_hub=False))
    got = {d.message.split("'")[1]: d.fix for d in result.diagnostics if d.rule == "KV206"}
    assert got == {"true": "write --enforce-eager alone", "false": "write --no-enable-prefix-caching instead"}


def test_vllm_serve_without_a_model_takes_the_word_as_the_model(tmp_path: Path) -> None:
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: v}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        command: ["vllm", "serve", "--enforce-eager", "true"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""
    p = tmp_path / "d.yaml"
    p.write_text(text)
    result = run_check([str(p)], Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV206"]
    assert "takes 'true' as the model" in d.message


def test_a_release_with_optional_value_booleans_still_reads_the_word(tmp_path: Path) -> None:
    # vLLM 0.7.1 (the example's own image) had StoreBoolean options taking an optional value
    p, _ = _booster(tmp_path, "v0.7.1", "          enable_chunked_prefill: false\n")
    result = run_check([str(p)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV206"]
    (cr,) = result.containers
    assert cr.serving.get("enable_chunked_prefill") is False


# -- the ``=`` form: ``--enable-chunked-prefill=false`` --------------------------------------------------------
#: KubeAI's MI300X Llama 3.1 70B model (fixtures/collected, substratusai/kubeai; source in its INDEX.csv)
KUBEAI = (
    ROOT
    / "fixtures"
    / "collected"
    / "substratusai__kubeai__manifests__models__llama-3.1-70b-instruct-fp8-mi300x.yaml"
)
#: Sampled releases from kvlint's vLLM option table: the oldest that refuses ``=value`` on a boolean option,
#: the newest, and the newest that still reads it (StoreBoolean options, ``nargs="?"``)
REFUSING = [v for v in VERSIONS if (version_tuple(v) or (0,)) >= (0, 10)]
READING = [v for v in VERSIONS if (0, 6) <= (version_tuple(v) or (0,)) < (0, 10)]


def _kv206(result: CheckResult) -> list[Diagnostic]:
    return [d for d in result.diagnostics if d.rule == "KV206"]


@pytest.mark.parametrize("version", [REFUSING[0], REFUSING[-1]])
def test_a_pinned_release_refuses_a_boolean_written_with_equals(version: str) -> None:
    text = KUBEAI.read_text()
    result = run_check([str(KUBEAI)], Options(allow_hub=False, engine_version=version))
    (d,) = _kv206(result)
    assert d.severity == "error" and d.loc is not None
    assert text.splitlines()[d.loc.line - 1].strip() == "- --enable-chunked-prefill=false"
    assert "ignored explicit argument 'false'" in d.message and f"vLLM {version}" in d.message
    assert d.fix == "write --no-enable-chunked-prefill instead"
    (cr,) = result.containers
    assert cr.serving.get("enable_chunked_prefill") is None  # vLLM does not start: nothing is read


def test_an_older_release_reads_the_value_after_equals() -> None:
    result = run_check([str(KUBEAI)], Options(allow_hub=False, engine_version=READING[-1]))
    assert not _kv206(result)
    (cr,) = result.containers
    assert cr.serving.get("enable_chunked_prefill") is False


def test_an_unpinned_release_warns_and_reads_it_as_older_releases_did() -> None:
    # KubeAI's installation chooses the vLLM image: the release is unknown (KV208)
    result = run_check([str(KUBEAI)], Options(allow_hub=False))
    (d,) = _kv206(result)
    assert (
        d.severity == "warning" and "before 0.10" in d.message and "does not say which release" in d.message
    )
    assert d.fix is not None and d.fix.endswith("write --no-enable-chunked-prefill instead")
    (cr,) = result.containers
    assert cr.serving.get("enable_chunked_prefill") is False


def test_every_value_after_equals_is_refused_and_the_fix_names_the_meant_form(tmp_path: Path) -> None:
    args = [
        "--enforce-eager=true",
        "--no-enable-prefix-caching=true",
        "--trust_remote_code=False",
        "--enforce=1",
    ]
    text = (
        f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: v}}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v{REFUSING[0]}
        args:
        - --model=Qwen/Qwen2.5-7B-Instruct
"""
        + "".join(f"        - {a}\n" for a in args)
        + "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    p = tmp_path / "d.yaml"
    p.write_text(text)
    result = run_check([str(p)], Options(allow_hub=False))
    got = {text.splitlines()[d.loc.line - 1].strip()[2:]: d.fix for d in _kv206(result) if d.loc}
    assert got == {
        "--enforce-eager=true": "write --enforce-eager alone",
        "--no-enable-prefix-caching=true": "write --no-enable-prefix-caching instead",
        "--trust_remote_code=False": "write --no-trust-remote-code instead",
        "--enforce=1": "write --enforce-eager alone",
    }
    assert all(d.severity == "error" for d in _kv206(result))
