"""Tests for kvlint.load: positions, multi-document files, List kinds, JSON, stdin, robustness, KV002."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest

from kvlint.load import load_paths, load_text, template_actions
from kvlint.source import LDict, LList, Loc, loc_of

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "load"


def _pos(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """1-based (line, column) of the nth occurrence of needle in text."""
    idx = -1
    for _ in range(nth + 1):
        idx = text.index(needle, idx + 1)
    line = text.count("\n", 0, idx) + 1
    col = idx - (text.rfind("\n", 0, idx) + 1) + 1
    return line, col


def _rules(result) -> list[str]:
    return [f.rule for f in result.findings]


# ------------------------------------------------------------------------------------------------ positions

BLOCK = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args:
        - --model
        - meta-llama/Llama-3.1-8B-Instruct
        - --max-model-len
        - "32768"
"""


def test_block_args_positions():
    r = load_text(BLOCK, "d.yaml")
    assert r.findings == [] and len(r.documents) == 1
    c = r.documents[0].data["spec"]["template"]["spec"]["containers"][0]
    args = c["args"]
    assert isinstance(args, LList) and isinstance(c, LDict)
    i = args.index("--max-model-len")
    assert loc_of(args, i) == Loc("d.yaml", *_pos(BLOCK, "--max-model-len"))
    assert loc_of(args, i + 1) == Loc("d.yaml", *_pos(BLOCK, '"32768"'))
    assert args[i + 1] == "32768"  # quoted stays a string
    # value and key positions of a mapping entry
    assert c.locs["image"] == Loc("d.yaml", *_pos(BLOCK, "vllm/vllm-openai"))
    assert c.key_locs["image"] == Loc("d.yaml", *_pos(BLOCK, "image:"))
    assert r.documents[0].loc == Loc("d.yaml", 1, 1)


def test_flow_args_positions():
    text = 'kind: Pod\nspec:\n  containers:\n  - {name: x, args: ["--a", b, "--max-num-seqs", 8]}\n'
    r = load_text(text, "p.yaml")
    args = r.documents[0].data["spec"]["containers"][0]["args"]
    assert args == ["--a", "b", "--max-num-seqs", 8]
    assert [loc_of(args, i) for i in range(4)] == [
        Loc("p.yaml", *_pos(text, '"--a"')),
        Loc("p.yaml", *_pos(text, "b,")),
        Loc("p.yaml", *_pos(text, '"--max-num-seqs"')),
        Loc("p.yaml", *_pos(text, "8]")),
    ]
    assert loc_of(args) == Loc("p.yaml", *_pos(text, "["))


def test_scalar_types_like_safe_load():
    r = load_text(
        'a: 8\nb: "8"\nc: 0.9\nd: true\ne: ~\nf: 0x10\ng: 1_000\nh: 2024-01-01\ni: "true"\n', "t.yaml"
    )
    d = r.documents[0].data
    assert d == {
        "a": 8,
        "b": "8",
        "c": 0.9,
        "d": True,
        "e": None,
        "f": 16,
        "g": 1000,
        "h": "2024-01-01",
        "i": "true",
    }
    assert type(d["a"]) is int and type(d["c"]) is float and type(d["d"]) is bool


def test_non_ascii_columns_are_characters_and_crlf():
    text = 'a: "ééé"\r\nb: [é, x]\r\n'
    d = load_text(text.encode("utf-8"), "u.yaml").documents[0].data
    assert loc_of(d["b"], 1) == Loc("u.yaml", 2, 8)


def test_merge_keys_and_duplicate_keys():
    text = "base: &b {x: 1, z: 2}\nm:\n  <<: *b\n  z: 3\ndup: 1\ndup: 2\n"
    r = load_text(text, "m.yaml")
    d = r.documents[0].data
    assert d["m"] == {"x": 1, "z": 3}
    assert d["dup"] == 2 and d.locs["dup"] == Loc("m.yaml", 6, 6)
    # a key a merge overrides is not a duplicate; a repeated key is KV004 at its second occurrence
    assert [(f.rule, f.loc) for f in r.findings] == [("KV004", Loc("m.yaml", 6, 1))]
    assert "duplicate key 'dup'" in r.findings[0].message and "first at line 5" in r.findings[0].message


def test_duplicate_keys_in_every_document_and_flow_mappings():
    text = (
        "a: 1\nb: {c: 1, c: 2}\n---\nkind: X\nlist:\n  - name: n\n    args: [x]\n    args: [z]\n"
        "other:\n  name: n\n"
    )
    r = load_text(text, "d.yaml")
    assert [d.data for d in r.documents][1]["list"][0]["args"] == ["z"]  # the last value, as kubectl
    got = [(f.rule, f.loc, f.message.split(" (")[0]) for f in r.findings]
    assert got == [
        ("KV004", Loc("d.yaml", 2, 11), "duplicate key 'c' in this mapping"),
        ("KV004", Loc("d.yaml", 8, 5), "duplicate key 'args' in this mapping"),
    ]
    # the same key in different mappings is fine
    assert load_text("a: {name: x}\nb: {name: y}\n", "ok.yaml").findings == []


# ------------------------------------------------------------------------------------------------ documents


def test_multi_documents_index_and_loc():
    text = "kind: Service\n---\n# comment only\n---\nkind: Deployment\n---\n- a\n- b\n---\nhello\n---\n"
    r = load_text(text, "m.yaml")
    assert [(d.index, d.kind) for d in r.documents] == [(0, "Service"), (1, "Deployment"), (2, ""), (3, "")]
    assert r.documents[1].loc == Loc("m.yaml", 5, 1)
    assert r.documents[2].data == ["a", "b"] and r.documents[3].data == "hello"
    # the list of scalars and the string document are ones kubectl refuses ("cannot unmarshal array", "... string")
    assert [(f.rule, f.loc) for f in r.findings] == [
        ("KV001", Loc("m.yaml", 7, 1)),
        ("KV001", Loc("m.yaml", 10, 1)),
    ]


def test_list_kinds_are_flattened():
    text = (
        "apiVersion: v1\nkind: List\nitems:\n- kind: Deployment\n  metadata: {name: a}\n"
        "- kind: Service\n  metadata: {name: b}\n---\nkind: DeploymentList\nitems:\n- kind: Deployment\n"
        "  metadata: {name: c}\n"
    )
    r = load_text(text, "l.yaml")
    assert [(d.kind, d.name, d.index) for d in r.documents] == [
        ("Deployment", "a", 0),
        ("Service", "b", 0),
        ("Deployment", "c", 1),
    ]
    assert r.documents[1].loc == Loc("l.yaml", 6, 3)


def test_json_file_positions(tmp_path):
    text = '{\n\t"kind": "Pod",\n\t"spec": {"containers": [{"name": "x", "args": ["--a", "b\\/c", 8]}]}\n}\n'
    p = tmp_path / "pod.json"
    p.write_text(text)
    r = load_paths([str(p)])
    assert r.files == 1 and r.findings == []
    args = r.documents[0].data["spec"]["containers"][0]["args"]
    assert args == ["--a", "b/c", 8]
    assert loc_of(args, 1) == Loc(str(p), *_pos(text, '"b\\/c"'))


def test_stdin_text_and_binary():
    r = load_paths(["-"], stdin=io.StringIO(BLOCK))
    assert r.files == 1 and r.documents[0].path == "-" and r.documents[0].loc == Loc("-", 1, 1)
    r = load_paths(["-"], stdin=io.BytesIO(BLOCK.encode()))
    assert r.documents[0].kind == "Deployment"
    r = load_paths(["-"], stdin=io.BytesIO(BLOCK.encode()), max_file_bytes=10)
    assert _rules(r) == ["KV001"] and r.documents == []


def test_directory_walk_sorted_hidden_exclude(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "vendor").mkdir()
    (tmp_path / "b" / "z.yml").write_text("kind: Service\n")
    (tmp_path / "a.yaml").write_text("kind: Pod\n")
    (tmp_path / "c.json").write_text('{"kind": "Job"}')
    (tmp_path / "notes.txt").write_text("kind: Secret\n")
    (tmp_path / ".git" / "x.yaml").write_text("kind: Secret\n")
    (tmp_path / "vendor" / "v.yaml").write_text("kind: Secret\n")
    (tmp_path / "skip-me.yaml").write_text("kind: Secret\n")
    r = load_paths([str(tmp_path), str(tmp_path / "a.yaml")], exclude=["*/vendor", "skip-*"])
    assert [d.kind for d in r.documents] == ["Pod", "Service", "Job"]
    assert r.files == 3  # a.yaml named twice is read once
    with pytest.raises(FileNotFoundError, match="nope.yaml"):
        load_paths([str(tmp_path / "nope.yaml")])


def test_file_explicitly_named_is_read_whatever_its_extension(tmp_path):
    p = tmp_path / "manifest.tpl"
    p.write_text("kind: Pod\n")
    assert [d.kind for d in load_paths([str(p)]).documents] == ["Pod"]


# ------------------------------------------------------------------------------------------------ robustness


#: aws-samples/aws-do-eks's Nemotron-3 Ultra aggregated deployment, an envsubst template (fixtures/collected, source
#: in its INDEX.csv): ``labels: { ...: ${DEPLOYMENT_NAME}, ... }`` is valid YAML only once rendered.
AWS_DO_EKS_TEMPLATE = (
    Path(__file__).resolve().parent.parent
    / "fixtures"
    / "collected"
    / "aws-samples__aws-do-eks__Container-Root__eks__deployment__inference__agentic-ai__nemotron__ultra__agg__deployment.yaml-template"
)


def test_syntax_error_at_an_unquoted_envsubst_placeholder_says_so():
    # Before, KV001 said only "did not find expected ',' or '}'" and "fix the file so it parses as YAML": a user of
    # an envsubst template could not tell that rendering it (or quoting the placeholder) is the remedy.
    text = AWS_DO_EKS_TEMPLATE.read_text()
    r = load_paths([str(AWS_DO_EKS_TEMPLATE)])
    assert _rules(r) == ["KV001"] * 3 and r.documents == []
    for f in r.findings:
        line = text.splitlines()[f.loc.line - 1]
        assert line[f.loc.column - 2 : f.loc.column] == "${"  # the mark is the placeholder's brace
        assert "${DEPLOYMENT_NAME}" in f.message and "envsubst" in f.message
        assert "envsubst < FILE" in f.fix and '"${DEPLOYMENT_NAME}"' in f.fix
    # quoting the placeholder, as the fix says, makes the same document parse
    quoted = load_text('metadata:\n  labels: { app: "${APP}" }\n', "q.yaml")
    assert quoted.findings == [] and quoted.documents[0].data["metadata"]["labels"]["app"] == "${APP}"
    # an error elsewhere on a line with a placeholder keeps the plain text
    other = load_text('metadata:\n  labels: { app: "${APP}", x: [ }\n', "o.yaml")
    assert _rules(other) == ["KV001"] and "envsubst" not in other.findings[0].message


def test_syntax_error_keeps_other_documents():
    text = "kind: Service\n---\nkind: Deployment\nspec: [\n---\nkind: Pod\n"
    r = load_text(text, "e.yaml")
    assert [d.kind for d in r.documents] == ["Service", "Pod"]
    assert _rules(r) == ["KV001"]
    f = r.findings[0]
    assert f.loc == Loc("e.yaml", 5, 1) and "YAML syntax error" in f.message


def test_real_malformed_manifest():
    p = (
        FIX
        / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-model-armor__preparing-the-model__vllm-gemma-deployment.yaml"
    )
    r = load_paths([str(p)])
    assert _rules(r) == ["KV001"]
    # libyaml reports the '-   key:' item that breaks the block mapping
    line = r.findings[0].loc.line
    assert p.read_text().splitlines()[line - 1].strip().startswith("-   key:")


def test_syntax_error_in_other_file_does_not_stop_loading(tmp_path):
    (tmp_path / "a.yaml").write_text("a: [\n")
    (tmp_path / "b.yaml").write_text("kind: Pod\n")
    r = load_paths([str(tmp_path)])
    assert [d.kind for d in r.documents] == ["Pod"] and _rules(r) == ["KV001"] and r.files == 2


def test_empty_file(tmp_path):
    p = tmp_path / "e.yaml"
    p.write_text("")
    r = load_paths([str(p)])
    assert r.documents == [] and r.findings == [] and r.files == 1


def test_binary_file(tmp_path):
    p = tmp_path / "model.yaml"
    p.write_bytes(b"kind: Pod\n\x00\x01\x02\xff")
    r = load_paths([str(p)])
    assert _rules(r) == ["KV001"] and "not a text file" in r.findings[0].message
    assert r.findings[0].loc.line == 2


def test_non_utf8_reports_offset_and_line():
    r = load_text("kind: Pod\nname: caf\xe9\n".encode("latin-1"), "l.yaml")
    assert _rules(r) == ["KV001"]
    f = r.findings[0]
    assert "UTF-8" in f.message and "offset 19" in f.message and f.loc.line == 2


def test_utf16_with_bom_is_read():
    r = load_text("kind: Pod\n".encode("utf-16"), "w.yaml")
    assert [d.kind for d in r.documents] == ["Pod"]


@pytest.mark.parametrize("depth", [300, 5000])
def test_deep_nesting(depth):
    text = "kind: Service\n---\na: " + "[" * depth + "]" * depth + "\n---\nkind: Pod\n"
    t = time.process_time()  # CPU seconds: a loaded machine's other jobs do not count
    r = load_text(text, "deep.yaml")
    assert time.process_time() - t < 2
    assert _rules(r) == ["KV001"] and r.findings[0].loc.line == 3
    assert [d.kind for d in r.documents] == ["Service", "Pod"]


def test_alias_bomb(tmp_path):
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]")
    p = tmp_path / "bomb.yaml"
    p.write_text("\n".join(lines) + "\n---\nkind: Pod\n")
    t = time.process_time()  # CPU seconds: a loaded machine's other jobs do not count
    r = load_paths([str(p)])
    assert time.process_time() - t < 2
    assert _rules(r) == ["KV001"] and "alias bomb" in r.findings[0].message
    assert [d.kind for d in r.documents] == ["Pod"]


def test_small_alias_use_is_fine():
    r = load_text("x: &r {cpu: 1}\nlimits: *r\nrequests: *r\n", "a.yaml")
    d = r.documents[0].data
    assert r.findings == [] and d["limits"] == d["requests"] == {"cpu": 1}


def test_recursive_and_undefined_alias():
    r = load_text("a: &x [*x]\n---\nb: *nope\n---\nkind: Pod\n", "r.yaml")
    assert _rules(r) == ["KV001", "KV001"]
    assert "recursive alias" in r.findings[0].message and "undefined alias" in r.findings[1].message
    assert [d.kind for d in r.documents] == ["Pod"]


def test_50mb_file_is_skipped_in_bounded_time(tmp_path):
    p = tmp_path / "huge.yaml"
    chunk = b"key: value\n" * 100_000
    with open(p, "wb") as fh:
        for _ in range(46):
            fh.write(chunk)
    assert os.path.getsize(p) > 50_000_000
    (tmp_path / "ok.yaml").write_text("kind: Pod\n")
    t = time.process_time()  # CPU seconds: a loaded machine's other jobs do not count
    r = load_paths([str(tmp_path)])
    assert time.process_time() - t < 2
    assert _rules(r) == ["KV001"] and "--max-file-bytes" in r.findings[0].message + r.findings[0].fix
    assert r.findings[0].loc.file == str(p)
    assert [d.kind for d in r.documents] == ["Pod"] and r.files == 2


def test_control_character_is_a_finding_not_a_crash():
    r = load_text("kind: Pod\nname: a\x07b\n", "c.yaml")
    assert _rules(r) == ["KV001"] and r.findings[0].loc.line == 2


# ------------------------------------------------------------------------------------------------ templates


def test_helm_template_is_kv002_not_kv001():
    p = FIX / "substratusai__helm__charts__vllm__templates__deployment.yaml"
    text = p.read_text()
    r = load_paths([str(p)])
    assert _rules(r) == ["KV002"]
    f = r.findings[0]
    assert f.loc == Loc(str(p), *_pos(text, "{{"))
    assert "helm template" in f.message


def test_template_document_does_not_hide_the_others():
    text = 'kind: Deployment\nmetadata:\n  labels:\n    {{- include "x.labels" . | nindent 4 }}\n---\nkind: Service\n'
    r = load_text(text, "t.yaml")
    assert _rules(r) == ["KV002"] and r.findings[0].loc == Loc("t.yaml", 4, 5)
    assert [d.kind for d in r.documents] == ["Service"]


def test_parsable_helm_values_reference_is_kv002_and_still_loaded():
    text = 'kind: Deployment\nspec:\n  image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"\n'
    r = load_text(text, "t.yaml")
    assert _rules(r) == ["KV002"] and r.findings[0].loc == Loc("t.yaml", 3, 11)
    assert [d.kind for d in r.documents] == ["Deployment"]


def test_controller_placeholders_and_jinja_are_not_templates():
    # KServe substitutes {{.Name}} in ServingRuntime args itself; chat templates are Jinja
    for name in (
        "opendatahub-io__odh-model-controller__config__runtimes__vllm__vllm-cuda-template.yaml",
        "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__adk-vllm__deploy-llm__deploy-llm.yaml",
    ):
        r = load_paths([str(FIX / name)])
        assert r.findings == [], name
        assert r.documents
    assert template_actions("x: '{{- bos_token }}{{ message[\"content\"] }}'") == []
    assert [a[2] for a in template_actions("a: 1\n# {{ .Values.x }}\nb: {{ .Values.y }}\n")] == [
        "{{ .Values.y }}"
    ]


def test_a_thousand_documents_load_in_order():
    """Throughput is measured by bench/check_corpus.py (ratios in one run), not by a timed test."""
    text = (FIX / "kubernetes-sigs__lws__docs__examples__vllm__GPU__lws.yaml").read_text()
    big = "\n---\n".join([text] * 500)  # 1000 documents
    r = load_text(big, "big.yaml")
    assert len(r.documents) == 1000 and r.findings == []
    assert [d.index for d in r.documents][:4] == [0, 1, 2, 3]


def test_pure_python_loader_gives_the_same_result(monkeypatch):
    import yaml

    import kvlint.load as load_mod

    text = BLOCK + "---\nkind: Pod\nspec: [\n---\nlist: &a [1, 2]\nagain: *a\n"
    fast = load_text(text, "d.yaml")
    monkeypatch.setattr(load_mod, "_Loader", yaml.SafeLoader)
    slow = load_text(text, "d.yaml")
    assert [d.data for d in slow.documents] == [d.data for d in fast.documents]
    assert [d.loc for d in slow.documents] == [d.loc for d in fast.documents]
    args_fast = fast.documents[0].data["spec"]["template"]["spec"]["containers"][0]["args"]
    args_slow = slow.documents[0].data["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args_slow.locs == args_fast.locs
    assert [(f.rule, f.loc) for f in slow.findings] == [(f.rule, f.loc) for f in fast.findings] != []
    deep = load_text("a: " + "[" * 400 + "]" * 400, "x.yaml")
    assert _rules(deep) == ["KV001"]


def test_named_pipe_is_skipped_not_opened(tmp_path):
    """A FIFO (or device) would block forever or never end: KV001, and the run finishes."""
    import os

    fifo = tmp_path / "p.yaml"
    os.mkfifo(fifo)
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    res = load_paths([str(tmp_path)])
    assert [f.rule for f in res.findings] == ["KV001"]
    assert "not a regular file" in res.findings[0].message
    assert len(res.documents) == 1


def test_unreadable_directory_is_kv001_not_skipped(tmp_path, monkeypatch):
    """A directory the walk cannot list (EACCES) is reported; the readable files beside it are still read.
    Root reads any directory, so the permission error is raised by os.scandir for that one path."""
    good = tmp_path / "a.yaml"
    good.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "b.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
    real_scandir = os.scandir

    def scandir(path="."):
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    r = load_paths([str(tmp_path)])
    assert [d.name for d in r.documents] == ["a"]
    assert [(f.rule, f.loc) for f in r.findings] == [("KV001", Loc(str(locked), 1, 1))]
    assert "cannot read directory: Permission denied" in r.findings[0].message


def test_empty_stdin_is_reported():
    r = load_paths(["-"], stdin=io.BytesIO(b"  \n"))
    assert [(f.rule, f.loc) for f in r.findings] == [("KV001", Loc("-", 1, 1))]
    assert "standard input is empty" in r.findings[0].message and "pipefail" in r.findings[0].fix


def test_keys_of_different_yaml_types_are_not_duplicates():
    r = load_text("a:\n  1: x\n  true: y\n  null: z\n  k: 1\n  k: 2\n", "t.yaml")
    assert [(f.rule, f.loc) for f in r.findings] == [("KV004", Loc("t.yaml", 6, 3))]
