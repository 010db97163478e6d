"""A matrix eval: models × methods × protocols, every cell an eval folder of its own.

``record`` lays out the folder (``matrix.json``, ``cells/``) and reads it back as untrusted,
``run`` plans the cells and runs them side by side, ``view`` is their one progress display;
``share.matrix_show`` reads a finished matrix for ``eval show`` and ``eval report``.
"""
