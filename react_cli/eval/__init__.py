"""Batch evaluation: score a model on a dataset's questions and keep every result on disk.

``plan`` decides what an eval does, ``runner`` runs it, ``store`` keeps its folder (``files``
reads and writes the files, ``rows`` and ``summary`` are their typed records), ``view`` shows
its progress and summary.
"""
