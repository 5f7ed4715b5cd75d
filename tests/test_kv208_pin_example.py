"""KV208's suggested pin is each engine's own release image at the newest release of kvlint's generated release
table (kvlint.rules.families.flags.pin_example), not a literal: it was ``vllm/vllm-openai:v0.11.0``,
``text-generation-inference:3.3.6`` and ``lmsysorg/sglang:v0.5.5`` while the tables reached 0.34.0, 3.3.7 and
0.5.23."""

from __future__ import annotations

import pytest

from kvlint.engines import sglang_flags_data, tgi_flags_data, vllm_flags_data
from kvlint.engines.images import engine_of_image, engine_version
from kvlint.load import load_text
from kvlint.options import Options
from kvlint.pipeline import run_documents
from kvlint.rules.families import flags

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: x}}
spec:
  selector: {{matchLabels: {{app: x}}}}
  template:
    metadata: {{labels: {{app: x}}}}
    spec:
      containers:
      - name: engine
        image: {image}
        args: {args}
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""

CASES = [
    ("vllm", "vllm/vllm-openai:latest", '["--model", "Qwen/Qwen2.5-7B-Instruct"]', vllm_flags_data),
    (
        "tgi",
        "ghcr.io/huggingface/text-generation-inference:latest",
        '["--model-id", "Qwen/Qwen2.5-7B-Instruct"]',
        tgi_flags_data,
    ),
    (
        "sglang",
        "lmsysorg/sglang:latest",
        '["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct"]',
        sglang_flags_data,
    ),
]


@pytest.mark.parametrize(("engine", "image", "args", "table"), CASES)
def test_kv208_suggests_the_newest_release_of_the_table(engine: str, image: str, args: str, table) -> None:
    res = run_documents(load_text(POD.format(image=image, args=args), "d.yaml"), Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV208"]
    newest = table.VERSIONS[-1]
    assert f"{newest})" in (d.fix or ""), d.fix
    suggested = flags.pin_example(engine)
    assert f"(e.g. {suggested})" in (d.fix or ""), d.fix
    # the suggestion is an image kvlint reads back as that engine at the table's newest release
    assert engine_of_image(suggested) == engine
    assert engine_version(suggested) == newest


@pytest.mark.parametrize(("engine", "image", "args", "table"), CASES)
def test_the_suggestion_follows_the_table(
    engine: str, image: str, args: str, table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regenerated table with a newer release moves the suggestion with it."""
    monkeypatch.setattr(table, "VERSIONS", (*table.VERSIONS, "9.8.7"))
    suggested = flags.pin_example(engine)
    assert suggested.endswith("v9.8.7" if engine != "tgi" else ":9.8.7")
    assert engine_version(suggested) == "9.8.7"


@pytest.mark.parametrize("candidate", ["9.8.7rc1", "9.8.7.dev0", "9.8.7a2"])
@pytest.mark.parametrize(("engine", "image", "args", "table"), CASES)
def test_a_pre_release_in_the_table_is_not_suggested(
    engine: str, image: str, args: str, table, candidate: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release candidate or development build read into a table is no pin to suggest: the newest final release is."""
    final = table.VERSIONS[-1]
    monkeypatch.setattr(table, "VERSIONS", (*table.VERSIONS, candidate))
    assert engine_version(flags.pin_example(engine)) == final
    post = "9.8.7.post1"
    monkeypatch.setattr(table, "VERSIONS", (*table.VERSIONS, post))
    assert engine_version(flags.pin_example(engine)) == post
