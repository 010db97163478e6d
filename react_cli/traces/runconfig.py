"""How a run was made: its stop rules and the endpoint, model, prompt and wiki it used.

Built once from the settings (:func:`run_config`), written once into the trace's
``config`` (:meth:`RunConfig.to_json`, never holding a secret) and read back once when the
trace is replayed (:meth:`RunConfig.from_json`), so a re-run stops where the recording did.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from react_cli.core import fields
from react_cli.core.method import Method, Task
from react_cli.core.records import Prices, ProtocolName
from react_cli.infra.credentials import redact_url
from react_cli.loop.limits import Limits, hybrid_steps, run_limits
from react_cli.loop.prompts import PromptTemplate
from react_cli.settings.settings import Settings
from react_cli.tools.base import ToolSpec

_DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class RunConfig:
    """A run's configuration as its trace records it: URLs already without credentials or
    query strings. A recorded trace may lack any part (older or hand-made ones): a missing
    description is None, a missing stop rule is its default (the run used it)."""

    model: str | None = None
    base_url: str | None = None
    api: str | None = None
    prompt_name: str | None = None
    prompt_sha256: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool | None = None
    wiki: str | None = None
    variant: str | None = None
    limits: Limits = field(default_factory=Limits)
    method: Method | str = Method.REACT  # a newer writer's unknown method is kept as text
    task: Task | str | None = None
    samples: int | None = None  # CoT-SC's (methods that sample)
    sample_temperature: float | None = None
    hybrid_max_steps: int | None = None  # the hybrids' ReAct step limit
    prompts: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    """The name and hash of each kind of prompt, for methods that send more than one."""
    tools: tuple[ToolSpec, ...] = ()
    """What the run's loops could call, Finish last (none recorded: the paper's three)."""
    protocol: ProtocolName | str | None = None  # None: not recorded (text); unknown: text
    constrain: bool | None = None  # text protocol: replies constrained by a grammar
    service_tier: str | None = None  # --service-tier as sent (None: none sent)

    def to_json(self) -> dict[str, Any]:
        limits = self.limits
        methods = {
            "method": str(self.method),
            "task": None if self.task is None else str(self.task),
            "samples": self.samples,
            "sample_temperature": self.sample_temperature,
            "hybrid_max_steps": self.hybrid_max_steps,
            "prompts": {kind: {"name": n, "sha256": h} for kind, (n, h) in self.prompts.items()},
            "tools": [spec.to_json() for spec in self.tools],
        }
        return {
            "model": self.model,
            "base_url": self.base_url,
            "api": self.api,
            **_recorded("protocol", None if self.protocol is None else str(self.protocol)),
            "prompt": {"name": self.prompt_name, "sha256": self.prompt_sha256},
            **{key: value for key, value in methods.items() if value not in (None, {}, [])},
            "temperature": self.temperature,
            "max_steps": limits.max_steps,
            "max_tokens": self.max_tokens,
            "max_total_tokens": limits.max_total_tokens,
            "max_parse_errors": limits.max_parse_errors,
            "max_repeats": limits.max_repeats,
            "max_tool_errors": limits.max_tool_errors,
            "stream": self.stream,
            "timeout_s": limits.timeout_s,
            "force_answer": limits.force_answer,
            **_recorded("constrain", self.constrain),
            **_recorded("service_tier", self.service_tier),
            "wiki": self.wiki,
            "variant": self.variant,
            **_optional_limits(limits),
        }

    @classmethod
    def from_json(cls, data: Any) -> RunConfig:
        """A recorded configuration; TypeError/ValueError naming the first malformed part."""
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise TypeError(f"config is {type(data).__name__}, not an object")
        prompt = data.get("prompt")
        if prompt is not None and not isinstance(prompt, dict):
            raise TypeError(f"config prompt is {type(prompt).__name__}, not an object")
        prompt = prompt or {}
        limits = Limits(
            max_steps=_count(data, "max_steps", _DEFAULT_LIMITS.max_steps),
            max_parse_errors=_count(data, "max_parse_errors", _DEFAULT_LIMITS.max_parse_errors),
            max_repeats=_count(data, "max_repeats", _DEFAULT_LIMITS.max_repeats),
            max_total_tokens=_count(data, "max_total_tokens", None),
            timeout_s=_number(data, "timeout_s"),
            max_tool_errors=_count(data, "max_tool_errors", _DEFAULT_LIMITS.max_tool_errors),
            force_answer=_flag(data, "force_answer") or False,
            max_cost=_number(data, "max_cost"),
            max_no_progress=_count(data, "max_no_progress", None),
            prices=_prices(data.get("prices")),
        )
        return cls(
            model=_text(data, "model"),
            base_url=_text(data, "base_url"),
            api=_text(data, "api"),
            prompt_name=_text(prompt, "name"),
            prompt_sha256=_text(prompt, "sha256"),
            temperature=_number(data, "temperature"),
            max_tokens=_count(data, "max_tokens", None),
            stream=_flag(data, "stream"),
            wiki=_text(data, "wiki"),
            variant=_text(data, "variant"),
            limits=limits,
            method=_known(Method, _text(data, "method")) or Method.REACT,
            task=_known(Task, _text(data, "task")),
            samples=_count(data, "samples", None),
            sample_temperature=_number(data, "sample_temperature"),
            hybrid_max_steps=_count(data, "hybrid_max_steps", None),
            prompts=_prompts(data.get("prompts")),
            tools=_tools(data.get("tools")),
            protocol=_known(ProtocolName, _text(data, "protocol")),
            constrain=_flag(data, "constrain"),
            service_tier=_text(data, "service_tier"),
        )


def _optional_limits(limits: Limits) -> dict[str, Any]:
    """The stop rules a run may not have: written only when set (traces before them, and
    runs without them, hold none); the prices a cost budget counts from with it."""
    data: dict[str, Any] = {}
    if limits.max_cost is not None:
        data["max_cost"] = limits.max_cost
        prices = limits.prices
        data["prices"] = None if prices is None else prices.to_json()
    if limits.max_no_progress is not None:
        data["max_no_progress"] = limits.max_no_progress
    return data


def _prices(data: Any) -> Prices | None:
    """Recorded prices (per million tokens), or None."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise TypeError(f"config prices is {type(data).__name__}, not an object")
    factor = _number(data, "factor")
    return Prices(
        _number(data, "input") or 0.0,
        _number(data, "output") or 0.0,
        _number(data, "cached_input"),
        1.0 if factor is None else factor,
    )


def _recorded(key: str, value: Any) -> dict[str, Any]:
    """A field traces before it existed lack: written once recorded (read back, they keep
    their bytes)."""
    return {} if value is None else {key: value}


def _known(kind: type[Method] | type[Task] | type[ProtocolName], value: str | None) -> Any:
    """A recorded name as the enum member it names, or as text a newer writer used."""
    if value is None:
        return None
    try:
        return kind(value)
    except ValueError:
        return value


def _prompts(data: Any) -> dict[str, tuple[str | None, str | None]]:
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise TypeError("config prompts is not an object of prompts")
    return {str(kind): (_text(ref, "name"), _text(ref, "sha256")) for kind, ref in data.items()}


def _tools(data: Any) -> tuple[ToolSpec, ...]:
    if data is None:
        return ()
    if not isinstance(data, list):
        raise TypeError(f"config tools is {type(data).__name__}, not a list")
    specs = tuple(ToolSpec.from_json(item) for item in data)
    names = [spec.name.casefold() for spec in specs]
    if len(set(names)) != len(names):
        raise ValueError("config tools name one tool twice")
    return specs


def _text(data: dict[str, Any], key: str) -> str | None:
    return fields.text(data.get(key), f"config {key}")


def _count(data: dict[str, Any], key: str, default: int | None) -> Any:
    """A recorded count ≥ 1 (missing: ``default``)."""
    found = fields.whole(data.get(key), f"config {key}", low=1)
    return default if found is None else found


def _number(data: dict[str, Any], key: str) -> float | None:
    found = fields.number(data.get(key), f"config {key}", low=-math.inf)
    return None if found is None else float(found)


def _flag(data: dict[str, Any], key: str) -> bool | None:
    return fields.flag(data.get(key), f"config {key}")


def run_config(
    settings: Settings,
    template: PromptTemplate,
    methods: Sequence[Method],
    task: Task,
    kinds: Iterable[PromptTemplate] = (),
    tools: tuple[ToolSpec, ...] = (),
) -> RunConfig:
    """How a run with these settings is made, as its trace (or an eval's summary) records it,
    never a secret: ``template`` its main prompt, ``kinds`` the prompts it sends, recorded
    when they are not that one alone; ``methods`` its method first; ``tools`` what its loops
    could call."""
    copied = ("model", "api", "temperature", "max_tokens", "stream", "variant", "service_tier")
    sends: dict[str, tuple[str | None, str | None]] = {
        str(t.method): (t.name, t.sha256) for t in kinds
    }
    if list(sends.values()) == [(template.name, template.sha256)]:
        sends = {}
    samples = any(Method.COT_SC in method.parts for method in methods)
    return RunConfig(
        base_url=redact_url(settings.base_url),
        prompt_name=template.name,
        prompt_sha256=template.sha256,
        wiki=redact_url(settings.wiki) if "://" in settings.wiki else settings.wiki,
        limits=run_limits(settings),
        method=methods[0],
        task=task,
        samples=settings.samples if samples else None,
        sample_temperature=settings.sample_temperature if samples else None,
        hybrid_max_steps=hybrid_steps(settings, task) if any(m.hybrid for m in methods) else None,
        prompts=sends,
        tools=tools,
        protocol=ProtocolName(settings.protocol),
        constrain=settings.constrain,
        **{name: getattr(settings, name) for name in copied},
    )
