"""The model endpoint: a client, the reader of its answers, and the words for its failures.

``client.OpenAIClient`` sends requests and retries them, ``stream`` reads an answer,
``failures`` says what went wrong; imported only when a command calls a model.
"""

from __future__ import annotations

from react_cli.llm.client import OpenAIClient

__all__ = ["OpenAIClient"]
