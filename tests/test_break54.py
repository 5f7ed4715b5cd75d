"""Hostile and odd input against what session 54 merged (pass break54): each attack that broke a promise of the
brief (bounded time, no traceback, the right position, no false finding), checked on the input itself."""

from __future__ import annotations

import time
from pathlib import Path

from test_hostile_shapes import LIMIT_S

from kvlint.load import load_paths, load_text
from kvlint.pipeline import Options, run_documents


def test_a_json_line_of_escaped_quotes_after_an_open_quote_is_read_in_linear_time(tmp_path: Path) -> None:
    """ux54's pass over a JSON manifest holding a DEL (kvlint/load.py ``_json_raw_escaped``) found each string with
    a pattern that needed the closing quote: after a quote left open, each ``\\"`` of the line started a new try
    that rescanned the rest of the line (quadratic; a 40 KB file took 20 s, an 8 MB one would take days). 100,000
    of them now take bounded CPU, and the DEL in the well-formed string before them is still read as JSON means
    it."""
    f = tmp_path / "quotes.json"
    f.write_text(
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},\n'
        ' "data": {"k": "x\x7fy", "b": x' + '\\"' * 100_000 + "\n}}\n",
        encoding="utf-8",
    )
    t = time.process_time()
    res = load_paths([str(f)])
    assert time.process_time() - t < LIMIT_S
    assert all("U+007F" not in x.message for x in res.findings), res.findings


_ENGINE_AND_EXPORTER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: svc}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]
        resources: {limits: {nvidia.com/gpu: 1}}
      - name: exporter
        image: ghcr.io/acme/vllm-metrics-exporter:1.2
        env:
        - {name: MODEL_ID, value: meta-llama/Llama-3.1-70B-Instruct}
        - {name: MAX_MODEL_LEN, value: "131072"}
%s"""


def test_a_sidecar_of_an_engine_named_image_given_model_id_is_not_read_as_an_engine() -> None:
    """sizing54 read an engine command from the env of a container of an unknown vLLM-named image
    (``vllm-metrics-exporter``) when ``MODEL_ID`` names a model; on an exporter sidecar that requests no GPU this
    made KV405 "vllm container 'exporter' requests no GPU resource" and a KV208 on its tag, findings about an
    engine that is not there. The env is read only in a container that requests a GPU; the same container with
    one is still read from its env."""

    def rules(extra: str) -> dict[str, list[str]]:
        res = run_documents(load_text(_ENGINE_AND_EXPORTER % extra, "d.yaml"), Options(allow_hub=False))
        got: dict[str, list[str]] = {}
        for d in res.diagnostics:
            if d.container == "exporter":
                got.setdefault(d.rule, []).append(d.message)
        return got

    plain = rules("")
    assert "KV405" not in plain and "KV208" not in plain, plain
    assert all("read it from the container env" not in m for m in plain.get("KV503", [])), plain
    with_gpu = rules("        resources: {limits: {nvidia.com/gpu: 1}}\n")
    assert any("MODEL_ID" in m for m in with_gpu.get("KV503", [])), with_gpu


_POD_WITH_RESOURCE = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.8.5
    args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]
    resources:
      limits:
        "%s": 1
"""


def _kv409(resource: str) -> list[tuple[int, int, str]]:
    res = run_documents(load_text(_POD_WITH_RESOURCE % resource, "p.yaml"), Options(allow_hub=False))
    return [(d.loc.line, d.loc.column, d.message) for d in res.diagnostics if d.rule == "KV409"]


def test_a_gpu_resource_name_with_an_invisible_or_look_alike_character_is_refused_and_the_character_named() -> (
    None
):
    """A MIG slice resource was taken by its prefix alone: ``nvidia.com/mig-1g.10gb`` followed by a no-break space
    got no KV409 though the API server refuses the name (not a qualified name; apimachinery ``IsQualifiedName``).
    And KV409 quoted ``'nvidia.com/gpu<U+200B>'`` or a Cyrillic ``і`` as they are, a name that reads as valid; it
    now names the character and where it is."""
    ((line, _, msg),) = _kv409("nvidia.com/mig-1g.10gb\u00a0")
    assert line == 11 and "U+00A0 NO-BREAK SPACE" in msg and "character 23" in msg, msg
    assert "did you mean nvidia.com/mig-1g.10gb?" in msg
    ((_, _, msg),) = _kv409("nvid\u0456a.com/gpu")
    assert "character 5 is U+0456 CYRILLIC" in msg and "did you mean nvidia.com/gpu?" in msg, msg
    ((_, _, msg),) = _kv409("nvidia.com/gpu\u200b")
    assert "U+200B ZERO WIDTH SPACE" in msg, msg
    assert _kv409("nvidia.com/mig-1g.10gb") == [] and _kv409("nvidia.com/gpu") == []


def test_the_early_closing_quote_hint_is_not_given_for_a_word_after_a_space(tmp_path: Path) -> None:
    """fresh54's KV001 hint ("a quote meant inside it closes the string early") fired on any plain word after a
    closing quote, spaces between allowed: a flow list missing a comma (``["--model", "m" --max-model-len]``) and
    a note without ``#`` after a quoted value were told to escape quotes. A quote meant inside a string is followed
    by what it quotes, so the hint now needs the word right after the quote; that case keeps it."""
    from kvlint.pipeline import run_check

    head = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n    image: x\n"
    )
    cases = {
        "comma.yaml": '    args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct" --max-model-len, "4096"]\n',
        "note.yaml": '    workingDir: "/srv" the work dir\n',
        "json.yaml": '    args: ["--model", "m", "--kv-transfer-config", "{"kv_connector":"x"}"]\n',
    }
    hinted = {}
    for name, line in cases.items():
        f = tmp_path / name
        f.write_text(head + line)
        (kv001,) = [d for d in run_check([str(f)], Options(allow_hub=False)).diagnostics if d.rule == "KV001"]
        hinted[name] = "closes the string early" in kv001.message
    assert hinted == {"comma.yaml": False, "note.yaml": False, "json.yaml": True}


def test_a_capacity_remedy_on_a_mig_slice_named_by_gfd_offers_no_tensor_parallelism() -> None:
    """A vLLM pod on ``nvidia.com/gpu`` whose node is labelled as a MIG slice by GPU feature discovery
    (``nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB-MIG-1g.5gb``, mig.strategy=single) had KV102's fix "--tensor-parallel-size
    4 (and 4 GPUs per pod ...) fits": CUDA enumerates one MIG device per process, and KV403 refuses that very
    layout on slices. Only a MIG resource under ``--gpu-memory`` was exempt; now every MIG placement is."""
    doc = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB-MIG-1g.5gb}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""
    res = run_documents(load_text(doc, "d.yaml"), Options(allow_hub=False))
    capacity = [d for d in res.diagnostics if d.rule in ("KV101", "KV102", "KV103", "KV104")]
    assert capacity, [d.rule for d in res.diagnostics]
    assert all("--tensor-parallel-size" not in (d.fix or "") for d in capacity), [d.fix for d in capacity]


def test_a_bad_gfd_memory_label_beside_a_mig_product_is_said_once() -> None:
    """``nvidia.com/gpu.memory: "99999999999999999999999"`` beside a GFD MIG product label: the note that the value
    is no GPU's memory was written twice in the placement (once by the product label's reading, once by the MIG
    slice's)."""
    doc = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-3g.40gb, nvidia.com/gpu.memory: "99999999999999999999999"}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.8.5
    args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]
    resources: {limits: {nvidia.com/gpu: 1}}
"""
    res = run_documents(load_text(doc, "p.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    how = cr.placement.how  # type: ignore[union-attr]
    assert how.count("is not a GPU's memory") == 1, how


def test_kv502_names_the_annotations_model_when_it_replaced_one_kvlint_reads() -> None:
    """``kvlint.io/model: org/typo`` on a pod whose ``--model Qwen/Qwen2.5-1.5B-Instruct`` kvlint reads: webhook54's
    KV005 warns that the annotation replaced it, but KV502 said "no config.json for model
    'Qwen/Qwen2.5-1.5B-Instruct'" at the ``--model`` argument, a model kvlint holds. It now names the annotation's
    model, at the annotation."""
    doc = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  annotations:
    kvlint.io/model: acme/no-such-model
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""
    res = run_documents(load_text(doc, "d.yaml"), Options(allow_hub=False))
    (kv502,) = [d for d in res.diagnostics if d.rule == "KV502"]
    assert "'acme/no-such-model' (the kvlint.io/model annotation)" in kv502.message, kv502.message
    assert "Qwen/Qwen2.5-1.5B-Instruct" not in kv502.message
    assert kv502.loc is not None and kv502.loc.line == 6


def test_a_json_syntax_error_after_an_escaped_del_is_at_its_own_column(tmp_path: Path) -> None:
    """ux54 writes a DEL, C1 control or U+2028 inside a JSON string as its 6-character ``\\u`` escape before the
    YAML reader sees it; a syntax error later on the same line was then reported 5 columns right per escape
    (2:47 for an error at 2:32; 2:68 here for 2:43). The loader's findings are moved back to the file's columns."""
    line1 = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},\n'
    plain = tmp_path / "plain.json"
    plain.write_text(line1 + ' "data": {"k": "abc", "j": "de", "b": "c" "d"}}\n', encoding="utf-8")
    raw = tmp_path / "raw.json"
    raw.write_text(
        line1 + ' "data": {"k": "\x7f\u2028\x85", "j": "\x9b\x7f", "b": "c" "d"}}\n', encoding="utf-8"
    )
    (want,) = load_paths([str(plain)]).findings
    (got,) = load_paths([str(raw)]).findings
    assert want.rule == got.rule == "KV001"
    where = (
        2,
        (' "data": {"k": "abc", "j": "de", "b": "c" "d"}}').index('"d"') + 1,
    )  # the token the parser stops at
    assert (got.loc.line, got.loc.column) == (want.loc.line, want.loc.column) == where


def test_the_early_quote_hint_in_a_json_manifest_with_a_del_names_the_quotes_own_column(
    tmp_path: Path,
) -> None:
    """The early-closing-quote hint's "right after the \\" at column N" was counted on the escaped text too (N 15
    too large after three escaped characters); it names the quote just left of the error, in the file's columns."""
    line = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "\x7f\x85\u2028"x"}}\n'
    f = tmp_path / "q.json"
    f.write_text(line, encoding="utf-8")
    (kv001,) = load_paths([str(f)]).findings
    quote = line.index('"x"') + 1  # 1-based column of the quote that closed the string early
    assert (kv001.loc.line, kv001.loc.column) == (1, quote + 1), kv001
    assert f'right after the " at column {quote}:' in kv001.message, kv001.message


def test_escaping_a_json_manifest_keeps_only_the_strings_it_rewrites() -> None:
    """The DEL/U+2028 escaping pass cut the text into two pieces per JSON string, rewritten or not: a file of a
    DEL and then a megabyte of ``""`` held a million small strings at once (about 50 times the file; an 8 MB one
    took 390 MB). Only the strings holding such a character are cut out now: the peak stays a few times the text."""
    import tracemalloc

    from kvlint.load import _json_raw_escaped

    text = (
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c\x7f"}}\n' + '""' * 500_000 + "\n"
    )
    tracemalloc.start()
    try:
        out, problem = _json_raw_escaped(text, "f.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert problem is None and "c\\u007f" in out and out.endswith('""\n')
    assert peak < 6 * len(text), (peak, len(text))
