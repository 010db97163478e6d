"""OpenTelemetry spans of runs and evals (the ``otel`` extra), with OpenInference's names.

``setup`` decides whether a command sends spans without importing OpenTelemetry; ``spans``
makes them from a run's events (an observer, like the renderer) on a tracer provider of its
own, never the process's global one.
"""
