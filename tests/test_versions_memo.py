"""ReleaseVersion memoises its comparisons with release tuples and resolve_version its answers by text: the
answers must stay those of PEP 440 (``packaging.version.Version``), on the first comparison and on the memoised
ones."""

from __future__ import annotations

import copy
import operator
import pickle

import pytest
from packaging.version import Version as PV

from kvlint.memory.versions import NEWEST, ReleaseVersion, resolve_version

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
    (0, 33),
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
