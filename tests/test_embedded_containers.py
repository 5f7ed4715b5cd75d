"""An object that holds a serving container as text (a Crossplane Composition whose function-go-templating step
writes the Deployment from an inline template, a manifest kept in a ConfigMap) was passed in silence: kvlint
lints manifests, and no PodSpec is there to find. It now says the container is not read (KV503 info, counted
"not read"), naming the text's place and the engine image, with the command that renders it. Text without an
engine image, and objects whose own pods run the engine, say nothing. The Composition is made up in the shape
of Crossplane's function-go-templating examples (a provider-kubernetes Object wrapping a Deployment)."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.sizing import summarise

_COMPOSITION = """\
apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata: {name: llminference}
spec:
  compositeTypeRef: {apiVersion: inference.example.org/v1alpha1, kind: XLLMInference}
  mode: Pipeline
  pipeline:
  - step: render
    functionRef: {name: function-go-templating}
    input:
      apiVersion: gotemplating.fn.crossplane.io/v1beta1
      kind: GoTemplate
      source: Inline
      inline:
        template: |
          apiVersion: kubernetes.crossplane.io/v1alpha2
          kind: Object
          spec:
            forProvider:
              manifest:
                apiVersion: apps/v1
                kind: Deployment
                spec:
                  template:
                    spec:
                      containers:
                      - name: vllm
                        image: "vllm/vllm-openai:v0.11.0"
                        args: ["--model", "{{ .observed.composite.resource.spec.model }}"]
"""
_QUIET = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: web}
data:
  pod.yaml: |
    containers:
    - name: web
      image: nginx:1.27
  start.sh: |
    #!/bin/sh
    exec vllm serve Qwen/Qwen2.5-7B-Instruct
"""


def _check(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    f = tmp_path / "x.yaml"
    f.write_text(text)
    return run_check([str(f)], Options(allow_hub=False))


def test_a_composition_holding_the_engine_as_a_template_is_said_not_read(tmp_path: Path) -> None:
    result = _check(tmp_path, _COMPOSITION)
    (d,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert d.severity == "info" and d.object == "Composition/llminference"
    assert (
        "its serving container is text in spec.pipeline[0].input.inline.template (image vllm/vllm-openai:v0.11.0)"
        in d.message
    )
    assert d.loc is not None and d.loc.line == 15
    assert "crossplane render" in d.fix
    assert summarise(result).not_read == 1


def test_text_without_an_engine_image_says_nothing(tmp_path: Path) -> None:
    result = _check(tmp_path, _QUIET)
    assert not result.diagnostics and summarise(result).not_read == 0


def test_an_object_whose_pods_run_the_engine_gets_no_note(tmp_path: Path) -> None:
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, annotations: {example: "image: vllm/vllm-openai:v0.9.0\\nnot a pod"}}
spec:
  selector: {matchLabels: {app: llm}}
  template:
    metadata: {labels: {app: llm}}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, "8192"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""
    result = _check(tmp_path, text)
    assert not [d for d in result.diagnostics if "serving container is text" in d.message]


#: A Tekton Task whose step applies a Deployment from a heredoc in its args (made up in the shape of Tekton's
#: kubectl steps): the text is a list item, not a mapping value.
_TASK = """\
apiVersion: tekton.dev/v1
kind: Task
metadata: {name: deploy-vllm}
spec:
  steps:
    - name: apply
      image: bitnami/kubectl:1.30
      args:
        - |
          cat <<EOF | kubectl apply -f -
          apiVersion: apps/v1
          kind: Deployment
          metadata: {name: vllm}
          spec:
            template:
              spec:
                containers:
                  - name: vllm
                    image: vllm/vllm-openai:v0.11.0
          EOF
"""


def test_text_in_a_list_item_is_named_without_a_leading_dot(tmp_path: Path) -> None:
    """The place of text found as a list item was written ``.spec.steps[0].args[0]``: the path now reads as
    the other paths do."""
    (d,) = [d for d in _check(tmp_path, _TASK).diagnostics if d.rule == "KV503"]
    assert (
        "its serving container is text in spec.steps[0].args[0] (image vllm/vllm-openai:v0.11.0)" in d.message
    )
    assert d.loc is not None and d.loc.line == 9


def _reference_text_with_engine_image(node, path, depth=0):
    """The walk as it was before perf48 (a path written for every value), to compare the lazy one with."""
    from kvlint.source import loc_of
    from kvlint.workloads.operators import _EMBED_DEPTH, engine_image_in_text

    if depth > _EMBED_DEPTH:
        return None
    if isinstance(node, dict):
        items = [(v, f"{path}.{k}" if path else str(k)) for k, v in node.items()]
        keys = list(node)
    elif isinstance(node, list):
        items = [(v, f"{path}[{i}]") for i, v in enumerate(node)]
        keys = list(range(len(node)))
    else:
        return None
    for key, (v, at) in zip(keys, items, strict=True):
        if isinstance(v, str):
            if "\n" in v and "image" in v:
                hit = engine_image_in_text(v)
                if hit is not None:
                    return at, hit, loc_of(node, key)
        elif isinstance(v, (dict, list)):
            found = _reference_text_with_engine_image(v, at, depth + 1)
            if found is not None:
                return found
    return None


def test_the_path_written_only_for_the_string_found_is_the_one_written_for_every_value() -> None:
    """perf48 writes the dotted path only for the string found; it must be the path the walk wrote before, for keys
    and list items at every level, int keys, a list at the top, a text deeper than the walk looks, and no text."""
    from kvlint.load import load_text
    from kvlint.workloads.operators import _EMBED_DEPTH, _text_with_engine_image

    text = "containers:\n- name: x\n  image: vllm/vllm-openai:v0.11.0\n"
    other = "steps:\n- image: busybox\n"
    deep: object = {"t": text}
    for _ in range(_EMBED_DEPTH + 2):
        deep = {"d": deep}
    shapes = [
        {"spec": {"steps": [{"name": "a", "input": {"inline": {"template": text}}}]}},
        {"spec": {"a": other, "b": [[], [{"c": other}, {"d": text}]]}},
        {1: {2: [text]}},
        [{"x": [other, text]}],
        {"only": other, "n": 1, "none": None},
        deep,
        {"near": {"d": {"d": {"t": text}}}},
    ]
    for shape in shapes:
        for path in ("", "spec"):
            assert _text_with_engine_image(shape, path) == _reference_text_with_engine_image(shape, path)
    loaded = (
        load_text(
            "kind: Composition\nspec:\n  pipeline:\n  - step: t\n    input:\n      template: |\n"
            "        image: vllm/vllm-openai:v0.11.0\n        args: [x]\n",
            "c.yaml",
        )
        .documents[0]
        .data
    )
    got = _text_with_engine_image(loaded, "")
    assert got == _reference_text_with_engine_image(loaded, "")
    assert got is not None and got[0] == "spec.pipeline[0].input.template" and got[2] is not None
