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
