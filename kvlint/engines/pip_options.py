"""The ``pip install`` (and ``uv pip install``) options kvlint reads a script's install command by: which take the
next word as their value, and which name a package source other than PyPI alone. One table carries both facts, for
both readers: :func:`kvlint.engines.images.pip_names_source` (whether the install may take the engine from another
source, :data:`PIP_SOURCE_OPTIONS`) and :mod:`kvlint.engines.command`'s reading of the words after ``install``
(a valued option's value is not a requirement, :data:`PIP_VALUED`, :data:`PIP_SHORT_VALUED`).

Read from pip's own option definitions, pip 26.3 (pypa/pip tag ``26.3``): ``src/pip/_internal/cli/cmdoptions.py``
(the shared options: the index group, requirements, constraints, editable, ``--src``, ``--no-binary``, ``--python``,
``--log``, ``--cache-dir`` ...; the general options ``pip install`` takes after its name too, optparse's
``interspersed`` parsing) and ``src/pip/_internal/commands/install.py`` (``--target``, ``--root``, ``--prefix``,
``--upgrade-strategy``, ``--report`` ...). An option "takes a value" as optparse says (``Option.takes_value()``: a
``store``/``append``/``callback`` option with a ``type``); tests/test_pip_options.py compares the table with the pip
installed beside kvlint. uv's own ``uv pip install`` options that name an index (``--index``, ``--default-index``:
uv's CLI reference, "uv pip install") are listed too, and those that name a package to upgrade or reinstall and the
index strategy (``-P``/``--upgrade-package``, ``--reinstall-package``, ``--index-strategy``); uv's other options are
not.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

__all__ = ["PIP_INSTALL_OPTIONS", "PIP_SHORT_VALUED", "PIP_SOURCE_OPTIONS", "PIP_VALUED", "PipOption"]


class PipOption(NamedTuple):
    """What kvlint needs to know of one spelling of a ``pip install`` option."""

    #: the option takes a value: the rest of the word after ``=`` or, alone, the next word
    valued: bool
    #: the install may take packages from somewhere else than PyPI alone: an index or find-links location, no index,
    #: or requirements read from a file (a file may hold index options, pip ``req/req_file.py``) or an editable
    #: source tree; kvlint does not know that source's build
    source: bool


_VALUE = PipOption(valued=True, source=False)
_SOURCE_VALUE = PipOption(valued=True, source=True)
_SOURCE_FLAG = PipOption(valued=False, source=True)

#: Each spelling of a ``pip install`` option that takes a value or names a source (the others are flags that do
#: neither: ``-U``, ``--no-deps``, ``-q`` ...), from pip 26.3's definitions (module docstring); aliases pip defines
#: for one option (``--index-url``/``--pypi-url``, ``--log``/``--log-file``/``--local-log``) each listed.
PIP_INSTALL_OPTIONS: Mapping[str, PipOption] = MappingProxyType(
    {
        # cmdoptions.py: requirements, constraints, editable (install's "Install Options"), the package index group
        "-r": _SOURCE_VALUE,
        "--requirement": _SOURCE_VALUE,
        "-c": _SOURCE_VALUE,
        "--constraint": _SOURCE_VALUE,
        "-e": _SOURCE_VALUE,
        "--editable": _SOURCE_VALUE,
        "-i": _SOURCE_VALUE,
        "--index-url": _SOURCE_VALUE,
        "--pypi-url": _SOURCE_VALUE,
        "--extra-index-url": _SOURCE_VALUE,
        "--no-index": _SOURCE_FLAG,
        "-f": _SOURCE_VALUE,
        "--find-links": _SOURCE_VALUE,
        # uv pip install's index options (uv's own; pip has none of these names)
        "--index": _SOURCE_VALUE,
        "--default-index": _SOURCE_VALUE,
        # uv pip install's own options that take a value kvlint reads (astral-sh/uv@26a9dd4b crates/uv-cli/src/lib.rs):
        # a package to upgrade or reinstall (its value no requirement to install), the index strategy
        "-P": _VALUE,
        "--upgrade-package": _VALUE,
        "--reinstall-package": _VALUE,
        "--index-strategy": _VALUE,
        # cmdoptions.py: other options of install that take a value (requirements from a script's inline metadata
        # or a pyproject.toml dependency group name no index: not a source here, as before this table)
        "--build-constraint": _VALUE,
        "--requirements-from-script": _VALUE,
        "--group": _VALUE,
        "--platform": _VALUE,
        "--python-version": _VALUE,
        "--implementation": _VALUE,
        "--abi": _VALUE,
        "--src": _VALUE,
        "--source": _VALUE,
        "--source-dir": _VALUE,
        "--source-directory": _VALUE,
        "-C": _VALUE,
        "--config-settings": _VALUE,
        "--progress-bar": _VALUE,
        "--root-user-action": _VALUE,
        "--all-releases": _VALUE,
        "--only-final": _VALUE,
        "--no-binary": _VALUE,
        "--only-binary": _VALUE,
        "--refresh-package": _VALUE,
        "--uploaded-prior-to": _VALUE,
        # commands/install.py
        "-t": _VALUE,
        "--target": _VALUE,
        "--root": _VALUE,
        "--prefix": _VALUE,
        "--upgrade-strategy": _VALUE,
        "--report": _VALUE,
        # cmdoptions.py general_group: the options every pip command takes, after its name too
        "--python": _VALUE,
        "--log": _VALUE,
        "--log-file": _VALUE,
        "--local-log": _VALUE,
        "--keyring-provider": _VALUE,
        "--proxy": _VALUE,
        "--retries": _VALUE,
        "--timeout": _VALUE,
        "--default-timeout": _VALUE,
        "--exists-action": _VALUE,
        "--trusted-host": _VALUE,
        "--cert": _VALUE,
        "--client-cert": _VALUE,
        "--cache-dir": _VALUE,
        "--use-feature": _VALUE,
        "--use-deprecated": _VALUE,
        "--resume-retries": _VALUE,
    }
)
#: The options whose value is the next word when not written ``--option=value`` (a file, a URL, a directory, a name):
#: that word is not a requirement.
PIP_VALUED = frozenset(name for name, option in PIP_INSTALL_OPTIONS.items() if option.valued)
#: The options that name a package source besides PyPI (:attr:`PipOption.source`).
PIP_SOURCE_OPTIONS = frozenset(name for name, option in PIP_INSTALL_OPTIONS.items() if option.source)
#: The one-letter options that take a value (``r c e i f t C``): in a cluster the rest of the word is that value
#: (optparse: ``-qr req.txt`` is ``-q -r req.txt``, ``-qtDIR`` is ``-q -t DIR``).
PIP_SHORT_VALUED = frozenset(name[1] for name in PIP_VALUED if len(name) == 2)
