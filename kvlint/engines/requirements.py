"""One reader of the requirements pip installs: which project a requirement names and the one release it pins.

Both places kvlint reads a requirement use it: a container's script (``pip install vllm==0.6.6``, ``uv pip install
"sglang[all]==0.4.6.post1"``; :func:`kvlint.engines.command._pip_pinned`) and a KubeRay RayService's
``runtime_env.pip``/``uv`` list, which Ray writes to a requirements file and hands to ``pip install -r`` (ray-project/ray
``python/ray/_private/runtime_env/pip.py``; :func:`kvlint.workloads.rayserve._pinned_vllm`). A requirement is read as
pip reads it: a PEP 508 requirement parsed by ``packaging.requirements.Requirement`` (the parser pip vendors), whose
project name is compared as PEP 503 normalises it (``vLLM``, ``VLLM`` and ``vllm`` are one project), or a wheel
file named by a path or URL alone (``./vllm-0.8.5-cp38-abi3-manylinux1_x86_64.whl``), whose file name carries the
project and release (PEP 427, ``packaging.utils.parse_wheel_filename``; pip percent-decodes the URL's file name,
``pip/_internal/models/link.py`` ``Link.filename``).

A single release is pinned by exactly one ``==`` or ``===`` clause naming a version without a wildcard
(``vllm==0.6.3.post1``, ``vllm === 0.6.3``, ``vllm[audio]==0.8.5; sys_platform == "linux"``) or by a direct
reference to a wheel (``vllm @ https://.../vllm-0.8.5-cp38-abi3-manylinux1_x86_64.whl``). ``vllm>=0.6``,
``vllm==0.6.*``, ``vllm>=0.6,==0.6.3`` and a reference to a source tree (``vllm @ git+https://...``) name the
project but pin no release kvlint can read. An environment marker is not evaluated (the container's Python is not
known): the pin is taken as applying.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

__all__ = ["MAX_REQUIREMENT_CHARS", "PARSE_BUDGET_CHARS", "Pin", "RequirementReader", "read_requirement"]

#: Longer requirement text is not read (no release number or wheel URL comes near it).
MAX_REQUIREMENT_CHARS = 2000
#: The characters of requirement text one :class:`RequirementReader` parses (a script's pip commands, one
#: RayService's runtime_env lists): eight requirements of :data:`MAX_REQUIREMENT_CHARS`, far above any real pip
#: command's, where a requirement costs packaging's parser about a microsecond a character (a 2,000-character
#: extras list 1.3 ms).
PARSE_BUDGET_CHARS = 16_000
#: A release number's parts kvlint takes: at most 4 digits each (``99999999999999999999.0`` names no release).
_MAX_PART_DIGITS = 4
_NUMBER = re.compile(r"\d+")


class Pin(NamedTuple):
    """What one requirement names: ``project`` as PEP 503 normalises it, and ``release``, the public version
    (``Version.public``: a local ``+cu118`` build tag dropped) it pins, None when it pins no single release."""

    project: str
    release: str | None


def _release(text: str) -> str | None:
    """The public version ``text`` names (PEP 440, normalised: ``v0.6.3`` -> ``0.6.3``), None when it is not a
    version or one of its numbers is longer than :data:`_MAX_PART_DIGITS` digits."""
    if len(text) > 100 or any(len(n) > _MAX_PART_DIGITS for n in _NUMBER.findall(text.split("+", 1)[0])):
        return None
    try:
        return Version(text).public
    except InvalidVersion:
        return None


def _wheel(location: str) -> Pin | None:
    """The project and release of the wheel file a path or URL names (its last path component, percent-decoded),
    None when it names no wheel."""
    try:
        path = urlsplit(location).path
    except ValueError:
        return None
    name = unquote(path.rsplit("/", 1)[-1])
    if not name.endswith(".whl"):
        return None
    try:
        project, version, _build, _tags = parse_wheel_filename(name)
    except (InvalidWheelFilename, InvalidVersion):
        return None
    return Pin(str(project), _release(str(version)))


def read_requirement(text: str) -> Pin | None:
    """The project ``text`` names as pip reads one requirement, with the release it pins (module docstring); None
    when pip would not read it as a requirement (``--quiet``, a bare word with ``/`` that names no wheel) or it is
    longer than :data:`MAX_REQUIREMENT_CHARS`."""
    if not isinstance(text, str) or len(text) > MAX_REQUIREMENT_CHARS:
        return None
    stripped = text.strip()
    if not stripped or stripped.startswith("-"):
        return None
    if stripped.endswith(".whl") and not re.search(r"\s", stripped) and "@" not in stripped.split("/", 1)[0]:
        return _wheel(stripped)
    try:
        req = Requirement(stripped)
    except InvalidRequirement:
        return None
    project = canonicalize_name(req.name)
    if req.url is not None:
        wheel = _wheel(req.url)
        if wheel is None or wheel.project != project:
            # a source tree or archive (git+https://..., a .tar.gz), or a wheel of another project (pip refuses it)
            return Pin(project, None)
        return wheel
    clauses = list(req.specifier)
    if len(clauses) != 1 or clauses[0].operator not in ("==", "===") or clauses[0].version.endswith(".*"):
        return Pin(project, None)
    return Pin(project, _release(clauses[0].version))


class RequirementReader:
    """:func:`read_requirement` for the many requirements of one script or one object, within a budget: each text
    is parsed once (a repeat -- an alias, a variable expanded again -- is remembered), only when it can name
    ``project`` (its name, any case, in the text or its percent-decoded form), and at most
    :data:`PARSE_BUDGET_CHARS` characters in all are parsed; past that a requirement is not read (None). Without
    it, requirements repeated through YAML aliases or shell variables (``pip install ${R}1 ${R}2 ...``) cost
    packaging's parser minutes for a 1 MB file."""

    def __init__(self, project: str, budget: int = PARSE_BUDGET_CHARS) -> None:
        self.project = project
        self.left = budget
        self._seen: dict[str, Pin | None] = {}

    def read(self, text: str) -> Pin | None:
        """The requirement ``text`` names, when it names :attr:`project` (else None, as when it is not read)."""
        hit = self._seen.get(text, _UNSEEN)
        if hit is not _UNSEEN:
            return hit  # type: ignore[return-value]
        lowered = text.lower()
        if self.project not in lowered and ("%" not in text or self.project not in unquote(lowered)):
            return None  # (not remembered: the test costs less than the lookup of a long text)
        if len(text) > self.left:
            return None
        self.left -= len(text)
        pin = read_requirement(text)
        self._seen[text] = pin
        return pin


_UNSEEN = object()
