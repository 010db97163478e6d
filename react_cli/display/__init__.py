"""The terminal: the renderer of runs (live, replayed, paced) and text fit for a terminal."""
