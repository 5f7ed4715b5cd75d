"""Bounds on what a rendered file's ``# Source:`` comments make kvlint read (found by an adversarial probe: a
4 MB ``Chart.yaml`` in a parent directory of ``deploy/rendered.yaml`` was parsed whole, 3 min 15 s and
1.24 GB, and every parent up to ``/`` was searched)."""

from __future__ import annotations

import os

from click.testing import CliRunner

from kvlint import render
from kvlint.cli import main
from kvlint.render import _MAX_CHART_BYTES, _chart_name, _search_places


def test_chart_name_of_a_small_chart(tmp_path):
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: vllm-stack\nversion: 0.1.0\n")
    assert _chart_name(str(tmp_path)) == "vllm-stack"


def test_chart_larger_than_the_limit_is_skipped_unread(tmp_path):
    body = "name: x\nbig: [" + ",".join(["1"] * (_MAX_CHART_BYTES // 2)) + "]\n"
    assert len(body) > _MAX_CHART_BYTES
    (tmp_path / "Chart.yaml").write_text(body)
    assert _chart_name(str(tmp_path)) is None


def test_chart_alias_bomb_is_not_expanded(tmp_path):
    lines = ["name: x", "a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]")
    (tmp_path / "Chart.yaml").write_text("\n".join(lines) + "\n")
    assert _chart_name(str(tmp_path)) is None


def test_search_stops_at_the_repository_root(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    deep = repo / "deploy" / "rendered"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    monkeypatch.chdir(deep)
    places = _search_places(str(deep / "out.yaml"))
    assert places == [str(deep), str(repo / "deploy"), str(repo), os.getcwd()]
    assert str(tmp_path) not in places[:-1]


def test_search_without_a_repository_goes_to_the_root(tmp_path):
    places = _search_places(str(tmp_path / "out.yaml"))
    assert places[0] == str(tmp_path) and "/" in places


def test_big_parent_chart_is_not_parsed_by_check(tmp_path, monkeypatch):
    """The probe's setup: a rendered file with a # Source: comment below a 2-million-value Chart.yaml. No
    Chart.yaml larger than the limit reaches the YAML loader."""
    (tmp_path / "Chart.yaml").write_text("name: x\nbig: [" + ",".join(["1"] * 200_000) + "]\n")
    (tmp_path / "deploy").mkdir()
    rendered = tmp_path / "deploy" / "rendered.yaml"
    rendered.write_text(
        "---\n# Source: x/templates/pod.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
    )
    asked: dict[str, str | None] = {}
    real = render._chart_name

    def recording(directory):
        asked[directory] = real(directory)
        return asked[directory]

    monkeypatch.setattr(render, "_chart_name", recording)
    monkeypatch.chdir(tmp_path / "deploy")
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "-j", "1", str(rendered)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    # the parent directory was searched, and its oversized Chart.yaml gave no name (it was not parsed)
    assert str(tmp_path) in asked and asked[str(tmp_path)] is None
