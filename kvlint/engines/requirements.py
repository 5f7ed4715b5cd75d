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
project but pin no release kvlint can read, except a release tag of the engine's own source repository
(``git+https://github.com/vllm-project/vllm@v0.8.5``, HabanaAI's fork ``...vllm-fork.git@v0.7.2+Gaudi-1.21.0``:
:data:`ENGINE_SOURCES`), which builds that release. A requirement that pins no release keeps its version range
(:attr:`Pin.spec`), from which :func:`newest_admitted` reads the newest modelled release pip would install in
it. An environment marker is not evaluated (the container's Python is not
known): the pin is taken as applying.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

__all__ = [
    "ENGINE_SOURCES",
    "MAX_REQUIREMENT_CHARS",
    "PARSE_BUDGET_CHARS",
    "Pin",
    "RequirementReader",
    "dev_placeholder_wheel",
    "newest_admitted",
    "range_admits",
    "read_requirement",
    "ref_release",
    "source_repository",
]

#: Longer requirement text is not read (no release number or wheel URL comes near it).
MAX_REQUIREMENT_CHARS = 2000
#: The characters of requirement text one :class:`RequirementReader` parses (a script's pip commands, one
#: RayService's runtime_env lists): eight requirements of :data:`MAX_REQUIREMENT_CHARS`, far above any real pip
#: command's, where a requirement costs packaging's parser about a microsecond a character (a 2,000-character
#: extras list 1.3 ms).
PARSE_BUDGET_CHARS = 16_000
#: A release number's parts kvlint takes: at most 4 digits each (``99999999999999999999.0`` names no release).
_MAX_PART_DIGITS = 4
#: Longer version ranges are not read (a real one, ``>=0.8.5,<0.9``, is a few dozen characters).
MAX_SPECIFIER_CHARS = 200
_NUMBER = re.compile(r"\d+")


class Pin(NamedTuple):
    """What one requirement names: ``project`` as PEP 503 normalises it, and ``release``, the public version
    (``Version.public``: a local ``+cu118`` build tag dropped) it pins, None when it pins no single release."""

    project: str
    release: str | None
    #: the version range the requirement admits when it pins no single release (``>=0.9,<0.10``, as
    #: ``packaging`` prints the specifier set, at most :data:`MAX_SPECIFIER_CHARS` characters), else ""
    spec: str = ""


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
    if dev_placeholder_wheel(name):
        return Pin(str(project), None)  # vLLM's CI's name for a build of its main branch: no release
    return Pin(str(project), _release(str(version)))


#: The file name vLLM's CI gives every development build it uploads (vllm-project/vllm@d3390218
#: ``.buildkite/upload-wheels.sh``: "If the version contains "dev", rename it to v1.0.0.dev for consistency",
#: ``new_version="1.0.0.dev"`` or ``"1.0.0.dev+${suffix}"`` for a ``cuXXX`` build, copied to the bucket's
#: ``<commit>/``, ``nightly/`` and ``1.0.0.dev/``; vLLM's docs install ``https://wheels.vllm.ai/${VLLM_COMMIT}/
#: vllm-1.0.0.dev-cp38-abi3-manylinux1_x86_64.whl``): the wheel inside is a development version of main
#: (``0.6.4.dev123+g...``), and 1.0.0 is no vLLM release. Percent-decoded (``%2B`` is ``+``).
_DEV_PLACEHOLDER_WHEEL = re.compile(r"vllm-1\.0\.0\.dev(?:\+[A-Za-z0-9.]+)?-[^/]*\.whl", re.IGNORECASE)


def dev_placeholder_wheel(location: str) -> bool:
    """Whether the path or URL ``location`` (its last path component, percent-decoded) names a vLLM wheel by the
    placeholder name vLLM's CI gives its development builds (:data:`_DEV_PLACEHOLDER_WHEEL`)."""
    try:
        path = urlsplit(location.strip()).path
    except ValueError:
        return False
    return _DEV_PLACEHOLDER_WHEEL.fullmatch(unquote(path.rsplit("/", 1)[-1])) is not None


#: Git repositories of an engine's source whose release tags build that engine release, lower case (host/owner/name)
#: -> the project pip installs from them. ``vllm-project/vllm`` and ``sgl-project/sglang`` tag their releases
#: ``vX.Y.Z``; HabanaAI's Gaudi fork of vLLM tags its releases with the vLLM release they are built on,
#: ``v0.7.2+Gaudi-1.21.0`` (HabanaAI/vllm-fork tags v0.6.4.post2+Gaudi-1.19.0 ... v0.9.0.1+Gaudi-1.22.0), and its
#: ``setup.py::get_vllm_version`` (at v0.7.2+Gaudi-1.21.0) takes the version from that tag with setuptools-scm
#: (``get_version()``), so the build is vLLM ``0.7.2+gaudi.1.21.0``, release 0.7.2.
ENGINE_SOURCES: dict[str, str] = {
    "github.com/vllm-project/vllm": "vllm",
    "github.com/habanaai/vllm-fork": "vllm",
    "github.com/sgl-project/sglang": "sglang",
}


def source_repository(url: str) -> str | None:
    """The project of :data:`ENGINE_SOURCES` whose repository ``url`` names (``https://github.com/HabanaAI/
    vllm-fork.git``, ``git@github.com:vllm-project/vllm``, ``git+https://...``, a ``@ref`` and ``#fragment``
    ignored), else None."""
    u = url.strip()
    if len(u) > MAX_REQUIREMENT_CHARS:
        return None
    u = u.removeprefix("git+").split("#", 1)[0]
    if u.startswith("git@") and ":" in u:  # scp-like: git@github.com:owner/repo.git
        host, _, path = u[4:].partition(":")
    else:
        try:
            parts = urlsplit(u)
        except ValueError:
            return None
        if parts.scheme not in ("https", "http", "ssh", "git"):
            return None
        host, path = (parts.hostname or ""), parts.path
    path = path.split("@", 1)[0].strip("/").removesuffix(".git")
    return ENGINE_SOURCES.get(f"{host.lower()}/{path.lower()}")


def ref_release(ref: str) -> str | None:
    """The release a git tag of an engine source repository builds (``v0.8.5`` -> ``0.8.5``,
    ``v0.7.2+Gaudi-1.21.0`` -> ``0.7.2``: setuptools-scm reads the tag as the version, and the public version
    drops the local label), None for a ref that names no release (``main``, ``habana_main``, a commit hash)."""
    return _release(ref.strip())


def _source_pin(url: str, project: str | None = None) -> Pin | None:
    """The engine a VCS URL (``git+https://github.com/HabanaAI/vllm-fork.git@v0.7.2+Gaudi-1.21.0``) installs and
    the release its ``@ref`` builds (:func:`ref_release`); None when it names no repository of
    :data:`ENGINE_SOURCES` (or of ``project``, when the requirement names one)."""
    engine = source_repository(url)
    if engine is None or (project is not None and engine != project):
        return None
    try:
        path = urlsplit(url.removeprefix("git+").split("#", 1)[0]).path
    except ValueError:
        return None
    _, at, ref = path.partition("@")
    return Pin(engine, ref_release(ref) if at else None)


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
    if stripped.startswith("git+") and not re.search(r"\s", stripped):
        # a bare VCS URL (pip install git+https://...@ref): pip builds the project the repository holds
        return _source_pin(stripped)
    try:
        req = Requirement(stripped)
    except InvalidRequirement:
        return None
    project = canonicalize_name(req.name)
    if req.url is not None:
        wheel = _wheel(req.url)
        if wheel is None or wheel.project != project:
            # a source tree or archive (git+https://..., a .tar.gz), or a wheel of another project (pip refuses it);
            # a release tag of the engine's source repository builds that release
            return _source_pin(req.url, project) or Pin(project, None)
        return wheel
    clauses = list(req.specifier)
    if len(clauses) != 1 or clauses[0].operator not in ("==", "===") or clauses[0].version.endswith(".*"):
        # lower bounds first, as a range is written (packaging prints the clauses sorted as text: <0.10,>=0.9)
        spec = ",".join(sorted((str(c) for c in clauses), key=lambda c: c[:1] in "<!"))
        return Pin(project, None, spec if len(spec) <= MAX_SPECIFIER_CHARS else "")
    return Pin(project, _release(clauses[0].version))


def _specifiers(spec: str) -> SpecifierSet | None:
    """``spec`` read as a PEP 440 specifier set, None when it is empty, longer than :data:`MAX_SPECIFIER_CHARS`
    characters (not parsed: clipped before ``packaging`` sees it) or malformed."""
    if not isinstance(spec, str) or not spec or len(spec) > MAX_SPECIFIER_CHARS:
        return None
    try:
        return SpecifierSet(spec)
    except InvalidSpecifier:
        return None


def range_admits(spec: str, release: str) -> bool:
    """Whether the version range ``spec`` (``>=0.9,<0.10``) admits ``release`` (``0.9.1``; a local label such as
    ``+cu118`` dropped), as pip decides whether an installed release satisfies a requirement; False when either
    is unreadable (:func:`_specifiers`, :func:`_release`)."""
    ranged, public = _specifiers(spec), _release(release)
    return ranged is not None and public is not None and ranged.contains(public, prereleases=True)


def newest_admitted(spec: str, releases: Sequence[str]) -> str | None:
    """The newest of ``releases`` (the releases kvlint models, any order) the version range ``spec`` admits
    (``>=0.9,<0.10``, ``~=0.9.1``, ``<0.10``), read with ``packaging.specifiers.SpecifierSet`` as pip reads it
    (pre-releases only when the range names one, PEP 440); pip installs the newest release on its index the
    range admits (``pip/_internal/resolution/resolvelib/factory.py``, candidates tried newest first). None when
    the range admits the newest of ``releases`` (a release newer than kvlint models may be the one pip takes),
    admits none of them, is empty, longer than :data:`MAX_SPECIFIER_CHARS` characters (not parsed), or is not
    a PEP 440 specifier set."""
    ranged = _specifiers(spec)
    if ranged is None or not releases:
        return None
    try:
        versions = sorted((Version(r), r) for r in releases)
    except InvalidVersion:
        return None
    admitted = [r for v, r in versions if ranged.contains(v)]
    if not admitted or admitted[-1] == versions[-1][1]:
        return None
    return admitted[-1]


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
