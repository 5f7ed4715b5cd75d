"""kvlint.fastinit.direct_init: the replaced __init__ builds the same objects as the dataclass's own."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field

import pytest

from kvlint.engines.layout import Parallelism
from kvlint.fastinit import direct_init
from kvlint.memory.sglang import SglangPlanDetail
from kvlint.memory.stage import FleetEntry
from kvlint.memory.tgi import TgiPlanDetail
from kvlint.memory.vllm import VllmPlanDetail
from kvlint.types import ChartArg, Diagnostic, MemoryPlan, Placement, Value


@dataclass(frozen=True)
class _Plain:
    a: int
    b: str = "x"
    c: tuple[int, ...] = ()
    d: list[int] = field(default_factory=list)


@direct_init
@dataclass(frozen=True)
class _Direct:
    a: int
    b: str = "x"
    c: tuple[int, ...] = ()
    d: list[int] = field(default_factory=list)


def _state(obj: object) -> dict[str, object]:
    return dict(vars(obj))


@pytest.mark.parametrize(
    "args,kwargs",
    [((1,), {}), ((1, "y"), {}), ((1,), {"d": [3]}), ((), {"a": 2, "c": (1, 2), "b": "z"})],
)
def test_same_fields_as_the_generated_init(args: tuple, kwargs: dict) -> None:
    assert _state(_Direct(*args, **kwargs)) == _state(_Plain(*args, **kwargs))


def test_default_factory_called_per_instance() -> None:
    one, two = _Direct(1), _Direct(1)
    assert one.d == [] and one.d is not two.d


def test_still_frozen_and_dataclass_behaviour() -> None:
    x = _Direct(1, "y")
    with pytest.raises(dataclasses.FrozenInstanceError):
        x.a = 2  # type: ignore[misc]
    assert x == _Direct(1, "y") and x != _Direct(2)
    assert repr(x).endswith("_Direct(a=1, b='y', c=(), d=[])")
    assert dataclasses.replace(x, a=5) == _Direct(5, "y")
    assert pickle.loads(pickle.dumps(x)) == x


def test_errors_like_the_generated_init() -> None:
    with pytest.raises(TypeError):
        _Direct()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Direct(1, nope=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Direct(1, a=2)  # type: ignore[misc]


def test_refuses_what_it_cannot_reproduce() -> None:
    @dataclass
    class NotFrozen:
        a: int

    @dataclass(frozen=True)
    class Post:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True)
    class NoInit:
        a: int
        b: int = field(default=0, init=False)

    for cls in (NotFrozen, Post, NoInit):
        with pytest.raises(TypeError):
            direct_init(cls)


@pytest.mark.parametrize(
    "cls",
    [
        MemoryPlan,
        Placement,
        Diagnostic,
        VllmPlanDetail,
        FleetEntry,
        TgiPlanDetail,
        SglangPlanDetail,
        Parallelism,
        Value,
        ChartArg,
    ],
)
def test_kvlint_classes_keep_their_signature(cls: type) -> None:
    """The replaced __init__ takes the fields in order with the dataclass's defaults (what a generated one
    would take)."""
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    fields = dataclasses.fields(cls)
    assert [p.name for p in params] == [f.name for f in fields]
    for p, f in zip(params, fields, strict=True):
        if f.default is not dataclasses.MISSING:
            assert p.default is f.default
        elif f.default_factory is dataclasses.MISSING:
            assert p.default is inspect.Parameter.empty


def test_replaced_equals_dataclasses_replace_and_falls_back() -> None:
    """fastinit.replaced: the same object dataclasses.replace builds (frozen or not, defaults and factories
    kept from the original), the original untouched; a class whose __init__ does more, or a name that is not a
    field, goes to dataclasses.replace (TypeError for the unknown name)."""
    from kvlint.fastinit import replaced

    @dataclasses.dataclass(frozen=True)
    class Frozen:
        a: int
        b: list[int] = dataclasses.field(default_factory=list)
        c: str = "x"

    @dataclasses.dataclass
    class Plain:
        a: int
        b: float = 0.5

    @dataclasses.dataclass
    class Post:
        a: int
        twice: int = 0

        def __post_init__(self) -> None:
            self.twice = 2 * self.a

    f = Frozen(1, [2])
    for obj, changes in (
        (f, {"a": 3}),
        (f, {"c": "y", "b": [9]}),
        (Plain(1), {"b": 2.0}),
        (Post(2), {"a": 5}),
    ):
        got, want = replaced(obj, **changes), dataclasses.replace(obj, **changes)
        assert got == want and type(got) is type(want) and got is not obj
    assert replaced(Post(2), a=5).twice == 10  # __post_init__ ran: the fallback
    assert replaced(f, a=3).b is f.b  # shared as dataclasses.replace shares it
    assert f == Frozen(1, [2])
    with pytest.raises(dataclasses.FrozenInstanceError):
        replaced(f, a=3).a = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        replaced(f, nope=1)


@pytest.mark.parametrize("cls", [MemoryPlan, Placement, Diagnostic, FleetEntry, Parallelism, Value, ChartArg])
def test_frozen_classes_built_per_setting_use_the_direct_init(cls: type) -> None:
    """The frozen dataclasses a check builds per setting, plan or finding store their fields at once (a check of
    the corpus builds about a thousand Values a copy: one per parsed setting)."""
    assert "kvlint.fastinit.direct_init" in (cls.__init__.__doc__ or "")
