"""The command lines the docs show name commands and options the CLI has: every ``autonesy-agent ...``
line in a code block of README.md or docs/*.md (continuation lines included) is read against the CLI's
own definition, so a renamed or removed command or option fails here, not in a reader's terminal."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer.main

from autonesy.graph.cli import app

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE_BLOCK = re.compile(r"^```[a-z]*\n(.*?)^```$", flags=re.S | re.M)
PROGRAM = "autonesy-agent "


def documented_command_lines(text: str) -> list[str]:
    """Each ``autonesy-agent`` command in the text's code blocks, with its indented continuation lines
    joined and its comment cut."""
    commands: list[str] = []
    for block in CODE_BLOCK.findall(text):
        current = None
        for line in block.splitlines():
            code = line.split("  #")[0].rstrip().rstrip("\\")
            if PROGRAM in code:
                current = len(commands)
                commands.append(code[code.index(PROGRAM) + len(PROGRAM) :])
            elif current is not None and line.startswith(" ") and code.strip():
                commands[current] += " " + code.strip()
            else:
                current = None
    return commands


def option_names(command: Any) -> set[str]:  # typer's own click Command
    return {name for param in command.params for name in (*param.opts, *param.secondary_opts)}


def unknown_words(line: str, cli: Any) -> list[str]:
    """The commands and options in ``line`` that the CLI does not define."""
    words = [w.strip("[]()") for w in line.split()]
    options = option_names(cli)  # options before the command (e.g. --trust-task-code)
    while words and words[0].startswith("--"):
        words.pop(0)
    if not words:
        return []
    command = cli.commands.get(words[0])
    if command is None:
        return [words[0]]
    words = words[1:]
    if hasattr(command, "commands"):  # a group: task, data, vifbench
        names = words[0].split("|") if words else []
        if not names or any(name not in command.commands for name in names):
            return [f"{line.split()[0]} {words[0] if words else ''}"]
        if len(names) > 1:  # a list of subcommands, as in "vifbench check|generate|…"
            return []
        command = command.commands[names[0]]
        words = words[1:]
    options |= option_names(command)
    used = {part.split("=")[0] for word in words for part in word.split("|") if part.startswith("--")}
    return sorted(used - options - {"--help"})


def test_the_reader_joins_continuations_and_cuts_comments():
    text = "```text\nautonesy-agent run --task NAME  # one attempt\n    [--out DIR]\nls --all\n```\n"
    assert documented_command_lines(text) == ["run --task NAME [--out DIR]"]


CLI = typer.main.get_command(app)


def test_the_checker_finds_what_the_cli_lacks():
    assert unknown_words("run --task NAME [--no-such-option X]", CLI) == ["--no-such-option"]
    assert unknown_words("no-such-command --json", CLI) == ["no-such-command"]
    assert unknown_words("--trust-task-code run --task my.toml --policy zs|expert", CLI) == []


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_documented_commands_exist(page):
    unknown = {
        line: words
        for line in documented_command_lines(page.read_text(encoding="utf-8"))
        if (words := unknown_words(line, CLI))
    }
    assert not unknown, f"{page.relative_to(ROOT)}: not in the CLI: {unknown}"
