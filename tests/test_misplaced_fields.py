"""KV005 on a container field written at pod-spec level (or a pod-spec field inside a container) says to move it,
not to rename it to the nearest field of the level it sits at.

Found on Intel's Gaudi vLLM validation Deployment (intel/intel-technology-enabling-for-openshift
tests/gaudi/l2/vllm_deployment.yaml, fixtures/collected, source in its INDEX.csv): its livenessProbe and
readinessProbe sit beside ``containers:`` and ``volumes:``; kvlint told the user to rename 'readinessProbe' to
'readinessGates', a pod field that holds no probe. The second case takes that real manifest and changes one thing:
a ``nodeSelector`` indented into the container.
"""

from __future__ import annotations

from pathlib import Path

from kvlint.load import load_text
from kvlint.pipeline import Options, run_check, run_documents
from kvlint.workloads.fields import known_fields

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
GAUDI = COLLECTED / "intel__intel-technology-enabling-for-openshift__tests__gaudi__l2__vllm_deployment.yaml"
OPTS = Options(allow_hub=False)


def _kv005(result) -> dict[str, object]:
    return {d.message.split("'")[1]: d for d in result.diagnostics if d.rule == "KV005"}


def test_probes_at_pod_level_are_moved_into_the_container() -> None:
    # the premise, from the core/v1 field lists: both probes are container fields and not pod-spec fields
    for key in ("livenessProbe", "readinessProbe"):
        assert key in known_fields("V1Container") and key not in known_fields("V1PodSpec")
    found = _kv005(run_check([str(GAUDI)], OPTS))
    assert set(found) == {"livenessProbe", "readinessProbe"}, found
    for key, d in found.items():
        assert "field of a container" in d.message, d.message
        assert (
            d.fix == f"move '{key}' into the container 'vllm-container' (under containers:, beside its image)"
        )
        assert "readinessGates" not in d.message + d.fix
        assert d.severity == "warning"


def test_pod_field_inside_a_container_is_moved_out() -> None:
    text = GAUDI.read_text()
    anchor = "          imagePullPolicy: Always\n"
    assert text.count(anchor) == 1
    derived = text.replace(anchor, anchor + "          nodeSelector:\n            habana.ai/gaudi: present\n")
    found = _kv005(run_documents(load_text(derived, "derived.yaml"), OPTS))
    d = found["nodeSelector"]
    assert "field of the pod spec" in d.message, d.message
    assert (
        d.fix
        == "move 'nodeSelector' out of container 'vllm-container', up to the pod spec (beside containers:)"
    )


def test_a_misspelt_field_still_gets_its_nearest_name() -> None:
    """A key that is no field of either level keeps the rename hint (a typo, not a misplacement)."""
    text = GAUDI.read_text()
    anchor = "          imagePullPolicy: Always\n"
    derived = text.replace(anchor, anchor.replace("imagePullPolicy", "imagePullPolicyy"))
    d = _kv005(run_documents(load_text(derived, "derived.yaml"), OPTS))["imagePullPolicyy"]
    assert d.fix == "rename 'imagePullPolicyy' to 'imagePullPolicy'"


def test_pod_level_probe_in_a_pod_of_several_containers_names_none() -> None:
    """With a second container in the pod (a sidecar added under the real one, the one change), the probes at
    pod level may be meant for either: the fix does not name the serving container (KV005 runs per serving
    container, so a pod of two serving containers got two fixes at the same key, each naming its own)."""
    text = GAUDI.read_text()
    anchor = "      volumes:\n"
    assert text.count(anchor) == 1
    sidecar = "        - name: metrics-proxy\n          image: nginx:1.27\n"
    found = _kv005(run_documents(load_text(text.replace(anchor, sidecar + anchor), "derived.yaml"), OPTS))
    assert set(found) == {"livenessProbe", "readinessProbe"}, found
    for key, d in found.items():
        assert d.fix == f"move '{key}' into the container it is for (under containers:, beside its image)", (
            d.fix
        )


#: an init container added to the real pod, before its containers (its keys as the test that uses it says)
_CONTAINERS = "      containers:\n"


def _with_init(text: str, *extra: str) -> str:
    assert text.count(_CONTAINERS) == 1
    init = "      initContainers:\n        - name: fetch\n          image: busybox:1.36\n" + "".join(extra)
    return text.replace(_CONTAINERS, init + _CONTAINERS)


def test_init_container_keys_are_checked() -> None:
    """An init container is a Container of the same pod: a misspelt key there (``comand:``) or a pod-spec field
    written inside it (``nodeSelector:``) makes kubectl apply reject the whole Deployment, the serving container's
    with it. KV005 looked only at the serving container and the pod spec's own keys."""
    derived = _with_init(
        GAUDI.read_text(),
        '          comand: ["sh", "-c", "true"]\n',
        "          nodeSelector:\n            habana.ai/gaudi: present\n",
    )
    found = _kv005(run_documents(load_text(derived, "derived.yaml"), OPTS))
    assert {"comand", "nodeSelector"} <= set(found), found
    typo, moved = found["comand"], found["nodeSelector"]
    assert "in init container 'fetch'" in typo.message and typo.fix == "rename 'comand' to 'command'"
    assert "field of the pod spec" in moved.message, moved.message
    assert (
        moved.fix
        == "move 'nodeSelector' out of init container 'fetch', up to the pod spec (beside containers:)"
    )
    assert moved.loc is not None and derived.splitlines()[moved.loc.line - 1].strip() == "nodeSelector:"


def test_pod_wide_keys_are_said_once_in_a_pod_of_two_serving_containers() -> None:
    """A pod-spec key and an init container's are the pod's, not a serving container's: with a second vLLM
    container (the real one copied under a new name) each is said once, not once per serving container."""
    text = GAUDI.read_text()
    lines = text.splitlines(keepends=True)
    first = lines.index("        - name: vllm-container\n")
    end = next(i for i in range(first + 1, len(lines)) if not lines[i].startswith("          "))
    copy = "".join(lines[first:end]).replace("name: vllm-container", "name: vllm-second")
    two = "".join(lines[:end]) + copy + "".join(lines[end:])
    derived = _with_init(two, '          comand: ["sh", "-c", "true"]\n')
    r = run_documents(load_text(derived, "derived.yaml"), OPTS)
    assert {cr.container_name for cr in r.containers} == {"vllm-container", "vllm-second"}
    said = [d.message.split("'")[1] for d in r.diagnostics if d.rule == "KV005"]
    assert sorted(said) == ["comand", "livenessProbe", "readinessProbe"], said


def test_a_key_with_no_near_field_is_said_in_the_same_sentences_as_a_misspelt_one() -> None:
    """An unknown key with no field close to it (``oldInit:`` beside ``initContainers:``, ``x-cache:`` in an init
    container) is said as a misspelt one is, less the guess: the statement ends at "is not a Kubernetes field"
    and kubectl's refusal follows as a detail (the message ran on as "... is not a Kubernetes field kubectl apply
    (strict validation, its default) rejects ...")."""
    derived = _with_init(
        GAUDI.read_text(), '          comand: ["sh", "-c", "true"]\n', "          x-cache: on\n"
    )
    derived = derived.replace("      initContainers:\n", "      oldInit: []\n      initContainers:\n")
    found = _kv005(run_documents(load_text(derived, "derived.yaml"), OPTS))
    assert {"comand", "x-cache", "oldInit"} <= set(found), found
    for key, where in (
        ("comand", "init container 'fetch'"),
        ("x-cache", "init container 'fetch'"),
        ("oldInit", "the pod spec"),
    ):
        d = found[key]
        assert d.statement == f"'{key}' in {where} is not a Kubernetes field", d.message
        assert "kubectl apply (strict validation, its default) rejects the object" in d.details[0], d.details
    assert found["x-cache"].fix == "remove 'x-cache' or move it where it belongs"


def test_an_init_container_without_a_name_is_named_by_its_place() -> None:
    """An init container that lacks ``name:`` (the API server refuses that too) was said as "init container '?'";
    it is named by its place in the list, and a pod-spec key inside it is still moved up."""
    derived = _with_init(GAUDI.read_text())
    derived = derived.replace(
        "      initContainers:\n",
        "      initContainers:\n        - image: alpine:3.20\n          comand: [sh]\n          volumes: []\n",
    )
    found = _kv005(run_documents(load_text(derived, "derived.yaml"), OPTS))
    typo, moved = found["comand"], found["volumes"]
    assert "'comand' in initContainers[0] is not a Kubernetes field" in typo.message, typo.message
    assert "?" not in typo.message.split(";")[0]
    assert moved.fix == "move 'volumes' out of initContainers[0], up to the pod spec (beside containers:)", (
        moved.fix
    )
