"""What ``kvlint plan`` and ``kvlint simulate`` say when they are given a manifest (what ``kvlint check`` takes) instead
of an engine command: one function, :func:`manifest_word`, which both commands' shells call (kept apart from
``kvlint.cli`` so that ``kvlint.capacity.cli`` need not import it: ``kvlint.cli`` imports the capacity commands)."""

from __future__ import annotations

from collections.abc import Sequence

#: How ``kvlint VERB`` says what it takes, and the example of it, for :func:`manifest_word`.
_COMMAND_TAKERS = {
    "plan": (
        "plans one engine command",
        "plan one container's command with `kvlint plan -- vllm serve MODEL ...`",
    ),
    "simulate": (
        "simulates one vLLM command",
        "simulate one container's command with `kvlint simulate --accelerator ID -- vllm serve MODEL ...`",
    ),
}


def manifest_word(command: Sequence[str], verb: str = "plan") -> str | None:
    """What to say when ``kvlint plan`` (``verb``: ``plan`` or ``simulate``, :data:`_COMMAND_TAKERS`) is given a
    manifest instead of an engine command (``kvlint plan deploy.yaml``, ``kvlint plan deploy/``, ``kvlint plan -``:
    what ``kvlint check`` takes), else None: the command's first word is ``-``, a directory, or a name ending in
    .yaml, .yml or .json. Without this the error was "not an engine command: deploy.yaml" with the engine forms
    only, and no word of ``kvlint check`` (``kvlint simulate`` said so until pass 54). Also when that word is an
    option the command does not have (``--no-config``, kvlint check's, typed before ``--``): no engine command
    starts with one."""
    import os

    if not command:
        return None
    word = str(command[0])
    if word.startswith("-") and word != "-":
        # an option kvlint plan does not have (the command takes unknown options as its words): `kvlint plan
        # --no-config -- vllm serve M` was "not an engine command: --no-config vllm serve". Said only when an
        # engine command follows it (after the option, or its value): click drops the `--`, so `kvlint plan --
        # --model M` (no engine executable) reads the same words, and there the option was typed after `--`
        from kvlint.engines.command import _match_program

        words = [str(w) for w in command]
        name = word.split("=", 1)[0]
        # the option's value may sit between (`--max-model-len 8192 -- vllm serve M`: click keeps that `--`)
        follows = [words[i + 1 :] if words[i : i + 1] == ["--"] else words[i:] for i in (1, 2)]
        if not any(_match_program(rest) is not None for rest in follows):
            for rest in follows:
                # a manifest after it and no engine command (`kvlint plan --no-config deploy.yaml`, kvlint check's
                # option and input): said as for a manifest alone, the mistake to put right (it was "not an engine
                # command: --no-config deploy.yaml", as a new user typed it on a collected manifest in pass 54)
                # (`-` is kvlint check's standard input: `kvlint plan --no-config -`; another option is not read)
                manifest = (
                    manifest_word(rest, verb) if rest and (rest[0] == "-" or rest[0][:1] != "-") else None
                )
                if manifest is not None:
                    return f"{manifest}; {name} is not an option of kvlint {verb} either"
            return None  # parse_command_line's "not an engine command", with the engine command forms
        return (
            f"{name} is not an option of kvlint {verb} (`kvlint {verb} --help` lists them; {name} may be kvlint "
            f"check's or the engine's): kvlint {verb} [OPTIONS] -- ENGINE COMMAND, the engine's own options after `--`"
        )
    if word == "-":
        what = "- is standard input"
    elif os.path.isdir(word):
        what = f"{word} is a directory"
    elif word.lower().endswith((".yaml", ".yml", ".json")):
        what = f"{word} is a manifest file"
    else:
        return None
    takes, example = _COMMAND_TAKERS[verb]
    return (
        f"kvlint {verb} {takes} typed after `--`, not manifests ({what}): lint them with `kvlint check {word}`, "
        f"which sizes every serving container they deploy (`--format markdown` shows each memory plan), or {example}"
    )
