"""Behaviour that read the wording of kvlint's own messages, now typed (branch tidy29): the findings and results
carry what the code acts on. Real loader and pipeline, offline; fixtures/collected manifests."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

ROOT = Path(__file__).resolve().parent.parent
DYNAMO = (
    ROOT
    / "fixtures"
    / "collected"
    / ("sjm446__ai-on-eks__blueprints__inference__nvidia-dynamo__vllm__vllm-disaggregated-default.yaml")
)


def test_dynamo_options_are_named_from_the_findings_not_read_back_from_their_messages(tmp_path: Path) -> None:
    """A Dynamo worker's options vLLM does not know are taken as Dynamo's own, named in KV504. They were cut out
    of each KV205's message (up to the first blank or ';'), so an option word holding a blank, which KV205 quotes
    whole, was named as its first half ("'--odd"). They come from the findings' option now."""
    line = '"python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --is-prefill-worker 2>&1 | tee /tmp/vllm-prefill.log"'
    text = DYNAMO.read_text(encoding="utf-8")
    assert line in text
    odd = line.replace("--is-prefill-worker", "--is-prefill-worker '--odd option'")
    path = tmp_path / "dynamo.yaml"
    path.write_text(text.replace(line, odd), encoding="utf-8")
    r = run_check([str(path)], Options(allow_hub=False))
    notes = [d for d in r.diagnostics if d.rule == "KV504" and "taken as Dynamo's own" in d.message]
    assert len(notes) == 1
    assert "--is-prefill-worker, '--odd option' are taken as Dynamo's own" in notes[0].message
    assert "'--odd option' are Dynamo options" in notes[0].fix
    assert not [d for d in r.diagnostics if d.rule == "KV205"]  # taken as Dynamo's, not reported as vLLM's
