"""ReleaseVersion memoises its comparisons with release tuples and resolve_version its answers by text: the
answers must stay those of PEP 440 (``packaging.version.Version``), on the first comparison and on the memoised
ones."""

from __future__ import annotations

import copy
import operator
import pickle

import pytest
from packaging.version import Version as PV

from kvlint.memory.memo import by_value
from kvlint.memory.versions import NEWEST, PEP440Version, ReleaseVersion, resolve_version

VERSIONS = [
    "0.6.6",
    "0.8.5.post1",
    "0.10.1.1",
    "0.10.1.1+nv25.11",
    "0.11.0+cu130",
    "0.15.2rc1.dev93",
    "0.20.0",
    "0.33.0",
    "1.0",
]
THRESHOLDS = [
    (0, 8, 5),
    (0, 10, 1),
    (0, 10, 2),
    (0, 11, 0),
    (0, 15, 2),
    (0, 15, 1),
    (0, 20, 0),
    (0, 33, 0),
    (1, 0, 0),
]
OPS = [operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge]


@pytest.mark.parametrize("text", VERSIONS)
def test_comparisons_with_release_tuples_follow_pep440_when_memoised(text):
    v = ReleaseVersion(text)
    public = PV(PV(text).public)
    for _ in range(2):  # the second pass answers from the memo
        for t in THRESHOLDS:
            other = PV(".".join(map(str, t)))
            for op in OPS:
                assert op(v, t) == op(public, other), (text, t, op.__name__)
                assert op(t, v) == op(other, public), (t, text, op.__name__)


def test_comparisons_between_versions_and_with_non_versions():
    a, b = ReleaseVersion("0.10.1.1"), ReleaseVersion("0.10.2")
    assert a < b and b > a and a != b and a == ReleaseVersion("0.10.1.1+cu128")
    assert a.__eq__("0.10.1.1") is NotImplemented
    assert a.__lt__((0, "10")) is NotImplemented
    assert a.__ge__((0, [10])) is NotImplemented  # unhashable element: not a release tuple
    with pytest.raises(TypeError):
        _ = a < 3


def test_copies_and_pickles_keep_the_version_not_the_memo():
    v = ReleaseVersion("0.15.2rc1.dev93")
    assert v < (0, 15, 2)
    for w in (pickle.loads(pickle.dumps(v)), copy.copy(v), copy.deepcopy(v)):
        assert str(w) == "0.15.2rc1.dev93" and w == v and tuple(w) == (0, 15, 2)
        assert w < (0, 15, 2) and not w < (0, 15, 1)


def test_resolve_version_answers_the_same_for_the_same_text():
    v1, assumed = resolve_version("v0.20.1-cu129")
    assert (str(v1), assumed) == ("0.20.1", False)
    assert resolve_version("v0.20.1-cu129")[0] is v1  # one object: its comparison memo is shared
    assert resolve_version("latest") == (NEWEST, True)
    assert resolve_version(" nightly ") == (NEWEST, True)
    assert resolve_version("0.1.dev7") == (NEWEST, True)
    assert resolve_version("no version here") == (NEWEST, True)
    assert resolve_version(None) == (NEWEST, True)


# Every pair of a wide set of versions, against packaging.version.Version: a final release compares in C as the
# tuple it is, every other version (PEP440Version) in Python, and mixed pairs go to the subclass's reflected method.
_RELEASES = [
    "0",
    "0.9",
    "0.9.2",
    "0.10.1",
    "0.10.1.1",
    "0.10.1.0",
    "0.10.2",
    "0.11.0",
    "0.20.1",
    "1.0",
    "1.0.0.0",
]
_SUFFIXES = ["", "a1", "b2", "rc1", "rc1.dev93", ".dev0", ".post1", ".post1.dev2", "+cu130", ".post2+nv25.11"]
MANY = [r + x for r in _RELEASES for x in _SUFFIXES] + ["1!0.1", "1!0.1+cu128"]
GRID = [(a, b, c) for a in (0, 1) for b in (0, 1, 9, 10, 11, 20) for c in (0, 1, 2)]


def _pep(text):
    return PV(PV(text).public)


def test_the_class_is_the_versions_kind():
    assert type(ReleaseVersion("0.20.0")) is ReleaseVersion
    assert type(ReleaseVersion("0.11.0+cu130")) is ReleaseVersion
    assert type(ReleaseVersion("1.0.0.0")) is ReleaseVersion
    for text in ("0.10.1.1", "0.15.2rc1.dev93", "0.8.5.post1", "0.9.dev0", "1!0.1"):
        v = ReleaseVersion(text)
        assert type(v) is PEP440Version and isinstance(v, ReleaseVersion)
        assert type(PEP440Version(text)) is PEP440Version
    assert type(PEP440Version("0.20.0")) is ReleaseVersion  # the version decides, whichever class is called


def test_every_pair_orders_as_pep440():
    versions = [(ReleaseVersion(t), _pep(t)) for t in MANY]
    for v, pv in versions:
        for w, pw in versions:
            for op in OPS:
                assert op(v, w) == op(pv, pw), (str(v), str(w), op.__name__)


def test_every_version_orders_against_three_component_thresholds_as_pep440():
    for text in MANY:
        v, pv = ReleaseVersion(text), _pep(text)
        for t in GRID:
            pt = PV(".".join(map(str, t)))
            for _ in range(2):  # a PEP440Version answers the second time from its memo
                for op in OPS:
                    assert op(v, t) == op(pv, pt), (text, t, op.__name__)
                    assert op(t, v) == op(pt, pv), (t, text, op.__name__)


def test_shorter_thresholds():
    """``>=`` and ``<`` (the switches' comparisons) are PEP 440's against a shorter tuple for every version; every
    comparison is for a PEP440Version. A final release equal to a shorter tuple but for zeros is the one case a
    tuple's ``==``, ``>`` and ``<=`` answer differently (versions.ReleaseVersion's docstring)."""
    for text in MANY:
        v, pv = ReleaseVersion(text), _pep(text)
        for t in [(0,), (1,), (0, 9), (0, 10), (0, 11), (1, 0), (0, 20)]:
            pt = PV(".".join(map(str, t)))
            ops = OPS if type(v) is PEP440Version else [operator.ge, operator.lt]
            for op in ops:
                assert op(v, t) == op(pv, pt), (text, t, op.__name__)
    assert ReleaseVersion("0.20.0") >= (0, 20) and not ReleaseVersion("0.20.0") < (0, 20)
    assert ReleaseVersion("0.20.0") != (0, 20)  # a tuple's answer (PEP 440: equal)


def test_hashes_and_equality_follow_pep440_for_both_classes():
    for text in MANY:
        v = ReleaseVersion(text)
        assert hash(v) == hash(_pep(text)) == hash(ReleaseVersion(_pep(text).public))
        assert v == ReleaseVersion(_pep(text).public)
    assert len({ReleaseVersion("0.11.0"), ReleaseVersion("0.11.0+cu130"), ReleaseVersion("0.11")}) == 1
    assert len({ReleaseVersion("0.10.1.1"), ReleaseVersion("0.10.1.1+nv25.11")}) == 1


def test_pickles_and_copies_keep_the_class_and_text():
    for text in MANY:
        v = ReleaseVersion(text)
        for w in (pickle.loads(pickle.dumps(v)), copy.copy(v), copy.deepcopy(v)):
            assert type(w) is type(v) and str(w) == str(v) and w == v and hash(w) == hash(v)


def test_memos_key_either_class_by_its_text():
    calls = []

    @by_value
    def shown(v):
        calls.append(v)
        return str(v)

    for a, b in (("0.11.0", "0.11.0+cu130"), ("0.10.1.1", "0.10.1.1+nv25.11")):
        assert (shown(ReleaseVersion(a)), shown(ReleaseVersion(b))) == (a, b)
    assert len(calls) == 4
