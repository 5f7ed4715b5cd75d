"""kvlint's table of ``pip install`` options (kvlint.engines.pip_options) against pip's own definitions: every option
the pip installed beside kvlint defines for ``pip install`` as taking a value (optparse's ``Option.takes_value()``)
is known as valued, and none that takes no value is; the source options are pip's index, find-links, requirements,
constraints and editable options (by the ``dest`` pip stores them in). Skipped where pip is not importable."""

from __future__ import annotations

import pytest

from kvlint.engines.pip_options import PIP_INSTALL_OPTIONS, PIP_SHORT_VALUED, PIP_SOURCE_OPTIONS, PIP_VALUED

#: uv pip install's own options in the table (pip has no option of these names)
_UV_ONLY = {
    "--index",
    "--default-index",
    "-P",
    "--upgrade-package",
    "--reinstall-package",
    "--index-strategy",
}
#: where pip stores the options that name a package source (pip cli/cmdoptions.py)
_SOURCE_DESTS = {
    "index_url",
    "extra_index_urls",
    "no_index",
    "find_links",
    "requirements",
    "constraints",
    "editables",
}


def _pip_install_options() -> dict[str, tuple[bool, str]]:
    """Each spelling of an option pip's ``install`` command parses: (takes a value, its dest)."""
    commands = pytest.importorskip("pip._internal.commands")
    parser = commands.create_command("install").parser
    options = list(parser.option_list)
    for group in parser.option_groups:
        options += group.option_list
    return {
        name: (bool(option.takes_value()), option.dest)
        for option in options
        for name in option._short_opts + option._long_opts
    }


def test_every_option_pip_defines_as_taking_a_value_is_known_as_such() -> None:
    pip = _pip_install_options()
    assert len(pip) > 50  # the install command's and the general options were read
    valued = {name for name, (takes, _dest) in pip.items() if takes}
    assert valued - PIP_VALUED == set(), "pip options that take a value, missing from PIP_INSTALL_OPTIONS"
    flags = {name for name, (takes, _dest) in pip.items() if not takes}
    assert flags & PIP_VALUED == set(), "options kvlint takes as valued that pip defines as flags"


def test_the_table_names_only_options_pip_or_uv_defines() -> None:
    pip = _pip_install_options()
    assert set(PIP_INSTALL_OPTIONS) - set(pip) == _UV_ONLY


def test_the_source_options_are_pip_s_index_and_requirements_options() -> None:
    pip = _pip_install_options()
    assert PIP_SOURCE_OPTIONS - _UV_ONLY == {
        name for name, (_t, dest) in pip.items() if dest in _SOURCE_DESTS
    }


def test_the_one_letter_valued_options_are_pip_s() -> None:
    pip = _pip_install_options()
    assert {
        name[1] for name, (takes, _dest) in pip.items() if takes and len(name) == 2
    } == PIP_SHORT_VALUED - {name[1] for name in _UV_ONLY if len(name) == 2}
