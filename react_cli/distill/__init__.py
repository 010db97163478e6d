"""Prompts and fine-tuning records made of recorded runs (``react-cli distill``)."""
