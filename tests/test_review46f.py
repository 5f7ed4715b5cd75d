"""Review of break46 (branch review46F): each test fails before its fix."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

# What go-yaml v2 (go.yaml.in/yaml/v2 v2.4.2, the reader of sigs.k8s.io/yaml, so of kubectl and Helm) gives these
# plain scalars, read off its resolve.go: ``resolveMap`` holds y/Y/n/N as booleans; a digit- or sign-led text has
# its ``_`` removed and is tried with strconv.ParseInt(s, 0, 64) (base prefixes 0x/0o/0b in either case, a leading
# 0 for octal) and then yamlStyleFloat ``^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$``; a ``.``-led text
# with strconv.ParseFloat as written. PyYAML's YAML 1.1 resolvers leave every one of these a string.
GO_YAML_V2 = [
    ("y", True),
    ("Y", True),
    ("n", False),
    ("N", False),
    ("0o17", 15),
    ("0O17", 15),
    ("0X1F", 31),
    ("1e3", 1000.0),
    ("1E3", 1000.0),
    ("1.5e3", 1500.0),
    ("08", 8.0),
    ("-.5", -0.5),
    ("+.5", 0.5),
    (".5e3", 500.0),
    ("-1_0e2", -1000.0),
    # and texts both leave as written (PyYAML made ".5_" 0.5; Go's ParseFloat refuses the "_")
    (".5_", ".5_"),
    ("1e400", "1e400"),
    ("0b", "0b"),
    ("v1", "v1"),
    ("2001-12-14", "2001-12-14"),
]


@pytest.mark.parametrize(("text", "want"), GO_YAML_V2)
def test_plain_scalars_typed_as_go_yaml_v2_types_them(text: str, want: object) -> None:
    got = load_text(f"k: {text}\n", "s.yaml").documents[0].data["k"]
    assert type(got) is type(want) and got == want, (text, got)
    quoted = load_text(f"k: '{text}'\n", "s.yaml").documents[0].data["k"]
    assert quoted == text


def _deployment(env: str, args: str) -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        "  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}\n"
        "      containers:\n      - name: c\n        image: vllm/vllm-openai:v0.11.0\n"
        f"        args: {args}\n        env:\n{env}"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )


def test_env_value_y_and_args_1e3_are_kv005_errors_as_kubectl_sends_them() -> None:
    # `value: y` reaches the API server as JSON true and `--max-num-seqs 1e3` as 1000.0 (go-yaml v2): the object
    # is refused like `value: true`; kvlint read both as text and planned a container that is never created.
    text = _deployment(
        "        - {name: A, value: y}\n",
        "[--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, '8192', --max-num-seqs, 1e3]",
    )
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    found = sorted(
        d.message.split(":")[0] for d in result.diagnostics if d.rule == "KV005" and d.severity == "error"
    )
    assert found == [
        "args[5] of container 'c' is a number, not a string",
        "the value of env 'A' of container 'c' is a bool, not a string",
    ]


def test_kv005_on_a_custom_resource_names_its_schema_not_the_core_decoder() -> None:
    # A LeaderWorkerSet is a custom resource: the API server checks it against the CRD's structural schema
    # ('spec...env[0].value in body must be of type string: "integer"'), or, where the schema keeps unknown fields,
    # stores it and the operator's decoder fails (knative/serving#449); it never decodes it into core/v1 Container,
    # so the Deployment's "json: cannot unmarshal ... Go struct field EnvVar.value" was the wrong error to quote.
    text = (
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec:\n"
        "  leaderWorkerTemplate:\n    size: 1\n    workerTemplate:\n      spec:\n"
        "        nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}\n"
        "        containers:\n        - name: c\n          image: vllm/vllm-openai:v0.11.0\n"
        "          args: [--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, '8192']\n"
        "          env:\n          - {name: A, value: 1}\n"
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    result = run_documents(load_text(text, "l.yaml"), Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV005" and d.severity == "error"]
    assert "the value of env 'A' of container 'c' is a number, not a string" in d.message
    assert 'must be of type string: "integer"' in d.message and "Go struct field" not in d.message
    assert "LeaderWorkerSet" in d.message
    # a Deployment keeps the core decoder's error
    dep = _deployment("        - {name: A, value: 1}\n", "[--model, meta-llama/Llama-3.1-8B-Instruct]")
    result = run_documents(load_text(dep, "d.yaml"), Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV005" and d.severity == "error"]
    assert "json: cannot unmarshal number into Go struct field EnvVar...value of type string" in d.message
