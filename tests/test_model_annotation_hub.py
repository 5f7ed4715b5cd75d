"""``kvlint.io/model`` replacing the model a pod's command names (exemptions allowed): whether the pod's own model
is one kvlint reads decides the KV005 info, and that is judged from what kvlint holds offline (its catalogues,
model directories and paths). It asked the Hub for the pod's own model, a request per such pod for a model kvlint
does not size, and the verdict differed between a run with the Hub and one without. The Hub is the local fake of
tests/fakehub.py (``HF_ENDPOINT``), run with the real ``huggingface_hub`` client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fakehub import FakeHub, one_commit, serve

from kvlint.load import load_text
from kvlint.models import clear_cache
from kvlint.pipeline import Options, run_documents

ROOT = Path(__file__).resolve().parent.parent
CONFIG = (ROOT / "fixtures" / "hub" / "config.json").read_bytes()
SAMPLE = (ROOT / "fixtures" / "config" / "annotations" / "model-vs-command.yaml").read_text()


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    import huggingface_hub.constants as hfc

    clear_cache()
    state = FakeHub({"acme-lab/own-model": one_commit({"config.json": CONFIG}, "b" * 40)})
    gen = serve(state)
    next(gen)
    monkeypatch.setenv("HF_ENDPOINT", state.endpoint)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hfc, "HF_HUB_OFFLINE", False)
    yield state
    gen.close()
    clear_cache()


def _kv005(text: str, options: Options) -> list[str]:
    result = run_documents(load_text(text, "pod.yaml"), options)
    return [d.message for d in result.diagnostics if d.rule == "KV005"]


def test_the_pods_own_model_is_not_asked_of_the_hub(hub: FakeHub) -> None:
    text = SAMPLE.replace("meta-llama/Llama-3.1-8B-Instruct", "acme-lab/own-model")
    assert "acme-lab/own-model" in text
    online = _kv005(text, Options(allow_hub=True))
    assert not [r for r in hub.requests if "own-model" in r.path]
    clear_cache()
    assert online == _kv005(text, Options(allow_hub=False))


def test_a_catalogued_own_model_is_still_said(hub: FakeHub) -> None:
    (msg,) = _kv005(SAMPLE, Options(allow_hub=True))
    assert "replaces the model the pod serves, meta-llama/Llama-3.1-8B-Instruct" in msg
