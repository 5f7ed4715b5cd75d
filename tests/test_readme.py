"""The outputs README.md shows are what kvlint prints (the quick start run and the `kvlint plan` example)."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _block_after(marker: str) -> str:
    start = README.index(marker)
    m = re.search(r"```\n(.*?)```", README[start:], re.S)
    assert m is not None, marker
    return m.group(1)


@pytest.fixture(autouse=True)
def _plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README shows what a pipe or a file gets: the default width, no colour."""
    for name in ("COLUMNS", "FORCE_COLOR", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)


def test_a_real_run_is_what_check_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    expected = _block_after("`kvlint check fixtures/examples/` (the Quick start command) prints:")
    r = CliRunner().invoke(main, ["check", "--offline", "fixtures/examples/"])
    assert r.exit_code == 1
    assert r.stdout == expected


def test_the_opening_example_is_the_first_finding_of_that_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    opening = re.search(r"```\n(.*?)```", README, re.S)
    assert opening is not None
    full = _block_after("`kvlint check fixtures/examples/` (the Quick start command) prints:")
    assert full.startswith(opening.group(1))
    # the finding leads with one short statement; the arithmetic and the remedy are indented below it
    first, *rest = opening.group(1).rstrip("\n").split("\n")
    assert "per GPU:" not in first and rest and all(line.startswith("  ") for line in rest)
    assert any(line.lstrip().startswith("per GPU:") for line in rest)


def test_planning_example_is_what_plan_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    block = _block_after("`kvlint plan` evaluates one command line exactly as it would be typed:")
    first, _, expected = block.partition("\n")
    assert first.startswith("$ kvlint plan ")
    args = shlex.split(first[len("$ kvlint ") :])
    r = CliRunner().invoke(main, [args[0], "--offline", *args[1:]])
    assert r.exit_code == 0 and r.stdout == expected, r.stdout[-400:]
    assert os.path.isdir(ROOT / "fixtures")


def test_suppression_example_is_what_check_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    expected = _block_after("`kvlint check fixtures/config/suppress/noreason.yaml` prints:")
    r = CliRunner().invoke(main, ["check", "--offline", "fixtures/config/suppress/noreason.yaml"])
    assert r.stdout == expected


def test_capacity_diff_example_is_what_kvlint_computes(tmp_path: Path) -> None:
    from kvlint.pipeline import Options, run_check
    from kvlint.prdiff import capacity_diff, render_capacity_markdown
    from kvlint.report.jsonout import to_json_dict

    marker = "`--max-model-len` raised from 8192 to 131072:"
    table = README[README.index(marker) :].split("\n\n", 2)[1]
    text = (ROOT / "fixtures" / "examples" / "chat-8b-l4.yaml").read_text(encoding="utf-8")
    lines = text.split("\n")
    i = next(k for k, line in enumerate(lines) if line.strip() == "- --model")
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    reports = []
    for value in (8192, 131072):
        d = tmp_path / str(value)
        d.mkdir()
        (d / "chat.yaml").write_text(
            "\n".join(
                [*lines[: i + 2], f"{indent}- --max-model-len", f"{indent}- '{value}'", *lines[i + 2 :]]
            ),
            encoding="utf-8",
        )
        reports.append(to_json_dict(run_check([str(d)], Options(allow_hub=False))))
    assert render_capacity_markdown(capacity_diff(*reports)).strip() == table.strip()


def test_catalogue_size_stated_in_readme_and_docs_is_the_catalogue_s() -> None:
    """README.md and docs/models.md state the bundled catalogue's size as 'N hub ids, C stored configs and V
    variants'; the numbers are counted here from the catalogue itself (config.json files of kvlint/data/models,
    the index's rows and distinct variant ids), and no other wording of the size ('300 models') is left."""
    from kvlint.models.catalogue import DATA_DIR, list_index

    rows = list_index()
    configs = sorted(p.parent.name for p in DATA_DIR.glob("*/config.json"))
    assert sorted(r.dir for r in rows) == configs  # one stored config per index row
    variants = {v.lower() for r in rows for v in r.variants}
    assert not variants & {r.id.lower() for r in rows}  # a variant is another hub id, not a stored one
    want = (len(rows) + len(variants), len(configs), len(variants))
    for doc in (ROOT / "README.md", ROOT / "docs" / "models.md"):
        text = " ".join(doc.read_text(encoding="utf-8").split())
        stated = re.findall(r"(\d+) hub ids[:,] (\d+) stored configs and (\d+) variants", text)
        assert stated and {tuple(int(n) for n in s) for s in stated} == {want}, (doc.name, stated, want)
        assert not re.search(r"catalogue of \d+ models|\b\d{3} models\b", text), doc.name
