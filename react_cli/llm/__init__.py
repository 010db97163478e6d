"""The model endpoint: a client, the reader of its answers, and the words for its failures.

``client.OpenAIClient`` sends requests and retries them, ``stream`` reads an answer,
``failures`` says what went wrong; ``base`` is the seam the rest of react-cli sees (a request,
a completion, the ``Model`` protocol). This package's face imports nothing, so what reads a
request or a completion (the display, traces, telemetry) never loads the client: it is
imported only when a command calls a model.
"""
