"""Shared by the bench scripts: make the test helpers (fake servers, scripted models) importable."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from react_cli.eval.plan import EvalRequest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
if str(TESTS / "support") not in sys.path:
    sys.path.insert(0, str(TESTS / "support"))


def run_eval(request: EvalRequest) -> None:
    """``react-cli eval`` as its command runs it, in this process: one client per worker,
    sharing what they learn of the endpoint."""
    from react_cli.eval.plan import plan_eval
    from react_cli.eval.runner import evaluate
    from react_cli.eval.store import claim_folder
    from react_cli.llm.sampling import EndpointFacts
    from react_cli.session import build_backend, build_model

    plan = plan_eval(request)
    facts = EndpointFacts()
    evaluate(
        plan,
        claim_folder(plan.folder, resuming=False),
        model_factory=lambda: build_model(plan.settings, facts=facts),
        backend=build_backend(plan.settings),
    )
