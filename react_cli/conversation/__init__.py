"""Conversations: questions that follow one another, each given the turns before it.

``history.py`` holds a conversation (its turns, what the next question is given of them, the
record its trace carries), ``store.py`` keeps conversations in the home directory's
``conversations/`` (one JSON file each, read back as untrusted input). How the turns are shown
to the model is each protocol's (``loop.text``, ``loop.tools``), through ``Protocol.start``.
"""
