#!/usr/bin/env python3
"""Structure-aware, seeded fuzzing of ``kvlint check`` through its command line, in-process.

Each case takes one real manifest (the shared corpus, ``fixtures/collected``), parses it into YAML trees and
applies one to three mutations to one document's tree, then writes the documents back as YAML text:

* ``retype``: a scalar or a collection becomes another type (int, str, list, map, null, bool, float NaN,
  inf, -inf, -0.0, 1e308, a 5,000-digit integer);
* ``retype-known``: the same on a key the readers look at (``kind``, ``metadata.name``, ``image``, ``env``,
  ``resources``, ``workerSpec``, ``serveConfigV2``...) or an item of a list;
* ``drop-key`` / ``dup-key``: a mapping key removed, or written twice (the second value a retyped one);
* ``args-shape``: a container's ``args``/``command`` list becomes a string, a nested list, a list holding
  null/ints/maps, or gets absurd engine numbers (``--tensor-parallel-size 10**5000``, ``nan``, ``1e308``);
* ``huge-string``: a 1 MB string (letters, blanks, or ``{{`` repeated);
* ``unicode``: RTL override, NUL, lone surrogates (``"\\ud800"``), confusables (en dash for ``--``, Cyrillic
  letters, fullwidth digits, zero-width space) in keys, flags and values;
* ``deep``: a value nested 100 to 5,000 levels (flow ``[[[...]]]`` and block mappings);
* ``anchor`` / ``merge``: a subtree anchored and aliased elsewhere, ``<<: *a`` merge keys (also onto a
  scalar, a list, an undefined anchor);
* ``split``: a document split in two at a random line (a ``---`` inside a mapping);
* ``tag``: ``!!binary``, ``!!set``, ``!!omap``, ``!!pairs``, ``!!timestamp``, ``!!python/object``, unknown
  local tags on values;
* ``template``: Helm/Go template fragments as values and as whole lines (``{{ .Values.x }}``, ``{{- include
  "x" . | nindent 8 }}``, ``{{ if }}``);
* ``envref``: ``$(X)``, ``${X}``, ``${X:-8}``, ``$((1+2))`` in args and env values, env entries of odd shapes;
* ``shell``: the engine command line moved into ``sh -c`` scripts with odd quoting (unbalanced quotes,
  heredocs, backslash-newlines, ``exec ... "$@"``, nested ``bash -c``, ``eval``, comments, pipes).

Each case runs ``kvlint check --offline --no-config -`` (``--stdin-filename`` the manifest's name) through
the real click entry point in this process, with every report format (text on stdout, the others written to
a scratch directory), and records a failure when:

* an exception escapes, or exit status is above 1 with no ``kvlint: error`` naming the input on stderr;
* the pipeline turned an exception into its KV503 "could not finish checking" note (a hidden bug);
* a report does not parse (JSON, JSONL, SARIF, JUnit XML) or the text report holds raw control characters;
* the case took more than ``--limit`` seconds and more than ``--factor`` times its unmutated manifest;
* **hiding**: in a file of several documents, findings of the documents the case did not touch (rule,
  object and line within the document) that the file has both unmutated and without the mutated document
  disappeared (see :func:`hidden`);
* every ``--dir-every``-th case is also linted as a file in a directory beside an unmutated Deployment, with
  ``--jobs 2`` (worker processes): an exception, or that Deployment's findings changed, is a failure.

Usage::

    python tools/fuzz_tree.py [--seed N] [--cases N] [--limit S] [--factor F] [--only KIND ...]
                              [--dir-every N] [--config-cases N] [--save DIR] [-v] [PATH ...]

``--config-cases N`` also validates N mutants (the same tree mutations) of README's example ``.kvlint.yaml``
with :func:`kvlint.config.parse_config`: each must be a configuration or a ``ConfigError``.

Default paths: ``../shared/corpus/manifests`` and ``fixtures/collected``. ``--save DIR`` writes each failing
mutant there (``<n>.yaml``) for minimising. Exit status 1 when any case failed. The same seed gives the same
cases (``random.Random(seed)``; no other source of randomness).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

Raw = dict[str, str]  # marker -> raw YAML text substituted after dumping


# ------------------------------------------------------------------------------------------ tree helpers


def _walk(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _walk(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, (*path, i))


def _get(root: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        root = root[p]
    return root


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(root, path[:-1])[path[-1]] = value
    return root


def _pick(
    rng: random.Random, doc: Any, want: Callable[[tuple[Any, ...], Any], bool]
) -> tuple[Any, ...] | None:
    cands = [p for p, v in _walk(doc) if p and want(p, v)]
    return rng.choice(cands) if cands else None


def _containers(doc: Any) -> list[tuple[Any, ...]]:
    """Paths of mappings that look like containers (have ``image`` or ``args``/``command``)."""
    return [
        p
        for p, v in _walk(doc)
        if isinstance(v, dict) and ("image" in v or "args" in v or "command" in v) and p
    ]


class _Marks:
    """Raw YAML fragments keyed by unique plain-scalar markers placed in the tree."""

    def __init__(self) -> None:
        self.raw: Raw = {}

    def __call__(self, text: str) -> str:
        m = f"zqraw{len(self.raw)}zq"
        self.raw[m] = text
        return m


# ------------------------------------------------------------------------------------------ mutations

BIG_INT = "9" * 5000
SPECIAL_FLOATS = [".nan", ".inf", "-.inf", "-0.0", "1e308", "-1e308", "1e-320"]
CONFUSABLES = [
    "\u2013tensor-parallel-size",  # en dash
    "\u2014max-model-len",  # em dash
    "--m\u0430x-model-len",  # Cyrillic a
    "--max\u200b-model-len",  # zero-width space
    "--max-model-len=\uff18\uff11\uff19\uff12",  # fullwidth digits
    "--gpu-memory-utilization\u00a00.9",  # no-break space
    "--\u202emodel",  # RTL override
    "vll\u043c",  # Cyrillic m
]
UNICODE_VALUES = [
    '"\\u202eLlama\\u202c"',
    '"a\\0b"',
    '"\\ud800"',
    '"\\udfff\\ud800x"',
    '"\\x1b[31mred\\x1b[0m"',
    '"\\u2028\\u2029"',
    '"\\ufeffx"',
    '"\\U0001F600"',
]
TAGS = [
    "!!binary aGVsbG8gd29ybGQ=",
    "!!binary '!!!'",
    "!!set {a, b}",
    "!!omap [{a: 1}, {b: 2}]",
    "!!pairs [{a: 1}, {a: 2}]",
    "!!timestamp 2001-12-14t21:59:43.10-05:00",
    "!!timestamp not-a-date",
    "!!python/object:os.system {}",
    "!!python/name:os.system",
    "!Ref x",
    "!Sub [a, {b: c}]",
    "!!str 12",
    "!!int 0x1F",
    "!!float .NaN",
    "!!null ''",
    "!<tag:example.com,2000:app/x> 1",
    "!!merge <<",
]
TEMPLATES = [
    "{{ .Values.x }}",
    "{{ .Values.tp | default 2 }}",
    '{{- include "x.labels" . | nindent 8 }}',
    "{{ if .Values.a }}1{{ else }}2{{ end }}",
    "{{ toYaml .Values.resources | indent 12 }}",
    "{{",
    "}}",
    "{{ .Values.model }}{{ .Values.model }}",
    "${{ secrets.X }}",
    "<% x %>",
]
TEMPLATE_LINES = [
    '{{- include "x" . | nindent 8 }}',
    "{{- if .Values.enabled }}",
    "{{- end }}",
    "{{- range .Values.items }}",
    "{{ toYaml .Values.extra }}",
]
ENV_REFS = ["$(X)", "${X}", "${X:-8}", "$((1+2))", "$(MODEL)", "$$(X)", "${", "$(", "${X:?unset}", "`id`"]
ABSURD = [
    ["--tensor-parallel-size", BIG_INT],
    ["--tensor-parallel-size", "nan"],
    ["--pipeline-parallel-size", "inf"],
    ["--max-model-len", "1e308"],
    ["--max-model-len", "-0"],
    ["--max-num-seqs", "1e999"],
    ["--max-num-batched-tokens", "0x7fffffffffffffff"],
    ["--gpu-memory-utilization", "nan"],
    ["--gpu-memory-utilization", "-inf"],
    ["--block-size", BIG_INT],
    ["--data-parallel-size", "1_000_000_000_000"],
    ["--max-model-len", "１０２４"],
    ["--swap-space", "1e308"],
    ["--cpu-offload-gb", "inf"],
    ["--max-loras", "99999999999"],
    ["--max-lora-rank", "-5"],
    ["--num-gpu-blocks-override", BIG_INT],
]


def _retyped(rng: random.Random, marks: _Marks) -> Any:
    c = rng.randrange(12)
    if c == 0:
        return rng.choice([0, -1, 1, 2**63, -(2**63), 10**20])
    if c == 1:
        return rng.choice(["", "x", "8", "1Gi", "true", "null", "~", "- a", "a: b", "0o17"])
    if c == 2:
        return rng.choice([[], [1], [None], [[1, 2]], [{"a": 1}]])
    if c == 3:
        return rng.choice([{}, {"a": 1}, {1: 2}, {"": None}])
    if c == 4:
        return None
    if c == 5:
        return rng.choice([True, False])
    if c == 6:
        return marks(rng.choice(SPECIAL_FLOATS))
    if c == 7:
        return marks(rng.choice([BIG_INT, "-" + BIG_INT, "0x" + "f" * 3000, "1" + "0" * 4400 + ".5"]))
    if c == 8:
        return rng.choice([1.5, -0.5, 1e-9])
    if c == 9:
        return marks(rng.choice(UNICODE_VALUES))
    if c == 10:
        return marks(rng.choice(TAGS))
    return rng.choice(TEMPLATES)


def m_retype(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    path = _pick(rng, doc, lambda p, v: True)
    if path is None:
        return _retyped(rng, marks)
    return _set(doc, path, _retyped(rng, marks))


#: keys the readers look at (Kubernetes, KServe, KAITO, LWS, Ray, operators): retyping them reaches code that
#: a random node rarely does
KNOWN_KEYS = frozenset(
    "kind apiVersion metadata name namespace labels annotations image resources limits requests nvidia.com/gpu "
    "nodeSelector replicas containers initContainers env value valueFrom envFrom args command spec template "
    "predictor model runtime storageUri storage tolerations affinity volumes volumeMounts workerSpec "
    "leaderWorkerTemplate size serviceAccountName ports containerPort modelFormat inference preset resource "
    "instanceType config data vllm engine engineArgs serveConfigV2 applications runtime_env deployments "
    "workerGroupSpecs headGroupSpec rayStartParams minReplicas maxReplicas parallelism tensor pipeline "
    "modelName modelURI url source services componentType extraPodSpec mainContainer roles workers "
    "nodeAffinity requiredDuringSchedulingIgnoredDuringExecution nodeSelectorTerms matchExpressions key "
    "values operator".split()
)


def m_retype_known(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    path = _pick(rng, doc, lambda p, v: p[-1] in KNOWN_KEYS or (isinstance(p[-1], int) and len(p) > 1))
    if path is None:
        return m_retype(doc, rng, marks)
    if rng.random() < 0.3 and isinstance(_get(doc, path), list) and _get(doc, path):
        lst = _get(doc, path)  # one item of a list (a container, an env entry, an arg) retyped
        lst[rng.randrange(len(lst))] = _retyped(rng, marks)
        return doc
    return _set(doc, path, _retyped(rng, marks))


def m_drop_key(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    path = _pick(rng, doc, lambda p, v: isinstance(p[-1], str))
    if path is not None:
        del _get(doc, path[:-1])[path[-1]]
    return doc


_NAME = re.compile(r"[A-Za-z_][\w.-]*")


def m_dup_key(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    path = _pick(rng, doc, lambda p, v: isinstance(p[-1], str) and bool(_NAME.fullmatch(p[-1])))
    if path is not None:
        parent = _get(doc, path[:-1])
        value = _retyped(rng, marks) if rng.random() < 0.5 else parent[path[-1]]
        parent[marks(path[-1])] = value  # the marker becomes the same key name: a duplicate
    return doc


def m_args_shape(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    conts = _containers(doc)
    if not conts:
        return m_retype(doc, rng, marks)
    c = _get(doc, rng.choice(conts))
    key = (
        rng.choice(["args", "command"])
        if ("args" in c) == ("command" in c)
        else ("args" if "args" in c else "command")
    )
    old = c.get(key)
    words = [str(w) for w in old] if isinstance(old, list) else [str(old or "vllm")]
    k = rng.randrange(7)
    if k == 0:
        c[key] = " ".join(words)
    elif k == 1:
        c[key] = [words[: len(words) // 2], words[len(words) // 2 :]]
    elif k == 2:
        c[key] = [*words, None, 8, {"a": 1}, [], 1.5, True]
    elif k == 3:
        c[key] = [*words, *rng.choice(ABSURD)]
    elif k == 4:
        flag, value = rng.choice(ABSURD)
        c[key] = [*words, f"{flag}={value}"]
    elif k == 5:
        c[key] = [*words, *[marks(rng.choice(SPECIAL_FLOATS)) for _ in range(2)]]
    else:
        c[key] = {"a": words}
    return doc


def m_huge_string(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    unit = rng.choice(["a", " ", "{{", "--x ", "9", "$(", "'\""])
    s = (unit * (1_000_000 // len(unit)))[:1_000_000]
    conts = _containers(doc)
    if conts and rng.random() < 0.5:
        c = _get(doc, rng.choice(conts))
        if isinstance(c.get("args"), list):
            c["args"].append(s)
            return doc
        c["image"] = s
        return doc
    path = _pick(rng, doc, lambda p, v: not isinstance(v, (dict, list)))
    return doc if path is None else _set(doc, path, s)


def m_unicode(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    k = rng.randrange(3)
    conts = _containers(doc)
    if k == 0 and conts:
        c = _get(doc, rng.choice(conts))
        args = c.get("args") if isinstance(c.get("args"), list) else []
        c["args"] = [*args, rng.choice(CONFUSABLES), "8192"]
        return doc
    if k == 1:
        path = _pick(rng, doc, lambda p, v: isinstance(p[-1], str))
        if path is not None:
            parent = _get(doc, path[:-1])
            parent[marks(rng.choice(UNICODE_VALUES))] = parent.pop(path[-1])
        return doc
    path = _pick(rng, doc, lambda p, v: not isinstance(v, (dict, list)))
    return doc if path is None else _set(doc, path, marks(rng.choice(UNICODE_VALUES)))


def m_deep(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    n = rng.choice([100, 900, 5000])
    if rng.random() < 0.5:
        raw = "[" * n + "1" + "]" * n
    else:
        raw = "{" + "a: {" * n + "}" * n + "}"
    path = _pick(rng, doc, lambda p, v: True)
    return marks(raw) if path is None else _set(doc, path, marks(raw))


def m_anchor(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    """Replace a value by an alias of another subtree (anchored at its first place), or an undefined one."""
    if rng.random() < 0.2:
        path = _pick(rng, doc, lambda p, v: True)
        return doc if path is None else _set(doc, path, marks("*nowhere"))
    cands = [p for p, v in _walk(doc) if p and isinstance(p[-1], str)]
    if len(cands) < 2:
        return doc
    src, dst = rng.sample(cands, 2)
    if src[: len(dst)] == dst or dst[: len(src)] == src:
        return doc
    value = _get(doc, src)
    text = yaml.safe_dump(value, default_flow_style=True, width=10**9).strip()
    if text.endswith("..."):
        text = text[:-3].strip()
    _set(doc, src, marks(f"&fz {text}"))
    _set(doc, dst, marks("*fz"))
    return doc


def m_merge(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    maps = [p for p, v in _walk(doc) if p and isinstance(v, dict) and v]
    if len(maps) < 1:
        return doc
    dst = rng.choice(maps)
    target = _get(doc, dst)
    k = rng.randrange(4)
    if k == 0 and len(maps) > 1:
        src = rng.choice([p for p in maps if p[: len(dst)] != dst and dst[: len(p)] != p] or [dst])
        if src == dst:
            return doc
        text = yaml.safe_dump(_get(doc, src), default_flow_style=True, width=10**9).strip()
        _set(doc, src, marks(f"&mz {text}"))
        target[marks("<<")] = marks("*mz")
    elif k == 1:
        target[marks("<<")] = marks(rng.choice(["[1, 2]", "x", "null", "{a: 1}", "[{a: 1}, {b: 2}]"]))
    elif k == 2:
        target[marks("<<")] = marks("*undefined")
    else:
        target[marks("<<")] = marks("&mm {args: [--max-model-len, '1e308'], image: x}")
    return doc


def m_tag(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    path = _pick(rng, doc, lambda p, v: True)
    return doc if path is None else _set(doc, path, marks(rng.choice(TAGS)))


def m_template(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    if rng.random() < 0.4:
        path = _pick(rng, doc, lambda p, v: isinstance(v, dict) and isinstance(p[-1], str))
        if path is not None:
            _get(doc, path)[marks("zqline")] = marks(rng.choice(TEMPLATE_LINES))
            return doc
    conts = _containers(doc)
    if conts and rng.random() < 0.5:
        c = _get(doc, rng.choice(conts))
        args = c.get("args") if isinstance(c.get("args"), list) else []
        c["args"] = [*args, "--max-model-len", rng.choice(TEMPLATES)]
        return doc
    path = _pick(rng, doc, lambda p, v: not isinstance(v, (dict, list)))
    return doc if path is None else _set(doc, path, rng.choice(TEMPLATES))


def m_envref(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    conts = _containers(doc)
    if not conts:
        return m_template(doc, rng, marks)
    c = _get(doc, rng.choice(conts))
    ref = rng.choice(ENV_REFS)
    k = rng.randrange(4)
    if k == 0:
        args = c.get("args") if isinstance(c.get("args"), list) else []
        c["args"] = [*args, rng.choice(["--tensor-parallel-size", "--max-model-len", "--model"]), ref]
    elif k == 1:
        c["env"] = [
            {"name": "X", "value": rng.choice(["$(X)", "$(Y)", "8", ""])},
            {"name": "Y", "value": "$(X)"},
            {"name": "MODEL", "valueFrom": rng.choice([None, {}, {"fieldRef": None}, "x"])},
        ]
        args = c.get("args") if isinstance(c.get("args"), list) else []
        c["args"] = [*args, "--model", "$(MODEL)", "--max-model-len", "$(X)"]
    elif k == 2:
        c["env"] = rng.choice([{"X": 1}, "X=1", [None], [{"name": None}], [{"value": "1"}], [["X", "1"]]])
    else:
        c["envFrom"] = rng.choice([[{"configMapRef": {"name": ref}}], "x", [None], {"a": 1}])
    return doc


SCRIPTS = [
    'exec {cmd} "$@"',
    "{cmd} 'unterminated",
    '{cmd} "unterminated',
    "cat <<EOF > /tmp/x\n{cmd}\nEOF\nexec {cmd}",
    "cat <<'EOF'\n--max-model-len 1\nEOF",
    "{cmd} \\\n  --max-model-len 4096 \\\n",
    'bash -c "{cmd} --max-model-len $((1024*8))"',
    'eval "{cmd}"',
    "# {cmd}\ntrue",
    "{cmd} | tee /tmp/log; {cmd} && {cmd} || exit 1",
    "{cmd} $(cat /etc/args) ${{EXTRA_ARGS:-}}",
    'set -e; if [ -n "$X" ]; then {cmd}; fi',
    '{cmd} --max-model-len="$(( MAX ))" --tensor-parallel-size ${{TP}}',
    '{cmd} "\'"\'"\'" \\\\',
    "{cmd} &\nwait",
    "(( {cmd} ))",
    '{cmd} <<< "x"',
    "{cmd} 2>&1 >/dev/null",
    "{cmd} --max-model-len " + BIG_INT,
    'sh -c \'sh -c "sh -c \\"{cmd}\\""\'',
]


def m_shell(doc: Any, rng: random.Random, marks: _Marks) -> Any:
    conts = _containers(doc)
    if not conts:
        return m_retype(doc, rng, marks)
    c = _get(doc, rng.choice(conts))
    words = []
    for key in ("command", "args"):
        v = c.get(key)
        words += [str(w) for w in v] if isinstance(v, list) else ([str(v)] if v is not None else [])
    cmd = " ".join(words) or "vllm serve m"
    script = rng.choice(SCRIPTS).format(cmd=cmd)
    shell = rng.choice(["sh", "/bin/bash", "bash", "/bin/sh"])
    if rng.random() < 0.5:
        c["command"] = [shell, "-c"]
        c["args"] = [script]
    else:
        c["command"] = [shell, rng.choice(["-c", "-ec", "-lc", "-xc"]), script]
        c.pop("args", None)
    return doc


MUTATIONS: dict[str, Callable[[Any, random.Random, _Marks], Any]] = {
    "retype": m_retype,
    "retype-known": m_retype_known,
    "drop-key": m_drop_key,
    "dup-key": m_dup_key,
    "args-shape": m_args_shape,
    "huge-string": m_huge_string,
    "unicode": m_unicode,
    "deep": m_deep,
    "anchor": m_anchor,
    "merge": m_merge,
    "tag": m_tag,
    "template": m_template,
    "envref": m_envref,
    "shell": m_shell,
    "split": lambda d, r, m: d,  # a text mutation (see :func:`_dump_docs`)
}

BROKEN_DOCS = [
    "a: [\n",
    "a: b: c\n",
    "\tkey: 1\n",
    "- a\nb: 1\n",
    "key: 'unterminated\n",
    "a: *undefined\n",
    "!!binary '!!!'\n",
    "kind: Deployment\nspec: [\n",
    '{{ include "x" . }}\n',
    "a: !!int x\n",
    "%YAML 9.9\n",
    "kind: List\nitems: [1, {kind: {a: 1}}, {kind: Deployment, spec: []}]\n",
    "kind: Deployment\nspec: {template: {spec: {containers: 5}}}\n",
    "? [a]\n: b\n",
    "a: &x [*x]\n",
    "- kind: Pod\n  spec: {containers: [{image: vllm/vllm-openai, args: [--model]}]}\n",
    "kind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai:v0.11.0\n    args: ['--tensor-parallel-size', '1e308']\n",
]


# ------------------------------------------------------------------------------------------ text


#: libyaml's emitter, when PyYAML was built with it: the same text as the pure-Python one (the seeded cases of
#: tests/test_fuzz_tree.py compared), several times faster on the long scalars the mutations make, except for
#: a mapping key PyYAML writes as a complex key (``? ''`` for an empty one, any of 128 characters or more) and
#: libyaml as a plain one: a document with a key that is not short is dumped by the pure-Python emitter.
_C_DUMPER = getattr(yaml, "CSafeDumper", None)


def _short_keys(doc: Any) -> bool:
    """Whether every mapping key in ``doc`` is a scalar of 1 to 99 characters on one line."""
    todo = [doc]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if not isinstance(k, (str, int, float, bool, type(None))):
                    return False
                text = k if isinstance(k, str) else repr(k)
                if not 0 < len(text) < 100 or "\n" in text or "\r" in text:
                    return False
                todo.append(v)
        elif isinstance(node, list):
            todo.extend(node)
    return True


def _dump_doc(doc: Any, marks: _Marks) -> str:
    options: dict[str, Any] = {
        "sort_keys": False,
        "allow_unicode": False,
        "width": 10**9,
        "default_flow_style": False,
    }
    if _C_DUMPER is not None and _short_keys(doc):
        text = yaml.dump(doc, Dumper=_C_DUMPER, **options)
    else:
        text = yaml.safe_dump(doc, **options)
    if text.endswith("...\n"):
        text = text[:-4]

    def sub(m: re.Match[str]) -> str:
        return marks.raw[m.group(0)]

    # a template line marker is a whole line: "zqrawNzq: zqrawMzq" -> the template text alone
    lines = []
    for line in text.split("\n"):
        mm = re.fullmatch(r"(\s*)(zqraw\d+zq): (zqraw\d+zq)", line)
        if mm and marks.raw.get(mm.group(2)) == "zqline":
            lines.append(mm.group(1) + marks.raw[mm.group(3)])
        else:
            lines.append(line)
    return re.sub(r"zqraw\d+zq", sub, "\n".join(lines))


def _split(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    if len(lines) < 3:
        return text
    i = rng.randrange(1, len(lines) - 1)
    return "\n".join(lines[:i] + ["---"] + lines[i:])


@dataclass
class Case:
    """One mutant: description, file label, the documents' texts and which one was mutated."""

    desc: str
    label: str
    docs: list[str]
    base_docs: list[str]
    mutated: int

    @property
    def text(self) -> str:
        return join_docs(self.docs)

    @property
    def base_text(self) -> str:
        return join_docs(self.base_docs)


def _files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        pp = Path(p)
        if pp.is_dir():
            files += sorted(
                f for f in pp.rglob("*") if f.suffix in (".yaml", ".yml", ".json") and f.is_file()
            )
        elif pp.is_file():
            files.append(pp)
    return files


def _load(f: Path) -> list[Any] | None:
    try:
        docs = [d for d in yaml.safe_load_all(f.read_text(encoding="utf-8")) if d is not None]
    except (yaml.YAMLError, UnicodeDecodeError, ValueError):
        return None
    return docs or None


def cases(paths: list[str], seed: int, count: int, only: list[str] | None = None) -> Iterator[Case]:
    """``count`` seeded cases from the manifests under ``paths`` (files YAML cannot parse are skipped). A case
    of a file of several documents is, one time in seven (half the time when ``only`` names ``broken-doc``,
    always when it names only that), one document replaced by a broken one (:data:`BROKEN_DOCS`)."""
    import copy

    files = _files(paths)
    parsed: dict[Path, list[Any] | None] = {}
    rng = random.Random(seed)
    kinds = [k for k in only or () if k in MUTATIONS] or sorted(MUTATIONS)
    broken = (
        0.15 if only is None else (1.0 if kinds == sorted(MUTATIONS) else 0.5) if "broken-doc" in only else 0
    )
    n = 0
    while n < count:
        f = rng.choice(files)
        if f not in parsed:
            parsed[f] = _load(f)
        docs = parsed[f]
        if not docs or (only == ["broken-doc"] and len(docs) < 2):
            continue
        i = rng.randrange(len(docs))
        marks = _Marks()
        base = [_dump_doc(d, marks) for d in docs]
        doc = copy.deepcopy(docs[i])
        names = []
        if len(docs) > 1 and rng.random() < broken:
            names.append("broken-doc")
            text = rng.choice(BROKEN_DOCS)
        else:
            split = False
            for _ in range(rng.choice((1, 1, 2, 3))):
                name = rng.choice(kinds)
                names.append(name)
                split = split or name == "split"
                try:
                    doc = MUTATIONS[name](doc, rng, marks)
                except (KeyError, IndexError, TypeError):
                    pass  # an earlier mutation of this case changed the shape under this one's path
            text = _dump_doc(doc, marks)
            if split:
                text = _split(text, rng)
        out = list(base)
        out[i] = text
        yield Case(f"#{n} {'+'.join(names)} of {f.name} doc {i}", f.name, out, base, i)
        n += 1


# ------------------------------------------------------------------------------------------ running


@dataclass
class Outcome:
    """What one CLI run gave: exit status, stderr, diagnostics (from JSON), seconds, problems found."""

    code: int
    stderr: str
    diags: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)


def run_cli(text: str, label: str, scratch: str, paths: list[str] | None = None, jobs: int = 1) -> Outcome:
    """``kvlint check --offline --no-config --jobs JOBS -`` on ``text`` (named ``label``), or on ``paths``
    when given, with every report format, in-process."""
    from click.testing import CliRunner

    from kvlint.cli import main
    from kvlint.report import FORMATS

    args = ["check", "--offline", "--no-config", "--jobs", str(jobs), "--format", "text"]
    if paths is None:
        args += ["--stdin-filename", label]
    files = {fmt: os.path.join(scratch, f"out.{fmt}") for fmt in FORMATS if fmt != "text"}
    for fmt, path in files.items():
        if os.path.exists(path):
            os.unlink(path)
        args += ["--format", f"{fmt}={path}"]
    args += paths or ["-"]
    runner = CliRunner()
    t = time.perf_counter()
    res = runner.invoke(main, args, input=text.encode("utf-8", "surrogatepass"), catch_exceptions=True)
    dt = time.perf_counter() - t
    out = Outcome(res.exit_code, res.stderr if hasattr(res, "stderr") else "", seconds=dt)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        tb = "".join(traceback.format_exception(res.exception, limit=-10))
        out.problems.append("exception: " + tb)
        return out
    if res.exit_code > 1 and not re.search(r"kvlint: error|Error:", out.stderr):
        out.problems.append(f"exit {res.exit_code} without a diagnostic; stderr={out.stderr[:300]!r}")
    if res.exit_code > 1:
        return out
    stdout = res.stdout
    if any(c in stdout for c in "\x00\x1b\u202e"):
        out.problems.append("text report holds raw control characters")
    try:
        with open(files["json"], encoding="utf-8") as fh:
            out.diags = json.load(fh)["diagnostics"]
        with open(files["sarif"], encoding="utf-8") as fh:
            json.load(fh)
        with open(files["jsonl"], encoding="utf-8") as fh:
            for line in fh:
                json.loads(line)
        ElementTree.parse(files["junit"])
        for fmt in ("github", "markdown"):
            with open(files[fmt], encoding="utf-8") as fh:
                fh.read()
    except Exception:
        out.problems.append("report does not parse: " + traceback.format_exc(limit=-3))
    internal = [
        d["message"] for d in out.diags if d["rule"] == "KV503" and "could not finish" in d["message"]
    ]
    if internal:
        out.problems.append("pipeline hid an exception: " + internal[0][:800])
    return out


def _doc_ranges(docs: list[str]) -> list[tuple[int, int]]:
    """1-based first and last line of each document in ``"---\\n".join(docs)``."""
    out = []
    line = 1
    for i, d in enumerate(docs):
        if i:
            line += 1  # the "---" line
        n = d.count("\n") + (0 if d.endswith("\n") else 1)
        out.append((line, line + max(n, 1) - 1))
        line += n
    return out


def _by_doc(diags: list[dict[str, Any]], docs: list[str]) -> dict[int, set[tuple[str, str, int]]]:
    """Findings per document index: ``(rule, object, line within the document)``."""
    ranges = _doc_ranges(docs)
    out: dict[int, set[tuple[str, str, int]]] = {}
    for d in diags:
        line = d.get("line") or 0
        for j, (a, b) in enumerate(ranges):
            if a <= line <= b:
                out.setdefault(j, set()).add((d["rule"], d.get("object", ""), line - a))
                break
    return out


REMOVED = "# (document removed)\n"


def join_docs(docs: list[str]) -> str:
    """The documents as one file (``---`` between them)."""
    return "---\n".join(docs)


def removed(docs: list[str], i: int) -> list[str]:
    """``docs`` with document ``i`` replaced by a comment (the file as if that document were absent)."""
    return [REMOVED if j == i else d for j, d in enumerate(docs)]


def hidden(
    bases: list[tuple[list[dict[str, Any]], list[str]]],
    got: list[dict[str, Any]],
    got_docs: list[str],
    i: int,
) -> list[tuple[int, tuple[str, str, int]]]:
    """Findings of documents other than ``i`` present in every one of ``bases`` (``(findings, documents)`` of
    the file unmutated and of the file without document ``i``) and missing from ``got`` (the file with
    document ``i`` mutated): what the mutated document hid. A finding that depends on document ``i`` (a
    ConfigMap's env read by a Deployment, a ServingRuntime joined to its InferenceService) changes when the
    document is removed, so it is not counted. Meaningful when all files hold the same number of documents."""
    common: dict[int, set[tuple[str, str, int]]] | None = None
    for diags, docs in bases:
        by = _by_doc(diags, docs)
        common = by if common is None else {j: common.get(j, set()) & by.get(j, set()) for j in common}
    after = _by_doc(got, got_docs)
    return [
        (j, f)
        for j in range(len(got_docs))
        if j != i
        for f in sorted((common or {}).get(j, set()) - after.get(j, set()))
    ]


def fuzz(
    paths: list[str],
    seed: int,
    count: int,
    limit_s: float,
    factor: float,
    only: list[str] | None = None,
    save: str | None = None,
    verbose: bool = False,
    dir_every: int = 0,
) -> tuple[list[str], int]:
    """Run ``count`` cases; returns the failure descriptions and the number of cases run.

    Time is compared with the unmutated file; hiding with both the unmutated file and the file whose mutated
    document is removed (see :func:`hidden`: a broken document may take away what it provides to the others,
    such as a ConfigMap's env, but no more than its absence does). Every ``dir_every``-th case (0: none) is
    also linted as a directory with an unmutated manifest beside it, with ``--jobs 2``: that file's findings
    must be those it has alone."""
    failures: list[str] = []
    runs: dict[str, Outcome] = {}
    n = 0

    def cached(text: str, label: str, scratch: str) -> Outcome:
        key = label + "\0" + text
        if key not in runs:
            runs[key] = run_cli(text, label, scratch)
        return runs[key]

    rng_files = random.Random(seed + 1)
    with tempfile.TemporaryDirectory(prefix="kvlint-fuzz-") as scratch:
        for case in cases(paths, seed, count, only):
            n += 1
            base = cached(case.base_text, case.label, scratch)
            got = run_cli(case.text, case.label, scratch)
            problems = list(got.problems)
            if got.seconds > limit_s and got.seconds > factor * max(base.seconds, 0.05):
                problems.append(f"took {got.seconds:.2f} s (unmutated {base.seconds:.2f} s)")
            if got.code <= 1 and len(case.docs) > 1 and "split" not in case.desc:
                without = removed(case.base_docs, case.mutated)
                absent = cached(join_docs(without), case.label, scratch)
                if not absent.problems and not base.problems:
                    bases = [(base.diags, case.base_docs), (absent.diags, without)]
                    lost = hidden(bases, got.diags, case.docs, case.mutated)
                    if lost:
                        problems.append(f"findings of other documents hidden: {lost[:5]}")
            if dir_every and n % dir_every == 0 and got.code <= 1:
                problems += _beside(case, rng_files, scratch, cached)
            if verbose:
                print(f"{case.desc}: exit {got.code} {got.seconds:.2f}s", file=sys.stderr)
            if problems:
                failures.append(f"== {case.desc}\n" + "\n".join(problems))
                print(failures[-1] + "\n", flush=True)
                if save:
                    os.makedirs(save, exist_ok=True)
                    name = case.desc.split(" ")[0].lstrip("#")
                    Path(save, f"{name}.yaml").write_bytes(case.text.encode("utf-8", "surrogatepass"))
            if len(runs) > 2000:
                runs.clear()
    return failures, n


def _beside(
    case: Case, rng: random.Random, scratch: str, cached: Callable[[str, str, str], Outcome]
) -> list[str]:
    """Lint ``case`` as a file in a directory beside an unmutated manifest with ``--jobs 2``; the problems
    (an exception, a report that does not parse, the other file's findings changed)."""
    import shutil

    companion = F_COMPANION
    alone = cached(companion, "companion.yaml", scratch)
    d = os.path.join(scratch, "dir")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    Path(d, "a-" + Path(case.label).stem + ".yaml").write_bytes(case.text.encode("utf-8", "surrogatepass"))
    other = os.path.join(d, "z-companion.yaml")
    Path(other).write_text(companion, encoding="utf-8")
    got = run_cli("", "", scratch, paths=[d], jobs=2)
    problems = [f"(as a directory, --jobs 2) {p}" for p in got.problems]
    if got.code > 1:
        return problems
    want = {(x["rule"], x.get("object", ""), x.get("line")) for x in alone.diags}
    have = {(x["rule"], x.get("object", ""), x.get("line")) for x in got.diags if x.get("file") == other}
    if want != have:
        problems.append(f"(as a directory) the unmutated file's findings changed: {sorted(want ^ have)[:5]}")
    return problems


#: the unmutated manifest linted beside a mutant (a vLLM Deployment with findings of several rules)
F_COMPANION = """apiVersion: apps/v1
kind: Deployment
metadata: {name: companion, namespace: default}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: [--model, meta-llama/Llama-3.1-8B-Instruct, --tensor-parallel-size, '3', --max-model-len, '131072']
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def readme_config() -> Any:
    """The commented example ``.kvlint.yaml`` of README.md (every key), parsed."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    i = text.index("\naccelerators:")
    start = text.index("\n", text.rindex("```yaml", 0, i)) + 1
    return yaml.safe_load(text[start : text.index("```", i)])


def config_cases(seed: int, count: int) -> Iterator[tuple[str, str]]:
    """``count`` seeded ``(description, text)`` mutants of README's example configuration."""
    import copy

    src = readme_config()
    rng = random.Random(seed)
    kinds = sorted(k for k in MUTATIONS if k not in ("split", "shell", "envref", "args-shape"))
    for n in range(count):
        marks = _Marks()
        doc = copy.deepcopy(src)
        names = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            names.append(rng.choice(kinds))
            try:
                doc = MUTATIONS[names[-1]](doc, rng, marks)
            except (KeyError, IndexError, TypeError):
                pass
        yield f"#{n} {'+'.join(names)} of README's .kvlint.yaml", _dump_doc(doc, marks)


def fuzz_config(seed: int, count: int, limit_s: float = 5.0) -> tuple[list[str], int]:
    """Validate ``count`` mutated configurations with :func:`kvlint.config.parse_config` (as a discovered
    ``.kvlint.yaml`` in a scratch directory, so relative paths resolve there): each must give a
    :class:`~kvlint.config.ConfigError` or a configuration, within ``limit_s`` seconds."""
    from kvlint.config import ConfigError, parse_config

    failures: list[str] = []
    n = 0
    with tempfile.TemporaryDirectory(prefix="kvlint-fuzz-") as scratch:
        path = os.path.join(scratch, ".kvlint.yaml")
        for desc, text in config_cases(seed, count):
            n += 1
            t = time.perf_counter()
            try:
                parse_config(text.encode("utf-8", "surrogatepass"), path)
            except ConfigError:
                pass
            except Exception:
                failures.append(f"== {desc}\n{traceback.format_exc(limit=-4)}")
                print(failures[-1], flush=True)
            if time.perf_counter() - t > limit_s:
                failures.append(f"== {desc}\ntook {time.perf_counter() - t:.2f} s")
    return failures, n


def default_paths() -> list[str]:
    """The shared corpus (when present) and this repository's collected fixtures."""
    return [
        p
        for p in (str(REPO.parent / "shared" / "corpus" / "manifests"), str(REPO / "fixtures" / "collected"))
        if os.path.exists(p)
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--limit", type=float, default=5.0, help="seconds a case may take (with --factor)")
    ap.add_argument("--factor", type=float, default=20.0, help="times the unmutated manifest's time")
    ap.add_argument("--only", nargs="*", choices=[*sorted(MUTATIONS), "broken-doc"], help="mutation kinds")
    ap.add_argument("--save", help="directory for failing mutants")
    ap.add_argument("--dir-every", type=int, default=10, help="every Nth case also as a directory, -j 2")
    ap.add_argument("--config-cases", type=int, default=0, help="also N mutants of README's .kvlint.yaml")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    t = time.perf_counter()
    failures, n = fuzz(
        args.paths or default_paths(),
        args.seed,
        args.cases,
        args.limit,
        args.factor,
        args.only,
        args.save,
        args.verbose,
        args.dir_every,
    )
    if args.config_cases:
        more, m = fuzz_config(args.seed, args.config_cases, args.limit)
        failures += more
        n += m
    print(f"{len(failures)} failing case(s) of {n} (seed {args.seed}) in {time.perf_counter() - t:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
