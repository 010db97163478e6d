"""What a request to one endpoint carries, and what the endpoint refused of it.

A request body is built from the run's settings and the call (a prompt or chat messages, tools
and ``tool_choice``, a grammar, stop sequences, ``n``, streaming). Endpoints differ in what
they take: one rejects ``stop`` or ``stream_options`` (dropped for the rest of the client's
run), one takes no grammar or no forced ``tool_choice``, one sends empty streams for tool
requests (remembered in the ``EndpointFacts`` every client of the run shares, a refused
grammar said once, as a warning), one takes no ``n`` (``NRefused``: sampling goes to single
requests), one takes no ``tools`` at all (a configuration error: use the text protocol).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from react_cli.core.errors import LLMConfigError, UsageError
from react_cli.core.records import Api
from react_cli.llm.base import AUTO, ChoiceMode, ModelRequest, ToolChoice
from react_cli.llm.endpoint import EndpointFacts
from react_cli.llm.sampling import NRefused

_MENTIONS_STOP = re.compile(r"\bstop(?:_sequences?)?\b", re.IGNORECASE)
_MENTIONS_N = re.compile(r"\bn\b|\bchoices?\b", re.IGNORECASE)  # llama.cpp: "one ... choice"
_MENTIONS_TOOLS = re.compile(r"\btools\b|\btool[_ ]choice\b", re.IGNORECASE)
_MENTIONS_TOOL_CHOICE = re.compile(r"\btool[_ ]choice\b|\brequired\b", re.IGNORECASE)
_MENTIONS_GRAMMAR = re.compile(r"\bgrammar\b|\bstructured_outputs\b", re.IGNORECASE)
TOOLS_HINT = "use --protocol text"
GRAMMAR = "grammar"
STREAMED_TOOLS = "streamed tool requests"
CACHE_KEY = "prompt_cache_key"
SERVICE_TIER = "service_tier"
UNSENT = (CACHE_KEY, SERVICE_TIER)
"""Fields that say how to serve a call, never what it is: not part of its identity."""


class Parameters:
    """The bodies of one client's requests, without what its endpoint rejected."""

    def __init__(
        self,
        api: Api,
        model: str,
        *,
        temperature: float,
        max_tokens: int | None,
        stream: bool,
        facts: EndpointFacts,
        log: Callable[[str], None],
        warn: Callable[[str], None],
        service_tier: str | None = None,
    ) -> None:
        self.api, self.model = api, model
        self.service_tier = service_tier
        self.temperature, self.max_tokens, self.stream = temperature, max_tokens, stream
        self.facts = facts
        self.stop_supported = True
        self.stream_options_supported = True
        self._log, self._warn = log, warn

    @property
    def streaming(self) -> bool:
        """Whether answers are streamed: as configured, until the endpoint cuts a stream."""
        return self.stream and not self.facts.cuts_streams

    def body(
        self, request: ModelRequest, *, temperature: float | None = None, n: int = 0
    ) -> dict[str, Any]:
        """A request for one streamed (as configured) completion, or with ``n`` for a
        sampling request: ``n`` completions (more than one: ``n`` is sent) in one JSON body."""
        sampling = n > 0
        temperature = self.temperature if temperature is None else temperature
        body: dict[str, Any] = {"model": self.model, "temperature": temperature}
        if request.messages or request.tools:
            if self.api is not Api.CHAT:
                raise UsageError("tools and chat messages need the chat API (--api chat)")
            body["messages"] = list(request.messages)
        elif self.api is Api.CHAT:
            body["messages"] = [{"role": "user", "content": request.prompt}]
        else:
            body["prompt"] = request.prompt
        if request.tools:
            body["tools"] = list(request.tools)
            body["tool_choice"] = self._tool_choice(request.tool_choice).wire()
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if request.stop and self.stop_supported:
            body["stop"] = list(request.stop)
        if request.grammar is not None and GRAMMAR not in self.facts.refused:
            # llama.cpp's field, and vLLM's (>= 0.12); each server ignores the other's
            body["grammar"] = request.grammar
            body["structured_outputs"] = {"grammar": request.grammar}
        if n > 1:
            body["n"] = n
        if request.cache_key is not None and CACHE_KEY not in self.facts.refused:
            body[CACHE_KEY] = request.cache_key
        if self.service_tier is not None:
            body[SERVICE_TIER] = self.service_tier
        stream = self.streaming and not sampling
        if request.tools and STREAMED_TOOLS in self.facts.refused:
            stream = False
        body["stream"] = stream
        if stream and self.stream_options_supported:
            body["stream_options"] = {"include_usage": True}
        return body

    def identity(
        self, request: ModelRequest, *, temperature: float | None = None, n: int = 0
    ) -> dict[str, Any]:
        """The body as first sent, whatever carries it: its stop sequences whether or not the
        endpoint took them, never whether it is streamed."""
        body = self.body(request, temperature=temperature, n=n)
        for unsent in ("stream", "stream_options", *UNSENT):
            body.pop(unsent, None)
        if request.stop:
            body["stop"] = list(request.stop)
        return body

    def _tool_choice(self, choice: ToolChoice) -> ToolChoice:
        """The choice to send: a forced one the endpoint refused is asked as ``auto``."""
        return AUTO if choice.forced and choice.mode in self.facts.refused else choice

    def drop_rejected(
        self, status: int, message: str, body: dict[str, Any], where: str, persistent: bool
    ) -> bool:
        """Stop sending the parameter of ``body`` an error answer (``status``, ``message``)
        rejects: True when one was dropped (send the request again). Raises ``NRefused`` for
        ``n`` and ``LLMConfigError`` for ``tools``; False for any other error (retried, if
        it may be). ``persistent``: every try of this forced ``tool_choice`` got a 500."""
        if status == 400 and "n" in body and _MENTIONS_N.search(message):
            self._log("endpoint rejected n; sampling with single requests")
            raise NRefused(message)
        if status == 400 and "stream_options" in body and "stream_options" in message:
            self.stream_options_supported = False
            self._log("endpoint rejected stream_options; retrying without it")
            return True
        if status in (400, 422) and CACHE_KEY in body and CACHE_KEY in message:
            if self.facts.refuse(CACHE_KEY):
                self._log("endpoint rejected prompt_cache_key; not sending it again in this run")
            return True
        if status == 400 and "stop" in body and _MENTIONS_STOP.search(message):
            self.stop_supported = False
            self._log("endpoint rejected stop; retrying without it (cutting client-side)")
            return True
        if status in (400, 422) and GRAMMAR in body and _MENTIONS_GRAMMAR.search(message):
            if self.facts.refuse(GRAMMAR):
                self._warn(
                    f"the endpoint does not take a grammar ({message or f'HTTP {status}'}): "
                    "the rest of the run is not constrained (--constrain needs llama.cpp's "
                    "server, llama-cpp-python's, or vLLM)"
                )
            return True
        forced = _forced_mode(body)
        if forced is not None and _refuses_forced(status, message, persistent):
            self.facts.refuse(str(forced))
            self._log(f"endpoint refused tool_choice {forced!r}; asking with 'auto'")
            return True
        if status in (400, 422) and "tools" in body and _MENTIONS_TOOLS.search(message):
            said = f": {message}" if message else ""
            raise LLMConfigError(
                f"{where} does not accept tools (HTTP {status}{said}); {TOOLS_HINT}"
            )
        return False


def _refuses_forced(status: int, message: str, persistent: bool) -> bool:
    """Whether an error answer to a forced ``tool_choice`` refuses it: a 400 naming it, or a
    500 on every try (llama-cpp-python fails on ``required`` so, with an empty message); one
    500 is retried as any other, so a passing fault does not end forcing for the run."""
    naming = status in (400, 422) and bool(_MENTIONS_TOOL_CHOICE.search(message))
    return naming or (status == 500 and persistent)


def forced_failure(status: int, body: dict[str, Any]) -> bool:
    """Whether an error answer is a 500 to a request forcing a ``tool_choice``."""
    return status == 500 and _forced_mode(body) is not None


def _forced_mode(body: dict[str, Any]) -> ChoiceMode | None:
    """The forced ``tool_choice`` mode a request body asks for (``required``, ``function``)."""
    choice = body.get("tool_choice")
    if choice == ChoiceMode.REQUIRED:
        return ChoiceMode.REQUIRED
    return ChoiceMode.FUNCTION if isinstance(choice, dict) else None
