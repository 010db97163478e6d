"""The methods of the paper's Table 1 and the two tasks it scores them on, with its figures.

A method is answered from building blocks: the ReAct loop, the Act loop, one greedy Standard
call, one greedy CoT call, and CoT-SC's samples. The five plain methods are one block each (the
block's name is the method's); the hybrids are two blocks, the second a back-off.
"""

from __future__ import annotations

from react_cli.core.errors import UsageError
from react_cli.core.records import StrEnum
from react_cli.core.wording import quoted


class Task(StrEnum):
    """What the questions are: HotpotQA questions (EM) or FEVER claims (label accuracy)."""

    HOTPOTQA = "hotpotqa"
    FEVER = "fever"

    @property
    def hybrid_steps(self) -> int:
        """The hybrids' ReAct step limit in the paper: 7 on HotpotQA, 5 on FEVER."""
        return 5 if self is Task.FEVER else 7


class Method(StrEnum):
    """A row of Table 1, in the table's order; the value is what ``--method`` takes."""

    STANDARD = "standard"
    COT = "cot"
    COT_SC = "cot-sc"
    ACT = "act"
    REACT = "react"
    COT_SC_REACT = "cot-sc+react"  # CoT-SC, backing off to ReAct on a weak majority
    REACT_COT_SC = "react+cot-sc"  # ReAct, backing off to CoT-SC without an answer

    @property
    def label(self) -> str:
        """The paper's name for it: ``CoT-SC → ReAct``."""
        return " → ".join(_LABELS[part] for part in self.parts)

    @property
    def parts(self) -> tuple[Method, ...]:
        """The blocks it is answered from, the back-off second: plain methods are one."""
        if self is Method.COT_SC_REACT:
            return (Method.COT_SC, Method.REACT)
        if self is Method.REACT_COT_SC:
            return (Method.REACT, Method.COT_SC)
        return (self,)

    @property
    def hybrid(self) -> bool:
        return len(self.parts) > 1

    @property
    def prompt(self) -> Method:
        """The kind of prompt a plain method's block is sent: CoT-SC samples the CoT prompt."""
        return Method.COT if self is Method.COT_SC else self

    @property
    def prompts(self) -> tuple[Method, ...]:
        """The kinds of prompt the method uses, in the order of its parts."""
        return tuple(part.prompt for part in self.parts)

    @property
    def loop(self) -> bool:
        """Whether the block runs the Thought/Action loop (ReAct, or Act without thoughts)."""
        return self in (Method.REACT, Method.ACT)

    @property
    def uses_tools(self) -> bool:
        """Whether a block of it runs the loop, and so calls tools (reads Wikipedia)."""
        return any(part.loop for part in self.parts)


PROMPT_KINDS = (Method.STANDARD, Method.COT, Method.ACT, Method.REACT)
"""What a prompt can be written for (a prompt file's ``method:`` line)."""

_LABELS = {
    Method.STANDARD: "Standard",
    Method.COT: "CoT",
    Method.COT_SC: "CoT-SC",
    Method.ACT: "Act",
    Method.REACT: "ReAct",
}

PAPER_FIGURES: dict[Task, dict[Method, float]] = {
    Task.HOTPOTQA: {
        Method.STANDARD: 28.7,
        Method.COT: 29.4,
        Method.COT_SC: 33.4,
        Method.ACT: 25.7,
        Method.REACT: 27.4,
        Method.COT_SC_REACT: 34.2,
        Method.REACT_COT_SC: 35.1,
    },
    Task.FEVER: {
        Method.STANDARD: 57.1,
        Method.COT: 56.3,
        Method.COT_SC: 60.4,
        Method.ACT: 58.9,
        Method.REACT: 60.9,
        Method.COT_SC_REACT: 64.6,
        Method.REACT_COT_SC: 62.0,
    },
}
"""Table 1 of the paper (PaLM-540B): HotpotQA EM and FEVER accuracy, in percent."""

ALL = "all"


def parse_method(text: str, where: str = "--method") -> Method:
    """The method ``text`` names; UsageError listing the names otherwise."""
    try:
        return Method(text.strip().lower())
    except ValueError:
        names = ", ".join(Method)
        raise UsageError(f"{where} must be one of {names}, not {quoted(text)}") from None


def parse_methods(text: str) -> tuple[Method, ...]:
    """``--methods``: ``all``, or names separated by commas, each once, in the order given."""
    if text.strip().lower() == ALL:
        return tuple(Method)
    methods = [parse_method(name, "--methods") for name in text.split(",") if name.strip()]
    if not methods:
        raise UsageError(f"--methods needs method names or {ALL}")
    if len(set(methods)) != len(methods):
        raise UsageError(f"--methods names a method twice: {quoted(text)}")
    return tuple(methods)
