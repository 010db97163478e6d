"""The protocols a loop can speak, by name (``--protocol``): each loop kind's protocol is
made here, for a session and for the replay of a trace that recorded the name."""

from __future__ import annotations

from collections.abc import Callable

from react_cli.core.method import Method
from react_cli.core.records import ProtocolName
from react_cli.loop.protocol import Protocol
from react_cli.loop.text.protocol import TextProtocol
from react_cli.loop.tools.protocol import ToolsProtocol

ProtocolMaker = Callable[[bool, bool], Protocol]
"""A protocol with thoughts or without (ReAct, Act), constrained by a grammar or not."""

PROTOCOLS: dict[ProtocolName, ProtocolMaker] = {
    ProtocolName.TEXT: lambda thoughts, constrain: TextProtocol(
        thoughts=thoughts, constrain=constrain
    ),
    ProtocolName.TOOLS: lambda thoughts, constrain: ToolsProtocol(thoughts=thoughts),
}


def loop_protocols(
    name: ProtocolName = ProtocolName.TEXT, *, constrain: bool = False
) -> dict[Method, Protocol]:
    """Each loop's protocol: ReAct with thoughts, Act without."""
    make = PROTOCOLS[name]
    return {Method.REACT: make(True, constrain), Method.ACT: make(False, constrain)}
