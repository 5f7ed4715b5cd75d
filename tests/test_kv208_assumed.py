"""KV208 names the release kvlint assumed for an image that pins none, for every engine: it said "0.34.0" for
vLLM but "the newest known version" for TGI and SGLang (the shared corpus's LWS SGLang example,
``lmsysorg/sglang:latest``), a figure the reader could not re-derive. The named release is the one the memory plan
was made with."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

KV208 = Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "KV208"


def test_kv208_names_the_release_the_plan_used_for_each_engine() -> None:
    for name in ("vllm.yaml", "tgi.yaml", "sglang.yaml"):
        res = run_check([str(KV208 / name)], Options(allow_hub=False))
        tag_fail = [d for d in res.diagnostics if d.rule == "KV208" and "does not pin" in d.message]
        assert tag_fail, name
        (cr,) = [c for c in res.containers if c.serving.image.endswith(":latest")]
        assert cr.plan is not None, name
        assert f"kvlint assumed {cr.plan.engine_version} and its memory rules" in tag_fail[0].message, name
        assert "newest known version" not in tag_fail[0].message
