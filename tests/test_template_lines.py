"""kvlint.template_lines: aligning rendered Helm output with the Go template that wrote it."""

from __future__ import annotations

import pytest

from kvlint import template_lines
from kvlint.template_lines import align, parse_template

TEMPLATE = """\
{{- range $name, $m := .Values.models }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $name }}
  {{- with $m.labels }}
  labels:
  {{- toYaml . | nindent 4 }}
  {{- end }}
data:
  {{- /* a comment
  over two lines */}}
  name: {{ $name }}-data
  {{- include "extra" $ | nindent 2 }}
{{- end }}
"""


def test_parse_template_classifies_lines() -> None:
    lines = parse_template(TEMPLATE)
    kinds = {t.number: ("pattern" if t.pattern else "output" if t.output else "silent") for t in lines}
    assert kinds[1] == kinds[7] == kinds[10] == kinds[16] == "silent"  # range / with / end
    assert kinds[12] == kinds[13] == "silent"  # a comment, even over two lines
    assert kinds[9] == kinds[15] == "output"  # toYaml, include
    assert kinds[3] == kinds[6] == kinds[14] == "pattern"
    by = {t.number: t for t in lines}
    assert by[6].pattern is not None and by[6].pattern.fullmatch("  name: llama")
    assert by[14].pattern is not None and by[14].pattern.fullmatch("  name: llama-data")
    assert not by[14].pattern.fullmatch("  name: llama")  # literal after the action must be there
    assert by[9].column == 3


def test_align_follows_the_template_order_and_expansions() -> None:
    rendered = [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        "  name: a",
        "  labels:",
        "    team: x",
        "    tier: y",
        "data:",
        "  name: a-data",
        "  extra: 1",
        "",
    ]
    got = align(rendered, parse_template(TEMPLATE))
    assert got == [
        (3, None),
        (4, None),
        (5, None),
        (6, None),  # the metadata name, not the later `name:` under data
        (8, None),
        (9, 3),  # toYaml wrote the labels
        (9, 3),
        (11, None),
        (14, None),
        (15, 3),  # include wrote it
        None,  # blank
    ]


def test_literal_template_maps_line_for_line() -> None:
    text = "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  ports:\n    - port: 80\n"
    rendered = text.splitlines()
    assert align(rendered, parse_template(text)) == [(i + 1, None) for i in range(len(rendered))]


def test_unmatched_lines_fall_back_to_the_nearest_line_above() -> None:
    tpl = parse_template("kind: A\n{{- if .x }}\nspec:\n{{- end }}\n")
    assert align(["kind: A", "other: 1", "spec:"], tpl) == [(1, None), (1, 1), (3, None)]
    # nothing matches at all: no template line is named
    assert align(["x: 1"], parse_template("y: 2\n")) == [None]


def test_tables_over_the_limit_are_not_aligned(monkeypatch: pytest.MonkeyPatch) -> None:
    assert align(["a: 1", "b: 2"], parse_template("a: 1\nb: 2\n")) == [(1, None), (2, None)]
    monkeypatch.setattr(template_lines, "MAX_CELLS", 3)
    assert align(["a: 1", "b: 2"], parse_template("a: 1\nb: 2\n")) == [None, None]


def test_include_then_toyaml_each_take_their_own_lines() -> None:
    """`include "x.args"` then `toYaml .Values.extraArgs`: the helper's lines go to the include, the rest
    to the toYaml line (the helper's literal lines, in order, decide where the include's output ends)."""
    from kvlint.template_lines import named_templates

    helpers = named_templates(
        '{{- define "x.args" -}}\n- --model\n- {{ .Values.model }}\n- --port={{ .Values.port }}\n{{- end }}\n'
    )
    tpl = parse_template(
        'args:\n  {{- include "x.args" . | nindent 2 }}\n  {{- toYaml .Values.extraArgs | nindent 2 }}\nend: 1\n'
    )
    rendered = [
        "args:",
        "  - --model",
        "  - org/m",
        "  - --port=8000",
        "  - --max-model-len=4096",
        "  - --x",
        "end: 1",
    ]
    got = [e[0] if e else None for e in align(rendered, tpl, helpers)]
    assert got == [1, 2, 2, 2, 3, 3, 4]
    # without the helpers, everything between goes to the first output line (the older approximation)
    assert [e[0] if e else None for e in align(rendered, tpl)] == [1, 2, 2, 2, 2, 2, 4]


def test_documents_of_one_template_align_with_their_own_region() -> None:
    from kvlint.template_lines import align_document, regions

    text = "kind: A\nname: one\nx: 1\n---\nkind: A\nname: two\nx: 1\n"
    tpl = parse_template(text)
    assert regions(tpl) == [(0, 3), (4, 8)]  # the text ends with a newline: a last empty line
    table, region = align_document(["kind: A", "name: two", "x: 1"], tpl)
    assert region == 1 and [e[0] if e else None for e in table] == [5, 6, 7]
    # equal candidates: the region after the previous document's one
    same = parse_template("kind: A\nx: 1\n---\nkind: A\nx: 1\n")
    assert align_document(["kind: A", "x: 1"], same, after=0)[1] == 1
    assert align_document(["kind: A", "x: 1"], same)[1] == 0


PSTACK_LIKE = """\
args:
  - --model
  {{- if .dtype }}
  - --dtype
  - {{ .dtype | quote }}
  {{- end }}
  {{- if .tp }}
  - --tensor-parallel-size
  - {{ .tp | quote }}
  {{- end }}
  {{- range .extraArgs }}
  - {{ . | quote }}
  {{- end }}
ports: []
"""


def test_range_items_are_not_captured_by_a_disabled_if_block() -> None:
    """production-stack's shape: `if` blocks of `- {{ ... }}` lines, then a `range` over extraArgs. Items
    the range wrote stay on the range line, and a block's value pairs with its own flag line."""
    tpl = parse_template(PSTACK_LIKE)
    # dtype and tp unset: the two extra args come from the range (line 12), not from line 5 or 9
    rendered = ["args:", "  - --model", '  - "--x"', '  - "0.8"', "ports: []"]
    assert [e[0] if e else None for e in align(rendered, tpl)] == [1, 2, 12, 12, 14]
    # tp set, dtype unset: the value pairs with its flag (8, 9), the extra arg with the range
    rendered = ["args:", "  - --model", "  - --tensor-parallel-size", '  - "2"', '  - "--y"', "ports: []"]
    assert [e[0] if e else None for e in align(rendered, tpl)] == [1, 2, 8, 9, 12, 14]


def test_many_unset_blocks_before_a_range_and_else_branches() -> None:
    """production-stack's vllmConfig: a dozen `if hasKey` blocks then `range .extraArgs` (an iterative
    repair needs as many rounds as blocks; blocks whose fixed lines are absent are set aside up front),
    and an if/else whose else branch rendered."""
    blocks = "".join(
        f'  {{{{- if hasKey . "k{i}" }}}}\n  - "--k{i}"\n  - {{{{ .k{i} | quote }}}}\n  {{{{- end }}}}\n'
        for i in range(8)
    )
    text = (
        "args:\n"
        '  {{- if .a }}\n  - "--on"\n  {{- else }}\n  - "--off"\n  {{- end }}\n'
        + blocks
        + "  {{- range .extraArgs }}\n  - {{ . | quote }}\n  {{- end }}\nend: 1\n"
    )
    tpl = parse_template(text)
    range_line = text.splitlines().index("  - {{ . | quote }}") + 1
    off_line = text.splitlines().index('  - "--off"') + 1
    rendered = ["args:", '  - "--off"', '  - "--typo"', '  - "0.8"', "end: 1"]
    got = [e[0] if e else None for e in align(rendered, tpl)]
    assert got == [1, off_line, range_line, range_line, len(text.splitlines())]
