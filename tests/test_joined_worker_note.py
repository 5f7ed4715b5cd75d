"""A multi-node worker that joins its leader's engine and is not sized for the leader's reason says so at its own
line (:func:`kvlint.sizing.joined_unsized_notes`): only KV005/KV403/KV409 are checked for such a worker, so the
sizing line counted it ("not sized: model unknown 2") while its line showed nothing (aibrix's deepseek-r1-pvc
RayClusterFleet: KV502 at the head, nothing at the Ray worker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check
from kvlint.sizing import outcomes
from kvlint.types import CheckResult

ROOT = Path(__file__).resolve().parents[1]
COLLECTED = ROOT / "fixtures" / "collected"
#: a RayClusterFleet whose head serves '/models/deepseek' (a path on a PVC: model unknown), its Ray worker joins it
PVC = COLLECTED / "vllm-project__aibrix__samples__deepseek-r1__deepseek-r1-pvc.yaml"
#: a LeaderWorkerSet whose leader is sized on the GPU it names: its worker is sized with it
SIZED = COLLECTED / "kubernetes-sigs__lws__docs__examples__leaderworkerset__basic__vllm.yaml"


def _run(path: Path, jobs: int = 0) -> CheckResult:
    from kvlint.stream import stream_check

    options = Options(allow_hub=False)
    return run_check([str(path)], options) if jobs == 0 else stream_check([str(path)], options, jobs=jobs)


@pytest.mark.parametrize("jobs", [0, 1])
def test_a_worker_not_sized_for_its_leaders_reason_says_so_at_its_line(jobs: int) -> None:
    result = _run(PVC, jobs)
    worker = next(c for c in result.containers if c.container_name == "ray-worker")
    head = next(c for c in result.containers if c.container_name == "ray-head")
    assert outcomes([head, worker]) == ["model unknown", "model unknown"]
    (at_head,) = [d for d in result.diagnostics if d.container == "ray-head" and d.rule == "KV502"]
    (note,) = [
        d for d in result.diagnostics if d.container == "ray-worker" and d.rule in ("KV501", "KV502", "KV503")
    ]
    assert note.rule == "KV502" and note.severity == "info"
    assert note.loc is not None and at_head.loc is not None
    assert note.loc.line > at_head.loc.line  # at the worker, not at the leader
    assert note.statement.startswith("not sized, as its leader (model unknown): ")
    assert "container ray-head, whose KV502 finding says why" in note.message


def test_require_sizing_names_the_workers_note() -> None:
    """``--require-sizing`` names each container not sized where its finding is: the worker's own line now."""
    from click.testing import CliRunner

    from kvlint.cli import main

    r = CliRunner().invoke(main, ["check", "--offline", "--require-sizing", "--format", "json", str(PVC)])
    import json

    (note,) = [
        d
        for d in json.loads(r.stdout)["diagnostics"]
        if d["container"] == "ray-worker" and d["rule"] == "KV502"
    ]
    assert (
        f":{note['line']}:{note['column']}: RayClusterFleet/deepseek-r1-671b container ray-worker: model unknown"
        in r.stderr
    )


def test_a_worker_sized_with_its_leader_has_no_note() -> None:
    result = _run(SIZED)
    assert "leader" in outcomes(result.containers)
    assert not [d for d in result.diagnostics if d.statement.startswith("not sized")]


def test_the_note_follows_rule_selection() -> None:
    result = run_check([str(PVC)], Options(allow_hub=False, ignore=("KV502",)))
    assert not [d for d in result.diagnostics if d.rule == "KV502"]


@pytest.mark.parametrize("jobs", [0, 2])
def test_no_note_at_the_worker_when_the_leaders_finding_is_suppressed(tmp_path: Path, jobs: int) -> None:
    """A ``# kvlint: ignore KV502=...`` comment at the leader's command suppresses the leader's KV502; the worker's
    note still said the leader's finding "says why", of a finding the report no longer shows, and counted as
    a finding of its own. The user's reason for the leader holds for the engine its worker joins: no note."""
    lines = PVC.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "vllm serve /models/deepseek" in line)
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(
        at, f"{indent}# kvlint: ignore KV502=the weights are on the PVC, mounted at /models/deepseek\n"
    )
    path = tmp_path / PVC.name
    path.write_text("".join(lines), encoding="utf-8")
    result = _run(path, jobs)
    assert [
        s.diagnostic.container for s in result.suppressed_diagnostics if s.diagnostic.rule == "KV502"
    ] == ["ray-head"]
    assert not [d for d in result.diagnostics if d.rule == "KV502"]
    # the same file without the comment: the note is there (the test can fail)
    assert [d.container for d in _run(PVC, jobs).diagnostics if d.rule == "KV502"] == [
        "ray-head",
        "ray-worker",
    ]


def test_the_note_names_the_leaders_finding_by_rule_not_line(tmp_path: Path) -> None:
    """The note said "whose finding at line 96 says why": a line moves with any edit above it, so the webhook's
    findings for an object changed with an annotation it does not read (the JSON text it lints has other lines),
    and in a review the line is one of kvlint's own JSON text, not the user's. Named by rule, the note reads the
    same when lines above the leader move."""
    text = PVC.read_text(encoding="utf-8")
    moved = tmp_path / PVC.name
    moved.write_text("# two lines\n# above it\n" + text, encoding="utf-8")

    def note(path: Path) -> str:
        (d,) = [d for d in _run(path).diagnostics if d.container == "ray-worker" and d.rule == "KV502"]
        return d.message

    assert note(PVC) == note(moved)
    assert "line" not in note(PVC)


class _Counted(list):  # type: ignore[type-arg]
    """A list that counts the passes made over it."""

    passes = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        self.passes += 1
        return super().__iter__()


def test_the_notes_read_the_diagnostics_once_however_many_workers() -> None:
    """Each worker scanned every diagnostic (and every container, for its leader): workers x diagnostics, which a
    hostile manifest of many joining workers and many findings makes quadratic. Now the diagnostics are read once
    into an index (and the suppressed ones once), whatever the number of workers; the notes are the same."""
    from kvlint.sizing import joined_unsized_notes

    result = _run(PVC)
    # the diagnostics before the note was added to them
    before = [d for d in result.diagnostics if not d.statement.startswith("not sized")]
    one = joined_unsized_notes(result.containers, before)
    assert len(one) == 1
    workers = 300
    containers = list(result.containers) * workers  # the worker (and its leader) over and over
    diagnostics = _Counted(before)
    aside = _Counted()
    many = joined_unsized_notes(containers, diagnostics, None, aside)
    assert len(many) == workers and {f.message for _, f in many} == {one[0][1].message}
    assert diagnostics.passes <= 1 and aside.passes <= 1


@pytest.mark.parametrize("jobs", [0, 1])
def test_a_severity_override_raises_the_leaders_finding_not_the_workers_note(jobs: int) -> None:
    """``severity: {KV502: error}`` made the worker's info note an error too: one engine not sized counted 2 errors
    (and a webhook's deny message listed both). The note stays an info; ``off`` still drops it."""
    from kvlint.stream import stream_check

    for severity, want in (
        ({"KV502": "error"}, ["error", "info"]),
        ({"KV502": "warning"}, ["warning", "info"]),
    ):
        options = Options(allow_hub=False, severity=severity)
        result = run_check([str(PVC)], options) if jobs == 0 else stream_check([str(PVC)], options, jobs=jobs)
        kv502 = [d for d in result.diagnostics if d.rule == "KV502"]
        assert [d.container for d in kv502] == ["ray-head", "ray-worker"]
        assert [d.severity for d in kv502] == want
    result = run_check([str(PVC)], Options(allow_hub=False, severity={"KV502": "off"}))
    assert not [d for d in result.diagnostics if d.rule == "KV502"]
