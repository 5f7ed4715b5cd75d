"""Issue 19 (branch perf54): work a check or a review did for every file that only some files need."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint import suppress
from kvlint.load import load_text
from kvlint.options import Options
from kvlint.rules.catalog import load_catalog
from kvlint.types import Diagnostic, Loc


def _prefixes_of(ids: list[str]) -> set[str]:
    """Every prefix of every id, spelled out (the oracle)."""
    out = set()
    for i in ids:
        for k in range(len(i) + 1):
            out.add(i[:k])
    return out


def test_rule_prefixes_are_made_once_for_the_catalogue() -> None:
    """The rule-id prefixes are the catalogue's (every prefix of every id) and are made once: asked again, the
    same object answers (it was built again for every file linted, twice)."""
    first = suppress._rule_prefixes()
    assert first == _prefixes_of(list(load_catalog()))
    assert {"", "K", "KV", "KV1", "KV10", "KV101"} <= first
    assert "KV1011" not in first
    assert suppress._rule_prefixes() is first


def test_rule_prefixes_follow_a_changed_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    """A catalogue whose ids change (another rules directory) gets its own prefixes, not the last ones."""
    real = load_catalog()
    fewer = {k: v for k, v in real.items() if not k.startswith("KV1")}
    monkeypatch.setattr(suppress, "load_catalog", lambda: dict(fewer))
    got = suppress._rule_prefixes()
    assert got == _prefixes_of(list(fewer))
    assert "KV101" not in got
    monkeypatch.setattr(suppress, "load_catalog", lambda: dict(real))
    assert "KV101" in suppress._rule_prefixes()


def _diag(path: str, line: int, rule: str = "KV202") -> Diagnostic:
    return Diagnostic(rule, "warning", "m", Loc(path, line, 1))


def test_comment_suppresses_asks_for_the_prefixes_only_where_a_comment_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A file without a ``kvlint:`` comment (nearly every file, every review) never needs the rule ids: the
    predicate answers without them; a file with one asks for them once, and suppresses as before."""
    asked = []
    real = suppress._rule_prefixes

    def counting() -> frozenset[str]:
        asked.append(1)
        return real()

    monkeypatch.setattr(suppress, "_rule_prefixes", counting)
    plain = tmp_path / "plain.yaml"
    plain.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n")
    loaded = load_text(plain.read_bytes(), str(plain))
    pred = suppress.comment_suppresses(loaded, Options())
    assert pred is not None
    assert not pred(_diag(str(plain), 3)) and not pred(_diag(str(plain), 4))
    assert asked == []

    commented = tmp_path / "commented.yaml"
    commented.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p  # kvlint: ignore KV202=short prompts only\n"
    )
    loaded = load_text(commented.read_bytes(), str(commented))
    pred = suppress.comment_suppresses(loaded, Options())
    assert pred is not None
    assert pred(_diag(str(commented), 4))
    assert not pred(_diag(str(commented), 4, "KV101"))
    assert not pred(_diag(str(commented), 3))
    assert len(asked) == 1


def _old_holds_marker(text: str) -> bool:
    """The test before the first scans for the spellings' cores (the oracle)."""
    from kvlint.load import SUPPRESSION_MARKER, SUPPRESSION_VARIANTS

    return SUPPRESSION_MARKER in text or any(v in text for v in SUPPRESSION_VARIANTS)


def test_every_marker_spelling_holds_a_core() -> None:
    """The first scans of :func:`holds_suppression_marker` can rule out every spelling: each holds a core."""
    from kvlint.load import _MARKER_CORES, SUPPRESSION_MARKER, SUPPRESSION_VARIANTS

    for spelling in (SUPPRESSION_MARKER, *SUPPRESSION_VARIANTS):
        assert any(core in spelling for core in _MARKER_CORES), spelling


@pytest.mark.parametrize(
    "text",
    [
        "",
        "apiVersion: v1\nkind: Pod\n",
        "image: vllm/vllm-openai:v0.9.0  # kvlint: ignore KV202=short\n",
        "x: 1 # KVLINT: disable=KV202\n",
        "x: 1 #kvlint ignore\n",
        "# Kvlint: ignore KV101=x",
        "# KvLint: ignore",
        "# KVLint ignore",
        "# kvlint ignore",
        "linter: golangci-lint\n",
        "LINT: Lint lint\n",
        "k v l i n t: KV-LINT kvlin t",
        "caf\u00e9 lint \u2028 kvlint\U0001f600:",
        "\u00e9\u00e9 KVLINT",
    ],
)
def test_holds_suppression_marker_answers_as_the_seven_scans(text: str) -> None:
    """The answer is the seven spellings' scans' on texts with and without each spelling, near misses and
    non-ASCII text."""
    from kvlint.load import holds_suppression_marker

    assert holds_suppression_marker(text) is _old_holds_marker(text)


class _CountingText(str):
    """A text that counts the substring tests made of it."""

    tests: list[str]

    def __contains__(self, sub: object) -> bool:
        self.tests.append(str(sub))
        return str.__contains__(self, str(sub))


def test_a_text_without_a_marker_is_scanned_three_times() -> None:
    """A manifest without any spelling of ``kvlint`` is ruled out in three scans (it took seven: one per spelling)."""
    from kvlint.load import holds_suppression_marker

    text = _CountingText("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\n" * 50)
    text.tests = []
    assert holds_suppression_marker(text) is False
    assert len(text.tests) == 3


WEBHOOK = Path(__file__).resolve().parent.parent / "fixtures" / "webhook"


def _pod_of(tmp_path: Path, name: str, containers: list[dict]) -> str:
    """The webhook fixture's Deployment (Llama 3.1 8B on one L4, KV103 with re-planning remedies) with
    ``containers`` in its pod, written as JSON."""
    import json

    import yaml

    obj = yaml.safe_load((WEBHOOK / "b01-llama8b-l4-default-context.yaml").read_text())
    obj["spec"]["template"]["spec"]["containers"] = containers
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(obj, indent=2))
    return str(path)


def _base_container(tmp_path: Path) -> dict:
    import yaml

    obj = yaml.safe_load((WEBHOOK / "b01-llama8b-l4-default-context.yaml").read_text())
    return dict(obj["spec"]["template"]["spec"]["containers"][0])


def _said(diags, container: str) -> list[tuple[str, str, str, str]]:
    return sorted((d.rule, d.severity, d.message, d.fix) for d in diags if d.container == container)


def test_identical_containers_of_one_pod_are_planned_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A pod of three identical vLLM containers and one with another --max-model-len: the twins' plans (the plan
    stage's and their remedies' re-plans) are made once for the three, and no plan is made twice; each
    container's findings are those of a pod holding it alone (its memory model's answers, whoever asked first).
    At the branch point each container planned everything again: three times the plans."""
    from kvlint.memory import stage
    from kvlint.pipeline import run_check

    seen: list[str] = []
    real = stage.plan_vllm_detailed

    def recording(settings, model, total, **kw):  # type: ignore[no-untyped-def]
        seen.append(repr((settings, id(model), total, sorted(kw.items()))))
        return real(settings, model, total, **kw)

    monkeypatch.setattr(stage, "plan_vllm_detailed", recording)
    c = _base_container(tmp_path)
    other = dict(c, name="short", args=[*c["args"], "--max-model-len", "65536"])
    opts = Options(allow_hub=False)

    alone = run_check([_pod_of(tmp_path, "alone", [c])], opts)
    one = len(seen)
    assert one > 1 and any(d.rule == "KV103" for d in alone.diagnostics)  # remedies re-planned
    seen.clear()
    other_alone = run_check([_pod_of(tmp_path, "other", [other])], opts)
    own = len(seen)
    seen.clear()

    twins = [dict(c, name=n) for n in ("a", "b", "c")]
    pod = run_check([_pod_of(tmp_path, "pod", [twins[0], other, *twins[1:]])], opts)
    # no plan made twice (the other container's own plan may be one of the twins' re-plans: then once for both)
    assert len(seen) == len(set(seen)) <= one + own
    for n in ("a", "b", "c"):
        assert _said(pod.diagnostics, n) == _said(alone.diagnostics, "vllm")
    assert _said(pod.diagnostics, "short") == _said(other_alone.diagnostics, "short")


def test_a_pods_shared_plans_are_dropped_after_it() -> None:
    """The pod's memo scope lives while its containers are analysed, not after (a webhook worker keeps nothing
    of a review's pod), and outside it each container has its own."""
    from kvlint.memory import stage

    pod: dict = {"containers": []}
    with stage.shared_plans(pod):
        assert stage._SHARED.get() is pod
    assert stage._SHARED.get() is None
    assert all(scope.serving is not pod for scope in stage._MEMO.values())
