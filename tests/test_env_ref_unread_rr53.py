"""An ``env`` value that references (``$(S)``) a variable the container defines with a value kvlint cannot read
(a ``secretKeyRef``, an ``envFrom`` Secret) is not known either: the kubelet substitutes the secret's value
(kubernetes pkg/kubelet/kubelet_pods.go ``makeEnvironmentVariables``, third_party/forked/golang/expansion). It was
taken as the literal text ``$(S)``: a bare ``$ARGS`` of the script then gave vLLM the option ``$(S)`` (a KV205
error) and the container was sized as if ARGS held no setting."""

from __future__ import annotations

from kvlint.engines.command import container_env, env_unknown
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

_SECRET = {"name": "S", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}


def test_reference_to_an_unread_value_is_not_known() -> None:
    container = {
        "env": [_SECRET, {"name": "ARGS", "value": "--x $(S)"}, {"name": "B", "value": "$$(S) $(T)"}]
    }
    env, _locs = container_env(container)
    assert "ARGS" not in env  # was "--x $(S)"
    assert env["B"] == "$(S) $(T)"  # an escaped reference, and one to a name nothing defines, stay as written
    assert "ARGS" in env_unknown(container, env)


def test_redefined_literal_is_known_again() -> None:
    container = {"env": [_SECRET, {"name": "S", "value": "lit"}, {"name": "ARGS", "value": "$(S)"}]}
    assert container_env(container)[0]["ARGS"] == "lit"


def test_reference_into_an_unread_env_from() -> None:
    container = {
        "envFrom": [{"secretRef": {"name": "s"}}],
        "env": [{"name": "ARGS", "value": "$(FROM_SECRET)"}],
    }
    assert "ARGS" not in container_env(container)[0]
    # no envFrom: a name nothing defines stays as the kubelet leaves it
    assert container_env({"env": [{"name": "ARGS", "value": "$(NONE)"}]})[0]["ARGS"] == "$(NONE)"


_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: v}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        command: ["/bin/bash", "-c"]
        args: ["exec vllm serve Qwen/Qwen2.5-7B-Instruct $ARGS"]
        env:
        - {name: S, valueFrom: {secretKeyRef: {name: s, key: k}}}
        - {name: ARGS, value: "$(S)"}
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_bare_word_of_such_a_variable_leaves_the_arguments_unknown() -> None:
    result = run_documents(load_text(_MANIFEST, "d.yaml"), Options(allow_hub=False))
    rules = {d.rule: d.message for d in result.diagnostics}
    assert "KV205" not in rules  # was: unknown vLLM option $(S)
    assert "not all known" in rules["KV503"]
