"""Prompt templates: the shipped ones in ``prompts/`` and users' own files.

A template is plain text with one ``{question}`` marker on its last line. A run's prompt is
``prefix(question)`` followed only by appended steps, so servers' prefix caches keep hitting.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from react_cli.errors import UsageError
from react_cli.untrusted import read_text

QUESTION_MARKER = "{question}"
_SUFFIX = ".txt"
MAX_PROMPT_BYTES = 1 << 20


def prompts_dir() -> Path:
    """Shipped templates: inside the installed package, or the repository's ``prompts/``."""
    here = Path(__file__).resolve().parent
    installed = here / "prompts"
    return installed if installed.is_dir() else here.parent / "prompts"


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def prefix(self, question: str) -> str:
        """The prompt before the first step: the template with the question filled in."""
        return self.text.replace(QUESTION_MARKER, question.strip(), 1)


def shipped_names() -> list[str]:
    return sorted(p.stem for p in prompts_dir().glob(f"*{_SUFFIX}"))


def load_prompt(name_or_path: str) -> PromptTemplate:
    """A shipped template by name, else a user's file; a file without ``{question}`` gets
    the paper's ``Question: …`` line appended."""
    if not name_or_path.strip():
        raise UsageError(
            f"the prompt is empty: give a name ({', '.join(shipped_names())}) or a file"
        )
    shipped = prompts_dir() / f"{name_or_path}{_SUFFIX}"
    path = shipped if name_or_path in shipped_names() else Path(name_or_path).expanduser()
    try:
        text = read_text(path, MAX_PROMPT_BYTES)
    except FileNotFoundError:
        names = ", ".join(shipped_names())
        raise UsageError(
            f"no prompt named {name_or_path!r} (shipped: {names}) and no such file"
        ) from None
    except (OSError, ValueError) as exc:  # BadInput, or a NUL byte in the path
        raise UsageError(f"cannot read prompt file {str(path)!r}: {exc}") from None
    if QUESTION_MARKER not in text:
        text = text if text.endswith("\n") or not text else text + "\n"
        text += f"Question: {QUESTION_MARKER}\n"
    name = name_or_path if path == shipped else str(path)
    return PromptTemplate(name=name, text=text)
