"""The streaming check (kvlint/stream.py): ``--jobs 1`` and ``--jobs 2`` give byte-identical reports, equal to
the whole-run pipeline's (:func:`kvlint.pipeline.run_check`), on the shared corpus and the fixtures; a large
file read in ``---`` segments gives the report of the same file read whole."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from kvlint import stream
from kvlint.checkrun import run_paths
from kvlint.load import SUPPRESSION_MARKER
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.report import render

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"
FIXTURES = ROOT / "fixtures"
FORMATS = ("text", "json", "jsonl", "sarif", "github", "junit", "markdown")


def _reports(result: object) -> dict[str, str]:
    return {name: render(name, result) for name in FORMATS}


def _inputs() -> list[str]:
    paths = [str(FIXTURES / "examples"), str(FIXTURES / "crds")]
    if CORPUS.is_dir():
        paths.insert(0, str(CORPUS))
    return [p for p in paths if os.path.isdir(p)]


@pytest.mark.parametrize("path", _inputs())
def test_jobs_give_identical_reports(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)  # fork workers even for a small input
    options = Options(allow_hub=False)
    one = run_paths([path], options, no_config=True, jobs=1).result
    assert stream.LAST_PIDS == {os.getpid()}
    two = run_paths([path], options, no_config=True, jobs=2).result
    if one.files > 1:
        # the files were analysed in worker processes (how many of the two got work depends on the machine's
        # load: a small input can be taken whole by the first worker to start)
        assert 1 <= len(stream.LAST_PIDS) <= 2 and os.getpid() not in stream.LAST_PIDS
    whole = run_check([path], options)
    assert one.diagnostics, "an input with findings"
    reports = _reports(one)
    assert _reports(two) == reports
    assert _reports(whole) == reports


def test_segments_read_like_the_whole_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file above SEGMENT_BYTES is read in batches of segments, with ConfigMaps, runtimes and services
    from anywhere in it: same report as the file read whole, with one job and two."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus/manifests not present")
    texts = [p.read_text() for p in sorted(CORPUS.glob("*.yaml"))]
    # a ConfigMap whose kind is spelt with an escape (its segment holds no context word), read by the
    # Deployment after it
    base = "".join(
        ln + "\n"
        for ln in (FIXTURES / "pipeline" / "config-from-configmap.yaml").read_text().splitlines()
        if not ln.lstrip().startswith("#")
    )
    escaped = base.replace("kind: ConfigMap", 'kind: "Config\\x4dap"').replace("vllm-config", "cfg-escaped")
    assert not stream._has_context_word(escaped.split("\n---\n")[0])
    texts.insert(len(texts) // 2, escaped.replace("name: llama", "name: llama-escaped"))
    big = tmp_path / "all.yaml"
    big.write_text("".join("---\n" + t.strip("\n-") + "\n" for t in texts if "kvlint:" not in t))
    options = Options(allow_hub=False, max_file_bytes=2**26)
    whole = run_check([str(big)], options)
    assert any(d.rule == "KV201" and "llama-escaped" in d.object for d in whole.diagnostics)
    monkeypatch.setattr(stream, "SEGMENT_BYTES", 2**16)
    monkeypatch.setattr(stream, "BATCH_BYTES", 2**15)
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    for jobs in (1, 2):
        part = run_paths([str(big)], options, no_config=True, jobs=jobs).result
        assert _reports(part) == _reports(whole)


def test_repeated_context_and_files_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus twice over (every runtime, preset and ConfigMap repeated) with no file kept between the
    context pass and its turn (HELD_BYTES 0): each service is joined again in its turn, the repeated
    runtimes are held once, and the report is still that of the whole-input run."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus/manifests not present")
    for copy in ("a", "b"):
        (tmp_path / copy).mkdir()
        for p in sorted(CORPUS.glob("*.yaml")):
            (tmp_path / copy / p.name).write_bytes(p.read_bytes())
    options = Options(allow_hub=False)
    whole = run_check([str(tmp_path)], options)
    monkeypatch.setattr(stream, "HELD_BYTES", 0)
    part = run_paths([str(tmp_path)], options, no_config=True, jobs=1).result
    assert any(d.rule == "KV502" for d in whole.diagnostics), "runtimes linted on their own among the inputs"
    assert _reports(part) == _reports(whole)


# --------------------------------------------------------------------------------------------------
# runs with more than one job: a small file holding a context word is loaded in the context pass only in
# the segments that may hold a context document (stream.may_hold_context); its turn loads the rest

_CONTEXT_KINDS = {"ConfigMap", "ServingRuntime", "ClusterServingRuntime", "InferenceService"}
_CONTEXT_KINDS |= {"LLMInferenceService", "LLMInferenceServiceConfig"}

#: Segments the probe must not judge wrongly: each is (text, whether the probe may say "no context").
_TRICKY = [
    ("kind: Deployment\nmetadata:\n  name: a  # mounts the ConfigMap b\n", True),
    ("apiVersion: v1\nkind: Secret\nnote: ConfigMap\n", True),
    ("---\n# only a comment about a ConfigMap\n", True),
    ("kind: Deployment\n  # a ConfigMap note\nmetadata: {name: a}\n", True),
    ("---\n  kind: ConfigMap\n  metadata: {name: indented-root}\n", False),
    ("# a comment\n  kind: ConfigMap\n  metadata: {name: indented-root}\n", False),
    ('kind: ConfigMap\nmetadata: {name: q}\ndata:\n  x: "a\nkind: Deployment\ny: z"\n', False),
    ("kind:\n  ConfigMap\nmetadata: {name: next-line}\n", False),
    ("kind: Deployment\n  ConfigMap\nmetadata: {name: folded}\n", False),
    ("kind: Deployment\nkind: ConfigMap\nmetadata: {name: twice}\n", False),
    ("kind: ConfigMap # the context\nmetadata: {name: commented}\n", False),
    ("kind:\tConfigMap\nmetadata: {name: tab}\n", False),
    ('"kind": ConfigMap\nmetadata: {name: quoted-key}\n', False),
    ("kind: 'ConfigMap'\nmetadata: {name: quoted-value}\n", False),
    ("? kind\n: ConfigMap\nmetadata: {name: explicit}\n", False),
    ("base: &b {kind: ConfigMap}\n<<: *b\nmetadata: {name: merged}\n", False),
    ("{kind: ConfigMap, metadata: {name: flow}}\n", False),
    ("--- !!map\nkind: ConfigMap\nmetadata: {name: tagged}\n", False),
    ("--- {kind: ConfigMap, metadata: {name: on-marker}}\n", False),
    ("\ufeffkind: ConfigMap\nmetadata: {name: bom}\n", False),
    ("kind: List\nitems:\n- kind: ConfigMap\n  metadata: {name: item}\n", False),
    ("kind: ConfigMapList\nitems:\n- kind: ConfigMap\n  metadata: {name: item}\n", False),
    ("kind: Foo#List\nitems:\n- kind: ConfigMap\n  metadata: {name: hash}\n", False),
    ("{{- if .Values.on }}\nkind: ConfigMap\nmetadata: {name: tpl}\n{{- end }}\n", False),
    ("kind: {{ .Values.kind }}\nmetadata: {name: ConfigMap}\n", False),
    ("data: |\n  text\nkind: ConfigMap\nmetadata: {name: after-block}\n", False),
    ("- kind: ConfigMap\n  metadata: {name: seq-root}\n", False),
    ("kind: ServingRuntime\nmetadata: {name: rt}\n", False),
    ("kind: LLMInferenceServiceConfig\nmetadata: {name: preset}\n", False),
    # a double-quoted escape spells the kind without its word (the file holds the word elsewhere)
    ('kind: "Config\\x4dap"\nmetadata: {name: escaped}\n', False),
    ('kind: "\\u0043onfigMap"\nmetadata: {name: escaped-u}\n', False),
    ('kind: "Config\\\n  Map"\nmetadata: {name: escaped-break}\n', False),
    ('kind: "ServingRun\\x74ime"\nmetadata: {name: escaped-rt}\n', False),
    ('kind: List\nitems:\n- {kind: "Config\\x4dap", metadata: {name: escaped-item}}\n', False),
    ('kind: Deployment\nmetadata: {name: a}\ncommand: ["sh", "-c", "echo \\"$A\\""]\n', True),
]


def _context_kinds_loaded(seg: str) -> set[str]:
    from kvlint.load import load_text

    return {d.kind for d in load_text(seg, "x.yaml").documents} & _CONTEXT_KINDS


def _segments_of_texts() -> list[str]:
    from kvlint.load import _segments

    out = [t for t, _ in _TRICKY]
    roots = [FIXTURES, CORPUS] if CORPUS.is_dir() else [FIXTURES]
    for root in roots:
        for p in sorted(root.rglob("*.y*ml")):
            try:
                text = p.read_bytes().decode("utf-8-sig")
            except UnicodeDecodeError:
                continue
            if stream._whole_only(text):
                continue
            out += [seg for _, seg in _segments(text)]
    return out


def test_may_hold_context_never_misses_a_context_document() -> None:
    """The probe says "no context document" only where the loader finds none (every segment of the fixtures
    and of the shared corpus, and segments made to mislead a line-based reading), and it does say so for
    segments that hold the words in other kinds' documents (else it would save nothing)."""
    said_no = 0
    for seg in _segments_of_texts():
        if not stream.may_hold_context(seg):
            said_no += 1
            assert not _context_kinds_loaded(seg), seg
    assert said_no > 100
    for text, may_say_no in _TRICKY:
        if not may_say_no:
            assert stream.may_hold_context(text), text
        else:
            assert not stream.may_hold_context(text), text


def _may_hold_reference(seg: str) -> bool:
    """stream.may_hold_context as first written (the column-0 lines found with a multi-line ``^`` pattern), the
    definition the probe must answer as."""
    if not stream._has_context_word(seg) and "\\" not in seg:
        return False
    pos = 0
    if seg.startswith("---"):
        eol = seg.find("\n")
        rest = seg[3:] if eol < 0 else seg[3:eol]
        if rest.strip() and not rest.lstrip().startswith("#"):
            return True
        if eol < 0:
            return False
        pos = eol + 1
    first = stream._CONTENT_LINE.search(seg, pos)
    if first is None:
        return False
    if first.end() - first.start() != 1:
        return True
    kind: str | None = None
    kinds = 0
    for m in re.compile(r"^[^ \t\n#].*", re.M).finditer(seg, pos):
        line = m.group()
        if not stream._PLAIN_KEY.match(line):
            return True
        if line.startswith("kind:"):
            kinds += 1
            k = stream._PLAIN_KIND.match(line)
            if k is None:
                return True
            after = stream._CONTENT_LINE.search(seg, m.end())
            if after is not None and after.end() - after.start() != 1:
                return True
            kind = k.group(1)
    if kinds == 0:
        return False
    if kinds > 1 or kind is None:
        return True
    return stream._has_context_word(kind) or kind.endswith("List")


def test_may_hold_context_answers_as_its_definition() -> None:
    """The probe, finding the column-0 lines after their line breaks, answers as reading them with the multi-line
    pattern: on every segment of the fixtures and corpus, the misleading ones, and 20,000 segments made of lines
    that start, end or bend a reading."""
    import random

    segs = _segments_of_texts()
    pieces = [
        "kind: ConfigMap",
        "kind: Deployment",
        "kind:\tServingRuntime # c",
        "kind: FooConfigMapList",
        "kind: Config-Map",
        "kind: List",
        "kind: InferenceServiceX",
        "kind:",
        "kind: {{ .Values.k }}",
        "  kind: ConfigMap",
        "metadata:",
        "  name: a",
        "# ConfigMap",
        "",
        "  ",
        "---",
        "--- # c",
        "--- !!map",
        "{{- if .Values.on }}",
        "- kind: ConfigMap",
        '"kind": ConfigMap',
        'x: "a\\x4d"',
        "args: [a \\",
        "data: |",
        "  ConfigMap text",
        "\tkind: ConfigMap",
        "kind: ServingRuntime",
        "note: InferenceService",
    ]
    rng = random.Random(19)
    for _ in range(20_000):
        lines = [rng.choice(pieces) for _ in range(rng.randint(1, 8))]
        seg = "\n".join(lines) + rng.choice(["", "\n"])
        segs.append(seg)
        segs.append("---\n" + seg)
    for seg in segs:
        assert stream.may_hold_context(seg) == _may_hold_reference(seg), seg


def test_file_filter_never_misses_a_context_document() -> None:
    """The context pass skips a file only where the loader finds no context document in it: every fixture and
    corpus file, and the misleading segments above as UTF-8, UTF-8 with a BOM, UTF-16 (LE and BE, with their
    byte-order marks), and as JSON-style double-quoted escapes of every letter of the kind."""
    from kvlint.load import load_text

    def kinds(data: bytes) -> set[str]:
        return {d.kind for d in load_text(data, "x.yaml").documents} & _CONTEXT_KINDS

    files: list[bytes] = []
    roots = [FIXTURES, CORPUS] if CORPUS.is_dir() else [FIXTURES]
    for root in roots:
        files += [p.read_bytes() for p in sorted(root.rglob("*.y*ml"))]
    for text, _ in _TRICKY:
        files += [text.encode(), "\ufeff".encode() + text.encode(), text.encode("utf-16")]
        files.append(("\ufeff" + text).encode("utf-16-be"))
    for kind in sorted(_CONTEXT_KINDS):
        spelt = "".join(f"\\u{ord(c):04x}" for c in kind)
        files.append(f'{{"kind": "{spelt}", "metadata": {{"name": "a"}}}}\n'.encode())
    skipped = 0
    for data in files:
        if not stream._file_may_hold_context(data):
            skipped += 1
            assert not kinds(data), data[:200]
    assert skipped > 50


#: What the fast scans stand for, written as regexes (the definitions they were written from): the context
#: words, and what makes a file be read whole (line breaks other than LF, ``%``/``...`` at a line start, an
#: inline suppression).
_CONTEXT_WORDS_TEXT = re.compile(
    r"ConfigMap|ServingRuntime|InferenceService|ComputeClass|NodePool|HardwareProfile|NIMCache|ResourceClaim"
    r"|BaseModel|OpenModel"
)
_CONTEXT_WORDS = re.compile(_CONTEXT_WORDS_TEXT.pattern.encode())
_WHOLE_ONLY = re.compile(
    r"[\r\x85\u2028\u2029\x0b\x0c\x1c\x1d\x1e]|^%|^\.\.\.|" + re.escape(SUPPRESSION_MARKER), re.M
)


def test_fast_text_checks_equal_the_regexes() -> None:
    """``_whole_only`` and ``_has_context_word`` (``in`` scans) answer as the regexes they stand for."""
    texts = _segments_of_texts() + [
        "%YAML 1.1\n---\na: 1\n",
        "a: 1\n...\n",
        "a: 1\n%TAG x\n",
        "a: 1 # kvlint: ignore KV101\n",
        "a: 1\r\nb: 2\r\n",
        "a\x85b",
        "a\u2028b",
        "a\x0cb",
        "...a",
        "a ... b % c",
        "InferenceServic",
        "LLMInferenceServiceConfig",
        "kind: ClusterBaseModel",
        "BaseMode",
        "kind: OpenModel",
        "OpenMode",
    ]
    for t in texts:
        assert stream._whole_only(t) == bool(_WHOLE_ONLY.search(t)), t
        assert stream._has_context_word(t) == bool(_CONTEXT_WORDS_TEXT.search(t)), t
        b = t.encode("utf-8")
        assert stream._has_context_word(b) == bool(_CONTEXT_WORDS.search(b)), t


def _mixed_inputs(root: Path) -> None:
    """Files mixing context and workload documents, in the shapes the segment split must read as whole."""
    base = (FIXTURES / "pipeline" / "config-from-configmap.yaml").read_text()
    cm, deploy = base.split("\n---\n")
    deploy = "# reads the ConfigMap above\n" + deploy
    files = {
        "mixed.yaml": base.replace("\n---\n", "\n---\n# reads the ConfigMap above\n"),
        "deploy-first.yaml": deploy + "\n---\n" + cm + "\n",
        "template.yaml": cm + "\n---\n" + deploy.replace("name: llama\n", "name: {{ .Release.Name }}\n", 1),
        "suppressed.yaml": base.replace(
            "max-model-len: 200000", "max-model-len: 200000  # kvlint: ignore KV201"
        ),
        "broken-workload.yaml": cm
        + "\n---\nkind: Deployment\nmetadata: [unclosed, ConfigMap\n---\n"
        + deploy,
        "broken-context.yaml": "kind: ConfigMap\ndata: {a: [\n---\n" + base,
        "duplicate-key.yaml": base.replace(
            "  namespace: serving\n", "  namespace: serving\n  namespace: serving\n", 1
        ),
        "list.yaml": "kind: List\nitems:\n- "
        + cm.split("apiVersion: v1\n", 1)[1].replace("\n", "\n  ").rstrip()
        + "\n  apiVersion: v1\n---\n"
        + deploy,
        "indented.yaml": "---\n"
        + "".join("  " + ln + "\n" for ln in cm.splitlines() if not ln.startswith("#"))
        + "---\n"
        + deploy,
        "empty-docs.yaml": "---\n---\n# a ConfigMap comment\n---\n" + base + "\n---\n",
        # the ConfigMap's kind spelt with an escape: only the Deployment's comment holds the word
        "escaped.yaml": deploy
        + "\n---\n"
        + "".join(ln + "\n" for ln in cm.splitlines() if not ln.startswith("#")).replace(
            "kind: ConfigMap", 'kind: "Config\\x4dap"'
        ),
    }
    # no context word anywhere in the file: the kind spelt with an escape, or the text in UTF-16
    files["escaped-only.yaml"] = files["escaped.yaml"].replace("# reads the ConfigMap above\n", "")
    assert not stream._has_context_word(files["escaped-only.yaml"])
    files["crlf.yaml"] = base.replace("\n", "\r\n")
    files["bom.yaml"] = "\ufeff" + base
    encodings = {"utf16.yaml": "utf-16", "utf16be.yaml": "utf-16-be"}
    for name, text in files.items():
        # names of their own: each file's Deployment reads its own ConfigMap
        stem = name.split(".")[0]
        text = text.replace("vllm-config", f"cfg-{stem}").replace("name: llama", f"name: llama-{stem}")
        (root / name).write_bytes(text.encode())
    for name, encoding in encodings.items():
        stem = name.split(".")[0]
        text = base.replace("vllm-config", f"cfg-{stem}").replace("name: llama", f"name: llama-{stem}")
        bom = "\ufeff" if encoding.endswith("-be") else ""
        (root / name).write_bytes((bom + text).encode(encoding))
    kserve = FIXTURES / "kserve" / "huggingface-isvc.yaml"
    if kserve.is_file():
        (root / "isvc.yaml").write_text(kserve.read_text())
    if CORPUS.is_dir():
        for p in sorted(CORPUS.glob("*.yaml")):
            t = p.read_text(errors="replace")
            if any(w in t for w in ("ServingRuntime", "InferenceService")) and "kvlint:" not in t:
                # a runtime or service file with a workload document before it
                (root / ("with-deploy-" + p.name)).write_text(deploy + "\n---\n" + t)


def test_split_files_read_like_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files mixing ConfigMaps, runtimes and services with workloads (templates, a suppression comment, CRLF, a
    BOM, a broken document, a duplicate key, a List, an indented root, empty documents): the two-job run (the
    context pass loading only the segments that may hold context) gives the whole-input run's reports, in
    worker processes, in this process (a small input), and with nothing held between the passes."""
    _mixed_inputs(tmp_path)
    options = Options(allow_hub=False)
    whole = _reports(run_check([str(tmp_path)], options))
    calls: list[str] = []
    real = stream._load_split

    def counted(path: str, held: object, limit: int) -> object:
        calls.append(path)
        return real(path, held, limit)  # type: ignore[arg-type]

    monkeypatch.setattr(stream, "_load_split", counted)
    followed = {
        os.path.basename(d.loc.file)
        for d in run_check([str(tmp_path)], options).diagnostics
        if d.rule == "KV201"
    }
    assert {
        "mixed.yaml",
        "deploy-first.yaml",
        "crlf.yaml",
        "bom.yaml",
        "list.yaml",
        "indented.yaml",
        "escaped.yaml",
        "escaped-only.yaml",
        "utf16.yaml",
        "utf16be.yaml",
    } <= followed
    assert _reports(run_paths([str(tmp_path)], options, no_config=True, jobs=1).result) == whole
    assert calls == []
    # two jobs asked, a small input: analysed here, the files split by the context pass
    assert _reports(run_paths([str(tmp_path)], options, no_config=True, jobs=2).result) == whole
    split = {os.path.basename(p) for p in calls}
    assert {"mixed.yaml", "deploy-first.yaml", "template.yaml", "bom.yaml", "list.yaml"} <= split
    assert not split & {"crlf.yaml", "suppressed.yaml"}  # read whole (see stream._whole_only)
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    assert _reports(run_paths([str(tmp_path)], options, no_config=True, jobs=2).result) == whole
    assert os.getpid() not in stream.LAST_PIDS
    monkeypatch.setattr(stream, "HELD_BYTES", 0)
    assert _reports(run_paths([str(tmp_path)], options, no_config=True, jobs=2).result) == whole


def test_split_file_changed_between_the_passes(tmp_path: Path) -> None:
    """A segment the context pass loaded is taken in the file's turn only when the file still holds the same
    text there; else the segment is loaded again (and a file that can no longer be split is read whole)."""
    from kvlint.load import _load_file

    base = (FIXTURES / "pipeline" / "config-from-configmap.yaml").read_text()
    p = tmp_path / "a.yaml"
    p.write_text(base)
    held = stream._context_segments(str(p), base)
    assert list(held) == [0]
    p.write_text(base.replace("max-model-len: 200000", "max-model-len: 100000"))
    got = stream._load_split(str(p), held, 2**20)
    fresh = _load_file(str(p), 2**20)
    assert [d.data for d in got.documents] == [d.data for d in fresh.documents]
    assert got.documents[0] is not held[0][1].documents[0]
    p.write_text(base.replace("\n", "\r\n"))
    got = stream._load_split(str(p), held, 2**20)
    assert [d.data for d in got.documents] == [d.data for d in _load_file(str(p), 2**20).documents]


def test_context_pass_leaves_no_garbage_cycles(tmp_path: Path) -> None:
    """stream_check freezes what the context pass built without a collection first (the collector is paused
    over the pass and the services' join): that is only free of cost if they make no reference cycles, broken
    documents included (a YAML error kept with its traceback tied the loading frames and their texts in one;
    the workload finder's recursive closure referred to itself through its cell)."""
    import gc

    from kvlint.workloads.find import join_services

    _mixed_inputs(tmp_path)
    (tmp_path / "broken.yaml").write_text(
        "kind: ConfigMap\nmetadata: {name: x\n---\nkind: Deployment\n: : :\n"
    )
    gc.collect()
    for split in (False, True):
        gc.disable()
        try:
            plan = stream._plan([str(tmp_path)], None, Options(allow_hub=False), split=split)
            assert plan.context.cms, "the pass read ConfigMaps"
            # the services joined before the freeze too (stream_check), their pods found in the runtimes
            assert plan.context.services, "the pass read services"
            joined = join_services(plan.context.providers, plan.context.services)
            # (the runtimes whose pods services take are the corpus's: see _mixed_inputs)
            assert joined.consumed or not CORPUS.is_dir(), "a service took a runtime's pod"
            assert gc.collect() == 0
        finally:
            gc.enable()


def test_kustomization_files_met_in_a_walk_say_they_were_not_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kustomization file linted as a plain file (a directory walk without kustomize or kubectl on PATH) gets
    KV002 naming its directory, once per file, alike with run_check, one job and two; naming the directory builds
    it instead (no KV002 there)."""
    import shutil

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed")
    tree = FIXTURES / "kustomize"
    options = Options(allow_hub=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # the walk cannot build them
    whole = run_check([str(tree)], options)
    kv002 = sorted(d.loc.file for d in whole.diagnostics if d.rule == "KV002" and d.loc is not None)
    assert kv002 == [
        str(tree / "aibrix-vllm-dev" / "linux" / "kustomization.yaml"),  # kind: Kustomization, no apiVersion
        str(tree / "aibrix-vllm-dev" / "macos" / "kustomization.yaml"),
        str(tree / "base" / "kustomization.yaml"),
        str(tree / "overlay" / "kustomization.yaml"),
    ]
    overlay = [d for d in whole.diagnostics if d.rule == "KV002" and "overlay" in d.loc.file]  # type: ignore[union-attr]
    assert f"kvlint check {tree / 'overlay'}" in overlay[0].fix
    for jobs in (1, 2):
        assert _reports(run_paths([str(tree)], options, no_config=True, jobs=jobs).result) == _reports(whole)
    monkeypatch.setenv("PATH", os.path.dirname(kubectl))
    built = run_check([str(tree / "overlay")], options)
    assert not [d for d in built.diagnostics if d.rule == "KV002"] and built.containers


def test_kustomizations_met_in_a_walk_are_built_alike_with_one_job_and_two() -> None:
    """With kubectl on PATH the walk builds the overlays (kvlint.render.plan_walk): the only KV002 is the info
    naming the bases built through them (at the first), alike with run_check, one job and two."""
    import shutil

    if shutil.which("kubectl") is None:
        pytest.skip("kubectl not installed")
    tree = FIXTURES / "kustomize"
    options = Options(allow_hub=False)
    whole = run_check([str(tree)], options)
    kv002 = sorted(
        (d.loc.file, d.severity) for d in whole.diagnostics if d.rule == "KV002" and d.loc is not None
    )
    assert kv002 == [(str(tree / "aibrix-vllm-dev" / "macos" / "kustomization.yaml"), "info")]
    (note,) = [d for d in whole.diagnostics if d.rule == "KV002"]
    assert (
        "aibrix-vllm-dev/macos is a base of aibrix-vllm-dev/linux" in note.message
    )  # and base, of the others
    assert "; base is a base of " in note.message
    for jobs in (1, 2):
        assert _reports(run_paths([str(tree)], options, no_config=True, jobs=jobs).result) == _reports(whole)


@pytest.mark.parametrize("chunk", [7, 64, 2**20])
def test_segments_of_a_file_equal_the_loaders_segments(tmp_path, monkeypatch, chunk) -> None:
    """The chunked reader (which keeps an offset into its buffer instead of re-slicing it per document) gives
    the segments and line offsets of the loader's whole-text split, whatever the chunk size: markers that
    straddle a chunk boundary, many tiny documents, the fixtures and corpus files."""
    from kvlint.load import _segments

    monkeypatch.setattr(stream, "_CHUNK", chunk)
    texts = [t for t, _ in _TRICKY]
    texts.append("".join(f"---\na: {i}\n" for i in range(500)))
    texts.append("a: 1\n" + "---\n" * 50 + "--- x\n----\n ---\n---")
    roots = [FIXTURES, CORPUS] if CORPUS.is_dir() else [FIXTURES]
    files = [p for root in roots for p in sorted(root.rglob("*.y*ml"))][:80]
    paths = []
    for i, text in enumerate(texts):
        p = tmp_path / f"t{i}.yaml"
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    compared = 0
    for p in paths + files:
        text = p.read_bytes().decode("utf-8-sig", errors="replace")
        if stream._whole_only(text) or "\x00" in text:
            continue
        assert list(stream._segments_of(str(p))) == list(_segments(text)), p
        compared += 1
    assert compared > 50


def test_tasks_cover_every_unit_once_in_order_and_balance_by_bytes() -> None:
    """The ranges sent to workers (stream._tasks): consecutive, covering every unit once; a unit of unknown
    size alone; no range above _MAX_CHUNK units; cut by bytes so a few large units do not share a range."""
    U = stream._Unit
    sizes: list[int | None] = [100] * 500 + [10**6] * 4 + [None] + [1] * 200 + [None, None] + [50] * 3
    units = [U(path=f"f{i}", size=s) for i, s in enumerate(sizes)]
    units[3] = None  # taken already (the list the workers read from releases units as they go)
    tasks = stream._tasks(units, 2)
    flat = [i for a, b in tasks for i in range(a, b)]
    assert flat == list(range(len(units)))
    assert all(0 < b - a <= stream._MAX_CHUNK for a, b in tasks)
    for i, s in enumerate(sizes):
        if s is None:
            assert (i, i + 1) in tasks
    big = [i for i, s in enumerate(sizes) if s == 10**6]
    assert len({next(t for t in tasks if t[0] <= i < t[1]) for i in big}) == len(big)
    # small inputs still give several ranges a job
    assert len(stream._tasks([U(path="x", size=10) for _ in range(64)], 2)) >= 16
    assert stream._tasks([], 2) == []


def test_tasks_shrink_towards_the_end() -> None:
    """The ranges get smaller as the run goes (guided self-scheduling, stream._tasks): the first ones are large
    (few messages), the last ones small, so the workers end close together. With one target for the whole run
    every range held about 1/32 of the bytes, the last ones too."""
    U = stream._Unit
    units = [U(path=f"f{i}", size=100) for i in range(1000)]
    tasks = stream._tasks(units, 2)
    total = 100 * 1000
    held = [100 * (b - a) for a, b in tasks]
    assert [i for a, b in tasks for i in range(a, b)] == list(range(1000))
    assert held == sorted(held, reverse=True)
    # each of the last two ranges (one a worker) holds at most half of what one target for the run gave
    assert all(h <= total // (2 * stream._TASKS_PER_JOB) // 2 for h in held[-2:])
    # and not so many more messages: at most twice the ranges one target gave
    assert len(tasks) <= 2 * 2 * stream._TASKS_PER_JOB


def test_a_range_merges_its_units_as_the_run_takes_them(tmp_path: Path) -> None:
    """A worker sends one result a range (stream._analyse_range merges its units): counts summed, lists in unit
    order, a sizing outcome keeping the place of its first unit, later keys winning; the run takes the merged
    result as it took each unit's in turn."""
    for i in range(5):
        (tmp_path / f"m{i}.yaml").write_text((FIXTURES / "examples" / "chat-8b-l4.yaml").read_text())
    (tmp_path / "bad.yaml").write_text("kind: [unclosed\n")
    options = Options(allow_hub=False)
    plan = stream._plan([str(tmp_path)], None, options)
    stream._RUN.update(
        options=options, context=plan.context, keep_json=True, keep_records=True, keep_unsized=True
    )
    try:
        stream._RUN["units"] = list(plan.units)
        merged = stream._analyse_range((0, len(plan.units)))
        stream._RUN["units"] = list(stream._plan([str(tmp_path)], None, options).units)
        parts = [stream._analyse_index(i) for i in range(len(plan.units))]
    finally:
        stream._RUN.clear()
    assert merged.files == sum(p.files for p in parts) == 6
    assert merged.containers == sum(p.containers for p in parts) > 0
    assert merged.diags == [d for p in parts for d in p.diags] and merged.diags
    assert merged.load_diags == [d for p in parts for d in p.load_diags] and merged.load_diags
    assert [r.container_name for r in merged.records] == [r.container_name for p in parts for r in p.records]
    counts: dict[str, int] = {}
    for p in parts:
        for why, n in p.sizing.items():
            counts[why] = counts.get(why, 0) + n
    assert list(merged.sizing.items()) == list(counts.items())
    assert merged.read_paths == set().union(*(p.read_paths for p in parts))
    assert merged.serving_paths == set().union(*(p.serving_paths for p in parts))


def test_consumed_without_joining_equals_the_join(tmp_path: Path) -> None:
    """The context pass records what each service consumes without joining its pods (_Joined.add_consumers,
    kvlint.workloads.llmisvc.llmisvc_consumed): the same places as the full join (_Joined._join) for every
    service of the fixtures and the shared corpus, and for services whose baseRefs change the presets taken
    (a baseRef adding ``worker`` and ``prefill`` turns ``config-llm-template`` into the decode/prefill
    worker presets)."""
    from kvlint.load import load_paths
    from kvlint.workloads.find import PROVIDER_KINDS, _Joined, doc_key

    (tmp_path / "svc.yaml").write_text(
        "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata: {name: a, namespace: ns}\n"
        "spec:\n  model: {uri: 'hf://Qwen/Qwen2-7B'}\n  baseRefs: [{name: shape}, {name: missing}]\n"
        "---\napiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceServiceConfig\n"
        "metadata: {name: shape, namespace: ns}\n"
        "spec:\n  worker: {containers: [{name: main}]}\n  parallelism: {data: 2, dataLocal: 1}\n"
        "  prefill: {worker: {containers: [{name: main}]}, parallelism: {pipeline: 2}}\n"
        + "".join(
            f"---\napiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceServiceConfig\n"
            f"metadata: {{name: kserve-{n}}}\nspec: {{template: {{containers: [{{name: main}}]}}}}\n"
            for n in (
                "config-llm-template",
                "config-llm-decode-worker-data-parallel",
                "config-llm-prefill-worker-pipeline-parallel",
            )
        )
    )
    paths = [str(FIXTURES), str(tmp_path)] + ([str(CORPUS)] if CORPUS.is_dir() else [])
    docs = [d for d in load_paths(paths).documents if isinstance(d.data, dict)]
    joined = _Joined([d for d in docs if d.kind in PROVIDER_KINDS])
    services = [d for d in docs if d.kind in ("InferenceService", "LLMInferenceService")]
    assert len(services) >= 5
    used = [joined._used(d) for d in services]
    assert used == [joined._join(d)[1] for d in services]
    mine = next(u for d, u in zip(services, used, strict=True) if d.path.startswith(str(tmp_path)))
    # the shape's baseRef and the two worker presets it selects, not the plain template preset
    names = {doc_key(d): d.name for d in docs}
    assert sorted(names[k] for k in mine) == [
        "kserve-config-llm-decode-worker-data-parallel",
        "kserve-config-llm-prefill-worker-pipeline-parallel",
        "shape",
    ]
    joined.add_consumers(services)
    assert joined.consumed == set().union(*used)


def test_an_error_in_a_worker_reaches_the_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception raised while a worker process analyses a unit is raised by the run (stream._pool: the
    pool whose worker handler no longer waits on the results pipe still returns results and errors)."""
    for i in range(6):
        (tmp_path / f"m{i}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n")
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    parent = os.getpid()
    real = stream._analyse_unit

    def failing(unit: object) -> object:
        if os.getpid() != parent and str(getattr(unit, "path", "")).endswith("m4.yaml"):
            raise LookupError("failed in a worker")
        return real(unit)  # type: ignore[arg-type]

    monkeypatch.setattr(stream, "_analyse_unit", failing)
    with pytest.raises(LookupError, match="failed in a worker"):
        run_paths([str(tmp_path)], Options(allow_hub=False), no_config=True, jobs=2)
    assert _reports(run_paths([str(tmp_path)], Options(allow_hub=False), no_config=True, jobs=1).result)


def test_warm_up_loads_what_the_units_load() -> None:
    """stream._warm_up (run before the workers fork) imports every kvlint module the analysis of units
    imports on first use, so that no worker imports them again: in a fresh interpreter, after the context
    pass and the warm-up, analysing the examples and CRD fixtures imports no further kvlint module."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from kvlint import stream\n"
        "from kvlint.options import Options\n"
        "from kvlint.workloads.find import join_services\n"
        "o = Options(allow_hub=False)\n"
        "plan = stream._plan(sys.argv[1:], None, o, split=True)\n"
        "ctx = plan.context\n"
        "ctx.joined = join_services(ctx.providers, ctx.services)\n"
        "stream._RUN.update(options=o, context=ctx, keep_json=True, keep_records=True, keep_unsized=True,\n"
        "                   units=plan.units)\n"
        "stream._warm_up()\n"
        "before = set(sys.modules)\n"
        "for i in range(len(plan.units)):\n"
        "    stream._analyse_index(i)\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith('kvlint')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", script, *_inputs()], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "[]", (
        f"imported after the warm-up (add them to stream._warm_up): {out.stdout}"
    )


def test_files_without_context_are_loaded_from_the_bytes_the_context_pass_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file with no context document is read once: the context pass keeps its bytes for its turn (within
    HELD_FILE_BYTES), which loads them without opening the file again; the report is that of the files read
    in their turn (HELD_FILE_BYTES 0) and of the whole-input run, with one job and two. An unreadable file, a
    file holding a context word and a file over the limit keep no bytes."""
    src = FIXTURES / "examples"
    for p in sorted(src.glob("*.yaml")):
        (tmp_path / p.name).write_bytes(p.read_bytes())
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")
    (tmp_path / "big.yaml").write_text("a: " + "x" * 2500 + "\n")
    (tmp_path / "locked.yaml").write_text("a: 1\n")
    os.chmod(tmp_path / "locked.yaml", 0)
    options = Options(allow_hub=False, max_file_bytes=2000)
    plan = stream._plan([str(tmp_path)], None, options)
    held = {os.path.basename(u.path): u.data for u in plan.units if u.path is not None and u.data is not None}
    readable = os.access(tmp_path / "locked.yaml", os.R_OK)  # (root reads it anyway)
    small = [
        p.name
        for p in sorted(tmp_path.glob("*.yaml"))
        if (readable or p.name != "locked.yaml")
        and p.stat().st_size <= 2000
        and not stream._file_may_hold_context(p.read_bytes() if p.name != "locked.yaml" else b"")
    ]
    assert "cm.yaml" not in small and "big.yaml" not in small
    assert len(small) >= 3 and sorted(held) == small
    assert all(held[n] == (tmp_path / n).read_bytes() for n in held)
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    whole = _reports(run_check([str(tmp_path)], options))
    for jobs in (1, 2):
        assert _reports(run_paths([str(tmp_path)], options, no_config=True, jobs=jobs).result) == whole
    calls: list[str] = []
    real_load_file = stream._load_file

    def counting(path: str, limit: int) -> object:
        calls.append(os.path.basename(path))
        return real_load_file(path, limit)

    monkeypatch.setattr(stream, "_load_file", counting)
    run_paths([str(tmp_path)], options, no_config=True, jobs=1)
    assert not set(calls) & set(held), "a held file was read again in its turn"
    monkeypatch.setattr(stream, "HELD_FILE_BYTES", 0)
    calls.clear()
    assert _reports(run_paths([str(tmp_path)], options, no_config=True, jobs=1).result) == whole
    assert set(held) <= set(calls)


#: Seconds a test waits for a kvlint subprocess before it calls the run hung: a last-resort guard, far above any
#: normal run (each takes a few seconds, ~5 s at most measured on a loaded 2-core machine); what the tests wait
#: for is an event (a file a process writes), never an amount of time.
GUARD_SECONDS = 300


def _run_guarded(args: list[str], events: list[tuple[Path, str]]) -> tuple[int, str, str]:
    """Run ``args`` (a Python process of the run, its own session: its workers with it) and return its exit
    status, stdout and stderr. If it has not ended after :data:`GUARD_SECONDS`, kill the whole session (stopped
    workers too) and fail, naming the first of ``events`` (a file the run writes when it happens, and what it
    stands for) that did not happen, or saying that the run hung after the last."""
    import signal
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=GUARD_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        missing = [what for path, what in events if not path.exists()]
        where = f"it never got to: {missing[0]}" if missing else "every event happened, then it hung"
        pytest.fail(f"the run did not end in {GUARD_SECONDS} s; {where}\n{err[-4000:]}")
    return proc.returncode, out, err


#: A test script's wait for an event that must happen (a file written by another process of the run): no
#: deadline, but a worker whose run's process has gone (the test ended it) ends too, instead of waiting on.
_WAIT_FOR = (
    "RUN_PID = os.getpid()\n"
    "def wait_for(ready):\n"
    "    while not ready():\n"
    "        if os.getpid() != RUN_PID and os.getppid() != RUN_PID:\n"
    "            os._exit(3)\n"
    "        time.sleep(0.01)\n"
)


def _six_services(inputs: Path) -> None:
    inputs.mkdir()
    for i in range(6):
        (inputs / f"m{i}.yaml").write_text(
            f"apiVersion: v1\nkind: Service\nmetadata: {{name: s{i}}}\nspec: {{ports: [{{port: {80 + i}}}]}}\n"
        )


def test_a_worker_killed_mid_run_ends_the_run(tmp_path: Path) -> None:
    """A worker process that ends while the run waits for its results (SIGKILL, as the kernel's out-of-memory
    killer sends) ends ``kvlint check --jobs 2`` with status 2 and a message, instead of the run waiting
    forever for results the pool had lost (multiprocessing.Pool replaces the worker but not its task). The
    kill is real: the worker analysing one unit sends itself SIGKILL."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i in range(6):
        (inputs / f"m{i}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n")
    script = (
        "import os, runpy, signal, sys\n"
        "from kvlint import stream\n"
        "stream.PARALLEL_MIN_BYTES = 0\n"
        "parent, real, dying = os.getpid(), stream._analyse_unit, sys.argv[2]\n"
        "def killed(unit):\n"
        "    if os.getpid() != parent and str(unit.path).endswith('m4.yaml'):\n"
        "        open(dying, 'w').close()\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return real(unit)\n"
        "stream._analyse_unit = killed\n"
        "sys.argv = ['kvlint', 'check', '--offline', '--no-config', '--jobs', '2', sys.argv[1]]\n"
        "runpy.run_module('kvlint', run_name='__main__')\n"
    )
    dying = tmp_path / "dying"
    code, _, err = _run_guarded(
        ["-c", script, str(inputs), str(dying)], [(dying, "a worker killed itself on its unit")]
    )
    assert dying.exists(), "no worker analysed the unit that kills it"
    assert code == 2, err
    assert "a worker process ended before the run did (killed by signal 9, SIGKILL" in err
    assert "Traceback" not in err


def test_a_worker_killed_while_idle_does_not_fail_a_run_that_has_every_result(tmp_path: Path) -> None:
    """A worker process that ends after its last result, while another worker still analyses a unit, loses
    nothing: ``kvlint check --jobs 2`` completes with the output and status of ``--jobs 1`` (no WorkerLost, no
    wait on the pool's locks the killed worker held). The kill is real: once the run has taken the results of
    every unit but the slow last one, it sends SIGKILL to the workers that sent them (idle by then: nothing
    else is left to take), while the last unit's worker still waits, until the run has looked at the ended
    workers twice (stream._collect: a WorkerLost needs two looks in a row that find a task lost). Every step
    waits for the event before it, a file another process wrote, with no deadline: the first unit until the
    other worker has taken a unit (both send results), the run's fifth result until a worker has started the
    last unit, and the last unit until those two looks (0.5 s and 3 s sleeps did it, then 30 s deadlines, which
    a loaded machine can outlast; waiting for the kill alone let the last result come before any look). Each
    unit is a part of its own (stream._tasks), so the run's fifth part is the fifth unit. The guard
    (GUARD_SECONDS) names the event that did not happen: the run hung after every event in 2 of 24 runs under
    load (stream._end_pool waited for a lock the killed worker held: it saw no exit status yet)."""
    inputs = tmp_path / "in"
    _six_services(inputs)
    plan = stream._plan([str(inputs)], None, Options(allow_hub=False), split=True)
    assert stream._tasks(plan.units, 2) == [(i, i + 1) for i in range(6)], "each unit is no longer a part"
    ev = tmp_path / "ev"
    script = (
        "import os, runpy, signal, sys, time\n"
        "from kvlint import stream\n" + _WAIT_FOR + "stream.PARALLEL_MIN_BYTES = 0\n"
        "real_unit, real_take, taken = stream._analyse_unit, stream._take, []\n"
        "inputs, ev, jobs = sys.argv[1:4]\n"
        "pids = ev + '.pids'\n"
        "def mark(name, text=''):  # written whole, then named: the file exists with its text\n"
        "    with open(f'{ev}.tmp{os.getpid()}', 'w') as f:\n"
        "        f.write(text)\n"
        "    os.replace(f'{ev}.tmp{os.getpid()}', f'{ev}.{name}')\n"
        "def unit(u):\n"
        "    os.makedirs(pids, exist_ok=True)\n"
        "    open(os.path.join(pids, str(os.getpid())), 'w').close()\n"
        "    if str(u.path).endswith('m0.yaml'):  # until the other worker has a unit: both send results\n"
        "        wait_for(lambda: set(os.listdir(pids)) - {str(os.getpid())})\n"
        "        mark('other')\n"
        "    if str(u.path).endswith('m5.yaml'):  # busy until the run has looked twice at the killed workers\n"
        "        mark('slow', str(os.getpid()))\n"
        "        wait_for(lambda: os.path.exists(ev + '.check2'))\n"
        "    return real_unit(u)\n"
        "def take(part, *rest):\n"
        "    real_take(part, *rest)\n"
        "    taken.append(part.pid)\n"
        "    if len(taken) == 5:\n"
        "        mark('five')\n"
        "        wait_for(lambda: os.path.exists(ev + '.slow'))\n"
        "        busy = int(open(ev + '.slow').read())\n"
        "        idle = set(taken) - {busy}\n"
        "        assert idle, 'the last unit went to the only worker'\n"
        "        for pid in idle:\n"
        "            os.kill(pid, signal.SIGKILL)\n"
        "        mark('killed')\n"
        "    if len(taken) == 6:\n"
        "        mark('six')\n"
        "real_lost, checks = stream._lost_tasks, []\n"
        "def lost_tasks(*args):  # the run's look at the ended workers, a second without a result\n"
        "    out = real_lost(*args)\n"
        "    if os.path.exists(ev + '.killed'):\n"
        "        checks.append(out)\n"
        "        mark(f'check{len(checks)}')\n"
        "    return out\n"
        "if jobs != '1':\n"
        "    stream._analyse_unit, stream._take, stream._lost_tasks = unit, take, lost_tasks\n"
        "sys.argv = ['kvlint', 'check', '--offline', '--no-config', '--jobs', jobs, inputs]\n"
        "runpy.run_module('kvlint', run_name='__main__')\n"
    )
    serial = _run_guarded(["-c", script, str(inputs), str(tmp_path / "unused"), "1"], [])
    events = [
        (tmp_path / "ev.other", "the first unit's worker saw the other worker take a unit"),
        (tmp_path / "ev.slow", "a worker started the last unit"),
        (tmp_path / "ev.five", "the run took the first five units' results"),
        (tmp_path / "ev.killed", "the run killed the idle workers"),
        (tmp_path / "ev.check2", "the run looked at the ended workers twice (WORKER_CHECK_SECONDS)"),
        (tmp_path / "ev.six", "the run took the last unit's result"),
    ]
    code, out, err = _run_guarded(["-c", script, str(inputs), str(ev), "2"], events)
    assert all(path.exists() for path, _ in events), (
        f"{[what for path, what in events if not path.exists()]} did not happen: {err}"
    )
    assert "worker process ended" not in err, err
    assert (code, out) == serial[:2], err


def test_a_worker_that_does_not_answer_at_the_end_of_a_run_does_not_hang_it(tmp_path: Path) -> None:
    """A worker that shows no exit status when the run ends its pool, and does not answer, does not hang
    ``kvlint check --jobs 2``: the run ends with the output of ``--jobs 1`` and the worker is gone. A worker
    the kernel has not yet ended after a SIGKILL is such a worker (idle, it holds the task pipe's read lock,
    which Pool.terminate takes); made lasting here: once the run has taken every result, it stops (SIGSTOP)
    its workers. stream._end_pool chose Pool.terminate when no worker had an exit status, and it waited
    forever (for the lock, or for a stopped worker to take its SIGTERM)."""
    import signal

    inputs = tmp_path / "in"
    _six_services(inputs)
    stopped = tmp_path / "stopped"
    script = (
        "import multiprocessing, os, runpy, signal, sys\n"
        "from kvlint import stream\n"
        "stream.PARALLEL_MIN_BYTES = 0\n"
        "real_take, taken = stream._take, []\n"
        "inputs, stopped, jobs = sys.argv[1:4]\n"
        "def take(part, *rest):\n"
        "    real_take(part, *rest)\n"
        "    taken.append(part.pid)\n"
        "    if len(taken) == 6:\n"
        "        workers = [p.pid for p in multiprocessing.active_children()]\n"
        "        for pid in workers:\n"
        "            os.kill(pid, signal.SIGSTOP)\n"
        "        open(stopped, 'w').write(' '.join(map(str, workers)))\n"
        "if jobs != '1':\n"
        "    stream._take = take\n"
        "sys.argv = ['kvlint', 'check', '--offline', '--no-config', '--jobs', jobs, inputs]\n"
        "runpy.run_module('kvlint', run_name='__main__')\n"
    )
    serial = _run_guarded(["-c", script, str(inputs), str(tmp_path / "unused"), "1"], [])
    code, out, err = _run_guarded(
        ["-c", script, str(inputs), str(stopped), "2"], [(stopped, "the run stopped its workers")]
    )
    pids = [int(p) for p in stopped.read_text().split()]
    assert pids, "the run had no worker to stop"
    left = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        left.append(pid)
        os.kill(pid, signal.SIGKILL)  # a worker of this test's run, stopped
    assert not left, f"workers left behind, stopped: {left}"
    assert (code, out) == serial[:2], err


def test_a_worker_killed_while_writing_a_result_ends_the_run(tmp_path: Path) -> None:
    """A worker process killed while it writes a result to the pipe (SIGKILL between two writes of a message
    larger than the pipe holds) leaves part of a message there: ``kvlint check --jobs 2`` ends with status 2 and
    its message, instead of waiting forever in ``Pool.terminate`` for the pool's result thread, which waited for
    the rest of that message. The cut is real: the first worker to send a result writes its header and half its
    bytes, then sends itself SIGKILL."""

    inputs = tmp_path / "in"
    inputs.mkdir()
    for i in range(6):
        (inputs / f"m{i}.yaml").write_text(
            f"apiVersion: v1\nkind: Service\nmetadata: {{name: s{i}}}\nspec: {{ports: [{{port: {80 + i}}}]}}\n"
        )
    marker = tmp_path / "cut"
    script = (
        "import os, runpy, signal, struct, sys\n"
        "from multiprocessing.connection import Connection\n"
        "from kvlint import stream\n"
        "stream.PARALLEL_MIN_BYTES = 0\n"
        "parent, real, marker = os.getpid(), Connection._send_bytes, sys.argv[2]\n"
        "def send(self, buf):\n"
        "    if os.getpid() != parent:\n"
        "        try:\n"
        "            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))\n"
        "        except FileExistsError:\n"
        "            return real(self, buf)\n"
        "        data = bytes(buf)\n"
        "        self._send(struct.pack('!i', len(data)))\n"
        "        self._send(data[: len(data) // 2])\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return real(self, buf)\n"
        "Connection._send_bytes = send\n"
        "sys.argv = ['kvlint', 'check', '--offline', '--no-config', '--jobs', '2', sys.argv[1]]\n"
        "runpy.run_module('kvlint', run_name='__main__')\n"
    )
    code, _, err = _run_guarded(
        ["-c", script, str(inputs), str(marker)],
        [(marker, "a worker cut its result short and killed itself")],
    )
    assert marker.exists(), "no worker sent a result"
    assert code == 2, err
    assert "a worker process ended before the run did (killed by signal 9, SIGKILL" in err
    assert "Traceback" not in err


def _sigint_as_in_a_terminal() -> None:
    """Start the child with SIGINT's default action, as a shell started from a terminal gives it. A test run in
    the background of a non-interactive shell (``cmd &``) inherits SIGINT ignored, and a Python started so
    never installs its KeyboardInterrupt handler: the Ctrl-C tests then measured the runner, not kvlint."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_a_run_with_jobs_prints_no_worker_traceback(tmp_path: Path) -> None:
    """Ctrl-C in a terminal sends SIGINT to the whole process group: ``kvlint check --jobs 2`` ends (exit code
    130, "kvlint: interrupted") and its workers, which ignore SIGINT, print no KeyboardInterrupt traceback. The
    signal is real: once a worker is analysing a unit (it writes its process id, then waits), the test sends
    SIGINT to the run's process group. The workers wait until the run's process is gone, so the run is still
    going when the signal comes however late a loaded machine sends it (2 s, then 20 s sleeps per unit, only made
    that likely); the run ends only by the signal."""
    import signal
    import subprocess
    import sys
    import time

    inputs = tmp_path / "in"
    inputs.mkdir()
    for i in range(6):
        (inputs / f"m{i}.yaml").write_text(
            f"apiVersion: v1\nkind: Service\nmetadata: {{name: s{i}}}\nspec: {{ports: [{{port: {80 + i}}}]}}\n"
        )
    busy = tmp_path / "busy"
    script = (
        "import os, runpy, sys, time\n"
        "from kvlint import stream\n"
        "stream.PARALLEL_MIN_BYTES = 0\n"
        "parent, real, busy = os.getpid(), stream._analyse_unit, sys.argv[2]\n"
        "def unit(u):\n"
        "    if os.getpid() != parent:\n"
        "        open(busy, 'a').write(f'{os.getpid()}\\n')\n"
        "        while os.getppid() == parent:  # until the run's process is gone (it kills its workers first)\n"
        "            time.sleep(0.05)\n"
        "        os._exit(3)\n"
        "    return real(u)\n"
        "stream._analyse_unit = unit\n"
        "sys.argv = ['kvlint', 'check', '--offline', '--no-config', '--jobs', '2', sys.argv[1]]\n"
        "runpy.run_module('kvlint', run_name='__main__')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(inputs), str(busy)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
        preexec_fn=_sigint_as_in_a_terminal,
    )
    try:
        deadline = time.monotonic() + GUARD_SECONDS  # a guard: the event must happen
        while not (busy.exists() and busy.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not busy.exists():
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"no worker analysed a unit in {GUARD_SECONDS} s")
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=GUARD_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the run did not end after Ctrl-C")
    assert "Traceback" not in err, err
    assert "KeyboardInterrupt" not in err, err
    assert proc.returncode == 130, err
    assert err.rstrip().endswith("kvlint: interrupted"), err


def test_ctrl_c_ends_a_one_job_run_with_exit_code_130() -> None:
    """Ctrl-C during a one-job ``kvlint check`` (here waiting on piped input that never ends) exits 130, as a
    shell reports a command SIGINT ended, with one line and no traceback: not click's "Aborted!" and exit
    code 1, which a script cannot tell from "findings found". The signal is real; it is sent once the run has
    read the first lines from the pipe (it is in the command then, not starting up): the pipe holds no byte."""
    import fcntl
    import signal
    import struct
    import subprocess
    import sys
    import termios
    import time

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kvlint", "check", "--offline", "--no-config", "--jobs", "1", "-"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
        preexec_fn=_sigint_as_in_a_terminal,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write("apiVersion: v1\nkind: ConfigMap\n")
        proc.stdin.flush()

        # the bytes in the pipe, asked at its write end (Linux answers FIONREAD at either end)
        def unread() -> int:
            assert proc.stdin is not None
            return int(struct.unpack("i", fcntl.ioctl(proc.stdin.fileno(), termios.FIONREAD, b"\0" * 4))[0])

        deadline = time.monotonic() + GUARD_SECONDS  # a guard: the event must happen
        while unread() and time.monotonic() < deadline:
            time.sleep(0.05)
        if unread():
            proc.kill()
            proc.communicate()
            pytest.fail(f"the run did not read its input in {GUARD_SECONDS} s")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=GUARD_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the run did not end after Ctrl-C")
    assert proc.returncode == 130, err
    assert err.strip() == "kvlint: interrupted", err


@pytest.mark.parametrize("budget", [None, 2000])
def test_text_blocks_formatted_in_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: int | None
) -> None:
    """With several jobs and the text report's style, the workers format the blocks of the diagnostics they find
    and the report takes them: the run's process formats only the others (load findings, suppression notes,
    the blocks past stream.PRETEXT_CHARS), and the report is that of one job, in the style asked and in another."""
    from kvlint.report import text as text_report

    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    if budget is not None:
        monkeypatch.setattr(stream, "PRETEXT_CHARS", budget)
    for f in sorted((FIXTURES / "examples").glob("*.yaml")):
        for i in range(16):
            (tmp_path / f"{i}-{f.name}").write_text(f.read_text())
    path = str(tmp_path)
    options = Options(allow_hub=False)
    one = run_paths([path], options, no_config=True, jobs=1).result
    assert len(one.diagnostics) >= 60
    assert one.text_cache is None
    two = run_paths([path], options, no_config=True, jobs=2, text_style=(False, 100)).result
    assert two.text_cache is not None and two.text_cache[0] == (False, 100)
    formatted = [0]
    real = text_report.format_diagnostic

    def counting(*args: object, **kw: object) -> str:
        formatted[0] += 1
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(text_report, "format_diagnostic", counting)
    expected = "".join(text_report.iter_text(one, width=100))
    assert formatted[0] == len(one.diagnostics)
    formatted[0] = 0
    assert "".join(text_report.iter_text(two, width=100)) == expected
    taken = len(two.diagnostics) - formatted[0]
    if budget is None:
        assert taken > len(two.diagnostics) // 2, "the report formatted the blocks the workers sent"
    else:
        assert 0 < taken < len(two.diagnostics) // 2  # each worker stopped past its share of the budget
    # another style: the blocks are not taken
    formatted[0] = 0
    assert "".join(text_report.iter_text(two, width=60, color=True)) == "".join(
        real_block for real_block in text_report.iter_text(one, width=60, color=True)
    )
    assert formatted[0] == 2 * len(one.diagnostics)


def test_pool_workers_are_forked_with_sigint_blocked(tmp_path: Path) -> None:
    """A worker is forked with SIGINT blocked (the pool is made so) and ignores it once set up: between the
    fork and the worker's initializer CPython runs its at-fork hooks (threading._after_fork), where a Ctrl-C
    sent to the process group raised KeyboardInterrupt and printed a traceback. Checked in the child at the
    earliest point, an at-fork hook registered before the pool is made; the run's own mask is restored."""
    import subprocess
    import sys

    marks = tmp_path / "marks"
    script = (
        "import os, signal, sys\n"
        "from kvlint import stream\n"
        "marks = sys.argv[1]\n"
        "def child():\n"
        "    blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())\n"
        "    open(marks, 'a').write(f'fork {int(blocked)}\\n')\n"
        "os.register_at_fork(after_in_child=child)\n"
        "pool = stream._pool(2)\n"
        "print(sorted(pool.map(abs, [1, -2])))\n"
        "handler = pool.apply(signal.getsignal, (signal.SIGINT,))\n"
        "print('worker', handler == signal.SIG_IGN)\n"
        "print('parent', signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set()))\n"
        "pool.close(); pool.join()\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, str(marks)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["[1, 2]", "worker True", "parent False"], run.stdout
    forks = marks.read_text().splitlines()
    assert forks and set(forks) == {"fork 1"}, forks


def test_the_collector_is_paused_while_a_unit_is_analysed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each unit (a batch of a large file, or a file) is loaded and analysed with the cyclic collector off, and
    released before it is back on; the run leaves it on (perf53: the young collections moved every unit's
    documents into the oldest generation, whose full collections were ~10% of the check of an 8 MB file)."""
    import gc
    import weakref

    doc = (FIXTURES / "examples").glob("*.yaml")
    text = next(p for p in sorted(doc) if "Deployment" in p.read_text()).read_text()
    big = tmp_path / "big.yaml"
    big.write_text("".join("---\n" + text.strip("\n-") + "\n" for _ in range(40)))
    monkeypatch.setattr(stream, "SEGMENT_BYTES", 2**10)
    monkeypatch.setattr(stream, "BATCH_BYTES", 2**10)
    seen: list[bool] = []
    units: list[weakref.ref[object]] = []
    real = stream._analyse_unit_unguarded

    def watched(unit: stream._Unit) -> stream._UnitResult:
        # the unit analysed before this one was released while the collector was off
        assert all(u() is None for u in units) and not gc.isenabled()
        seen.append(gc.isenabled())
        out = real(unit)
        seen.append(gc.isenabled())
        units.append(weakref.ref(unit))
        return out

    monkeypatch.setattr(stream, "_analyse_unit_unguarded", watched)
    assert gc.isenabled()
    result = run_paths([str(big)], Options(allow_hub=False), no_config=True, jobs=1).result
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert len(units) > 5 and not any(seen)
    assert result.diagnostics
