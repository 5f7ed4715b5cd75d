"""Targeted hostile shapes found by ``tools/hostile_shapes.py`` (issue 14): each case failed before its fix
(a traceback out of the pipeline, an exception hidden in KV503, gigabytes of memory, seconds of CPU, or a
read of the server's disk) and must now lint within its time limit with no such failure."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kvlint.engines.command import container_env
from kvlint.engines.options import suggest
from kvlint.engines.shell import ARG_MAX, MAX_ARG_STRLEN, arithmetic, commands
from kvlint.load import load_text
from kvlint.pipeline import INTERNAL_ERROR, run_documents
from kvlint.values import as_int, digits
from kvlint.webhook.request_options import webhook_options
from kvlint.workloads.base import with_injected_env

VLLM = "vllm/vllm-openai:v0.11.0"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
#: CPU seconds (``time.process_time``: the work is in this process; wall time also counts a busy runner's
#: other jobs) within which each hostile shape must be read; the blow-ups these tests guard against took
#: minutes or exhausted memory (3.0 s: the two largest shapes take 1.4-1.6 s alone on an idle 2-core runner and
#: 2.2-2.6 s of CPU while the suite's other worker shares the cores)
LIMIT_S = 3.0


def deployment(args: list[str], env: list[Any] | None = None, **container: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "engine", "image": VLLM, "args": args}
    c["resources"] = {"limits": {"nvidia.com/gpu": 1}}
    if env is not None:
        c["env"] = env
    c.update(container)
    spec = {"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"}, "containers": [c]}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "hostile", "namespace": "default"},
        "spec": {"template": {"spec": spec}},
    }


def lint(obj: Any, label: str = "hostile.json") -> tuple[Any, float]:
    """The webhook's pipeline on ``obj`` (a mapping, or text); asserts nothing was hidden in KV503."""
    text = obj if isinstance(obj, str) else json.dumps(obj, indent=1)
    t = time.process_time()
    result = run_documents(load_text(text, label), webhook_options())
    dt = time.process_time() - t
    hidden = [
        d.message
        for d in result.diagnostics
        if d.rule == "KV503"
        and (d.message.startswith(INTERNAL_ERROR) or "could not read this container's command (" in d.message)
    ]
    assert not hidden, hidden
    return result, dt


def test_env_references_that_double_a_value_stay_bounded() -> None:
    """``V1=$(V0)$(V0)``, ``V2=$(V1)$(V1)``...: 40 steps were 5 TB (MemoryError under the worker's cap,
    the CLI swapping); a value now stops growing at what execve(2) passes."""
    env = [{"name": "V0", "value": "x" * 10}]
    env += [{"name": f"V{i}", "value": f"$(V{i - 1})$(V{i - 1})"} for i in range(1, 40)]
    t = time.process_time()
    values, _ = container_env({"env": env})
    assert time.process_time() - t < LIMIT_S
    assert max(len(v) for v in values.values()) <= MAX_ARG_STRLEN
    assert sum(len(v) for v in values.values()) <= ARG_MAX + MAX_ARG_STRLEN + 40 * 20
    assert values["V3"] == "x" * 80  # small expansions are still made
    assert values["V39"].endswith("$(V38)")  # the one that could not be made is left unresolved
    _, dt = lint(deployment(["--model", MODEL, "--served-model-name", "$(V39)"], env))
    assert dt < LIMIT_S


@pytest.mark.parametrize(
    "script,env",
    [
        ("A=xxxxxxxxxx; " + "A=$A$A; " * 60 + "vllm serve $A", None),
        ("export A=xxxxxxxxxx; " + 'export A="$A$A"; ' * 60 + 'vllm serve m --served-model-name "$A"', None),
        ("vllm serve m " + "$A " * 20000, [{"name": "A", "value": "y" * 100_000}]),
        ("vllm serve m --served-model-name " + "${A}" * 20000, [{"name": "A", "value": "y" * 100_000}]),
    ],
    ids=["assign-doubling", "export-doubling", "unquoted-wide", "joined-wide"],
)
def test_shell_expansions_are_bounded(script: str, env: list[Any] | None) -> None:
    """Shell variables doubled by assignment, or a 100 KB variable repeated, built gigabytes of words."""
    words = [w for cmd in commands(script, {e["name"]: e["value"] for e in env or []}) for w in cmd]
    assert sum(len(w.text) for w in words) <= len(script) + ARG_MAX + MAX_ARG_STRLEN
    _, dt = lint(deployment([script], env, command=["sh", "-c"]))
    assert dt < LIMIT_S


def test_repeated_positional_parameters_are_bounded() -> None:
    """``"$@"`` 5,000 times with a thousand 1 KB arguments was 5 GB of words."""
    script = "vllm serve m " + '"$@" ' * 5000
    obj = deployment([script, "sh", *(["a" * 1000] * 1000)], command=["sh", "-c"])
    _, dt = lint(obj)
    assert dt < LIMIT_S


def test_template_actions_in_a_script_are_restored_in_linear_time() -> None:
    """20,000 ``{{ a }}`` words took quadratic time (each word scanned every action before it)."""
    _, dt = lint(deployment(["vllm serve m " + "{{ a }} " * 20000], command=["sh", "-c"]))
    assert dt < LIMIT_S
    script = "vllm serve {{ .Values.model }} --max-model-len {{ .Values.len }} --served-model-name x{{ .V }}"
    words = [w.text for cmd in commands(script, {}) for w in cmd]
    assert words == ["vllm", "serve", "{{ .Values.model }}", "--max-model-len", "{{ .Values.len }}"] + [
        "--served-model-name",
        "x{{ .V }}",
    ]


@pytest.mark.parametrize(
    "expr,value",
    [
        ("$((2 * 3 + 4))", "10"),
        ("$((-7 / 2))", "-3"),
        ("$((-7 % 2))", "-1"),
        ("$(((1 + 2) * A))", "12"),
        ("$((" + "*".join(["99999999999999999999"] * 300) + "))", None),  # ValueError: 4300-digit limit
        ("$((" + "(" * 5000 + "1" + ")" * 5000 + "))", None),  # RecursionError
        ("$((" + "-" * 5000 + "1))", None),  # RecursionError
        ("$((9223372036854775807 + 1))", None),  # the shell wraps; kvlint does not guess
        ("$((1 / 0))", None),
        ("$((" + "+".join(["1"] * 50000) + "))", "50000"),  # was quadratic (list slicing)
    ],
    ids=[
        "sum",
        "div",
        "mod",
        "paren-var",
        "huge-product",
        "deep-parens",
        "deep-minus",
        "overflow",
        "zero",
        "long",
    ],
)
def test_shell_arithmetic_is_bounded(expr: str, value: str | None) -> None:
    t = time.process_time()
    assert arithmetic(expr, {"A": "4"}) == value
    assert time.process_time() - t < LIMIT_S


SUPERSCRIPT_TWO = "\u00b2"  # str.isdigit() is true of it, int() rejects it


@pytest.mark.parametrize(
    "obj",
    [
        deployment(["--model", MODEL, "--compilation-config", SUPERSCRIPT_TWO]),
        deployment(["--model", MODEL, "--compilation-config", "9" * 5000]),
        deployment([f"vllm serve m --max-num-seqs ${{{SUPERSCRIPT_TWO}}}"], command=["sh", "-c"]),
        deployment([f"vllm serve m --max-num-seqs ${SUPERSCRIPT_TWO}"], command=["sh", "-c"]),
        deployment(["vllm serve m --max-num-seqs ${" + "9" * 5000 + "}"], command=["sh", "-c"]),
        deployment(["--model", MODEL, "--limit-mm-per-prompt", "image=" + SUPERSCRIPT_TWO]),
        {
            "apiVersion": "kubeai.org/v1",
            "kind": "Model",
            "metadata": {"name": "x"},
            "spec": {
                "url": "hf://" + MODEL,
                "engine": "VLLM",
                "resourceProfile": "nvidia-gpu-l4:" + SUPERSCRIPT_TWO,
                "features": ["TextGeneration"],
            },
        },
        {
            "apiVersion": "kubeai.org/v1",
            "kind": "Model",
            "metadata": {"name": "x"},
            "spec": {
                "url": "hf://" + MODEL,
                "engine": "VLLM",
                "resourceProfile": "nvidia-gpu-l4:" + "9" * 5000,
            },
        },
        {
            "apiVersion": "production-stack.vllm.ai/v1alpha1",
            "kind": "VLLMRuntime",
            "metadata": {"name": "x"},
            "spec": {
                "model": {"modelURL": MODEL},
                "deploymentConfig": {"resources": {"gpu": SUPERSCRIPT_TWO}},
            },
        },
    ],
    ids=[
        "compilation-superscript",
        "compilation-5000-digits",
        "shell-braced-superscript",
        "shell-superscript",
        "shell-5000-digit-positional",
        "mm-limit-superscript",
        "kubeai-profile-superscript",
        "kubeai-profile-5000-digits",
        "production-stack-gpu-superscript",
    ],
)
def test_digit_strings_int_cannot_read_are_not_converted(obj: dict[str, Any]) -> None:
    """``s.isdigit()`` then ``int(s)``: a ``²`` or 5,000 digits raised ValueError (out of the pipeline for
    KubeAI and production-stack: a traceback, and the other documents unreported)."""
    other = deployment(["--model", MODEL, "--max-model-len", "131072"])
    other["metadata"]["name"] = "other"
    result, dt = lint(json.dumps(obj) + "\n---\n" + json.dumps(other), "two.yaml")
    assert dt < LIMIT_S
    assert any(d.rule == "KV103" for d in result.diagnostics)  # the other document is still checked


KAITO_IMAGE = "mcr.microsoft.com/aks/kaito/kaito-phi-3-mini-4k-instruct:0.0.2"


@pytest.mark.parametrize("value", [SUPERSCRIPT_TWO, "9" * 5000])
@pytest.mark.parametrize("where", ["probe-port", "kaito-local-rank"])
def test_digit_strings_in_probe_ports_and_kaitos_local_rank(value: str, where: str) -> None:
    """Two more ``isdigit()`` then ``int()`` (found by a fuzz of the webhook's review path): a probe's
    ``httpGet.port`` hid KV408's check in KV503 "kvlint could not finish checking", KAITO's wrapper's
    ``LOCAL_RANK`` made the container's command unreadable. Neither is a number: no port is compared, no port
    derived."""
    if where == "probe-port":
        obj = deployment(["--model", MODEL], startupProbe={"httpGet": {"port": value}})
    else:
        obj = deployment(
            [],
            env=[{"name": "LOCAL_RANK", "value": value}],
            command=["python3", "/workspace/vllm/inference_api.py"],
        )
        obj["spec"]["template"]["spec"]["containers"][0]["image"] = KAITO_IMAGE
    result, dt = lint(obj)
    assert dt < LIMIT_S
    assert result.containers and result.containers[0].serving.engine == "vllm"


def test_infinite_numbers_where_integers_are_read() -> None:
    """``int()`` of an infinite float raises OverflowError, not the ValueError the readers caught (found by a
    fuzz of every field): YAML's ``.inf`` as a probe's ``initialDelaySeconds`` hid the checks of the
    workload in KV503 "kvlint could not finish checking", and ``{"image": 1e400}`` (JSON's infinity) as
    ``--limit-mm-per-prompt`` left the container unsized (KV502 "could not size ... float infinity")."""
    probe = "{httpGet: {port: 8000}, initialDelaySeconds: .inf, periodSeconds: .inf, failureThreshold: .nan}"
    text = json.dumps(deployment(["--model", MODEL])).replace(
        '"resources"', f'"livenessProbe": {probe}, "resources"'
    )
    result, _ = lint(text, "probe.yaml")  # JSON with flow-YAML in it: one YAML document
    assert result.containers
    mm = deployment(["--model", "Qwen/Qwen2.5-VL-7B-Instruct", "--limit-mm-per-prompt", '{"image": 1e400}'])
    result, _ = lint(mm)
    assert not [d.message for d in result.diagnostics if "could not size" in d.message]
    assert result.containers[0].plan is not None
    assert as_int(float("inf")) is None and as_int(float("nan")) is None and as_int("7") == 7


@pytest.mark.parametrize("count", ["1.0e+308", "1.0e+300", str(10**99)])
def test_a_gpu_count_beyond_64_bits_is_no_count(count: str) -> None:
    """``nvidia.com/gpu: 1.0e+308`` (an integral float) was read as that many GPUs: KV406's host-memory sum
    (vLLM V0's swap space per GPU) overflowed a float, hidden in KV503. A count of 2^63 or more is no count,
    as a digit string of more than 19 digits is not one."""
    # vLLM 0.10 runs an fp8_e5m2 KV cache on its V0 engine, which pins --swap-space (4 GiB) per GPU
    obj = deployment(["--model", MODEL, "--kv-cache-dtype=fp8_e5m2"], image="vllm/vllm-openai:v0.10.0")
    obj["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"memory": "16Gi"}}
    text = json.dumps(obj).replace('"memory": "16Gi"', f'"memory": "16Gi", "nvidia.com/gpu": {count}')
    result, _ = lint(text, "gpus.yaml")
    assert result.containers


def test_a_template_object_whose_kind_is_not_a_string() -> None:
    """An OpenShift ``Template`` whose object's ``kind`` is a list or mapping: ``kind in {...}`` raised
    TypeError (unhashable), hidden in KV503."""
    dep = deployment(["--model", MODEL])
    for kind in ([], {}, ["ServingRuntime"]):
        obj = dict(dep, kind=kind)
        template = {"apiVersion": "template.openshift.io/v1", "kind": "Template", "metadata": {"name": "t"}}
        template["objects"] = [obj]
        lint(template)


def test_digits() -> None:
    assert [digits(x) for x in ("8", " 42 ", "0007", "9" * 19)] == [8, 42, 7, int("9" * 19)]
    assert [digits(x) for x in ("", "9" * 20, SUPERSCRIPT_TWO, "\u0661", "-1", "1.0", None, 5)] == [None] * 8


def test_env_entry_names_of_any_type_in_operator_injected_env() -> None:
    """An env entry whose ``name`` is a mapping raised ``unhashable type`` when an operator's variables
    (LWS_GROUP_SIZE in an embedded LeaderWorkerTemplate) were added."""
    loaded = load_text(
        json.dumps({"containers": [{"name": "c", "env": [{"name": {"a": 5}}, {"name": "X"}]}]}), "p"
    )
    ps = loaded.documents[0].data
    out = with_injected_env(ps, [("LWS_GROUP_SIZE", "2", None), ("X", "1", None)])
    names = [e.get("name") for e in out["containers"][0]["env"]]
    assert names == [{"a": 5}, "X", "LWS_GROUP_SIZE"]


def test_option_suggestions_skip_names_no_option_can_be() -> None:
    """difflib on a 100 KB "option" cost seconds per unknown word."""
    t = time.process_time()
    assert suggest("--" + "y" * 100_000, ["--max-model-len"] * 500) is None
    assert time.process_time() - t < 0.5
    assert suggest("--max-model-lenn", ["--max-model-len", "--model"]) == "--max-model-len"


_opened: list[str] = []
_watching: list[bool] = [False]


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _watching[0] and event == "open" and args and isinstance(args[0], str):
        _opened.append(args[0])


def test_webhook_review_never_opens_a_file_named_by_the_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Positions inside a ``sh -c`` script were looked up by reading the file the location names: in the
    webhook, the review's label (``<admission Kind/namespace/name>.json``, from the request) opened in the
    worker's working directory. Here a file of that name exists with other content: it must not be read,
    and the positions must be those of the object's own text."""
    from kvlint.webhook.worker import lint_object

    label = "<admission Deployment/serving/hostile>.json"
    obj = deployment(["vllm serve " + MODEL + "\n  --max-model-len 131072"], command=["sh", "-c"])
    monkeypatch.chdir(tmp_path)
    clean = lint_object(obj, label, webhook_options())
    want = sorted((d.rule, d.loc.line if d.loc else None) for d in clean.diagnostics)
    assert any(d.rule == "KV103" for d in clean.diagnostics)
    decoy = tmp_path / "<admission Deployment" / "serving" / "hostile>.json"
    decoy.parent.mkdir(parents=True)
    decoy.write_text("\n".join(["decoy --max-model-len 131072"] * 200), encoding="utf-8")
    if not _opened and _audit not in getattr(sys, "_kvlint_test_hooks", ()):
        sys.addaudithook(_audit)
        sys._kvlint_test_hooks = (_audit,)  # type: ignore[attr-defined]
    _watching[0] = True
    try:
        result = lint_object(obj, label, webhook_options())
    finally:
        _watching[0] = False
    assert not [p for p in _opened if "admission" in p], _opened
    assert sorted((d.rule, d.loc.line if d.loc else None) for d in result.diagnostics) == want


# ------------------------------------------------------------------- operator readers, every field wrong


def _operator_samples() -> dict[str, dict[str, Any]]:
    """One object per operator reader the webhook's owner chains added (a RoleBasedGroupSet with every role
    pattern and a role template, a DynamoComponentDeployment in both API forms, a NIMPipeline), each field
    set, for :func:`test_operator_readers_take_any_type_in_any_field`."""
    main = deployment(["--model", MODEL])["spec"]["template"]["spec"]["containers"][0]
    tmpl = {
        "metadata": {"annotations": {"a": "b"}},
        "spec": {"containers": [main], "nodeSelector": {"k": "v"}},
    }
    rbg = "workloads.x-k8s.io/v1alpha2"
    roles = [
        {"name": "a", "replicas": 1, "standalonePattern": {"template": tmpl}, "engineRuntimes": [
            {"profileName": "p", "containers": [{"name": "engine", "args": ["--x"], "env": [{"name": "A"}]}]}]},
        {"name": "b", "replicas": 1, "leaderWorkerPattern": {
            "size": 2, "templateRef": {"name": "base", "patch": {"spec": {"hostIPC": True}}},
            "leaderTemplatePatch": {"spec": {"containers": [{"name": "engine", "args": ["--model", "m"]}]}},
            "workerTemplatePatch": {"metadata": {"labels": {"w": "1"}}}}},
        {"name": "c", "replicas": 1, "customComponentsPattern": {"components": [
            {"name": "x", "size": 1, "labels": {"l": "1"}, "annotations": {"a": "1"}, "template": tmpl}]}},
    ]  # fmt: skip
    return {
        "RoleBasedGroupSet": {"apiVersion": rbg, "kind": "RoleBasedGroupSet", "metadata": {"name": "g"},
            "spec": {"groupTemplate": {"spec": {"roleTemplates": [{"name": "base", "template": tmpl}],
                                                "roles": roles}}}},
        "DynamoComponentDeployment/v1alpha1": {"apiVersion": "nvidia.com/v1alpha1",
            "kind": "DynamoComponentDeployment", "metadata": {"name": "d"},
            "spec": {"serviceName": "W", "componentType": "worker", "envs": [{"name": "A", "value": "1"}],
                     "resources": {"limits": {"gpu": "1", "custom": {"x/y": 1}}},
                     "sharedMemory": {"size": "4Gi"}, "livenessProbe": {"httpGet": {"port": 1}},
                     "extraPodSpec": {"mainContainer": main, "containers": [main]}}},
        "DynamoComponentDeployment/v1beta1": {"apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoComponentDeployment", "metadata": {"name": "d"},
            "spec": {"name": "w", "type": "frontend", "sharedMemorySize": "1Gi",
                     "podTemplate": {"spec": {"containers": [{**main, "name": "main"}]}}}},
        "NIMPipeline": {"apiVersion": "apps.nvidia.com/v1alpha1", "kind": "NIMPipeline", "metadata": {"name": "p"},
            "spec": {"services": [{"name": "s", "enabled": True, "spec": {
                "image": {"repository": "nvcr.io/nim/meta/llama", "tag": "1"}, "replicas": 1,
                "resources": {"limits": {"nvidia.com/gpu": 1}}, "nodeSelector": {"a": "b"}}}]}},
    }  # fmt: skip


def _paths(node: Any, at: tuple[Any, ...] = ()) -> Any:
    yield at
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        yield from _paths(v, (*at, k))


def _with(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = json.loads(json.dumps(obj))
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return out


def test_operator_readers_take_any_type_in_any_field() -> None:
    """Every field of a RoleBasedGroupSet, a DynamoComponentDeployment (both API forms) and a NIMPipeline set to
    a value of each wrong type lints without an exception (a crash is an internal error, which a fail-open
    webhook admits unchecked, and a traceback out of kvlint check): a RoleBasedGroup's ``roleTemplates`` that
    is a number and a ``templateRef.name`` that is a list or mapping raised TypeError."""
    wrong: list[Any] = [None, 3, "x", True, [], [1], {}, {"a": [1]}]
    cases = 0
    for name, obj in _operator_samples().items():
        for path in _paths(obj):
            if len(path) < 2:
                continue
            for value in wrong:
                result, dt = lint(_with(obj, path, value), f"{name.replace('/', '-')}.json")
                assert dt < LIMIT_S, (name, path, value)
                cases += 1
    assert cases > 1000


def test_rbg_patch_directives_on_long_lists_are_linear() -> None:
    """A RoleBasedGroup whose role template holds 8,000 containers and whose patch merges into each of them,
    deletes every other one (``$patch: delete``) and removes 8,000 values from an argument list
    (``$deleteFromPrimitiveList/args``): the patch is applied with one lookup per patch item, within the time
    limit (a scan of the base list per patch item took 24 s of CPU for 8,000 containers, and a fail-open webhook
    admits a review its budget cuts short)."""
    n = 8_000
    base = {"spec": {"containers": [{"name": f"c{i}", "image": "busybox", "args": [f"a{j}" for j in range(2)]}
                                    for i in range(n)]}}  # fmt: skip
    patch = {"spec": {"containers": [{"name": f"c{i}", "args": ["x"]} for i in range(n)]
                      + [{"name": f"c{i}", "$patch": "delete"} for i in range(0, n, 2)]
                      + [{"name": "c1", "$deleteFromPrimitiveList/args": [f"v{j}" for j in range(n)]}]}}  # fmt: skip
    obj = {
        "apiVersion": "workloads.x-k8s.io/v1alpha2",
        "kind": "RoleBasedGroup",
        "metadata": {"name": "long"},
        "spec": {
            "roleTemplates": [{"name": "base", "template": base}],
            "roles": [{"name": "r", "standalonePattern": {"templateRef": {"name": "base", "patch": patch}}}],
        },
    }
    from kvlint.workloads import find_workloads

    t = time.process_time()
    (w,) = find_workloads(load_text(json.dumps(obj), "long.json").documents)
    dt = time.process_time() - t
    # as strategicpatch does it: the deleted items leave, then the patch's items of those names come back new
    by_name = {c["name"]: dict(c) for c in w.pod_spec["containers"]}
    assert len(by_name) == n
    assert by_name["c1"] == {"name": "c1", "image": "busybox", "args": ["x"]}
    assert by_name["c0"] == {"name": "c0", "args": ["x"]}
    assert dt < LIMIT_S, dt


def test_many_keys_for_one_field_in_an_rbg_patch_are_linear() -> None:
    """An RBG template patch with 8,000 case variants of ``securityContext`` (each an object with a key of its
    own): Go's ``encoding/json`` decodes each into the object the previous ones filled, and so does kvlint
    (:func:`kvlint.workloads.fields.as_go_decodes`), changing the object it made in place; copying it for each
    key took time quadratic in their number (2.9 s of CPU for 4,000 variants of a map)."""
    import itertools

    from kvlint.workloads import find_workloads

    word = "securitycontext"
    variants = itertools.islice(
        ("".join(c.upper() if b else c for c, b in zip(word, bits, strict=True))
         for bits in itertools.product([0, 1], repeat=len(word))),
        8000,
    )  # fmt: skip
    patch = {"spec": {v: {f"k{i}": "x"} for i, v in enumerate(variants)}}
    tmpl = {"spec": {"containers": [{"name": "a", "image": "busybox"}]}}
    obj = {
        "apiVersion": "workloads.x-k8s.io/v1alpha2",
        "kind": "RoleBasedGroup",
        "metadata": {"name": "keys"},
        "spec": {
            "roleTemplates": [{"name": "base", "template": tmpl}],
            "roles": [{"name": "r", "standalonePattern": {"templateRef": {"name": "base", "patch": patch}}}],
        },
    }
    t = time.process_time()
    (w,) = find_workloads(load_text(json.dumps(obj), "keys.json").documents)
    dt = time.process_time() - t
    assert len(w.pod_spec["securityContext"]) == 8000
    assert dt < LIMIT_S, dt


def test_rbg_engine_runtime_arguments_go_to_the_first_container_of_their_name() -> None:
    """RBG appends an engine runtime's ``args`` to the first container of that name only
    (pkg/discovery/sidecar_builder.go ``injectRuntime``: ``break`` after the first match): 3,000 containers of one
    name and 3,000 arguments give 3,000 arguments, not 9 million (each container got them all)."""
    from kvlint.workloads import find_workloads

    n = 3000
    tmpl = {"spec": {"containers": [{"name": "x", "image": "busybox"} for _ in range(n)]}}
    runtime = {"profileName": "p", "containers": [{"name": "x", "args": [f"a{i}" for i in range(n)]}]}
    role = {"name": "r", "standalonePattern": {"template": tmpl}, "engineRuntimes": [runtime]}
    obj = {"apiVersion": "workloads.x-k8s.io/v1alpha2", "kind": "RoleBasedGroup", "metadata": {"name": "g"},
           "spec": {"roles": [role]}}  # fmt: skip
    t = time.process_time()
    (w,) = find_workloads(load_text(json.dumps(obj), "rt.json").documents)
    dt = time.process_time() - t
    assert [len(c.get("args") or []) for c in w.pod_spec["containers"]] == [n] + [0] * (n - 1)
    assert dt < LIMIT_S, dt


@pytest.mark.parametrize("fmt", ["json", "text", "sarif"])
def test_a_long_object_or_container_name_is_not_repeated_with_every_finding(tmp_path: Path, fmt: str) -> None:
    """Every finding carries its object's ``Kind/namespace/name`` and container name, and reports repeat them:
    a 0.8 MB LeaderWorkerSet named with 200,000 characters and 20,000 findings made a 4 GB report (16 s of CPU,
    4 GB of memory). Kubernetes names are at most 253 characters; longer ones are cut in findings."""
    from click.testing import CliRunner

    from kvlint.cli import main
    from kvlint.types import MAX_REF_PART

    name, cname = "n" * 50_000, "c" * 50_000
    flags = ", ".join(f'"--x{i}"' for i in range(200))
    path = tmp_path / "d.yaml"
    path.write_text(
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {name}}}\n"
        "spec:\n  template:\n    spec:\n      containers:\n"
        f"      - name: {cname}\n        image: vllm/vllm-openai:v0.8.5\n"
        f"        args: [--model, facebook/opt-125m, {flags}]\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    res = CliRunner().invoke(main, ["check", "--offline", "--format", fmt, str(path)])
    assert res.exit_code == 1, res.output[-2000:]
    assert len(res.output) < 2_000_000, len(res.output)  # (200 findings x 100,000 characters before)
    if fmt == "json":
        from kvlint.engines.options import MAX_UNKNOWN_OPTIONS

        diags = json.loads(res.output)["diagnostics"]
        # (the first unknown options one by one, the others in one finding: rules/KV205.yaml)
        assert len(diags) > MAX_UNKNOWN_OPTIONS
        assert all(len(d["object"]) <= 3 * MAX_REF_PART + 2 for d in diags)
        assert all(len(d.get("container") or "") <= MAX_REF_PART for d in diags)
