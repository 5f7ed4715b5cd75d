"""Hostile inputs to what landed at stop 25 (break26): verify's quoted log lines, the search for a values file's
chart in its checkout, and ``kvlint diff``'s run of ``kvlint check``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kvlint.cli import main

ROOT = Path(__file__).resolve().parents[1]

# an OSC title sequence, BEL, a private-mode CSI (alternate screen: not the colour codes the parser strips), a
# backspace, a bidi override and a GitHub workflow command (the log's line breaks, \r included, end the line)
_INJECTED = " \x1b]0;owned\x07 \x1b[?1049h \x08::error::forged \u202e<img src=x>"


def _evil_log(tmp_path: Path) -> Path:
    text = (ROOT / "fixtures" / "logs" / "gt-210.log").read_text()
    line = "GPU KV cache size: 93,872 tokens"
    assert line in text
    text = text.replace(line, line + _INJECTED)
    path = tmp_path / "evil.log"
    path.write_bytes(text.encode())
    return path


def test_verify_text_shows_a_quoted_lines_control_characters_escaped(tmp_path: Path) -> None:
    log = _evil_log(tmp_path)
    args = ["verify", "--offline", str(log), "--model", "Qwen/Qwen2-7B-Instruct", "--accelerator", "a100-80gb"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code in (0, 1), r.output
    quoted = [ln for ln in r.output.split("\n") if "GPU KV cache size: 93,872 tokens" in ln]
    assert quoted, r.output
    for bad in ("\x1b", "\x07", "\x08", "\u202e"):
        assert bad not in r.output
    assert "\\x1b]0;owned\\x07" in quoted[0] and "\\x08::error::" in quoted[0]
    assert not any(ln.startswith("::") for ln in r.output.split("\n"))
    # JSON keeps the text as read (json escapes it)
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    fig = next(f for f in json.loads(r.output)["figures"] if f["figure"] == "kv_tokens")
    assert "\x1b]0;owned\x07" in fig["log_text"]
