"""Traces: the format, how a run was made, the store, new traces, replay and forks."""
