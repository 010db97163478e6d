"""The ReAct paper's methods (its Table 1): Standard, CoT, CoT-SC, Act, ReAct and two hybrids.

``core.method`` names them and the two tasks; ``answers`` reads an answer from a single call's
text; ``vote`` is CoT-SC's majority vote; ``memo`` runs each building block of a question at
most once (the ReAct or Act loop, the greedy calls, the CoT-SC samples); ``outcome`` turns the
memo into each method's answer, with the paper's back-off rules, and ``results`` holds it;
``record`` is the part of a trace the methods add (samples, votes, branch); ``events`` is what
a method reports while it runs; ``scoring``, ``sources`` and ``evidence`` score an answer and
the pages it read.
"""
