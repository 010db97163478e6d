"""The model endpoint: ``client.OpenAIClient`` (requests, retries), ``stream`` (reading an
answer) and ``failures`` (saying what went wrong); imported only when a command calls a model."""

from __future__ import annotations

from react_cli.llm.client import OpenAIClient

__all__ = ["OpenAIClient"]
