"""Prompt templates: the shipped ones in ``prompts/`` and users' own files, per method and task.

A template is plain text with one ``{question}`` marker; the model continues from its end. It
may carry a ``{tools}`` marker, where the run's tools are listed as the protocol words them
(the shipped paper prompts have none: they keep the paper's text verbatim). A file may begin
with front matter saying which method's prompt it is and for which task::

    ---
    method: cot
    task: fever
    ---

(``method``: standard, cot, act or react, the default; ``task``: hotpotqa, the default, or
fever; ``protocol``: text, the default, or tools: a prompt for native tool calls, which only
ReAct and Act make). A distilled prompt (``react-cli distill``) records more there:
``questions`` (its exemplars' question ids and text hashes, which ``eval`` refuses to score a
prompt on), one ``source`` line per exemplar (the eval folder, row and trace hash it came
from), and the ``model``, ``distilled`` and ``selection`` it was made with. A tools prompt may
hold example messages, one JSON object a line (``{"role": ...}``) between its instruction and
its question's line: they are sent, in order, between the system message and the question.
The shipped prompts are named ``TASK`` (ReAct) and ``TASK-METHOD`` (the
others), e.g. ``hotpotqa-cot``, and ``...-tools`` for the tools protocol (``hotpotqa-tools``,
``hotpotqa-act-tools``). A run's prompt is ``prefix(question)`` followed only by appended steps,
so servers' prefix caches keep hitting; a tools prompt is a chat (:meth:`PromptTemplate.chat`):
its text before the question's line is the system message, the rest the first user message.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from react_cli.core.errors import UsageError
from react_cli.core.method import PROMPT_KINDS, Method, Task
from react_cli.core.records import ProtocolName
from react_cli.core.wording import PATH_CHARS, closest, quoted
from react_cli.infra.untrusted import read_text

QUESTION_MARKER = "{question}"
TOOLS_MARKER = "{tools}"
_SUFFIX = ".txt"
MAX_PROMPT_BYTES = 1 << 20
_FENCE = "---"
MAX_FRONT_MATTER_LINES = 200  # a distilled prompt's provenance: a line per exemplar
MAX_EXAMPLE_MESSAGES = 1000
_ROLES = ("user", "assistant", "tool")
# What a file without a marker gets appended, by the method it is written for.
_QUESTION_TAIL = {
    Method.STANDARD: f"Question: {QUESTION_MARKER}\nAnswer:",
    Method.COT: f"Question: {QUESTION_MARKER}\nThought:",
}


@cache
def prompts_dir() -> Path:
    """Shipped templates: inside the installed package, or the repository's ``prompts/``
    (looked for once: the package's files do not move under a running process)."""
    here = Path(__file__).resolve().parents[1]  # the package's folder
    installed = here / "prompts"
    return installed if installed.is_dir() else here.parent / "prompts"


@dataclass(frozen=True)
class PromptTemplate:
    """A template's text (front matter removed) and the method and task it is written for."""

    name: str
    text: str
    method: Method = Method.REACT
    task: Task = Task.HOTPOTQA
    protocol: ProtocolName = ProtocolName.TEXT
    exemplars: tuple[str, ...] = ()  # front matter ``questions``: ids and question_key()s
    provenance: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @cached_property
    def sha256(self) -> str:
        """The text's hash, computed once (every trace and every recorded run compares it)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def prefix(self, question: str, tools: str = "", earlier: str = "") -> str:
        """The prompt before the first step: the template with the tools (as the protocol
        lists them) and the question filled in, and ``earlier`` (a conversation's earlier
        turns, as the protocol shows them) at the start of the question's line."""
        text = self.text.replace(TOOLS_MARKER, tools, 1)
        line = text.rfind("\n", 0, max(0, text.find(QUESTION_MARKER))) + 1
        text = text.replace(QUESTION_MARKER, question.strip(), 1)
        return text[:line] + earlier + text[line:]

    def chat(self, question: str, tools: str = "") -> tuple[str, str]:
        """The template as a chat's start: (system message, first user message). The system
        message is the text before the line holding the question, the user message that line
        on, with the tools and the question filled in."""
        text = self.text.replace(TOOLS_MARKER, tools, 1)
        line = text.rfind("\n", 0, max(0, text.find(QUESTION_MARKER))) + 1
        user = text[line:].replace(QUESTION_MARKER, question.strip(), 1)
        system = [row for row in text[:line].split("\n") if _example_message(row) is None]
        return "\n".join(system).strip(), user.strip()

    @cached_property
    def examples(self) -> tuple[dict[str, Any], ...]:
        """A tools prompt's example messages (see the module's docstring), in order; none
        for a text prompt, whose examples are its text."""
        if self.protocol is not ProtocolName.TOOLS:
            return ()
        head = self.text[: max(0, self.text.find(QUESTION_MARKER))]
        found = (_example_message(row) for row in head.split("\n"))
        return tuple(message for message in found if message is not None)


def question_key(question: str) -> str:
    """What names a question whatever its row: the hash of its text, spaces and case folded
    (``sha256:`` and 16 hex digits). A distilled prompt records it for each exemplar."""
    folded = " ".join(question.split()).casefold()
    return "sha256:" + hashlib.sha256(folded.encode("utf-8")).hexdigest()[:16]


def _example_message(row: str) -> dict[str, Any] | None:
    """The example message a line of a tools prompt holds, or None for a line of text."""
    if not row.startswith('{"role"'):
        return None
    try:
        message = json.loads(row)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("role") not in _ROLES:
        return None
    return message if isinstance(message.get("content"), str) else None


def shipped_names() -> list[str]:
    return list(_shipped())


@cache
def _shipped() -> tuple[str, ...]:
    """The shipped templates' names, listed once (see ``prompts_dir``)."""
    return tuple(sorted(p.stem for p in prompts_dir().glob(f"*{_SUFFIX}")))


def shipped_name(task: Task, kind: Method, protocol: ProtocolName = ProtocolName.TEXT) -> str:
    """The shipped prompt of ``task`` for ``kind``: ``hotpotqa`` (ReAct), ``hotpotqa-cot``;
    in another protocol than the paper's its name after them: ``hotpotqa-tools``,
    ``hotpotqa-act-tools``."""
    name = str(task) if kind is Method.REACT else f"{task}-{kind}"
    return name if protocol is ProtocolName.TEXT else f"{name}-{protocol}"


def load_prompt(name_or_path: str) -> PromptTemplate:
    """A shipped template by name, else a user's file; a file without ``{question}`` gets
    the paper's ``Question: …`` line appended (and ``Answer:`` or ``Thought:`` after it for a
    Standard or CoT prompt)."""
    if not name_or_path.strip():
        raise UsageError(
            f"the prompt is empty: give a name ({', '.join(shipped_names())}) or a file"
        )
    shipped = prompts_dir() / f"{name_or_path}{_SUFFIX}"
    path = shipped if name_or_path in shipped_names() else Path(name_or_path).expanduser()
    try:
        text = read_text(path, MAX_PROMPT_BYTES)
    except FileNotFoundError:
        names, named = ", ".join(shipped_names()), quoted(name_or_path, PATH_CHARS)
        close = closest(name_or_path, shipped_names())
        maybe = f" (did you mean {close}?)" if close else ""
        raise UsageError(
            f"no prompt named {named}{maybe} (shipped: {names}) and no such file"
        ) from None
    except (OSError, ValueError) as exc:  # BadInput, or a NUL byte in the path
        raise UsageError(f"cannot read prompt file {str(path)!r}: {exc}") from None
    name = name_or_path if path == shipped else str(path)
    method, task, protocol, text, facts = _front_matter(text, name)
    if QUESTION_MARKER not in text:
        text = text if text.endswith("\n") or not text else text + "\n"
        text += _QUESTION_TAIL.get(method, f"Question: {QUESTION_MARKER}\n")
    questions = facts.pop("questions", "")
    exemplars = tuple(key.strip() for key in questions.split(",") if key.strip())
    provenance = tuple((key, value) for key, values in facts.items() for value in values)
    template = PromptTemplate(name, text, method, task, protocol, exemplars, provenance)
    if len(template.examples) > MAX_EXAMPLE_MESSAGES:
        raise UsageError(f"prompt {name}: more than {MAX_EXAMPLE_MESSAGES} example messages")
    return template


_KEYS = ("method", "task", "protocol", "questions", "model", "distilled", "selection")
_REPEATED = ("source",)  # a distilled prompt's: a line per exemplar


def _front_matter(text: str, name: str) -> tuple[Method, Task, ProtocolName, str, Any]:
    """The method, task and protocol a file declares, its text after the front matter, and
    the other facts it records (``questions`` as one text, the rest as lists of lines)."""
    lines = text.split("\n")
    if lines[0].rstrip("\r") != _FENCE:
        return Method.REACT, Task.HOTPOTQA, ProtocolName.TEXT, text, {}
    head = [line.rstrip("\r") for line in lines[1 : MAX_FRONT_MATTER_LINES + 1]]
    if _FENCE not in head:
        raise UsageError(f"prompt {name}: its front matter (from the first '---') never ends")
    end = head.index(_FENCE)
    fields: dict[str, str] = {}
    facts: dict[str, Any] = {}
    for line in head[:end]:
        key, colon, value = line.partition(":")
        key = key.strip().lower()
        if not line.strip():
            continue
        if colon and key in _REPEATED:
            facts.setdefault(key, []).append(value.strip())
            continue
        if not colon or key not in _KEYS or key in fields:
            raise UsageError(
                f"prompt {name}: front matter lines are 'method: NAME', 'task: NAME' and "
                f"'protocol: NAME' (each once; a distilled prompt's 'questions', 'model', "
                f"'distilled', 'selection' and 'source' lines), not {quoted(line.strip())}"
            )
        fields[key] = value.strip() if key in _KEYS[3:] else value.strip().lower()
    for key in _KEYS[3:]:
        if key in fields:
            facts[key] = fields.pop(key) if key == "questions" else [fields.pop(key)]
    method, task = fields.get("method", "react"), fields.get("task", "hotpotqa")
    kinds = ", ".join(PROMPT_KINDS)
    try:
        kind = Method(method).prompt
    except ValueError:
        kind = None
    if kind not in PROMPT_KINDS:
        raise UsageError(f"prompt {name}: method must be one of {kinds}, not {quoted(method)}")
    if task not in set(Task):
        tasks = ", ".join(Task)
        raise UsageError(f"prompt {name}: task must be one of {tasks}, not {quoted(task)}")
    protocol = fields.get("protocol", str(ProtocolName.TEXT))
    if protocol not in set(ProtocolName):
        names = ", ".join(ProtocolName)
        raise UsageError(f"prompt {name}: protocol must be one of {names}, not {quoted(protocol)}")
    assert kind is not None
    if protocol == ProtocolName.TOOLS and not kind.loop:
        raise UsageError(f"prompt {name}: a tools prompt is for the react or act method")
    return kind, Task(task), ProtocolName(protocol), "\n".join(lines[end + 2 :]), facts


@dataclass(frozen=True)
class PromptSet:
    """The prompts some methods use: one per kind, and the prompt the setting named."""

    named: PromptTemplate
    templates: dict[Method, PromptTemplate]

    @property
    def task(self) -> Task:
        return self.named.task

    def main(self, method: Method) -> PromptTemplate:
        """The template a method's trace records: its loop's if it has one, else its own."""
        kinds = method.prompts
        return self.templates[Method.REACT if Method.REACT in kinds else kinds[0]]


GENERAL = "general"
"""The shipped prompts for tools that are not Wikipedia's: ``general`` (ReAct), ``general-act``
and their ``-tools`` forms, one worked example using no Wikipedia tool, the run's tools
listed (``{tools}``) with their parameters."""


def general_name(kind: Method, protocol: ProtocolName = ProtocolName.TEXT) -> str:
    """The general prompt of a loop's ``kind``: ``general``, ``general-act``,
    ``general-tools``, ``general-act-tools``."""
    name = GENERAL if kind is Method.REACT else f"{GENERAL}-{kind}"
    return name if protocol is ProtocolName.TEXT else f"{name}-{protocol}"


def prompt_set(
    setting: str,
    methods: Iterable[Method],
    protocol: ProtocolName = ProtocolName.TEXT,
    *,
    general: bool = False,
) -> PromptSet:
    """The prompts ``methods`` use when the prompt setting is ``setting``, their loops speaking
    ``protocol`` (Standard's and CoT's calls are text whatever the protocol).

    A task's own name (``hotpotqa``, ``fever``) stands for its shipped prompt of each method;
    with ``general`` (the run has no Wikipedia tool and no prompt was named:
    :func:`wants_general`) its loops get the general prompts instead (:data:`GENERAL`). Any
    other prompt serves the method it is written for (UsageError if none of ``methods`` uses
    one, or if it is written for another protocol), and the others get the shipped prompts of
    its task.
    """
    named, asked = load_prompt(setting), tuple(methods)
    kinds = list(dict.fromkeys(kind for method in asked for kind in method.prompts))
    whole_task = setting == str(named.task) and named.name == setting
    if general and whole_task and any(kind.loop for kind in kinds):
        templates = {
            kind: load_prompt(
                general_name(kind, protocol)
                if kind.loop
                else shipped_name(named.task, kind, ProtocolName.TEXT)
            )
            for kind in kinds
        }
        first = next(kind for kind in kinds if kind.loop)
        return PromptSet(templates[first], templates)
    if not whole_task and named.method not in kinds:
        wanted = " or ".join(str(kind) for kind in kinds)
        raise UsageError(
            f"the prompt {quoted(named.name)} is a {named.method} prompt; --method "
            f"{','.join(asked)} sends {wanted} prompts "
            "(a prompt file says which in its front matter: see 'react-cli prompts')"
        )
    if not whole_task and named.method.loop and named.protocol is not protocol:
        raise UsageError(
            f"the prompt {named.name!r} is a {named.protocol} protocol prompt: give "
            f"--protocol {named.protocol}, or a {protocol} prompt "
            "(a prompt file says which in its front matter: see 'react-cli prompts')"
        )

    def sent_in(kind: Method) -> ProtocolName:
        return protocol if kind.loop else ProtocolName.TEXT

    templates = {
        kind: named
        if kind is named.method and not whole_task
        else load_prompt(shipped_name(named.task, kind, sent_in(kind)))
        for kind in kinds
    }
    return PromptSet(named, templates)


def wants_general(wiki_tools: bool, named: bool) -> bool:
    """Whether a run gets the general prompts: it has no Wikipedia tool (``--no-wiki``) and
    its prompt was not named (by a flag, the environment, the config file or a dataset), so
    the paper's Wikipedia examples would show tools it does not have."""
    return not wiki_tools and not named
