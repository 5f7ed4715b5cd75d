"""One validation of a rule parameter for ``.kvlint.yaml`` and the command line.

``--min-concurrency`` had its own range (``0 < x <= 1e6``, click's FloatRange, which let ``nan`` through: every
comparison with it false, KV104 silent), while ``rules.KV104.min_concurrency`` in ``.kvlint.yaml`` only refused
negative and non-finite numbers (0 and 10^12 were taken). Both now ask the catalogue's bounds of the parameter
(``rules/KV104.yaml``: ``minimum: 0``, ``exclusive_minimum: true``, ``maximum: 1000000``) through
:meth:`kvlint.rules.catalog.Parameter.check`.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.config import ConfigError, parse_config
from kvlint.rules.catalog import CatalogError, Parameter, get_rule, load_catalog
from tests.test_catalog import copy_catalog, edit_rule

FIXTURE = str(Path(__file__).resolve().parent.parent / "fixtures" / "rules" / "KV104" / "vllm.yaml")


def _cli_refuses(value: str) -> str | None:
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--min-concurrency", value, FIXTURE])
    if r.exit_code == 2:
        assert "--min-concurrency" in r.output, r.output
        return r.output
    assert r.exit_code in (0, 1), r.output
    return None


def _config_refuses(value: str) -> str | None:
    try:
        parse_config(f"rules:\n  KV104: {{min_concurrency: {value}}}\n", "cfg.yaml")
    except ConfigError as exc:
        assert str(exc).startswith("cfg.yaml:2:"), exc
        return str(exc)
    return None


@pytest.mark.parametrize(
    ("cli", "yaml_text", "refused"),
    [
        ("0", "0", True),
        ("-1", "-1", True),
        ("1000001", "1000001", True),
        ("1e12", "1000000000000", True),
        ("nan", ".nan", True),
        ("inf", ".inf", True),
        ("1000000", "1000000", False),
        ("0.5", "0.5", False),
        ("4", "4", False),
    ],
)
def test_command_line_and_config_accept_the_same_values(cli: str, yaml_text: str, refused: bool) -> None:
    from_cli, from_config = _cli_refuses(cli), _config_refuses(yaml_text)
    assert (from_cli is not None) is refused, from_cli
    assert (from_config is not None) is refused, from_config


def test_the_two_messages_say_the_same_bound() -> None:
    assert "must be at most 1,000,000" in (_cli_refuses("2e6") or "")
    assert "must be at most 1,000,000" in (_config_refuses("2000000") or "")
    assert "must be greater than 0" in (_cli_refuses("0") or "")
    assert "must be greater than 0" in (_config_refuses("0") or "")


def test_parameter_check_without_bounds_refuses_negative_only() -> None:
    band = get_rule("KV105").parameter("band")
    assert band.check(0) is None and band.check(10**9) is None
    assert band.check(-0.1) == "-0.1 must not be negative"
    assert "not a finite number" in (band.check(math.inf) or "")
    assert "not of type number" in (band.check(True) or "")


def test_bounds_inclusive_and_exclusive() -> None:
    p = Parameter("x", "number", 1, "a test parameter", minimum=1, maximum=2)
    assert p.check(1) is None and p.check(2) is None
    assert p.check(0.5) == "0.5 must be at least 1"
    q = Parameter("x", "number", 1.5, "a test parameter", minimum=1, maximum=2, exclusive_minimum=True)
    assert q.check(1) == "1 must be greater than 1"


def test_a_default_outside_its_bounds_is_a_catalogue_error(tmp_path: Path) -> None:
    d = copy_catalog(tmp_path)
    edit_rule(
        d / "KV104.yaml",
        parameters=[
            {
                "name": "min_concurrency",
                "type": "number",
                "default": 0,
                "minimum": 0,
                "exclusive_minimum": True,
                "description": "Smallest acceptable number of requests.",
            }
        ],
    )
    with pytest.raises(
        CatalogError, match="parameter 'min_concurrency': its default 0 must be greater than 0"
    ):
        load_catalog(d)
