"""``eval --batch``: an eval run in waves over the OpenAI Batch API (``driver.run_batch``).

``api`` speaks the Batch API, ``ledger`` keeps what a resumed eval needs in its folder, and
``broker`` makes the waves; nothing here is imported unless an eval runs in batches.
"""
