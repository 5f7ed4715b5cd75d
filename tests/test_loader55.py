"""Loader and report items of pass loader55: positions on a JSON line after an escaped character, the bound on the
loader's findings per file, kustomize patches, and the KV001 hints a BOM or a list of non-objects lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvlint.load import load_paths, load_text
from kvlint.pipeline import Options, run_documents
from kvlint.source import LDict, LList


def _one_line_vllm(odd: str) -> str:
    """A one-line JSON Deployment of vLLM whose annotation and a flag value before the misspelt flag hold ``odd``
    (one character each time)."""
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "x", "annotations": {"a": f"p{odd}q"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {
                    "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"},
                    "containers": [
                        {
                            "name": "vllm",
                            "image": "vllm/vllm-openai:v0.11.0",
                            "args": [
                                "--served-model-name",
                                f"a{odd}b{odd}",
                                "--model",
                                "meta-llama/Llama-3.1-8B-Instruct",
                                "--gpu-memory-utilisation",
                                "0.85",
                            ],
                            "resources": {"limits": {"nvidia.com/gpu": 1}},
                        }
                    ],
                },
            },
        },
    }
    return json.dumps(doc, ensure_ascii=False) + "\n"


def _positions(value: Any, out: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Every position a loaded document holds, in a fixed order: each container's own, its keys' and values'."""
    if isinstance(value, LDict):
        out.append(("map", value.loc))
        for k in value:
            out.append((k, value.key_locs.get(k), value.locs.get(k)))
            _positions(value[k], out)
    elif isinstance(value, LList):
        out.append(("list", value.loc))
        for i, item in enumerate(value):
            out.append((i, value.locs[i]))
            _positions(item, out)
    return out


def test_a_rule_finding_after_an_escaped_del_on_a_json_line_is_at_the_values_column() -> None:
    """A DEL (or C1 control, U+2028) inside a JSON string is written as a 6-character ``\\u`` escape before the
    YAML reader sees it; the loader's own findings were moved back to the file's columns, the rules' were not:
    KV205 on ``--gpu-memory-utilisation`` after three DELs on the line stood 15 columns right of the flag."""
    for odd in ("\x7f", "\x85", "\u2028", "\x9b"):
        text = _one_line_vllm(odd)
        res = run_documents(load_text(text, "d.json"), Options(allow_hub=False))
        (kv205,) = [d for d in res.diagnostics if d.rule == "KV205"]
        # the scalar's opening quote, as an editor counts
        column = text.index('"--gpu-memory-utilisation"') + 1
        assert kv205.loc is not None and (kv205.loc.line, kv205.loc.column) == (1, column), (odd, kv205.loc)


def test_every_position_of_a_json_document_with_escaped_characters_is_the_files() -> None:
    """Every key, value and container position of the document equals that of the same text with each odd
    character replaced by an ordinary one (same length, nothing escaped), also for values after several escapes
    on the line and for the items of a ``kind: List``."""
    for odd in ("\x7f", "\u2029"):
        deployment = json.loads(_one_line_vllm("x"))
        listed = {"apiVersion": "v1", "kind": "List", "items": [deployment, deployment]}
        for shape in (_one_line_vllm("\ue000"), json.dumps(listed, ensure_ascii=False) + "\n"):
            odd_text = shape.replace("\ue000", odd).replace("pxq", f"p{odd}q")
            plain_text = odd_text.replace(odd, "y")
            assert odd_text != plain_text
            got, want = load_text(odd_text, "d.json"), load_text(plain_text, "d.json")
            assert not got.findings and not want.findings, (got.findings, want.findings)
            assert [d.loc for d in got.documents] == [d.loc for d in want.documents]
            assert len(got.documents) == len(want.documents) >= 1
            for g, w in zip(got.documents, want.documents, strict=True):
                assert _positions(g.data, []) == _positions(w.data, [])


def test_positions_after_escapes_are_right_in_a_json_file_read_from_disk(tmp_path: Path) -> None:
    """The same through the file loader (bytes decoded, the escaped text read whole)."""
    f = tmp_path / "d.json"
    text = _one_line_vllm("\x7f")
    f.write_text(text, encoding="utf-8")
    (doc,) = load_paths([str(f)]).documents
    args = doc.data["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args.locs[4].column == text.index('"--gpu-memory-utilisation"') + 1
    assert args.locs[5].column == text.index('"0.85"') + 1
