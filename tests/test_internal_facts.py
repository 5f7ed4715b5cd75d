"""kvlint's own facts about a workload (the accelerator an operator's field names and what decided it, why its
GPU cannot be known, who chooses its image, what refuses an operator's engine keyword argument, where KServe
stores its model) are typed fields of :class:`kvlint.types.Workload`, set by the reader that knows them. They
used to travel as ``kvlint.io/*`` annotations, which a manifest author could write too and so change what kvlint
reported. A manifest carrying any of those former keys is now linted exactly as without it: each test below lints
a manifest where the key had an effect, with and without it, and compares everything kvlint reports, but for the
KV005 note that the key is not an annotation kvlint reads.

The manifests are made up for these tests (the models are catalogued ones, resolved offline)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kvlint.load import load_text
from kvlint.options import Options
from kvlint.pipeline import run_documents
from kvlint.statement import QUOTED_CHARS, clip_words
from kvlint.types import CheckResult

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def _deployment(annotations: str, *, image: str, args: str, node_selector: str) -> str:
    # the annotations stay on one line, so the manifests with and without a key have the same line numbers
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
  annotations: {{{annotations}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: chat}}}}
  template:
    metadata: {{labels: {{app: chat}}}}
    spec:
      nodeSelector: {{{node_selector}}}
      containers:
      - name: vllm
        image: {image}
        args: [{args}]
        resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def _run(text: str) -> CheckResult:
    return run_documents(load_text(text, "m.yaml"), Options(allow_hub=False))


def _view(res: CheckResult) -> dict[str, Any]:
    """Everything a run reports, diagnostics with their line and column, and per container the placement and
    the model."""
    return {
        "diagnostics": sorted(
            (
                d.rule,
                d.severity,
                d.message,
                d.fix or "",
                d.loc.line if d.loc else 0,
                d.loc.column if d.loc else 0,
            )
            for d in res.diagnostics
        ),
        "containers": [
            (
                cr.workload.name,
                cr.placement.accelerator.id if cr.placement and cr.placement.accelerator else None,
                cr.placement.how if cr.placement else None,
                cr.model.id if cr.model else None,
                cr.model_error,
            )
            for cr in res.containers
        ],
    }


def _without_note(res: CheckResult, key: str) -> CheckResult:
    """``res`` without the one KV005 note saying that the annotation ``key`` is not one kvlint reads."""
    notes = [
        d for d in res.diagnostics if d.rule == "KV005" and f"annotation '{key}' is not one" in d.message
    ]
    assert len(notes) == 1 and notes[0].severity == "info", notes
    return replace(res, diagnostics=[d for d in res.diagnostics if d not in notes])


L4 = "nvidia.com/gpu.product: NVIDIA-L4"
QWEN = "--model=Qwen/Qwen2.5-7B-Instruct, --max-model-len=8192"

#: (former internal key, a value a user might write, the manifest's other annotations, image, args, node
#: selector, what the baseline must report for the key to have had an effect)
CASES = [
    # appended its text to the KV205 of an unknown engine option
    (
        "kvlint.io/engine-kwargs",
        "refused by KEY's owner",
        "",
        "vllm/vllm-openai:v0.11.0",
        QWEN + ", --no-such-option=1",
        L4,
        lambda r: any(d.rule == "KV205" for d in r.diagnostics),
    ),
    # replaced the placement's "annotation kvlint.io/accelerator=..." wording
    (
        "kvlint.io/accelerator-source",
        "the platform team",
        "kvlint.io/accelerator: nvidia-l4, ",
        "vllm/vllm-openai:v0.11.0",
        QWEN,
        "",
        lambda r: r.containers[0].placement.accelerator is not None,
    ),
    # added a reason to the KV501 of a pod whose GPU nothing names
    (
        "kvlint.io/accelerator-why",
        "the GPU is chosen elsewhere",
        "",
        "vllm/vllm-openai:v0.11.0",
        QWEN,
        "",
        lambda r: any(d.rule == "KV501" for d in r.diagnostics),
    ),
    # made KV208 say the image is chosen by someone else instead of asking for a pinned tag
    (
        "kvlint.io/image-source",
        "the platform team",
        "",
        "vllm/vllm-openai:latest",
        QWEN,
        L4,
        lambda r: any(d.rule == "KV208" for d in r.diagnostics),
    ),
    # named the model of a container whose model directory kvlint cannot read
    (
        "kvlint.io/model-storage",
        "s3://models/Qwen2.5-7B-Instruct",
        "",
        "vllm/vllm-openai:v0.11.0",
        "--model=/mnt/models, --max-model-len=8192",
        L4,
        lambda r: r.containers[0].model is None,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_former_internal_key_on_a_deployment_changes_nothing(case: tuple[Any, ...]) -> None:
    key, value, others, image, args, node_selector, relevant = case
    base = _run(_deployment(others.rstrip(", "), image=image, args=args, node_selector=node_selector))
    assert relevant(base), f"the baseline manifest does not exercise {key}"
    given = _run(
        _deployment(f"{others}{key}: {value!r}", image=image, args=args, node_selector=node_selector)
    )
    assert _view(_without_note(given, key)) == _view(base)
    assert given.containers[0].workload.annotations[key] == value  # the key was read as an annotation


def _kubeai(annotations: str) -> str:
    text = (FIX / "crds" / "kubeai-model-annotated.yaml").read_text(encoding="utf-8")
    return text.replace(
        "  name: qwen3-8b-l4\n", "  name: qwen3-8b-l4\n  annotations: {" + annotations + "}\n", 1
    )


@pytest.mark.parametrize("key", ["kvlint.io/accelerator-source", "kvlint.io/image-source"])
def test_a_former_internal_key_on_an_operator_object_changes_nothing(key: str) -> None:
    """On a KubeAI Model, whose reader derives the accelerator and the image source itself: a user's value of the
    same key used to replace the derived one."""
    base = _run(_kubeai(""))
    (cr,) = base.containers
    assert cr.placement is not None and cr.placement.how.startswith(
        "KubeAI spec.resourceProfile=nvidia-gpu-l4:1"
    )
    assert any(
        d.rule == "KV208" and "chosen by the KubeAI installation" in d.message for d in base.diagnostics
    )
    given = _run(_kubeai(f"{key}: ''"))
    assert _view(_without_note(given, key)) == _view(base)
    given = _run(_kubeai(f"{key}: the platform team"))
    assert _view(_without_note(given, key)) == _view(base)


def test_the_user_annotations_still_beat_what_a_reader_derives() -> None:
    """``kvlint.io/accelerator`` and ``kvlint.io/model`` are inputs: on a KubeAI Model they replace the GPU of
    its resource profile and the model of its url."""
    res = _run(_kubeai("kvlint.io/accelerator: nvidia-a10g, kvlint.io/model: Qwen/Qwen2.5-7B-Instruct"))
    (cr,) = res.containers
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-a10g"
    assert cr.placement.how == "annotation kvlint.io/accelerator=nvidia-a10g"
    assert cr.workload.derived_accelerator is None
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B-Instruct"


def test_an_unknown_kvlint_annotation_gets_a_note_naming_the_one_meant() -> None:
    """KV005 (info) at each ``kvlint.io/`` annotation kvlint does not read, on the object or its pod template, with
    the annotation it reads that a misspelling stands for; the three it reads get none."""
    text = _deployment(
        "kvlint.io/acelerator: nvidia-l4, kvlint.io/Model: Qwen/Qwen2.5-7B-Instruct, kvlint.io/ignroe: 'KV202=ok', "
        "kvlint.io/image-source: me, kvlint.io/accelerator: nvidia-l4, kvlint.io/ignore: 'KV202=fine'",
        image="vllm/vllm-openai:v0.11.0",
        args=QWEN,
        node_selector="",
    ).replace(
        "metadata: {labels: {app: chat}}",
        "metadata: {labels: {app: chat}, annotations: {kvlint.io/modle: x}}",
    )
    res = _run(text)
    notes = {d.message.split("'")[1]: d for d in res.diagnostics if d.rule == "KV005"}
    assert set(notes) == {
        "kvlint.io/acelerator",
        "kvlint.io/Model",
        "kvlint.io/ignroe",
        "kvlint.io/image-source",
        "kvlint.io/modle",
    }
    assert {k: d.fix for k, d in notes.items()} == {
        "kvlint.io/acelerator": "rename 'kvlint.io/acelerator' to 'kvlint.io/accelerator'",
        "kvlint.io/Model": "rename 'kvlint.io/Model' to 'kvlint.io/model'",
        "kvlint.io/ignroe": "rename 'kvlint.io/ignroe' to 'kvlint.io/ignore'",
        "kvlint.io/image-source": "remove 'kvlint.io/image-source'",  # a word of its own, not a misspelling
        "kvlint.io/modle": "rename 'kvlint.io/modle' to 'kvlint.io/model'",
    }
    assert {d.severity for d in notes.values()} == {"info"}
    lines = text.splitlines()
    for key, d in notes.items():
        assert d.loc is not None and key in lines[d.loc.line - 1]  # at the annotation, object's or template's


def test_kv005_guess_at_the_edge_of_two_edits_and_for_long_keys() -> None:
    """The 'did you mean' guess compares only names within two characters of a read annotation's length (no two
    edits bridge more), so the edge cases keep their guess: two insertions or two deletions are guessed, three
    are not, and a key of 100,000 characters gets a plain note."""
    long = "kvlint.io/" + "a" * 100_000
    keys = {
        "kvlint.io/acceleratorxx": "rename 'kvlint.io/acceleratorxx' to 'kvlint.io/accelerator'",
        "kvlint.io/acceleratorxxx": "remove 'kvlint.io/acceleratorxxx'",
        "kvlint.io/mdl": "rename 'kvlint.io/mdl' to 'kvlint.io/model'",
        "kvlint.io/ml": "remove 'kvlint.io/ml'",
        long: f"remove '{long}'",
    }
    text = _deployment(
        ", ".join(f"{k}: x" for k in keys if k != long),
        image="vllm/vllm-openai:v0.11.0",
        args=QWEN,
        node_selector="",
    ).replace(
        "metadata: {labels: {app: chat}}",
        f"metadata: {{labels: {{app: chat}}, annotations: {{? {long} : x}}}}",
    )
    res = _run(text)
    notes = {d.message.split("'")[1]: d.fix for d in res.diagnostics if d.rule == "KV005"}
    # the long key is quoted cut to QUOTED_CHARS characters (kvlint.statement.clip_words), its plain note kept
    cut = [k for k in notes if k.startswith("kvlint.io/aaa")]
    assert len(cut) == 1 and "..." in cut[0] and len(cut[0]) < QUOTED_CHARS
    assert notes.pop(cut[0]) == clip_words(keys.pop(long))
    assert notes == keys


def test_kv005_names_twenty_unread_annotations_and_counts_the_rest() -> None:
    """A custom resource's pod template may hold any number of annotations: 110,000 unread kvlint.io/ keys in a
    3 MiB LeaderWorkerSet cost the webhook worker 2.6 s of CPU in KV005 (past the 2 s budget: admitted
    unchecked). KV005 names the first 20 and one more info counts the others, at the first one not named."""
    keys = [f"kvlint.io/mode{i:04d}" for i in range(500)]
    text = _deployment(
        ", ".join(f"{k}: x" for k in keys), image="vllm/vllm-openai:v0.11.0", args=QWEN, node_selector=""
    )
    res = _run(text)
    notes = [d for d in res.diagnostics if d.rule == "KV005"]
    assert len(notes) == 21
    assert {d.message.split("'")[1] for d in notes[:20]} == set(keys[:20])
    assert notes[20].message.startswith(f"480 more kvlint.io/ annotations from '{keys[20]}' on are not")
    assert notes[20].severity == "info" and notes[20].loc is not None


def test_kv005_names_twenty_unknown_fields_and_guesses_a_bounded_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A custom resource's pod template may hold any number of keys (the API server drops unknown fields of
    built-in types only): 60,000 unknown keys in a pod spec took 4.9 s of webhook worker CPU in KV005 (past the
    2 s budget: admitted unchecked). KV005 names the first 20 and one more finding counts the others, and at
    most 64 keys of a walk get a closest-field guess (counted as calls to difflib)."""
    import difflib

    from kvlint.workloads import fields

    calls: list[str] = []
    real = difflib.get_close_matches
    monkeypatch.setattr(
        fields.difflib, "get_close_matches", lambda w, *a, **k: calls.append(w) or real(w, *a, **k)
    )
    keys = [f"imag{i:04d}" for i in range(300)]
    text = _deployment("", image="vllm/vllm-openai:v0.11.0", args=QWEN, node_selector="").replace(
        "        image: vllm/vllm-openai:v0.11.0\n",
        "        image: vllm/vllm-openai:v0.11.0\n" + "".join(f"        {k}: 1\n" for k in keys),
    )
    res = _run(text)
    notes = [d for d in res.diagnostics if d.rule == "KV005"]
    assert len(notes) == 21, len(notes)
    more = [d for d in notes if " more keys " in d.message]
    assert len(more) == 1 and more[0].message.startswith(
        f"280 more keys from '{keys[20]}' in container 'vllm' on"
    )
    assert {d.message.split("'")[1] for d in notes if d is not more[0]} == set(keys[:20])
    assert notes[0].fix == "rename 'imag0000' to 'image'"
    assert len(calls) <= 2 * 64, len(calls)  # the KV005 walk and the KV503 reason's, 64 each at most
