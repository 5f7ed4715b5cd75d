"""``KV_CACHE_DTYPE`` in the env of a TGI release before 2.4.0: the launcher has no ``Args::kv_cache_dtype`` there
(tgi@v2.4.0:launcher/src/main.rs has it, v2.3.1's does not), and clap ignores an env var no field reads, so the
launcher starts with the model's KV dtype. kvlint said nothing; now a KV205 warning at the env entry says the
release ignores it and from which release it works (kvlint.engines.tgi.parse_tgi_argv). The manifest is the GKE
TGI sample in fixtures/tgi (GoogleCloudPlatform/kubernetes-engine-samples
ai-ml/llm-serving-gemma/tgi/tgi-2-27b-it.yaml, a TGI 2.3 image; source in fixtures/tgi/SOURCE.md) with
``KV_CACHE_DTYPE`` added, run through ``kvlint check``."""

from __future__ import annotations

import sys
from pathlib import Path

from kvlint.engines.tgi import KV_CACHE_DTYPE_FROM, has_kv_cache_dtype

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tgi_opaque_env import _SAMPLE, _check  # noqa: E402

_OLD_IMAGE = "huggingface-text-generation-inference-cu124.2-3.ubuntu2204.py311"
_NEW_IMAGE = "huggingface-text-generation-inference-cu124.2-4.ubuntu2204.py311"
_ENTRY = "        - name: MODEL_ID\n"


def _with_env(image: str) -> tuple[str, int]:
    """The sample on ``image`` with ``KV_CACHE_DTYPE=fp8_e5m2`` before MODEL_ID, and the line (1-based) of that
    entry's value, where kvlint places a finding on an env setting."""
    text = _SAMPLE.read_text()
    assert _OLD_IMAGE in text and text.count(_ENTRY) == 1
    text = text.replace(_OLD_IMAGE, image).replace(
        _ENTRY, "        - name: KV_CACHE_DTYPE\n          value: fp8_e5m2\n" + _ENTRY
    )
    return text, text.splitlines().index("          value: fp8_e5m2") + 1


def _kv205(tmp_path: Path, text: str) -> tuple[Path, list[str]]:
    """``kvlint check`` on ``text``: the file and its KV205 findings, white space collapsed."""
    p, found = _check(tmp_path, text, "KV205")
    return p, [" ".join(f.split()) for f in found]


def test_kv_cache_dtype_env_on_tgi_2_3_is_a_warning_at_the_entry(tmp_path: Path) -> None:
    assert not has_kv_cache_dtype("2.3.1")
    text, line = _with_env(_OLD_IMAGE)
    p, found = _kv205(tmp_path, text)
    assert len(found) == 1, found
    (f,) = found
    assert f.startswith(f"{p}:{line}:"), f
    assert " warning KV205 " in f
    since = ".".join(map(str, KV_CACHE_DTYPE_FROM))
    assert "does not read KV_CACHE_DTYPE" in f and f"from {since}" in f, f


def test_kv_cache_dtype_env_on_tgi_2_4_is_read(tmp_path: Path) -> None:
    assert has_kv_cache_dtype("2.4.0")
    text, _ = _with_env(_NEW_IMAGE)
    _, found = _kv205(tmp_path, text)
    assert not found, found
