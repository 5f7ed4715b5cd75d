"""Every command's --help says its exit codes (a script or CI step reads them), and `kvlint check`'s are the ones
it returns. Before, `kvlint check --help` (the command most users run) said none, nor did rules, accelerators,
models, models show or webhook serve."""

from __future__ import annotations

import re
from pathlib import Path

import click
from click.testing import CliRunner

from kvlint.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _commands(group: click.Group, ctx: click.Context, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None, name
        out.append((*prefix, name))
        if isinstance(cmd, click.Group):
            out += _commands(cmd, click.Context(cmd, info_name=name, parent=ctx), (*prefix, name))
    return out


def test_every_command_help_says_its_exit_codes() -> None:
    ctx = click.Context(main, info_name="kvlint")
    commands = _commands(main, ctx)
    assert ("check",) in commands and ("webhook", "serve") in commands and ("models", "show") in commands
    missing = []
    for words in [(), *commands]:
        r = CliRunner().invoke(main, [*words, "--help"], terminal_width=100)
        assert r.exit_code == 0, (words, r.output)
        if not re.search(r"Exit codes?:", r.stdout):
            missing.append(" ".join(words) or "kvlint")
    assert not missing, missing


def test_check_returns_the_codes_its_help_lists(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["check", "--help"], terminal_width=100)
    listed = re.search(r"Exit codes:\n(.*?)\n\n", r.stdout + "\n\n", re.S)
    assert listed is not None
    codes = [int(m) for m in re.findall(r"^\s+(\d+)\s", listed.group(1), re.M)]
    assert codes == [0, 1, 2, 130]

    def code(*args: str) -> int:
        return CliRunner().invoke(main, ["check", "--offline", "--no-config", *args]).exit_code

    chat = str(ROOT / "fixtures" / "examples" / "chat-8b-l4.yaml")
    assert code("--fail-on", "never", chat) == 0
    assert code("--fail-on", "info", chat) == 1
    assert code("--fail-on", "info", "--exit-zero", chat) == 0
    assert code(str(tmp_path / "missing.yaml")) == 2
    # a serving workload not sized: 0, and 1 with --require-sizing
    unsized = tmp_path / "w.yaml"
    unsized.write_text(
        (ROOT / "fixtures" / "rules" / "KV502" / "vllm.yaml").read_text(encoding="utf-8").split("\n---\n")[0]
        + "\n"
    )
    assert code("--fail-on", "never", str(unsized)) == 0
    assert code("--fail-on", "never", "--require-sizing", str(unsized)) == 1
