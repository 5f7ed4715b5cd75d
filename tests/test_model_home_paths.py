"""A model reference from a manifest that starts with ``~`` (found by an adversarial probe: ``--model ~root``
was expanded to ``/root`` and reported as "directory /root has no config.json"): kvlint does not look in the
runner's home directories for it. The user's own ``model_paths`` targets may still use ``~``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kvlint.models.resolve import ModelUnavailable, resolve_model

CONFIGS = Path(__file__).resolve().parent.parent / "fixtures" / "models"


def _home_with_model(tmp_path: Path, monkeypatch) -> Path:
    home = tmp_path / "home"
    src = next(p for p in sorted(CONFIGS.rglob("config.json")))
    (home / "m").mkdir(parents=True)
    shutil.copy(src, home / "m" / "config.json")
    shutil.copy(src, home / "config.json")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return home


@pytest.mark.parametrize("ref", ["~", "~/m", "~/config.json"])
def test_manifest_tilde_is_not_the_runners_home(tmp_path, monkeypatch, ref):
    home = _home_with_model(tmp_path, monkeypatch)
    with pytest.raises(ModelUnavailable) as e:
        resolve_model(ref, allow_hub=False)
    assert str(home) not in str(e.value)


def test_other_users_home_is_not_probed(tmp_path, monkeypatch):
    _home_with_model(tmp_path, monkeypatch)
    with pytest.raises(ModelUnavailable) as e:
        resolve_model("~root", allow_hub=False)
    assert "/root" not in str(e.value).replace("~root", "")


def test_model_paths_target_keeps_tilde(tmp_path, monkeypatch):
    home = _home_with_model(tmp_path, monkeypatch)
    spec = resolve_model("/models/llama", model_paths={"/models/llama": "~/m"}, allow_hub=False)
    assert spec.source == str(home / "m") or str(home / "m") in str(spec.source)
