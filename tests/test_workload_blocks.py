"""The building blocks of issue 16's readers: Go-template values, strategic merge, shell arithmetic, the
Kubernetes field names, placeholders and the vLLM-argument test.

Inputs are taken from the real files they serve: KServe's LLMInferenceServiceConfig presets shipped in
kvlint/data/kserve (copies of kserve/kserve config/llmisvcconfig, SOURCE.md there) and the collected
manifests of fixtures/collected.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kvlint.engines.command import unmistakably_vllm
from kvlint.engines.images import engine_of_image, image_placeholder
from kvlint.engines.shell import arithmetic
from kvlint.load import load_text
from kvlint.source import LDict
from kvlint.workloads.fields import as_go_decodes, known_fields, unknown_fields
from kvlint.workloads.gotemplate import render
from kvlint.workloads.merge import patch_with_directives, strategic_merge

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ROOT / "kvlint" / "data" / "kserve"


def _exec_line(preset: str) -> str:
    text = (PRESETS / preset).read_text()
    start = text.index('eval "exec vllm serve')
    return text[start : text.index('$@"', start) + 3]


def test_go_template_trimming_inside_json_strings_keeps_shell_line_continuations() -> None:
    # KServe renders the preset as a JSON document: {{- trims spaces before the action, not the line break
    # (which is the two characters \\n in JSON), so `\\<newline>` stays a line continuation
    line = _exec_line("config-llm-decode-worker-data-parallel.yaml")
    data = {"spec": {"model": {"name": "m"}, "parallelism": {"data": 16, "dataLocal": 8, "tensor": 1}}}
    out, unknown = render(line, data)
    assert "--data-parallel-size 16 \\\n" in out and "--data-parallel-size-local 8 \\\n" in out
    assert "--data-parallel-rpc-port 5555" in out and "--tensor-parallel-size 1" in out
    assert unknown and all("GlobalConfig" in u for u in unknown)  # the installation's own settings stay


def test_go_template_plain_text_mode_trims_line_breaks_too() -> None:
    assert render("a\n  {{- .X }}", {"X": 1}, json_string=False)[0] == "a1"
    assert render("a\n  {{- .X }}", {"X": 1})[0] == "a\n1"


def test_go_template_missing_fields_can_stay_unknown() -> None:
    tmpl = '--served-model-name "{{ .Spec.Model.Name }}"'
    assert render(tmpl, {"spec": {}})[0] == '--served-model-name "<no value>"'
    assert render(tmpl, {"spec": {}}, missing_unknown=True)[0] == tmpl


def test_go_template_met_again_renders_from_its_own_data() -> None:
    # the parsed template is kept for the next service that renders it (a preset's strings): each rendering
    # still reads its own data, in both trimming modes, and the kept tree is not changed by one
    from kvlint.workloads import gotemplate

    line = _exec_line("config-llm-decode-worker-data-parallel.yaml")
    gotemplate._parsed.cache_clear()
    outs = []
    for data_size in (16, 4, 16):
        data = {"spec": {"model": {"name": "m"}, "parallelism": {"data": data_size, "dataLocal": 2}}}
        outs.append(render(line, data))
    assert "--data-parallel-size 16 \\\n" in outs[0][0] and "--data-parallel-size 4 \\\n" in outs[1][0]
    assert outs[2] == outs[0] and outs[1] != outs[0]
    assert gotemplate._parsed.cache_info().hits == 2
    assert render("a\n  {{- .X }}", {"X": 1}, json_string=False)[0] == "a1"
    assert render("a\n  {{- .X }}", {"X": 2})[0] == "a\n2"


def test_go_templates_kept_are_bounded_in_number_and_size() -> None:
    # a webhook worker lives for many reviews: the templates a manifest brings must not pile up in it
    from kvlint.workloads import gotemplate

    gotemplate._parsed.cache_clear()
    long = "{{ .X }}" + " " * gotemplate._CACHED_CHARS
    assert render(long, {"X": 1})[0] == "1" + " " * gotemplate._CACHED_CHARS
    assert gotemplate._parsed.cache_info().currsize == 0  # longer than kept: parsed for itself alone
    for i in range(gotemplate._CACHED_TEMPLATES + 10):
        assert render(f"{i}{{{{ .X }}}}", {"X": "a"})[0] == f"{i}a"
    assert gotemplate._parsed.cache_info().currsize == gotemplate._CACHED_TEMPLATES


def test_strategic_merge_uses_the_core_v1_merge_keys() -> None:
    base = (
        load_text(
            "containers: [{name: main, image: a, env: [{name: X, value: '1'}], args: [--a]}]\n"
            "volumes: [{name: v, emptyDir: {}}]\n",
            "b.yaml",
        )
        .documents[0]
        .data
    )
    patch = (
        load_text(
            "containers: [{name: main, env: [{name: Z, value: '2'}], args: [--b]}, {name: side, image: s}]\n",
            "p.yaml",
        )
        .documents[0]
        .data
    )
    out = strategic_merge(base, patch)
    main, side = out["containers"]
    assert main["image"] == "a" and [e["name"] for e in main["env"]] == ["X", "Z"]
    assert main["args"] == ["--b"] and side["name"] == "side" and out["volumes"][0]["name"] == "v"
    assert main.locs["args"].file == "p.yaml" and main.locs["image"].file == "b.yaml"


def _plain(value: object) -> object:
    """A merged tree as plain JSON values (for comparison)."""
    import json

    return json.loads(json.dumps(value))


_TEMPLATE = (
    "spec:\n"
    "  nodeSelector: {gpu: l4}\n"
    "  volumes: [{name: shm, emptyDir: {medium: Memory}}]\n"
    "  containers:\n"
    "  - name: vllm\n"
    "    image: vllm/vllm-openai:v0.11.0\n"
    "    args: [--model, m, --max-model-len, '8192']\n"
    "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    "    volumeMounts: [{name: shm, mountPath: /dev/shm}]\n"
    "  - {name: side, image: busybox}\n"
)


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        # $deleteFromPrimitiveList/<key>: those values leave the list (whatever the field's patch strategy)
        (
            "spec: {containers: [{name: vllm, $deleteFromPrimitiveList/args: [--max-model-len, '8192']}]}",
            {"args": ["--model", "m"]},
        ),
        # $retainKeys: the base's other keys are dropped
        (
            "spec: {containers: [{name: vllm, $retainKeys: [name, image, args]}]}",
            {"resources": None, "volumeMounts": None, "args": ["--model", "m", "--max-model-len", "8192"]},
        ),
        # $patch: delete in a mapping empties it; in a keyed list item, removes the item
        ("spec: {containers: [{name: vllm, resources: {$patch: delete}}]}", {"resources": {}}),
        ("spec: {containers: [{name: side, $patch: delete}]}", {"containers": ["vllm"]}),
        # $patch: replace in a mapping replaces it; as a list item, the list becomes the patch's items
        ("spec: {$patch: replace, containers: [{name: vllm, image: x}]}", {"spec": ["containers"]}),
        ("spec: {containers: [{$patch: replace}, {name: other, image: x}]}", {"containers": ["other"]}),
        # a patch value with nothing under it in the base loses the mappings that hold $patch
        ("spec: {containers: [{name: vllm, lifecycle: {$patch: delete}}]}", {"lifecycle": None}),
        # no directive: as strategic_merge
        ("spec: {containers: [{name: vllm, args: [--model, m]}]}", {"args": ["--model", "m"]}),
    ],
)
def test_patch_directives_are_applied_as_strategicpatch_applies_them(patch: str, expected: dict) -> None:
    """An operator that applies a free-form patch with ``strategicpatch.StrategicMergePatch`` (RBG's template
    patches) obeys its directives (k8s.io/apimachinery/pkg/util/strategicpatch/patch.go ``mergeMap``,
    ``handleDirectiveInMergeMap``, ``applyRetainKeysDirective``, ``preprocessDeletionListForMerging``,
    ``mergeSliceWithSpecialElements``, ``removeDirectives``): a patch can remove what the template sets, which
    kvlint read as still there (a directive was one more unknown key)."""
    base = load_text(_TEMPLATE, "t.yaml").documents[0].data
    out = _plain(patch_with_directives(base, load_text(patch, "p.yaml").documents[0].data))
    assert isinstance(out, dict)
    spec = out["spec"]
    vllm = next((c for c in spec["containers"] if c.get("name") == "vllm"), {})
    for key, want in expected.items():
        if key == "containers":
            assert [c["name"] for c in spec["containers"]] == want
        elif key == "spec":
            assert sorted(spec) == want
        else:
            assert vllm.get(key) == want, (key, vllm)
    assert not any(k.startswith("$") for c in spec.get("containers", []) for k in c)
    if "$" not in patch:  # no directive: the same as strategic_merge
        assert out == _plain(strategic_merge(base, load_text(patch, "p.yaml").documents[0].data))


def test_keys_are_matched_to_fields_as_go_encoding_json_matches_them() -> None:
    """Go's ``encoding/json`` sets a field from a key spelt in any case (``appendFoldedName``: ASCII upper case,
    and the long s, the Kelvin sign and the dotless/dotted i folding to ASCII), the last key in sorted order
    winning; ``as_go_decodes`` puts each field under its own name from that key, keeps unknown keys and maps
    as they are, and returns an object it does not change as it is."""
    text = (
        "spec:\n"
        "  nodeSelector: {gpu: h100}\n"
        "  nodeselector: {gpu: l4, Gpu: x}\n"
        "  containers:\n"
        "  - {name: a, volumeMounts: [{name: s, mountPath: /dev/shm}], volumemounts: [], Args: [x], args: [y],"
        " \u0061rg\u017f: [z], IMAGE: i, mystery: 1}\n"
    )
    tmpl = load_text(text, "t.yaml").documents[0].data
    out = _plain(as_go_decodes(tmpl, "V1PodTemplateSpec"))
    assert out == {
        "spec": {
            "nodeSelector": {
                "gpu": "l4",
                "Gpu": "x",
            },  # the later key in sorted order; a map's keys as they are
            "containers": [{"name": "a", "volumeMounts": [], "args": ["z"], "image": "i", "mystery": 1}],
        }
    }
    # several keys for one field: each decoded into what the previous left (objects field by field, maps key
    # by key, lists element by element)
    text = (
        "spec:\n"
        "  nodeSelector: {a: '1'}\n"
        "  nodeselector: {b: '2'}\n"
        "  containers:\n"
        "  - {name: a, Resources: {limits: {x: 1}}, resources: {requests: {z: 1}}}\n"
        "  Containers: [{name: b, image: i, args: [p, q]}, {name: c}]\n"
    )
    out = _plain(as_go_decodes(load_text(text, "t.yaml").documents[0].data, "V1PodTemplateSpec"))
    assert out == {
        "spec": {
            "nodeSelector": {"a": "1", "b": "2"},
            "containers": [
                {
                    "name": "a",
                    "image": "i",
                    "args": ["p", "q"],
                    "resources": {"limits": {"x": 1}, "requests": {"z": 1}},
                }
            ],
        }
    }
    plain = load_text("spec: {containers: [{name: a, args: [x]}]}", "p.yaml").documents[0].data
    assert as_go_decodes(plain, "V1PodTemplateSpec") is plain


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("$((LWS_GROUP_SIZE * DP_SIZE_LOCAL))", {"LWS_GROUP_SIZE": "2", "DP_SIZE_LOCAL": "8"}, "16"),
        ("$(( ${LWS_WORKER_INDEX} * DP_SIZE_LOCAL ))", {"DP_SIZE_LOCAL": "8"}, None),  # per pod: unknown
        ("$((-7 / 2))", {}, "-3"),  # the shell truncates toward zero
        ("$(((1 + 2) * 3 % 4))", {}, "1"),
        ("$(date)", {}, None),
    ],
)
def test_shell_arithmetic(text: str, env: dict, expected: str | None) -> None:
    assert arithmetic(text, env) == expected
    if expected is not None and "/" in text:
        assert (
            subprocess.run(["sh", "-c", f"echo {text}"], capture_output=True, text=True).stdout.strip()
            == expected
        )


def test_kubernetes_field_names_come_from_the_client_models() -> None:
    assert {"args", "command", "resources", "livenessProbe"} <= set(known_fields("V1Container"))
    assert known_fields("V1PodSpec")["containers"] == "V1Container"
    c = LDict({"name": "x", "args:": [], "resource": {}})
    assert dict(unknown_fields(c, "V1Container")) == {"args:": "args", "resource": "resources"}


@pytest.mark.parametrize(
    ("image", "placeholder"),
    [
        ("${VLLM_IMAGE_NAME}", True),
        ("$(vllm-cuda-image)", True),
        ("V_IMAGE_NAME", True),
        ("REPLACE_MODEL_SERVER_IMAGE", True),
        ("<image-built-from-dockerfile>", True),
        ("vllm/vllm-openai:v0.11.0", False),
        ("quay.io/rh-aiservices-bu/vllm-openai-ubi9:0.4.2", False),
    ],
)
def test_image_placeholders(image: str, placeholder: bool) -> None:
    assert (image_placeholder(image) is not None) is placeholder


def test_documented_vllm_derived_images() -> None:
    for image in (
        "quay.io/rh-aiservices-bu/vllm-openai-ubi9:0.4.2",
        "quay.io/modh/vllm:rhoai-2.19-cuda",
        "registry.redhat.io/rhaiis/vllm-cuda-rhel9:3.2.1",
        "rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4",
        "ghcr.io/llm-d/llm-d-cuda:v0.9.0",
    ):
        assert engine_of_image(image) == "vllm", image


def test_unmistakably_vllm_arguments() -> None:
    assert unmistakably_vllm(["--model", "m", "--gpu-memory-utilization", "0.9"])
    # --model and --tensor-parallel-size are SGLang options too: vLLM only with other evidence
    assert not unmistakably_vllm(["--model=m", "--tensor-parallel-size=2"])
    assert unmistakably_vllm(["--model=m", "--tensor-parallel-size=2"], evidence=True)
    assert not unmistakably_vllm(["--model-id", "m", "--max-total-tokens", "4096"])  # TGI's
    assert not unmistakably_vllm(["--model", "m"])


def test_unmistakably_vllm_with_abbreviated_options() -> None:
    """argparse's unique-prefix matching: vLLM takes --max-num-batched-token as --max-num-batched-tokens."""
    args = ["--model", "m", "--tensor-parallel-size", "1", "--max-num-batched-token", "2048"]
    assert unmistakably_vllm(args)
    assert unmistakably_vllm(["--model", "m", "--max_num_batched_token=2048"])
    # a prefix of several options is argparse's 'ambiguous option', not an option
    assert not unmistakably_vllm(["--model", "m", "--max-num", "8"], evidence=True)
    # a prefix SGLang's options share (--tensor-parallel-size) is no more vLLM's than the full option
    assert not unmistakably_vllm(["--model", "m", "--tensor-parallel", "2"])
    assert unmistakably_vllm(["--model", "m", "--tensor-parallel", "2"], evidence=True)


def test_an_unknown_vllm_build_with_abbreviated_options_is_read_as_vllm(tmp_path: Path) -> None:
    """OPEA's Gaudi build of vLLM (opea/vllm-gaudi, HabanaAI/vllm-fork's Dockerfile.hpu) with an abbreviated
    option was 'command unreadable' (KV503): read as vLLM (KV504), the abbreviation reported (KV205)."""
    from kvlint.pipeline import Options, run_check

    manifest = tmp_path / "vllm-gaudi.yaml"
    manifest.write_text(
        """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm-gaudi}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
        - name: vllm
          image: opea/vllm-gaudi:latest
          args: [--model, Intel/neural-chat-7b-v3-3, --block-size, "128", --max-num-batched-token, "2048"]
          resources: {limits: {habana.ai/gaudi: 1}}
""",
        encoding="utf-8",
    )
    result = run_check([str(manifest)], Options(allow_hub=False))
    rules = {d.rule: d for d in result.diagnostics}
    assert "KV503" not in rules and "KV504" in rules
    assert (
        "--max-num-batched-token" in rules["KV205"].message
        and "--max-num-batched-tokens" in rules["KV205"].message
    )
