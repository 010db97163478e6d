"""The user docs hold together: ``README.md`` (the guide) and ``docs/*.md`` (the reference).

- Every relative link resolves: the file exists, and an anchor is a heading of that page
  (GitHub's slugs: lower case, punctuation dropped, spaces as ``-``, ``-1`` for a repeat) or an
  ``<a id>`` there; every image under ``docs/`` is shown by some page.
- Every page has a ``Contents`` list linking each of its ``##`` sections.
- Every flag the docs name exists: in a command line (a code block's ``react-cli …`` line, a
  code span starting with a command, every help's Examples) the flag of that command; in a
  code span that is a flag (``--max-steps N``, ``-m/--model``) a flag of some command. Flags of
  other programs the docs name are listed in ``OTHER_PROGRAMS``.
- Every option a command's help lists is named somewhere in the docs.
- Every example's question is quoted: a command line holds no ``?`` or ``*`` outside quotes
  (zsh stops with "no matches found", bash globs ``Wood?`` into a file name), ``ask``'s
  question is one quoted word, and double quotes hold no ``$``, backquote or ``!``.

The commands and their options come from walking the typer application; the Markdown is read
with markdown-it (CommonMark and tables, as GitHub renders them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import typer
from inproc import build_command
from markdown_it import MarkdownIt
from markdown_it.token import Token

from react_cli.cli import app
from react_cli.cli.help import HELP_OPTIONS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = (ROOT / "README.md", *sorted(DOCS.glob("*.md")))
SHELL_BLOCKS = {"", "console", "sh", "bash", "shell", "text"}
OTHER_PROGRAMS = {
    # llama-cpp-python's, llama.cpp's and vLLM's servers (troubleshooting, the quick start)
    *("--chat_format", "--model_alias", "--interrupt_requests", "--jinja", "--parallel"),
    *("--enable-auto-tool-choice", "--tool-call-parser", "--n_ctx"),
    # what a tool server's command line may carry, masked as credentials (tools.md)
    *("--token", "--password", "--client-secret", "--header", "-H", "--env"),
    "--pdeathsig",  # util-linux's setpriv, which a stdio server is started through
}
"""Flags of other programs the docs name in code spans of their own."""
ANCHOR_ID = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")
GLOBS = frozenset("?*")
ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")
FLAG = re.compile(r"--[a-z][\w-]*|-[A-Za-z]")
"""What a flag looks like (not ``-LRB-``, FEVER's bracket, nor a prompt's ``-cot``)."""
PROGRAM = "react-cli"


@dataclass(frozen=True)
class Where:
    page: Path
    line: int

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


# --- the commands -----------------------------------------------------------------------------


def walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from walk(sub, (*path, name))


@cache
def commands() -> dict[tuple[str, ...], Any]:
    return dict(walk(build_command(app), ()))  # not the runs' own: options_of makes contexts


@cache
def options_of(path: tuple[str, ...]) -> dict[str, Any]:
    """Each flag of a command (``-m`` and ``--model`` alike) and its option."""
    command = commands()[path]
    context = typer.Context(command, **HELP_OPTIONS)  # a command's -h comes from its group
    return {
        flag: param
        for param in command.get_params(context)
        if param.param_type_name == "option"
        for flag in (*param.opts, *param.secondary_opts)
    }


def all_flags() -> set[str]:
    return {flag for path in commands() for flag in options_of(path)}


# --- shell words ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Word:
    raw: str  # as written, quotes included
    value: str  # as the shell hands it over


OPERATORS = ("&&", "||", "|", ";", "&", ">", "<")


def shell_words(line: str) -> tuple[list[list[Word]], list[str]]:
    """A command line's simple commands (split at ``|``, ``&&``, ``;``, …), each a list of
    words, and what is wrong with its quoting (an open quote, a glob outside quotes)."""
    segments: list[list[Word]] = [[]]
    problems: list[str] = []
    raw, value, quoted_word, at = "", "", False, 0

    def end_word() -> None:
        nonlocal raw, value, quoted_word
        if raw:
            segments[-1].append(Word(raw, value))
        raw, value, quoted_word = "", "", False

    while at < len(line):
        char = line[at]
        if char in " \t":
            end_word()
        elif char == "#" and not raw:
            break  # a comment
        elif char in "'\"":
            close = line.find(char, at + 1)
            while char == '"' and close > 0 and line[close - 1] == "\\":
                close = line.find(char, close + 1)
            if close < 0:
                problems.append(f"an unclosed {char} quote")
                break
            inside = line[at + 1 : close]
            if char == '"' and any(bad in inside for bad in "$`!"):
                problems.append(f"{char}{inside}{char}: double quotes holding $, ` or ! (use ')")
            raw, value, at = raw + line[at : close + 1], value + inside, close
        elif char == "\\" and at + 1 < len(line):
            raw, value, at = raw + line[at : at + 2], value + line[at + 1], at + 1
        elif operator := next((op for op in OPERATORS if line.startswith(op, at)), None):
            end_word()
            if operator not in "<>":
                segments.append([])
            at += len(operator) - 1
        else:
            if char in GLOBS:
                problems.append(f"{char!r} outside quotes: the shell expands it")
            raw, value = raw + char, value + char
        at += 1
    end_word()
    return [segment for segment in segments if segment], problems


# --- the docs ---------------------------------------------------------------------------------

MARKDOWN = MarkdownIt("commonmark").enable("table")


@cache
def tokens(page: Path) -> list[Token]:
    return MARKDOWN.parse(page.read_text(encoding="utf-8"))


def text_of(inline: Token) -> str:
    return "".join(child.content for child in inline.children or [] if child.type != "html_inline")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (github-slugger's rule)."""
    kept = (c for c in heading.lower() if c in "-_ " or unicodedata.category(c)[0] in "LMN")
    return "".join(kept).replace(" ", "-")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    anchor: str
    line: int


@cache
def headings(page: Path) -> list[Heading]:
    found, seen = [], dict[str, int]()
    stream = tokens(page)
    for index, token in enumerate(stream):
        if token.type == "heading_open":
            text = text_of(stream[index + 1])
            base = slug(text)
            count = seen.get(base, 0)
            seen[base] = count + 1
            anchor = base if count == 0 else f"{base}-{count}"
            found.append(Heading(int(token.tag[1]), text, anchor, token.map[0] + 1))
    return found


@cache
def anchors(page: Path) -> frozenset[str]:
    named = set(ANCHOR_ID.findall(page.read_text(encoding="utf-8")))
    return frozenset({heading.anchor for heading in headings(page)} | named)


def inlines(page: Path) -> Iterator[tuple[Where, Token]]:
    """Every inline element of a page with the line it is on."""
    for token in tokens(page):
        if token.type == "inline":
            for child in token.children or []:
                yield Where(page, token.map[0] + 1 if token.map else 0), child


def links(page: Path) -> Iterator[tuple[Where, str]]:
    for where, child in inlines(page):
        if child.type == "link_open":
            yield where, str(child.attrs.get("href", ""))
        elif child.type == "image":
            yield where, str(child.attrs.get("src", ""))


def code_lines(page: Path) -> Iterator[tuple[Where, str, bool]]:
    """The command lines of a page's shell code blocks (``$ `` lines of a console block; a
    line ending in ``\\`` joined to the next), and whether it was typed at a ``$`` prompt."""
    for token in tokens(page):
        if token.type not in ("fence", "code_block") or token.info.strip() not in SHELL_BLOCKS:
            continue
        console = token.info.strip() == "console"
        pending, start = "", 0
        for offset, line in enumerate(token.content.splitlines()):
            if not pending:
                if console and not line.startswith("$ "):
                    continue
                start = offset
            line = line.removeprefix("$ ") if not pending else line
            if line.endswith("\\"):
                pending += line[:-1]
                continue
            line_number = token.map[0] + 2 + start - (token.type == "code_block")
            yield Where(page, line_number), pending + line, console
            pending = ""


def help_examples() -> Iterator[tuple[str, str]]:
    """Each help's example command lines (continuations joined), by the command's help."""
    for path, command in commands().items():
        lines = (command.epilog or "").split("Examples:\n")[-1].splitlines()
        pending = ""
        for line in lines if "Examples:" in (command.epilog or "") else []:
            line = line.strip()
            if line.startswith("$ ") or pending:
                line = line.removeprefix("$ ")
                if line.endswith("\\"):
                    pending += line[:-1]
                    continue
                yield f"react-cli {' '.join(path)} -h".replace("  ", " "), pending + line
                pending = ""


# --- the checks -------------------------------------------------------------------------------


def command_path(words: list[str]) -> tuple[tuple[str, ...], list[str]] | None:
    """The command a ``react-cli`` command line runs and the words given to it (None: no
    such command)."""
    path: tuple[str, ...] = ()
    rest = list(words)
    while rest:
        command = commands()[path]
        names = getattr(command, "commands", None)
        if names is None:
            break
        if rest[0] in names:
            path, rest = (*path, rest[0]), rest[1:]
        elif hasattr(command, "default_command"):
            path = (*path, command.default_command)
        elif rest[0].startswith("-") or rest[0] in ("…", "..."):
            break
        else:
            return None
    return path, rest


def check_command(words: list[Word], where: str, *, example: bool) -> list[str]:
    """What is wrong with one ``react-cli …`` command: an unknown command or flag, and (for an
    example, not a synopsis in a code span) an ask question that is not one quoted word."""
    found = command_path([word.value for word in words[1:]])
    if found is None:
        return [f"{where}: no such command: {' '.join(word.value for word in words)}"]
    path, rest = found
    known = options_of(path)
    problems, positional, skip, raws = [], [], False, words[len(words) - len(rest) :]
    ended = False  # after "--", every word is an argument
    for word in raws:
        value = word.value.strip("[]")
        if skip:
            skip = False
        elif word.value == "--" and not ended:
            ended = True
        elif not ended and value.startswith("-") and len(value) > 1:
            for flag in value.split("=", 1)[0].split("/"):  # a synopsis' -c/--continue
                option = known.get(flag)
                if option is None:
                    problems.append(f"{where}: react-cli {' '.join(path)} has no {flag}")
                elif not (option.is_flag or option.count) and "=" not in value:
                    skip = True
        else:
            positional.append(word)
    unquoted = len(positional) > 1 or (positional[:1] and positional[0].raw[:1] not in "'\"")
    if example and path == ("ask",) and unquoted:
        shown = " ".join(word.raw for word in positional)
        problems.append(f"{where}: quote the question as one word: {shown}")
    return problems


def ran_by_us(words: list[Word]) -> bool:
    return bool(words) and words[0].value == PROGRAM


def without_assignments(words: list[Word]) -> list[Word]:
    """A command's words without the variables set for it (``REACT_CLI_HOME=… react-cli``)."""
    while words and ASSIGNMENT.match(words[0].raw):
        words = words[1:]
    return words


@dataclass(frozen=True)
class Line:
    where: str
    text: str
    example: bool  # an example to paste (a code block's, the help's), not a code span's synopsis
    typed: bool  # at a console's "$ " prompt, or the help's: a shell line whatever it runs


def command_lines() -> Iterator[Line]:
    """Every command line of the docs and the help."""
    for page in PAGES:
        for where, line, typed in code_lines(page):
            yield Line(str(where), line, True, typed)
        for where, child in inlines(page):
            if child.type == "code_inline":
                first = child.content.split(" ", 1)[0]
                if first == PROGRAM or ((first,) in commands() and " -" in child.content):
                    line = child.content if first == PROGRAM else f"{PROGRAM} {child.content}"
                    yield Line(str(where), line, False, False)
    for where, line in help_examples():
        yield Line(where, line, True, True)


def test_command_lines_name_real_commands_and_flags_and_quote_their_questions() -> None:
    problems, seen = [], 0
    for line in command_lines():
        segments, quoting = shell_words(line.text)
        ours = [words for words in map(without_assignments, segments) if ran_by_us(words)]
        if line.example and (ours or line.typed):
            problems += [f"{line.where}: {problem}: {line.text}" for problem in quoting]
        for words in ours:
            seen += 1
            problems += check_command(words, line.where, example=line.example)
    assert seen > 100, seen  # the docs' command lines were found
    assert not problems, "\n".join(problems)


def flag_spans() -> Iterator[tuple[Where, list[str]]]:
    """Every code span that is a flag or flags (``--wiki zim:PATH``, ``-m/--model NAME``)."""
    for page in PAGES:
        for where, child in inlines(page):
            words = [word.split("=")[0] for word in re.split(r"[\s/]+", child.content)]
            if child.type == "code_inline" and FLAG.fullmatch(words[0]):
                yield where, [word for word in words if FLAG.fullmatch(word)]


def test_flags_in_code_spans_exist() -> None:
    known = all_flags() | OTHER_PROGRAMS
    problems = [
        f"{where}: no command has {flag} (a flag of another program: OTHER_PROGRAMS)"
        for where, flags in flag_spans()
        for flag in flags
        if flag not in known
    ]
    assert not problems, "\n".join(problems)


def test_every_option_in_the_help_is_documented() -> None:
    named = {flag for _, flags in flag_spans() for flag in flags}
    for line in command_lines():
        for words in shell_words(line.text)[0]:
            named |= {word.value.strip("[]").split("=")[0] for word in words}
    missing = sorted(
        f"{' '.join((PROGRAM, *path))} {'/'.join(param.opts)}"
        for path in commands()
        for param in {id(p): p for p in options_of(path).values()}.values()
        if not named & set(param.opts)
    )
    assert not missing, "options no page of the docs names:\n" + "\n".join(missing)


def test_relative_links_and_anchors_resolve() -> None:
    problems = []
    for page in PAGES:
        for where, target in links(page):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                problems.append(f"{where}: {target}: no such file")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                problems.append(f"{where}: {target}: {file.name} has no heading #{anchor}")
    assert not problems, "\n".join(problems)


def test_every_image_of_docs_is_shown() -> None:
    shown = {
        (page.parent / target).resolve()
        for page in PAGES
        for _, target in links(page)
        if not re.match(r"[a-z][a-z0-9+.-]*:", target)
    }
    images = {path.resolve() for path in DOCS.iterdir() if path.suffix != ".md"}
    assert images and images <= shown, sorted(str(path) for path in images - shown)


def test_every_page_has_contents_listing_its_sections() -> None:
    problems = []
    for page in PAGES:
        sections = [heading for heading in headings(page) if heading.level == 2]
        contents = next((h for h in sections if h.text == "Contents"), None)
        if contents is None:
            problems.append(f"{page.relative_to(ROOT)}: no '## Contents' section")
            continue
        after = [h.line for h in headings(page) if h.line > contents.line]
        end = after[0] if after else 10**9
        listed = {
            target[1:]
            for where, target in links(page)
            if contents.line < where.line < end and target.startswith("#")
        }
        problems += [
            f"{page.relative_to(ROOT)}:{h.line}: Contents lacks '{h.text}' (#{h.anchor})"
            for h in sections
            if h is not contents and h.anchor not in listed
        ]
    assert not problems, "\n".join(problems)


def test_the_checks_catch_what_they_look_for() -> None:
    """The parts of the checks, on lines known to be wrong."""
    assert slug("Follow-up questions: `react-cli chat`, `ask -c`".replace("`", "")) == (
        "follow-up-questions-react-cli-chat-ask--c"
    )
    assert slug("Methods: the paper's Table 1") == "methods-the-papers-table-1"
    segments, problems = shell_words("react-cli ask -m m Who directed Ed Wood? | head")
    assert [w.value for w in segments[1]] == ["head"] and problems
    words = shell_words("react-cli ask -m m -v Who directed Ed Wood")[0][0]
    assert check_command(words, "x", example=True) == [
        "x: quote the question as one word: Who directed Ed Wood"
    ]
    assert check_command(shell_words("react-cli ask -c 'Q?'")[0][0], "x", example=True) == []
    assert check_command(shell_words("react-cli eval d.json --frob")[0][0], "x", example=True)
    assert check_command(shell_words("react-cli nosuch")[0][0], "x", example=True)
    assert shell_words('react-cli ask "Why $HOME?"')[1]
    assert not shell_words("react-cli ask \"Arthur's Magazine?\" 'x*'")[1]
