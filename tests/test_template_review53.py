"""Review of engines53's OpenShift Template parameters (kvlint.template_params) against ``oc process``
(openshift/library-go pkg/template/templateprocessing/template.go and object.go)."""

from __future__ import annotations

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.template_params import MAX_ADDED_CHARS, process_template

TEMPLATE = """\
apiVersion: template.openshift.io/v1
kind: Template
metadata: {{name: vllm-serving}}
parameters:
{parameters}
objects:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {{name: vllm}}
  spec:
    selector: {{matchLabels: {{app: vllm}}}}
    template:
      metadata: {{labels: {{app: vllm}}}}
      spec:
        nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L4}}
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: {args}
          resources:
            limits: {{nvidia.com/gpu: {gpus}}}
"""


def _run(parameters: str, args: str, gpus: str = '"1"'):  # type: ignore[no-untyped-def]
    text = TEMPLATE.format(parameters=parameters, args=args, gpus=gpus)
    return run_documents(load_text(text, "t.yaml"), Options(allow_hub=False))


def test_a_model_parameter_with_no_value_is_oc_process_s_not_an_envsubst_template() -> None:
    # oc process substitutes ${MODEL} in every string of the objects: vLLM never receives it as written, and
    # neither envsubst nor the container's env (write $(MODEL)) is the remedy
    res = _run("- name: MODEL\n  required: true", '[--model, "${MODEL}", --max-model-len, "4096"]')
    kv502 = [d for d in res.diagnostics if d.rule == "KV502"]
    assert len(kv502) == 1, res.diagnostics
    (d,) = kv502
    text = d.message + " " + (d.fix or "")
    assert "OpenShift Template" in text and "oc process -f FILE -p MODEL=VALUE" in text, text
    assert "envsubst" not in text and "$(MODEL)" not in text and "as written" not in text, text
    assert d.severity == "info" and d.loc.line == 20, d


def test_a_non_string_reference_to_a_value_that_is_not_json_is_that_value_as_a_string() -> None:
    # object.go visitUnsettableValues: json.Unmarshal fails on Qwen/Qwen2.5-7B-Instruct, and the value is set
    # as a string
    res = _run(
        "- name: MODEL\n  value: Qwen/Qwen2.5-7B-Instruct",
        '[--model, "${{MODEL}}", --max-model-len, "4096"]',
    )
    (cr,) = res.containers
    assert cr.serving.model is not None and cr.serving.model.value == "Qwen/Qwen2.5-7B-Instruct", (
        res.diagnostics
    )


def test_nan_infinity_and_numbers_past_float64_are_the_value_s_text_as_go_decodes_them() -> None:
    # Go's encoding/json refuses NaN and 1e999 (Python's json reads them as nan and inf): oc process then sets
    # the value as a string, and the findings quote it as the Template writes it
    res = _run(
        '- name: GPUS\n  value: "NaN"\n- name: LEN\n  value: "1e999"',
        '[--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, "${{LEN}}"]',
        gpus='"${{GPUS}}"',
    )
    texts = [d.message for d in res.diagnostics]
    assert any("'1e999'" in t and "--max-model-len" in t for t in texts), texts
    assert any("'NaN'" in t and "nvidia.com/gpu" in t for t in texts), texts
    assert not any("inf" in t.split() or "nan" in t.split() or "'inf'" in t for t in texts), texts


def test_non_string_substitutions_count_against_the_template_s_bound() -> None:
    # a JSON string of 60,000 characters, given 200 times: 12 MB from 1,400 characters written
    value = "x" * 60_000
    data = {
        "kind": "Template",
        "parameters": [{"name": "A", "value": f'"{value}"'}],
        "objects": [{"args": ["${{A}}"] * 200}],
    }
    process_template(data)
    args = data["objects"][0]["args"]  # type: ignore[index]
    made = sum(1 for a in args if a == value)
    assert 0 < made <= MAX_ADDED_CHARS // 60_000 + 1, made
    assert all(a in (value, "${{A}}") for a in args)


SCRIPTS = """\
apiVersion: template.openshift.io/v1
kind: Template
metadata: {name: vllm-serving}
parameters:
- name: MODEL
  value: Qwen/Qwen2.5-7B-Instruct
- name: UTIL
  value: "95"
objects:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: vllm}
  spec:
    selector: {matchLabels: {app: vllm}}
    template:
      metadata: {labels: {app: vllm}}
      spec:
        nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
        containers:
        - name: block
          image: vllm/vllm-openai:v0.11.0
          command: ["/bin/sh", "-c"]
          args:
          - |
            vllm serve ${MODEL} --max-model-len 999999 --gpu-memory-utilization 0.${UTIL} --bogus-flag 1
          resources:
            limits: {nvidia.com/gpu: "1"}
        - name: flow
          image: vllm/vllm-openai:v0.11.0
          command: ["/bin/sh", "-c", "vllm serve ${MODEL} --max-model-len 999999 --bogus-flag 1"]
          resources:
            limits: {nvidia.com/gpu: "1"}
"""


def test_positions_in_a_substituted_script_are_the_manifest_s_own(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # a value longer than its ${NAME} (24 characters for 8) moved every word after it: KV201 pointed 16 columns
    # right of 999999 in the block scalar, and at the string's quote in the flow one
    path = tmp_path / "t.yaml"
    path.write_text(SCRIPTS)
    res = run_documents(load_text(SCRIPTS, str(path)), Options(allow_hub=False))
    lines = SCRIPTS.splitlines()
    seen = set()
    for d in res.diagnostics:
        if d.rule not in ("KV201", "KV205"):
            continue
        word = "999999" if d.rule == "KV201" else "--bogus-flag"
        line = lines[d.loc.line - 1]
        assert word in line, (d, line)
        assert d.loc.column == line.index(word) + 1, (d, line)
        seen.add((d.container, d.rule))
    assert seen == {("block", "KV201"), ("block", "KV205"), ("flow", "KV201"), ("flow", "KV205")}, seen


def test_keys_are_substituted_as_oc_process_visits_a_map_s_keys() -> None:
    # object.go visitValue substitutes each key of a map: ${GPU_RESOURCE} is amd.com/gpu, not a resource name
    # the API server rejects (KV409), and the key keeps its positions
    text = TEMPLATE.format(
        parameters="- name: GPU_RESOURCE\n  value: nvidia.com/gpu\n- name: GPUS\n  value: '2'",
        args="[--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '4096']",
        gpus='"1"',
    ).replace('{nvidia.com/gpu: "1"}', "{'${GPU_RESOURCE}': '${GPUS}'}")
    res = run_documents(load_text(text, "t.yaml"), Options(allow_hub=False))
    assert not [d for d in res.diagnostics if d.rule == "KV409"], res.diagnostics
    (cr,) = res.containers
    assert cr.placement is not None and cr.placement.gpus == 2, cr.placement
    limits = cr.serving.container["resources"]["limits"]
    assert list(limits) == ["nvidia.com/gpu"]
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "'${GPU_RESOURCE}'" in t)
    assert limits.key_locs["nvidia.com/gpu"].line == line and limits.locs["nvidia.com/gpu"].line == line


def _processed(parameters: dict[str, str], strings: list[str]) -> list[str]:
    data = {
        "kind": "Template",
        "parameters": [{"name": k, "value": v} for k, v in parameters.items()],
        "objects": [{"args": list(strings)}],
    }
    process_template(data)
    return data["objects"][0]["args"]  # type: ignore[index,no-any-return]


def test_each_reference_is_replaced_in_turn_where_strings_replace_first_finds_it() -> None:
    # template.go EvaluateParameterSubstitution: out = strings.Replace(out, match[0], value, 1) for each match of
    # the string as written; the first ${B} of out is the one A's value put there
    assert _processed({"A": "${B}", "B": "x"}, ["${A} ${B}"]) == ["x ${B}"]
    # ${${A}}: only ${A} is a reference as written; its value makes a ${B}, which the written ${B}'s turn finds
    assert _processed({"A": "B", "B": "x"}, ["${${A}} ${B}", "${${A}}"]) == ["x ${B}", "${B}"]
    # once, not again: a value holding a reference is not substituted into
    assert _processed({"A": "${B}", "B": "x"}, ["--a=${A}"]) == ["--a=${B}"]


def test_turn_by_turn_replacement_is_bounded() -> None:
    # a stray ${ makes each string replaced in turn (each replacement copies the string): past the Template's
    # bound, strings are left as written
    text = "${" + "${A}" * 1000
    out = _processed({"A": "yy"}, [text] * 20)
    assert out[0] == "${" + "yy" * 1000
    assert out[-1] == text
    assert all(o in (text, out[0]) for o in out)
