"""The model endpoint: ``client.OpenAIClient`` (requests, errors, retries) and ``stream``
(reading an answer); imported only when a command calls a model."""

from __future__ import annotations

from react_cli.llm.client import OpenAIClient

__all__ = ["OpenAIClient"]
