"""Batch evaluation: score a model on a dataset's questions and keep every result on disk.

``plan`` decides what an eval does, ``runner`` runs its questions (``question`` turns one into
its row, ``stop`` ends them all), ``store`` keeps its folder in step (``files`` reads and writes
the files; ``rows``, ``summary`` and ``config`` are their typed records), and ``view`` shows
its progress and summary.
"""
