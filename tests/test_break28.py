"""Hostile inputs to this stop's new code (break28): the work of tracing a chart's helper-written values to their
values lines (kvlint.render.trace_helper_values) grows linearly with the template and the values, counted in calls,
never timed."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from kvlint import origins, render
from kvlint.origins import ValuesRefTable, values_refs


def test_values_ref_table_equals_values_refs_on_every_line() -> None:
    rng = random.Random(28)
    pieces = [
        "{{- with .Values.a }}",
        "{{- with $.Values.b.c }}",
        "{{- range .Values.d }}",
        "{{- if .Values.e }}",
        "{{- end }}",
        "{{ with .Values.f }}x{{ end }}",
        "{{ end }}{{ with .Values.g.h }}",
        '{{- include "c.x" .Values.i | nindent 6 }}',
        "  name: {{ .Values.j.k }}",
        "plain: text",
    ]
    for _ in range(60):
        lines = [
            "".join(rng.choice(pieces) for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(0, 40))
        ]
        table = ValuesRefTable(lines)
        for line in range(0, len(lines) + 2):
            assert table.refs(line) == values_refs(lines, line), (lines, line)


def test_values_ref_table_limit_refuses_deep_enclosing_paths() -> None:
    lines = [f"{{{{- with .Values.p{i} }}}}" for i in range(100)] + ['{{ include "x" . }}']
    table = ValuesRefTable(lines)
    assert table.refs(len(lines), 64) is None
    assert len(table.refs(len(lines)) or []) == 100


def _chart(root: Path, n: int) -> Path:
    chart = root / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(
        "big:\n" + "".join(f"  k{i}:\n    name: n{i}\n    image: vllm/vllm-openai:v0.6.0\n" for i in range(n))
    )
    (chart / "templates" / "_h.tpl").write_text(
        '{{- define "c.container" -}}\n- name: {{ .name }}\n  image: {{ .image }}\n{{- end }}\n'
    )
    body = "".join(
        f'{{{{- with $.Values.big.k{i} }}}}\n      {{{{- include "c.container" . | nindent 6 }}}}\n{{{{- end }}}}\n'
        for i in range(n)
    )
    (chart / "templates" / "d.yaml").write_text(
        "{{- with .Values.big }}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n"
        "  template:\n    spec:\n      containers:\n" + body + "{{- end }}\n"
    )
    return chart


@pytest.mark.skipif(shutil.which("helm") is None, reason="needs helm on PATH (the dev extras install it)")
def test_helper_values_tracing_work_is_linear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 200 containers, each written by an include inside its own `with $.Values.big.kI`, all inside `with
    # .Values.big`: the enclosing blocks were read again for each include line (~n x lines / 2 block scans), and
    # each line's set of paths indexed the whole `big` subtree again (~n x 2n values keyed).
    n = 200
    chart = _chart(tmp_path, n)
    lines = len((chart / "templates" / "d.yaml").read_text().split("\n"))
    counts = {"opens": 0, "keys": 0}
    block_opens, text_key = origins._block_opens, render._text_key

    def counting_opens(text: str) -> list[tuple[str, str]]:
        counts["opens"] += 1
        return block_opens(text)

    def counting_key(value: object) -> str:
        counts["keys"] += 1
        return text_key(value)

    monkeypatch.setattr(origins, "_block_opens", counting_opens)
    monkeypatch.setattr(render, "_text_key", counting_key)
    loaded = render.render_helm(str(chart))
    assert not loaded.findings
    containers = loaded.documents[0].data["spec"]["template"]["spec"]["containers"]
    assert len(containers) == n
    # the values were traced: the last container's name sits at its values line (the image, the same in every
    # entry, keeps the template line)
    last = containers[n - 1]
    assert last.locs["name"].file.endswith("values.yaml")
    assert last.locs["name"].line == 3 * n
    assert last.locs["image"].file.endswith("d.yaml")
    assert counts["opens"] <= 2 * lines
    assert counts["keys"] <= 20 * n


def test_org_name_folder_matcher_never_runs_over_an_overlong_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # `<org>--<name>` is matched by a lazy pattern that tries every `--` of the name with a scan to its end: a
    # storageUri's 60,000-character last component `a--a--...--a@1` cost a quadratic number of steps. Count the
    # characters handed to the pattern, never time it.
    from kvlint.models import resolve

    seen: list[int] = []
    pattern = resolve._ORG_NAME_FOLDER

    class Counting:
        def fullmatch(self, text: str):  # noqa: ANN201 - re.Match or None
            seen.append(len(text))
            return pattern.fullmatch(text)

    monkeypatch.setattr(resolve, "_ORG_NAME_FOLDER", Counting())
    hostile = "a" + "--a" * 20_000 + "@1"
    assert resolve._path_named_model("s3://bucket/" + hostile) is None
    assert all(n <= 194 for n in seen), max(seen)
    # a real `<org>--<name>` folder is still read as its catalogued id
    seen.clear()
    named = resolve._path_named_model("s3://bucket/meta-llama--Llama-3.1-8B-Instruct")
    assert named is not None and named[0] == "meta-llama/Llama-3.1-8B-Instruct"
    assert seen
