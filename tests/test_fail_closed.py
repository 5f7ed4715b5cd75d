"""kvlint's own failures on the admission path surface as the internal-error finding, never as a lesser one.

The admission webhook admits what has no error. A stage that caught its own exception and returned a benign
outcome (GPU placement "resolution failed": no accelerator, read as "no GPU requested", KV405 a warning, the
capacity rules skipped) would turn a KV101 error into a warning and admit a pod that never starts. Such a
failure must reach the per-workload net of :func:`kvlint.pipeline._analyse_workloads`: a KV503 saying kvlint
could not finish checking the workload (:data:`kvlint.pipeline.INTERNAL_ERROR`).

No manifest makes the placement code raise (it reads every malformed shape without raising), so these tests
inject the fault: a collaborator of the pipeline (``kvlint.accelerators.workload_placement``,
``kvlint.cluster.placement_from_cluster``, ``kvlint.models.resolve.resolve_stored_model``) is replaced by one
that raises, and the real pipeline is run on a real fixture. The pipeline looks these up when it calls them
(module attributes), so the stand-in is what runs; the function under test, the pipeline, is not replaced.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import kvlint.accelerators as accelerators
import kvlint.cluster as cluster
import kvlint.models.resolve as resolve
from kvlint.pipeline import INTERNAL_ERROR, Options, run_check

ROOT = Path(__file__).resolve().parent.parent
#: vLLM serving a Llama 3.1 8B at its full context on one L4: a capacity error (KV103) when placed on it
L4 = str(ROOT / "fixtures" / "examples" / "chat-8b-l4.yaml")
#: a real InferenceService whose model is downloaded from a storage path named after a catalogued model
DOC_BOT = str(
    ROOT
    / "fixtures"
    / "collected"
    / "alpha-hack-program__doc-bot__vllm_runtime__vllm-mistral-7b-instance.yaml"
)


class InjectedFault(RuntimeError):
    """The exception the replaced collaborator raises (a stand-in for a future bug in it)."""


def _raise(*_args: object, **_kwargs: object) -> object:
    raise InjectedFault("injected fault")


def _rules(result) -> set[str]:
    return {d.rule for d in result.diagnostics}


def _internal(result) -> list:
    return [d for d in result.diagnostics if d.rule == "KV503" and INTERNAL_ERROR in d.message]


def test_the_fixture_is_a_start_up_error_when_placement_works() -> None:
    """The premise: placed on its L4, the container gets a capacity error (else the tests below prove nothing)."""
    result = run_check([L4], Options(allow_hub=False))
    assert "KV103" in {d.rule for d in result.diagnostics if d.severity == "error"}
    assert not _internal(result)


def test_a_failure_of_gpu_placement_is_an_internal_error_not_no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(accelerators, "workload_placement", _raise)
    result = run_check([L4], Options(allow_hub=False))
    found = _internal(result)
    assert len(found) == 1, result.diagnostics
    assert "InjectedFault: injected fault" in found[0].message
    assert found[0].object == "Deployment/serving/chat-8b"
    # not read as "no GPU requested" (a warning the webhook admits, with the capacity rules skipped)
    assert "KV405" not in _rules(result)
    assert not [d for d in result.diagnostics if d.rule == "KV501"]


def test_a_failure_of_cluster_placement_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster, "placement_from_cluster", _raise)
    inventory = cluster.NodeInventory(nodes=(), source="test inventory")
    result = run_check([L4], Options(allow_hub=False, cluster_inventory=inventory))
    found = _internal(result)
    assert len(found) == 1, result.diagnostics
    assert "InjectedFault" in found[0].message
    assert "KV405" not in _rules(result)


def test_a_failure_of_the_stored_model_fallback_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model KServe's storage initializer downloads from a location named after a catalogued model (a real
    InferenceService of fixtures/collected, sized from that name when the fallback works): the fallback failing
    is kvlint's failure, not "model not found" (KV502/KV501, the capacity rules skipped)."""
    calls: list[str] = []

    def failing(*args: object, **kwargs: object) -> object:
        calls.append(str(args[0]))
        raise InjectedFault("injected fault")

    assert not _internal(run_check([DOC_BOT], Options(allow_hub=False)))
    monkeypatch.setattr(resolve, "resolve_stored_model", failing)
    result = run_check([DOC_BOT], Options(allow_hub=False))
    assert calls, "the fallback was not reached"
    found = _internal(result)
    assert len(found) == 1, result.diagnostics
    assert "InjectedFault" in found[0].message
    assert "KV502" not in _rules(result)


def test_a_failure_deriving_the_model_length_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """KV201 (an error: vLLM refuses a --max-model-len above the model's) reads vLLM's derived length; that
    derivation failing is kvlint's failure, not a KV201 skipped in silence."""
    import kvlint.memory.defaults as defaults
    import kvlint.rules.families.limits as limits

    assert limits.defaults is defaults  # the rule looks the derivation up on this module when it runs
    monkeypatch.setattr(defaults, "derive_max_model_len", _raise)
    result = run_check([L4], Options(allow_hub=False))
    found = _internal(result)
    assert len(found) == 1, result.diagnostics
    assert "InjectedFault" in found[0].message
