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
    run = container_run(command, verb)
    if run is not None:
        return run
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


#: The programs that start a container from an image as ``PROGRAM run [OPTIONS] IMAGE [ARGS...]``: Docker, and the
#: tools that copy its command line (Podman, nerdctl).
_RUNNERS = ("docker", "podman", "nerdctl")
#: ``docker run`` options that take no value (docker/cli ``cli/command/container/opts.go`` and ``run.go``, the
#: flags declared with ``BoolVar``/``BoolVarP``); every other option takes one, as the next word unless written
#: ``--name=value`` or ``-pVALUE``. Short boolean flags may be combined (``-it``, ``-dit``).
_BOOL_LONG = frozenset(
    {
        "--detach",
        "--interactive",
        "--tty",
        "--rm",
        "--privileged",
        "--init",
        "--publish-all",
        "--read-only",
        "--no-healthcheck",
        "--oom-kill-disable",
        "--quiet",
        "--sig-proxy",
        "--disable-content-trust",
        "--use-api-socket",
        "--help",
    }
)
_BOOL_SHORT = frozenset("ditPq")
#: What each engine's release image runs with the arguments after the image (its entrypoint), as ``kvlint check``
#: reads an args-only container (:mod:`kvlint.engines.command`): vLLM's OpenAI server (``vllm serve`` in newer images,
#: ``python3 -m vllm.entrypoints.openai.api_server`` in older ones, which takes ``--model`` in every release, so it
#: is the form named unless the arguments start with the model), TGI's ``text-generation-launcher``; SGLang's
#: ``lmsysorg/sglang`` runs the command given after it (its server is named when only options follow).
_ENTRYPOINTS = {
    "vllm": ["python3", "-m", "vllm.entrypoints.openai.api_server"],
    "tgi": ["text-generation-launcher"],
    "sglang": ["python3", "-m", "sglang.launch_server"],
}
_SERVERS = {"vllm": "vLLM's OpenAI server", "tgi": "text-generation-launcher", "sglang": "SGLang's server"}


def _image_and_rest(words: Sequence[str]) -> tuple[list[str], str, list[str]] | None:
    """``(environment, image, arguments)`` of the words after ``docker run``: the ``-e/--env NAME=VALUE``
    assignments, the first word that is neither an option nor an option's value, and the words after it; None when
    no image follows the options."""
    env: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--":
            i += 1
            break
        if not w.startswith("-") or w == "-":
            break
        value: str | None = None
        if w.startswith("--"):
            name, eq, rest = w.partition("=")
            if not eq and name not in _BOOL_LONG:
                value = words[i + 1] if i + 1 < len(words) else None
                i += 1
            elif eq:
                value = rest
            if name == "--env" and value is not None:
                env.append(value)
        else:
            flags = w[1:]
            if not all(c in _BOOL_SHORT for c in flags):
                # the first flag that is no boolean takes the rest of the word, else the next word
                k = next(j for j, c in enumerate(flags) if c not in _BOOL_SHORT)
                value = flags[k + 1 :]
                if not value:
                    value = words[i + 1] if i + 1 < len(words) else None
                    i += 1
                if flags[k] == "e" and value is not None:
                    env.append(value)
        i += 1
    if i >= len(words):
        return None
    # the engine's environment, not the credentials passed beside it (HF_TOKEN=...): those change no plan, and the
    # message is printed to the terminal and CI logs
    secret = ("TOKEN", "SECRET", "KEY", "PASSWORD", "PASSWD", "CREDENTIAL")
    kept = [e for e in env if "=" in e and not any(s in e.split("=", 1)[0].upper() for s in secret)]
    return kept, words[i], list(words[i + 1 :])


def container_run(command: Sequence[str], verb: str = "plan") -> str | None:
    """What to say when ``kvlint plan`` (or ``simulate``) is given ``docker run [OPTIONS] IMAGE [ARGS...]`` (or
    Podman's, nerdctl's), as the engines' quick starts print it, else None. kvlint plans the engine command the
    container runs, so this names that command: the image's entrypoint (:data:`_ENTRYPOINTS`) and the arguments,
    each ``-e NAME=VALUE`` as a leading assignment (the engine's environment, as ``kvlint plan`` reads one), and
    ``--engine-version`` with the release the image's tag pins (:func:`kvlint.engines.images.engine_version`).
    Before, the error was "not an engine command: docker run ..." with the engine command forms only."""
    import os
    import shlex

    words = [str(w) for w in command]
    if len(words) < 2 or os.path.basename(words[0]) not in _RUNNERS or words[1] != "run":
        return None
    runner = os.path.basename(words[0])
    found = _image_and_rest(words[2:])
    lead = f"kvlint {verb} reads the command the engine runs, not `{runner} run`"
    if found is None:
        return f"{lead}: type the engine command after `--` (`kvlint {verb} -- vllm serve MODEL ...`)"
    env, image, rest = found
    from kvlint.engines.command import _match_program
    from kvlint.engines.images import engine_of_image, engine_version

    engine = engine_of_image(image)
    program = _match_program(rest)
    if program is not None:
        typed = rest  # the arguments are the engine command (lmsysorg/sglang, an image run with its command)
        if program[0] != engine:
            engine = None  # another engine's image says nothing of this engine's release
    elif engine == "vllm" and rest and not rest[0].startswith("-"):
        typed = ["vllm", "serve", *rest]  # the model first: `vllm serve`'s positional argument
    elif engine is not None:
        typed = _ENTRYPOINTS[engine] + rest
    else:
        return (
            f"{lead}: type after `--` the engine command the image {image} runs with these arguments "
            f"(`kvlint {verb} -- vllm serve MODEL ...`), or lint a manifest of the container with `kvlint check`"
        )
    release = engine_version(image) if engine is not None else None
    pinned = f" --engine-version {release}" if release else ""
    shown = " ".join(shlex.quote(w) for w in [*env, *typed])
    what = f"the image {image} runs {_SERVERS[engine]}" if engine is not None and typed is not rest else ""
    return (
        f"{lead}{': ' + what + ' with the arguments after it' if what else ''}; type: kvlint {verb} [OPTIONS]"
        f"{pinned} -- {shown}"
    )
