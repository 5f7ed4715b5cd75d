"""Real public manifests kvlint had not seen (new-user pass 11, fixtures/collected): what a first run on them
showed to be wrong, each checked on the file itself."""

from __future__ import annotations

from pathlib import Path

from kvlint.engines.images import image_mentions_engine, is_nim_image
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


def test_nim_image_naming_vllm_gets_only_the_nim_note() -> None:
    """NIM operator's endpoint-picker sample runs ``nvcr.io/nvstaging/nim-internal/vllm-oss-nim-llm-...``: the
    ``vllm`` in the repository made the NIMService's container a vLLM container whose command could not be
    read (a KV503 warning 'no known engine entrypoint' telling to run ``vllm serve``, beside the NIM note, and
    'command unreadable' under --require-sizing). A NIM image starts the NIM launcher, as the sample's other
    NIMServices (``nvcr.io/nim/nvidia/llm-nim``) are read: only the note."""
    res = _check("NVIDIA__k8s-nim-operator__config__samples__nim__serving__advanced__epp__nimservice.yaml")
    kv503 = [d for d in res.diagnostics if d.rule == "KV503"]
    assert [d.severity for d in kv503] == ["info"]
    assert "NIM launcher" in kv503[0].message
    assert not res.containers
    other = _check(
        "NVIDIA__k8s-nim-operator__config__samples__nim__serving__standalone__no-precaching__multi-llm-hf.yaml"
    )
    assert [(d.rule, d.severity) for d in other.diagnostics] == [("KV503", "info")]


def test_nim_images() -> None:
    assert is_nim_image("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3")
    assert is_nim_image("nvcr.io/nvstaging/nim-internal/vllm-oss-nim-llm-4-devel-llama3.1-8b-instruct:2.0.0")
    assert not is_nim_image("nvcr.io/nvidia/vllm:25.09-py3")  # NGC's vLLM container runs vLLM itself
    assert not is_nim_image("example.com/nim/vllm:1")  # not NGC
    assert image_mentions_engine("nvcr.io/nvstaging/nim-internal/vllm-oss-nim-llm-4-devel:2.0.0") is None
    assert image_mentions_engine("nvcr.io/nvidia/vllm:25.09-py3") == "vllm"
