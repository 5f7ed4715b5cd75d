"""Hostile configuration files (found by an adversarial probe): a huge ``.kvlint.yaml`` was read whole, and a
discovered ``.kvlint.yaml`` symlinked to a file outside the tree (``/etc/shadow``) had its lines echoed into
the run's error messages."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.config import MAX_CONFIG_BYTES, SHOWN_CHARS, ConfigError, load_config, parse_config

SECRET = "root:$6$Zx9SECRETSALT$AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghijkl:19000:0:99999:7:::"


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "repo"
    (tree / "deploy").mkdir(parents=True)
    (tree / "deploy" / "pod.yaml").write_text("kind: Pod\n")
    return tree


def test_discovered_symlink_out_of_tree_is_not_followed(tmp_path):
    tree = _tree(tmp_path)
    secret = tmp_path / "outside" / "shadow"
    secret.parent.mkdir()
    secret.write_text(f"{SECRET}: x\nbin: {SECRET}\n")
    (tree / ".kvlint.yaml").symlink_to(secret)
    r = CliRunner().invoke(main, ["check", "--offline", str(tree / "deploy" / "pod.yaml")])
    assert r.exit_code == 2
    assert "symlink to a file outside" in r.output and "--config" in r.output
    assert "SECRETSALT" not in r.output and "AbCdEf" not in r.output


def test_discovered_symlink_inside_the_tree_is_read(tmp_path):
    tree = _tree(tmp_path)
    (tree / "conf").mkdir()
    (tree / "conf" / "kvlint.yaml").write_text("fail_on: never\n")
    (tree / ".kvlint.yaml").symlink_to(Path("conf") / "kvlint.yaml")
    assert load_config(str(tree / ".kvlint.yaml"), discovered=True).fail_on == "never"


def test_named_config_symlink_is_followed_but_echoes_only_a_prefix(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text(f"{SECRET}: x\n")
    link = tmp_path / "named.yaml"
    link.symlink_to(secret)
    with pytest.raises(ConfigError) as e:
        load_config(str(link))  # --config: the user chose it
    msg = str(e.value)
    assert "unknown key" in msg
    assert SECRET[:SHOWN_CHARS] in msg and SECRET[SHOWN_CHARS : SHOWN_CHARS + 10] not in msg


@pytest.mark.parametrize(
    "text",
    [
        "{k}: 1\n",  # unknown key
        "rules:\n  KV104:\n    {k}: 1\n",  # unknown parameter
        "fail_on: {k}\n",  # enum value
        "select: [{k}]\n",  # selector
        "fleet: [{k}]\n",  # accelerator
        "engine_version: [{k}]\n",  # wrong type (jsonschema's own message)
    ],
)
def test_messages_show_a_short_sanitised_prefix(text):
    value = "Q" * SHOWN_CHARS + "LEAKEDTAIL" * 50
    with pytest.raises(ConfigError) as e:
        parse_config(text.format(k=value))
    msg = str(e.value)
    assert "Q" * 10 in msg and "LEAKEDTAIL" not in msg


def test_control_characters_are_escaped():
    with pytest.raises(ConfigError) as e:
        parse_config('"a\\x1b[31mred": 1\n')
    assert "\x1b" not in str(e.value) and "\\x1b" in str(e.value)


def test_oversized_config_is_refused_unread(tmp_path):
    big = tmp_path / ".kvlint.yaml"
    big.write_bytes(b"fail_on: never\n" + b"#" * MAX_CONFIG_BYTES)
    with pytest.raises(ConfigError, match="larger than"):
        load_config(str(big))


def test_sparse_2gib_config_is_read_within_a_small_memory_limit(tmp_path):
    """A 2 GiB (sparse) config under a 1 GiB address-space limit: read whole, it raised MemoryError."""
    big = tmp_path / ".kvlint.yaml"
    with open(big, "wb") as fh:
        fh.truncate(2 * 2**30)
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))\n"
        "from kvlint.config import ConfigError, load_config\n"
        "try:\n    load_config(sys.argv[1])\nexcept ConfigError as e:\n    print(e)\n"
    )
    if resource.getrlimit(resource.RLIMIT_AS)[0] not in (resource.RLIM_INFINITY,) and (
        resource.getrlimit(resource.RLIMIT_AS)[0] < 2**30
    ):
        pytest.skip("the address space is already limited below 1 GiB")
    r = subprocess.run(
        [sys.executable, "-c", code, str(big)], capture_output=True, text=True, env=dict(os.environ)
    )
    assert r.returncode == 0, r.stderr
    assert "larger than" in r.stdout
