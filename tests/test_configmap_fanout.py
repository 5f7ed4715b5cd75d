"""ConfigMaps read for a container's env in work linear in the input, whatever shape a hostile manifest gives it:
many ``envFrom`` entries naming one large ConfigMap, many references to ConfigMaps of other namespaces among many
ConfigMaps, many references to a missing key of a large ConfigMap. The work is counted (keys and ConfigMaps
visited), never timed. Before the fixes, 4,000 ``envFrom`` entries naming a ConfigMap of 4,000 keys took 14 s
(every key listed once per entry), and 6,000 references to names of another namespace among 6,000 ConfigMaps
compared 72 million keys."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kvlint.engines.command import container_env
from kvlint.engines.shell import ARG_MAX
from kvlint.load import load_text
from kvlint.source import LDict
from kvlint.workloads.configmaps import configmap_problem, configmap_value, configmaps, env_problems


class _Counting:
    """A mapping that counts in ``seen`` the entries iterated over (``items()`` and ``iter()``)."""

    __slots__ = ()
    seen: int

    def items(self) -> Any:
        for kv in super().items():  # type: ignore[misc]
            self.seen += 1
            yield kv

    def __iter__(self) -> Iterator[Any]:
        for k in super().__iter__():  # type: ignore[misc]
            self.seen += 1
            yield k


class CountingData(_Counting, LDict):
    """A ConfigMap's ``data`` that counts the keys iterated over."""

    __slots__ = ("seen",)

    def __init__(self, data: LDict) -> None:
        super().__init__(data, loc=data.loc)
        self.locs = dict(data.locs)
        self.key_locs = dict(data.key_locs)
        self.seen = 0


class CountingMaps(_Counting, dict):
    """The ConfigMaps of a run (``(namespace, name) -> data``) counting the entries iterated over."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.seen = 0


def _maps(text: str) -> dict[Any, Any]:
    return configmaps(load_text(text, "cms.yaml").documents)


def _configmap(name: str, data: dict[str, str], namespace: str | None = None) -> str:
    ns = f", namespace: {namespace}" if namespace else ""
    body = "".join(f"\n  {k}: {v}" for k, v in data.items())
    return f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}{ns}}}\ndata:{body}\n"


def test_envfrom_entries_naming_one_configmap_list_its_keys_once() -> None:
    n = 2_000
    cms = _maps(_configmap("big", {f"K{i}": f"v{i}" for i in range(n)}))
    data = cms[(None, "big")] = CountingData(cms[(None, "big")])
    container = {"envFrom": [{"configMapRef": {"name": "big"}} for _ in range(n)]}
    env, locs = container_env(container, cms)
    assert len(env) == n and env["K7"] == "v7" and locs["K7"] is not None
    assert data.seen <= n, data.seen  # 4,000,000 before: the keys listed once per entry


def test_envfrom_entries_with_prefixes_and_repeats_resolve_as_the_kubelet_does() -> None:
    # keys that go-yaml v2 reads as text (``Y`` would be the boolean true there, as kubectl reads it)
    cms = _maps(_configmap("a", {"X": "1", "W": "2"}) + _configmap("b", {"X": "3"}))
    container = {
        "envFrom": [
            {"configMapRef": {"name": "a"}},
            {"configMapRef": {"name": "b"}},
            {"configMapRef": {"name": "a"}, "prefix": "P_"},
        ],
        "env": [{"name": "W", "value": "$(X)-$(P_W)"}],
    }
    env, _ = container_env(container, cms)
    assert env == {"X": "3", "W": "3-2", "P_X": "1", "P_W": "2"}
    container["envFrom"].append({"configMapRef": {"name": "a"}})  # a later entry wins again
    assert container_env(container, cms)[0]["X"] == "1"


def test_envfrom_stops_importing_beyond_what_execve_takes() -> None:
    """Entries naming one ConfigMap under many prefixes define (entries x keys) variables: they are imported up
    to the environment ``execve(2)`` takes (ARG_MAX bytes), beyond which the container cannot start."""
    keys, entries = 1_000, 1_000
    cms = _maps(_configmap("wide", {f"K{i}": "x" * 200 for i in range(keys)}))
    data = cms[(None, "wide")] = CountingData(cms[(None, "wide")])
    container = {"envFrom": [{"configMapRef": {"name": "wide"}, "prefix": f"P{j}_"} for j in range(entries)]}
    env, _ = container_env(container, cms)
    size = sum(len(k) + len(v) + 2 for k, v in env.items())
    assert ARG_MAX < size <= ARG_MAX + 300, size
    assert env["P0_K0"] == "x" * 200 and "P999_K0" not in env
    assert data.seen <= keys


def test_envfrom_problems_scan_each_configmap_once() -> None:
    n = 2_000
    cms = _maps(_configmap("big", {f"K{i}": f"v{i}" for i in range(n)}))
    data = cms[(None, "big")] = CountingData(cms[(None, "big")])
    container = {
        "envFrom": [{"configMapRef": {"name": "big"}} for _ in range(n)]
        + [{"configMapRef": {"name": "gone"}}] * n
    }
    problems = env_problems(container, cms)
    assert problems == ((None, "envFrom: ConfigMap gone is not among the inputs"),)  # once, not 2,000 times
    assert data.seen <= n, data.seen


def test_missing_keys_of_a_large_configmap_list_a_few_keys_each() -> None:
    n = 2_000
    cms = _maps(_configmap("big", {f"K{i}": f"v{i}" for i in range(n)}))
    data = cms[(None, "big")] = CountingData(cms[(None, "big")])
    container = {"env": [{"name": f"V{i}", "valueFrom": {"configMapKeyRef": {"name": "big", "key": f"M{i}"}}}
                         for i in range(n)]}  # fmt: skip
    problems = env_problems(container, cms)
    assert len(problems) == n
    assert (
        problems[0][1].startswith("env V0: ConfigMap big (cms.yaml:")
        and "(its keys: K0, K1," in problems[0][1]
    )
    assert data.seen <= 10 * n, data.seen  # 4,000,000 before: every key listed to show eight


def test_references_to_other_namespaces_do_not_scan_every_configmap() -> None:
    n = 3_000
    text = "".join(_configmap(f"c{i}", {"k": "v"}, "a") for i in range(n)) + _configmap(
        "twice", {"k": "1"}, "a"
    )
    text += _configmap("twice", {"k": "2"}, "c")
    cms = CountingMaps(_maps(text))
    container = {"env": [{"name": f"V{i}", "valueFrom": {"configMapKeyRef": {"name": f"m{i}", "key": "k"}}}
                         for i in range(n)]}  # fmt: skip
    env, _ = container_env(container, cms, "b")
    assert env == {}
    assert len(env_problems(container, cms, "b")) == n
    assert cms.seen <= 2 * (n + 2), cms.seen  # 18,000,000 before: a scan of every ConfigMap per reference
    # a ConfigMap of another namespace than the pod's is not read, even the only one of its name (the kubelet
    # reads a pod's ConfigMaps in the pod's namespace), and the problem says where it is; without a namespace of
    # its own the pod may be applied in the ConfigMap's, whose only one of the name is then the one read
    assert configmap_value(cms, "c5", "k", "b") is None
    assert configmap_problem(cms, "c5", "b", "k").startswith(
        "ConfigMap c5 (cms.yaml:"
    ) and "is in namespace a, not the pod's namespace b" in (configmap_problem(cms, "c5", "b", "k") or "")
    assert configmap_value(cms, "c5", "k") == ("v", cms[("a", "c5")].locs["k"])
    assert configmap_value(cms, "twice", "k", "b") is None
    # (two of the name, both of other namespaces: the problem names the first and counts the other)
    assert "is in namespace a (and 1 other), not the pod's namespace b" in (
        configmap_problem(cms, "twice", "b") or ""
    )
    cms[("z", "late")] = cms[("a", "c1")]  # a ConfigMap added later is found too
    assert configmap_value(cms, "late", "k") == ("v", cms[("a", "c1")].locs["k"])
