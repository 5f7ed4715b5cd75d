"""KV202's statement keeps the length the engine uses; what one request of it needs is a detail line of its own.
The length and the need were one parenthetical aside, longer than a statement keeps (kvlint.statement.ASIDE_CHARS):
the text report's statement read "vLLM uses the model's full context from config.json, which sizes admission ..."
(no length) over a detail line "131072 tokens; one such request needs 16.00 GiB of KV cache per GPU" (the README's
opening run, chat-8b-l4.yaml)."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

ROOT = Path(__file__).resolve().parents[1]


def test_the_statement_names_the_length_and_the_need_is_its_own_line() -> None:
    result = run_check(
        [str(ROOT / "fixtures" / "examples"), str(ROOT / "fixtures" / "rules" / "KV202")],
        Options(allow_hub=False),
    )
    kv202 = [d for d in result.diagnostics if d.rule == "KV202" and "one such request needs" in d.message]
    engines = set()
    for d in kv202:
        cr = next(
            c for c in result.containers if c.object_ref == d.object and c.container_name == d.container
        )
        assert cr.plan is not None
        engines.add(cr.serving.engine)
        assert f"({cr.plan.max_model_len} tokens" in d.statement, d.statement
        assert d.details[0].startswith("one such request needs "), d.details
        assert not any(line[:1].isdigit() for line in d.details), d.details
    assert engines == {"vllm", "sglang"}
