"""Native function calling (``--protocol tools``): the tools declared to a chat endpoint, its
calls read and answered with ``role: tool`` messages."""
