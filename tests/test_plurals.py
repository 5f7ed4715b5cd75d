"""Messages take the number they print: "1 Helm chart was not rendered", "2 kustomizations were not built", "the
other node", "TGI's one shard", "8 GPU workers", never "chart(s)", "node(s)", "shard(s)", "field(s)" (ux52 did
GPU/GPUs with :func:`kvlint.wording.count`). The webhook's deny message said "(and 2 repeat(s) of the errors
above ...)"."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: a word with "(s)" after it; "http(s)" is a URL scheme, not a plural
_LAZY = re.compile(r"[A-Za-z]\(s\)(?<!http\(s\))")

#: the memory models' plan assumptions ("draft layer(s)", "speculative token(s)"), not yet done: engine work in
#: progress on other branches
_NOT_YET = ("kvlint/memory/",)


def _message_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """The string constants of ``tree`` that are not docstrings, with their line."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_no_message_writes_a_lazy_plural() -> None:
    found = []
    for path in sorted((ROOT / "kvlint").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(_NOT_YET):
            continue
        for line, text in _message_strings(ast.parse(path.read_text(encoding="utf-8"))):
            if _LAZY.search(text):
                found.append(f"{rel}:{line}: {text.strip()[:60]}")
    assert found == []


def test_one_finding_past_a_bound_is_one_finding() -> None:
    """The finding that stands for the rest past a bound said "1 more KV503 findings" (kvlint.findcap, 51 of a rule
    in a container) and "1 more unknown options: --made-up-32" (KV205, 33 unknown options on a command line); the
    rule runner still takes the one-option form for the finding that stands for the unknown options."""
    import copy
    import json

    from kvlint.engines import options as options_mod
    from kvlint.engines import parse_container
    from kvlint.findcap import MAX_PER_RULE
    from kvlint.load import load_text
    from kvlint.pipeline import run_documents
    from kvlint.rules.runner import _unknown_option
    from kvlint.source import LDict, LList
    from kvlint.webhook.review import webhook_options
    from kvlint.webhook.worker import WARM_UP_OBJECT

    obj = copy.deepcopy(WARM_UP_OBJECT)
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container["args"] = ["--model", "meta-llama/Llama-3.1-8B-Instruct"] + ["--$(X)"] * (MAX_PER_RULE + 1)
    found = run_documents(load_text(json.dumps(obj, indent=1), "one.json"), webhook_options()).diagnostics
    last = [d for d in found if d.rule == "KV503"][-1]
    assert last.stands_for == 1
    assert last.message.startswith("1 more KV503 finding in container vllm, the first: "), last.message

    words = ["--model", "X/y"] + [f"--made-up-{i}" for i in range(options_mod.MAX_UNKNOWN_OPTIONS + 1)]
    c = LDict(name="e", image="vllm/vllm-openai:v0.11.0")
    c["args"] = LList(words)
    capped = options_mod.cap_unknown_options(parse_container(c).findings)
    (more,) = [f for f in capped if f.rule == "KV205" and not isinstance(f, options_mod.OptionFinding)]
    assert more.message.startswith(f"1 more unknown option: --made-up-{options_mod.MAX_UNKNOWN_OPTIONS} ("), (
        more.message
    )
    assert _unknown_option(more)
