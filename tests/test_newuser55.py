"""What a new user met on real manifests (branch newuser55): messages that named what the manifest does not
say. Real loader and pipeline, offline; fixtures/collected manifests."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from kvlint.pipeline import Options, run_check

ROOT = Path(__file__).resolve().parent.parent
COLLECTED = ROOT / "fixtures" / "collected"
_ARGS = re.compile(r"its arguments \((.*?)\) are vLLM's own options")


def _strings(node: object) -> list[str]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


def _quoted_options(path: Path) -> list[list[str]]:
    r = run_check([str(path)], Options(allow_hub=False))
    found = [_ARGS.search(d.message) for d in r.diagnostics if d.rule == "KV504"]
    return [m.group(1).split(" ") for m in found if m]


def test_kv504_quotes_whole_options_and_marks_only_a_real_cut() -> None:
    """KV504 (an image kvlint does not know, read as vLLM because its arguments are vLLM's options) quotes those
    options. It cut their joined text at 80 characters, inside a word (``--enable-auto-to ...`` for
    ``--enable-auto-tool-choice``, ``--dtype=float3 ...`` for ``--dtype=float32``), and added ``...`` even when
    nothing was left out. Now each quoted word is an option the manifest has, and ``...`` stands only for
    options left out."""
    for name in (
        "aatchison__deploy-vllm-k8s__deploy-dual-moe.yaml",
        "trees/ahmedwaleedmalik-k8s-llm-inference-platform/serving/kserve/inferenceservice.yaml",
    ):
        path = COLLECTED / name
        options = {s for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) for s in _strings(doc)}
        quoted = _quoted_options(path)
        assert quoted, name
        for words in quoted:
            assert words[-1] == "...", words  # these command lines are longer than a note quotes
            assert all(w in options for w in words[:-1]), (name, words)
            assert len(" ".join(words[:-1])) <= 80


def test_kv504_adds_no_ellipsis_when_every_option_is_quoted(tmp_path: Path) -> None:
    path = tmp_path / "short.yaml"
    path.write_text(
        (COLLECTED / "aatchison__deploy-vllm-k8s__deploy-dual-moe.yaml").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    deployments = [d for d in docs if isinstance(d, dict) and d.get("kind") == "Deployment"]
    for d in deployments:
        c = d["spec"]["template"]["spec"]["containers"][0]
        c["args"] = ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "4096"]
    path.write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    quoted = _quoted_options(path)
    assert quoted and all(words == ["--model", "--max-model-len"] for words in quoted), quoted
