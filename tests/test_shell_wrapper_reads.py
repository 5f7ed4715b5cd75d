"""Each wrapper of :mod:`kvlint.engines.shell`'s table reads its own words only: nested wrappers in an exec-form list
or a script cost a bounded number of reads per word (the webhook admits 512 KiB of command text), and the reading
leaves no words behind in the module (a webhook worker lives for many reviews).

The counts are of the words read (``_ListWords.__getitem__``) and of the indexes a wrapper walks with ``range``
(operands collected and compared), not of time: doubling the nesting must about double them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kvlint.engines import shell
from kvlint.engines.command import parse_container
from kvlint.source import LDict


def _counter(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    count = [0]
    get = shell._ListWords.__getitem__

    def counted(self: shell._ListWords, i: int) -> object:
        count[0] += 1
        return get(self, i)

    monkeypatch.setattr(shell._ListWords, "__getitem__", counted)

    def ranged(*args: int) -> range:
        r = range(*args)
        count[0] += len(r)
        return r

    monkeypatch.setattr(shell, "range", ranged, raising=False)
    return count


def _container(command: list[str]) -> LDict:
    return LDict({"name": "c", "image": "vllm/vllm-openai:v0.10.0", "command": command})


def _list_reads(n: int, monkeypatch: pytest.MonkeyPatch) -> int:
    count = _counter(monkeypatch)
    cfg = parse_container(_container(["runuser", "-u", "a", "--"] * n + ["vllm", "serve", "m"]))
    assert cfg is not None and cfg.model is not None and cfg.model.value == "m"
    return count[0]


def test_nested_runuser_reads_each_word_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    # rr49: _runuser collected every word after `--` as an operand and compared them with a range for each
    # runuser: `runuser -u a --` nested 8,000 times in an exec-form list (224 KB) took 37 s of `kvlint check`
    assert _list_reads(800, monkeypatch) < 2.5 * _list_reads(400, monkeypatch)


def _script_reads(n: int, monkeypatch: pytest.MonkeyPatch) -> int:
    count = _counter(monkeypatch)
    got = [[w.text for w in cmd] for cmd in shell.commands("runuser -u a -- " * n + "vllm serve m", {})]
    assert got == [["vllm", "serve", "m"]]
    return count[0]


def test_nested_runuser_in_a_script_reads_each_word_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the same in `bash -c 'runuser -u a -- runuser -u a -- ... vllm serve m'`
    assert _script_reads(800, monkeypatch) < 2.5 * _script_reads(400, monkeypatch)


@pytest.mark.parametrize(
    ("wrapper", "model"),
    [
        # util-linux 2.38 runuser's getopt permutes: an option after the first operand is runuser's, so the
        # operands are not the command (no command runs here; su_main refuses the unknown --port)
        (["runuser", "-u", "a", "vllm", "serve", "m", "--port", "1"], None),
        # after `--` every word is the command's, options included
        (["runuser", "-u", "a", "--", "vllm", "serve", "m", "--port", "1"], "m"),
        # an option before the first operand is runuser's, the operands after it the command
        (["runuser", "-u", "a", "-w", "X", "vllm", "serve", "m"], "m"),
        (["runuser", "-w", "X", "--", "-u"], None),  # `-u` after `--` is the user's command, not runuser's -u
    ],
)
def test_runuser_operands_after_its_options(wrapper: list[str], model: str | None) -> None:
    cfg = parse_container(_container(wrapper))
    got = None if cfg is None or cfg.model is None else cfg.model.value
    assert got == model


@pytest.mark.parametrize(
    ("script", "positional"),
    [
        # runuser USER -c SCRIPT ARGS: the words after the user are $0 $1 ...; options may come before them
        ("runuser app -c 'vllm serve $1' x m", ["x", "m"]),
        ("runuser - app -c 'vllm serve $1' x m", ["x", "m"]),
        ("runuser -c 'vllm serve $1' app x m", ["x", "m"]),
        # an option after $0 is runuser's (permuted), so x m are not the script's arguments: no command
        ("runuser app -c 'vllm serve $1' x m -l", None),
    ],
)
def test_runuser_script_arguments(script: str, positional: list[str] | None) -> None:
    got = [[w.text for w in cmd] for cmd in shell.commands(script, {})]
    if positional is None:
        assert got == []
    else:
        assert got == [["vllm", "serve", positional[1]]]


def _reads(read: Callable[[], object]) -> object:
    shell._TMUX_SCAN.set(None)
    read()
    return shell._TMUX_SCAN.get()


def test_a_container_reading_leaves_no_words_in_the_module() -> None:
    # _TMUX_SCAN caches the last tmux scan (nested tmux stays linear) and held the words of the last command read,
    # up to a whole review's, for the life of a webhook worker
    words = ["tmux", "new", "-d", "-s", "x", "tmux", "new", "vllm", "serve", "m"]
    assert _reads(lambda: parse_container(_container(words))) is None
    script = ["bash", "-c", "tmux new -s x tmux new vllm serve m"]
    assert _reads(lambda: parse_container(_container(script))) is None


def test_a_script_reading_leaves_no_words_in_the_module() -> None:
    assert _reads(lambda: list(shell.commands("tmux new -s x tmux new vllm serve m; echo", {}))) is None
