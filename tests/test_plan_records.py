"""The plan records built positionally are built in their fields' order.

A call with more than 15 keyword arguments is compiled to build a dict of them and unpack it again (CPython's
``STACK_USE_GUIDELINE``): about 20,000 instructions for one :class:`~kvlint.memory.vllm.StartupConfig`. The records
every vLLM plan builds (:class:`~kvlint.memory.vllm.PlanPrelude` once per container, :class:`~kvlint.memory.vllm.StartupConfig`, :class:`~kvlint.memory.vllm.StageMemory`,
:class:`~kvlint.types.MemoryPlan`, and SGLang's MemoryPlan) are therefore built with positional arguments, each followed by a comment naming
its field (docs/performance.md, ``perfA49``). This test reads those calls in the source and checks that the comments
name the class's fields in their order, so that a field added, removed or moved in the class fails here instead of
shifting every value after it.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import tokenize

import pytest

from kvlint.memory import sglang, vllm
from kvlint.types import MemoryPlan

CALLS = [
    (vllm.plan_prelude, vllm.PlanPrelude),
    (vllm.resolve_startup, vllm.StartupConfig),
    (vllm.stage_memory, vllm.StageMemory),
    (vllm._assemble, MemoryPlan),
    (sglang.plan_sglang_detailed, MemoryPlan),
]


def positional_calls(src: str, name: str) -> list[tuple[list[str | None], int]]:
    """For each call of ``name`` in the source text ``src``: the comment ending the line of each positional
    argument's comma (None where there is none) and the number of keyword arguments."""
    tokens = list(tokenize.generate_tokens(io.StringIO(src).readline))
    comments = {
        tok.start[0]: tok.string.lstrip("#").strip() for tok in tokens if tok.type == tokenize.COMMENT
    }
    commas = [tok.start for tok in tokens if tok.type == tokenize.OP and tok.string == ","]

    def comma_line(arg: ast.expr) -> int:
        end = (arg.end_lineno or 0, arg.end_col_offset or 0)
        return next((pos[0] for pos in commas if pos >= end), 0)

    out = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            out.append(([comments.get(comma_line(a)) for a in node.args], len(node.keywords)))
    return out


@pytest.mark.parametrize(("fn", "cls"), CALLS, ids=lambda x: getattr(x, "__name__", ""))
def test_positional_record_arguments_name_their_fields_in_order(fn, cls):
    calls = positional_calls(inspect.getsource(fn), cls.__name__)
    assert len(calls) == 1
    named, keywords = calls[0]
    fields = [f.name for f in dataclasses.fields(cls)]
    assert keywords == 0
    assert named == fields[: len(named)]
    # the fields left out have defaults
    assert all(
        f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        for f in dataclasses.fields(cls)[len(named) :]
    )


def test_the_check_reads_a_misplaced_field():
    src = "def f(a, b):\n    return C(\n        a,  # y\n        b,  # x\n    )\n"
    assert positional_calls(src, "C") == [(["y", "x"], 0)]
    assert positional_calls(src.replace("# x", ""), "C") == [(["y", None], 0)]
    wrapped = "C(\n    (\n        a\n    ),  # x\n    # a comment on the next\n    b,  # y\n)\n"
    assert positional_calls(wrapped, "C") == [(["x", "y"], 0)]
