"""No code compares a release with a threshold tuple shorter than three components by ``>``, ``<=``, ``==`` or
``!=``: since perfA50 a final :class:`kvlint.memory.versions.ReleaseVersion` compares as the plain tuple it is (in
C), so ``ReleaseVersion("0.33.0") > (0, 33)`` is True where PEP 440 says the two are equal (``>=`` and ``<``
against a shorter tuple still agree with PEP 440). The scan reads every comparison in ``kvlint/`` whose other side
is named like a version (``version``, ``release``, ``v``, ``ver``, ``rel``); a slice (``v[:2]``) is a plain tuple
and is not one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from kvlint.memory.versions import ReleaseVersion

ROOT = Path(__file__).resolve().parents[1]
_MISLEADING = (ast.Gt, ast.LtE, ast.Eq, ast.NotEq)
_VERSIONISH = re.compile(r"version|release|^(v|ver|rel|v\d)$")
#: ``packaging.version.Version.release`` is a plain tuple, compared as one on purpose.
_PLAIN_TUPLES = {("kvlint/memory/versions.py", "pv.release == (0, 1)")}


def _short_int_tuple(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Tuple)
        and 0 < len(node.elts) < 3
        and all(isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts)
    )


def misleading_comparisons(root: Path) -> list[str]:
    """``path:line: source`` of each comparison of a version-named value with a shorter threshold tuple by an
    operator whose tuple answer differs from PEP 440's."""
    found = []
    for path in sorted((root / "kvlint").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if not isinstance(op, _MISLEADING):
                    continue
                for short, other in ((sides[i], sides[i + 1]), (sides[i + 1], sides[i])):
                    if not _short_int_tuple(short) or isinstance(other, ast.Subscript):
                        continue
                    name = ast.unparse(other).rsplit(".", 1)[-1].split("(")[0].lower()
                    source = ast.unparse(node)
                    if _VERSIONISH.search(name) and (rel, source) not in _PLAIN_TUPLES:
                        found.append(f"{rel}:{node.lineno}: {source}")
    return found


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    (tmp_path / "kvlint").mkdir()
    (tmp_path / "kvlint" / "m.py").write_text(
        "def f(version, v, cc):\n    return version > (0, 33) or v == (1, 0) or cc > (8, 0)\n"
    )
    assert misleading_comparisons(tmp_path) == [
        "kvlint/m.py:2: version > (0, 33)",
        "kvlint/m.py:2: v == (1, 0)",
    ]


def test_why_it_matters() -> None:
    assert ReleaseVersion("0.33.0") > (0, 33)  # the tuple's answer, not PEP 440's (equal)
    assert ReleaseVersion("0.33.0") >= (0, 33) and not ReleaseVersion("0.33.0") < (0, 33)  # these agree


def test_no_version_is_compared_with_a_shorter_tuple_by_an_operator_that_answers_otherwise() -> None:
    assert misleading_comparisons(ROOT) == []
