"""Real public manifests kvlint had not seen (new-user pass 11, fixtures/collected): what a first run on them
showed to be wrong, each checked on the file itself."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"


def _check(name: str, **opts):
    return run_check([str(COLLECTED / name)], Options(allow_hub=False, **opts))


def test_kaito_transformers_runtime_is_not_taken_for_tgi() -> None:
    """KAITO's custom-model example runs Hugging Face Transformers (``accelerate launch tfs/inference_api.py
    --pipeline text-generation``) on the kaito-base image. The pipeline task ``text-generation`` was taken for
    TGI: a KV503 warning 'engine command cannot be read' whose fix said to run ``text-generation-launcher``.
    Transformers is not an engine kvlint models, so the container is not a serving container, as Ollama's is."""
    res = _check("kaito-project__kaito__examples__custom-model-integration__custom-model-deployment.yaml")
    assert res.workloads == 1
    assert not res.containers
    assert not [d for d in res.diagnostics if d.rule == "KV503"]
    assert not any("text-generation-launcher" in (d.fix or "") for d in res.diagnostics)


def test_tgi_launcher_in_an_unreadable_script_still_names_tgi() -> None:
    """The TGI hint still comes from TGI's own names: a wrapper kvlint cannot follow whose words name
    ``text-generation-launcher`` gets the KV503 with TGI's direct command (a made-up container)."""
    from kvlint.engines import parse_container
    from kvlint.source import LDict

    c = LDict(
        {
            "name": "tgi",
            "image": "example.com/custom:1",
            "command": ["/opt/run.sh", "--config", "/etc/text-generation-launcher.toml"],
        }
    )
    cfg = parse_container(c)
    assert cfg is not None and cfg.engine == "tgi"
    (f,) = [f for f in cfg.findings if f.rule == "KV503"]
    assert "text-generation-launcher" in (f.fix or "")

