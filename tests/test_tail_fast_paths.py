"""Small fast paths of the long tail of a check pass (issue 19) give what the code they replaced gave.

Each replaced function is kept here as its oracle and compared with the current one on every document of the
shared corpus and of the project's fixtures, and on edge cases: an image reference is searched for ``${VAR}``
and ``$(var)`` placeholders only when it holds a ``$`` (:func:`kvlint.engines.images.image_placeholder`); an
object's ``apiVersion`` is read only for the kinds kvlint has an unread-settings note for
(:func:`kvlint.workloads.operators.unread_kind_note`); the ConfigMap helpers are imported only when a
container's env refers to a ConfigMap (:func:`kvlint.engines.command.container_env`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kvlint.engines.command import container_env
from kvlint.engines.images import image_placeholder
from kvlint.load import load_paths, load_text
from kvlint.source import LDict, loc_of
from kvlint.types import Document, Finding, Mark
from kvlint.workloads import configmaps as configmaps_of
from kvlint.workloads.base import get_in
from kvlint.workloads.operators import _UNREAD, _UNREAD_GROUPS, is_gitops, unread_kind_note

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"


def _documents() -> list[Document]:
    paths = [str(p) for p in (CORPUS, ROOT / "fixtures") if p.is_dir()]
    docs = load_paths(paths).documents
    assert len(docs) > 300, "the corpus and fixtures hold hundreds of documents"
    return docs


def _walk(node: Any) -> Any:
    stack = [node]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, dict):
            stack += list(x.values())
        elif isinstance(x, list):
            stack += x


# --- image_placeholder ---------------------------------------------------------------------------------------

_OLD_ENVSUBST_RE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:[:-][^}]*)?\}|\$[A-Za-z_][A-Za-z0-9_]*")
_OLD_KUSTOMIZE_VAR_RE = re.compile(r"\$\([A-Za-z0-9_.-]+\)")
_OLD_CAPS_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_OLD_DUNDER_RE = re.compile(r"^__[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*__$")  # sizing53: __MODEL__, __LWS_NAME__


def _old_image_placeholder(image: str) -> str | None:
    """image_placeholder before the ``$`` test (both patterns searched in every image)."""
    img = (image or "").strip()
    if not img:
        return None
    if _OLD_ENVSUBST_RE.search(img):
        return "an envsubst-style ${VAR} placeholder"
    if _OLD_KUSTOMIZE_VAR_RE.search(img):
        return "a $(var) reference (kustomize vars; Kubernetes does not expand $(...) in image)"
    if _OLD_CAPS_RE.match(img) or _OLD_DUNDER_RE.match(img):
        return "an upper-case placeholder token that a script replaces before the manifest is applied"
    if img.startswith("<") and img.endswith(">"):
        return "a <...> placeholder to fill in by hand"
    if re.match(r"^replaced?[-_]by[-_][a-z0-9][a-z0-9._-]*$", img, re.IGNORECASE):  # (new-user pass 23)
        return (
            "a placeholder word that a tool replaces (kustomize replacements) before the manifest is applied"
        )
    return None


_IMAGE_EDGES = [
    "",
    "  ",
    "$",
    "$$",
    "${",
    "${}",
    "${A}",
    "${A:-x}",
    "${A-x}",
    "${1}",
    "$A",
    "$1",
    "$(a)",
    "$()",
    "$(a b)",
    "repo/${IMG}:v1",
    "repo/img:$TAG",
    "$(vllm-cuda-image)",
    "V_IMAGE_NAME",
    "VLLM",
    "<image>",
    "<image",
    " ${A} ",
    "\t$(x)\n",
    "vllm/vllm-openai:v0.11.0",
    "ghcr.io/x/y@sha256:" + "a" * 64,
    "＄{A}",
]


def test_image_placeholder_equals_searching_every_image() -> None:
    images = [
        str(c.get("image"))
        for d in _documents()
        for c in _walk(d.data)
        if isinstance(c, dict) and "image" in c
    ]
    assert len(images) > 200
    assert any("$" in i for i in images), "the inputs hold images with $ placeholders"
    for image in (
        images + _IMAGE_EDGES + [str(x) for x in _walk([d.data for d in _documents()]) if isinstance(x, str)]
    ):
        assert image_placeholder(image) == _old_image_placeholder(image), image


# --- unread_kind_note ----------------------------------------------------------------------------------------


def _old_unread_kind_note(doc: Document, loc: Any = None) -> Finding | None:
    """unread_kind_note before the kind test came first (the apiVersion read for every document)."""
    why = _UNREAD.get(doc.kind)
    api = str(get_in(doc.data, "apiVersion") or "")
    if why is None or (doc.kind == "Service" and "llmaz" not in api):
        return None
    # a kind of one API group (Kthena's ModelBooster)
    if not api.startswith(_UNREAD_GROUPS.get(doc.kind, "")):
        return None
    return Finding(
        "KV503",
        f"kvlint does not read this {doc.kind}'s engine settings: {why}",
        loc or loc_of(doc.data, "spec") or doc.loc,
        fix="lint the pods the operator creates (kubectl get pod -o yaml | kvlint check -), or check the engine "
        "command separately with kvlint plan -- <command>",
        severity="info",
        mark=Mark.SETTINGS_NOT_READ,  # (the finding's kind, added since: kvlint.sizing.unread counts it by it)
    )


def test_unread_kind_note_equals_reading_every_api_version() -> None:
    docs = _documents()
    notes = 0
    for doc in docs:
        if is_gitops(doc):  # GitOps objects (Argo CD, Flux) got their note later: tests/test_gitops_unread.py
            continue
        got, want = unread_kind_note(doc), _old_unread_kind_note(doc)
        assert got == want, (doc.path, doc.kind)
        notes += got is not None
    assert notes > 0, "the corpus holds objects of kinds whose settings kvlint does not read"
    # every kind with a note, under an llmaz apiVersion and another, with data that is not a mapping
    base = docs[0]
    for kind in [*_UNREAD, "Service", "Deployment", ""]:
        for api in ("llmaz.io/v1alpha1", "workload.serving.volcano.sh/v1alpha1", "v1", None, 3):
            for data in (
                LDict({"kind": kind, "apiVersion": api, "spec": LDict()}),
                {"kind": kind, "apiVersion": api},
            ):
                doc = Document(base.path, base.index, data, base.loc)
                assert unread_kind_note(doc) == _old_unread_kind_note(doc), (kind, api)


# --- container_env ------------------------------------------------------------------------------------------


_WITH_CONFIGMAP = """
apiVersion: v1
kind: ConfigMap
metadata: {name: runtime}
data: {MAX_MODEL_LEN: "8192", MODEL_ID: m/x}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.11.0
    envFrom:
    - configMapRef: {name: runtime}
      prefix: CM_
    env:
    - {name: A, value: "1"}
    - name: MAX_MODEL_LEN
      valueFrom: {configMapKeyRef: {name: runtime, key: MAX_MODEL_LEN}}
    - name: GONE
      valueFrom: {configMapKeyRef: {name: missing, key: K}}
"""


def test_container_env_still_reads_configmaps() -> None:
    """The ConfigMap helpers, now imported only when an entry refers to a ConfigMap, are reached for
    ``envFrom`` and ``configMapKeyRef`` (values placed in the ConfigMap), and not needed without ConfigMaps;
    every container of the inputs gets its env with and without their ConfigMaps without raising."""
    loaded = load_text(_WITH_CONFIGMAP, "cm.yaml")
    cms = configmaps_of(loaded.documents)
    pod = loaded.documents[1]
    c = pod.data["spec"]["containers"][0]
    env, locs = container_env(c, cms, pod.namespace)
    assert env == {"CM_MAX_MODEL_LEN": "8192", "CM_MODEL_ID": "m/x", "A": "1", "MAX_MODEL_LEN": "8192"}
    assert locs["MAX_MODEL_LEN"] is not None and locs["MAX_MODEL_LEN"].line == 5
    assert container_env(c, {}, pod.namespace)[0] == {"A": "1"}
    docs = _documents()
    all_cms = configmaps_of(docs)
    for doc in docs:
        for x in _walk(doc.data):
            if isinstance(x, LDict) and "image" in x:
                for maps in (all_cms, {}):
                    env, locs = container_env(x, maps, doc.namespace)
                    assert set(env) == set(locs)


# --- stream._unit_functions ---------------------------------------------------------------------------------


def test_unit_functions_are_the_modules_functions() -> None:
    """The functions a streamed unit calls, imported once a process, are the very objects its imports named."""
    from kvlint import kustomize_patch, pipeline, render, sizing, stream, suppress
    from kvlint.rules import runner

    want = (
        pipeline.analyse_documents,
        pipeline.configure,
        render._map_loaded_sources,
        render.unrendered_or_error,
        runner.finding_to_diagnostic,
        sizing.outcomes,
        sizing.engine_named_in,
        render.internal_error_finding,
        suppress.comment_suppresses,
        kustomize_patch.listed_patch_files,
    )
    got = stream._unit_functions()
    assert len(got) == len(want)
    assert all(g is w for g, w in zip(got, want, strict=True))


def test_mounted_file_is_the_packages_function() -> None:
    """The ConfigMap file reader a container's ``--config`` loader uses, imported once a process, is
    :func:`kvlint.workloads.mounted_file` itself."""
    from kvlint import workloads
    from kvlint.engines import command

    assert command._mounted_file() is workloads.mounted_file


#: the case-insensitive searches the engine-word tests replaced (their oracles)
_OLD_ENGINE_WORDS = re.compile(r"vllm|sglang|text-generation|ray\.serve\.llm|backendName|preset", re.I)


def _engine_texts() -> list[str]:
    """Texts around the engine words: every case mix, parts cut short, letters that case-insensitive matching
    pairs with ASCII ones (long s, Kelvin sign, dotted and dotless i) and other non-ASCII text."""
    import random

    rng = random.Random(5)
    words = ["vllm", "sglang", "text-generation", "text-generation-inference", "text-generation-launcher",
             "ray.serve.llm", "backendName", "preset", "raYXserve.llm", "text_generation",
             "tgi-gaudi", "llm-d/llm-d-cuda", "neuronx-tgi", "tgi.fullname"]  # fmt: skip
    odd = ["\u017f", "\u212a", "\u0130", "\u0131", "\u00e9", "\u2028", "\ufeff", "\U0001f600", "\\u00eb", '"']
    out = []
    for _ in range(3000):
        w = rng.choice(words)
        w = "".join(ch.upper() if rng.random() < 0.3 else ch for ch in w)
        if rng.random() < 0.3:
            i = rng.randrange(len(w))
            w = w[:i] + rng.choice(odd + ["", "x", "-"]) + w[i + 1 :]
        if rng.random() < 0.2:
            w = w.replace("s", "\u017f").replace("i", "\u0131").replace("I", "\u0130")
        out.append(rng.choice(["", "image: ", "a" * 50, rng.choice(odd)]) + w + rng.choice(["", "\n", " x"]))
    return out


def test_names_engine_equals_case_insensitive_search() -> None:
    """:func:`kvlint.workloads.find._names_engine` (lower-cased JSON text) finds what the case-insensitive
    search of the JSON text found: on every document of the corpus and fixtures, and on objects holding
    the engine words in every case, with the Unicode letters case-insensitive matching pairs with ASCII."""
    import json

    from kvlint.workloads.find import _names_engine

    def old(data: Any) -> bool:
        return bool(_OLD_ENGINE_WORDS.search(json.dumps(data, default=str)))

    datas: list[Any] = [d.data for d in _documents()]
    datas += [{"spec": {"image": t}} for t in _engine_texts()] + [{t: 1} for t in _engine_texts()[:500]]
    found = [_names_engine(x) for x in datas]
    assert found == [old(x) for x in datas]
    assert 100 < sum(found) < len(found) - 100


def test_mentions_engine_equals_case_insensitive_search() -> None:
    """:func:`kvlint.sizing._mentions_engine` (kvlint.load's) finds what the case-insensitive search of
    :data:`kvlint.engines.images.ENGINE_TEXT` finds, in ASCII text and in text with the Unicode letters that
    match ASCII ones case-insensitively (long s, Kelvin sign)."""
    from kvlint.engines.images import ENGINE_TEXT
    from kvlint.sizing import _mentions_engine

    anycase = re.compile(ENGINE_TEXT.pattern, re.I)
    texts = _engine_texts()
    found = [_mentions_engine(t) for t in texts]
    assert found == [anycase.search(t) is not None for t in texts]
    assert any(not t.isascii() and f for t, f in zip(texts, found, strict=True))  # the non-ASCII search ran
    assert 100 < sum(found) < len(found) - 100


# --- render.kustomization_file_finding ----------------------------------------------------------------------


def test_kustomization_finding_asks_the_file_name_only_of_documents_without_a_kind() -> None:
    """kustomization_file_finding rules out a document of another kind before it reads the file's name: its
    answers are those of the test written with the name first, for every shape, name and kind."""
    import os

    from kvlint.render import KUSTOMIZATION_FILES, kustomization_file_finding

    def reference(doc: Document) -> bool:
        data = doc.data
        named = os.path.basename(doc.path) in KUSTOMIZATION_FILES
        typed = (
            isinstance(data, dict)
            and data.get("kind") == "Kustomization"
            and (
                str(data.get("apiVersion", "")).startswith("kustomize.config.k8s.io/")
                or (named and "apiVersion" not in data)
            )
        )
        return not (not (named or typed) or (not typed and isinstance(data, dict) and "kind" in data))

    texts = [
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
        "apiVersion: other/v1\nkind: Kustomization\n",
        "kind: Kustomization\n",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
        "resources: [a.yaml]\nimages: [{name: x}]\n",
        "[a, b]\n",
        "just text\n",
    ]
    seen = set()
    for name in [
        "kustomization.yaml",
        "kustomization.yml",
        "Kustomization",
        "deploy.yaml",
        "dir/kustomization.yaml",
    ]:
        for text in texts:
            for doc in load_text(text, name).documents:
                got = kustomization_file_finding(doc)
                assert (got is not None) == reference(doc), (name, text)
                seen.add(got is not None)
    assert seen == {True, False}


def test_a_kustomization_file_with_a_kind_and_no_api_version_is_one() -> None:
    """kustomize reads apiVersion and kind as optional; AIBrix writes ``kind: Kustomization`` alone
    (fixtures/kustomize/aibrix-vllm-dev): linted as a plain file, it gets the KV002 that says to build it, under a
    kustomization's file name only."""
    from kvlint.render import kustomization_file_finding

    text = "kind: Kustomization\n\nresources:\n- ../macos\n"
    (doc,) = load_text(text, "linux/kustomization.yaml").documents
    got = kustomization_file_finding(doc)
    assert got is not None and got.rule == "KV002" and "kvlint check linux" in got.fix
    (other,) = load_text(text, "linux/deploy.yaml").documents
    assert kustomization_file_finding(other) is None
