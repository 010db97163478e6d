"""``react-cli eval`` of a matrix: several models (``-m A -m B``), methods or protocols
(``--protocol text,tools``), every cell run over the same questions (``eval.matrix.run``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from react_cli.cli.app import print_json, print_warning
from react_cli.core.errors import EvalIncompleteError, InterruptError, ReactCliError

if TYPE_CHECKING:
    from react_cli.eval.matrix.run import MatrixPlan, MatrixResult
    from react_cli.eval.plan import EvalRequest


def run_matrix_command(
    request: EvalRequest,
    models: tuple[str, ...],
    protocols: tuple[str, ...],
    *,
    as_json: bool,
    debug: bool,
) -> None:
    """Plan the matrix, run its cells with one progress display on stderr, print its table
    there, then the path of ``matrix.json`` (``--json``: the matrix as ``eval show --json``
    gives it, but for the pairs' tests) on stdout; the error it ended with, if any."""
    from react_cli.cli.notices import told
    from react_cli.display.terminal import make_console, plain
    from react_cli.eval.matrix.record import MATRIX
    from react_cli.eval.matrix.run import plan_matrix, run_matrix
    from react_cli.eval.matrix.view import MatrixProgress
    from react_cli.share.matrix_show import load_matrix, matrix_json, matrix_view

    plan = plan_matrix(request, models, protocols)
    console = make_console()
    view = MatrixProgress(console, plan.cells)
    notices = told(debug, on_retry=view.retry_waiting, note=view.note)
    result = run_matrix(plan, observer=view, told=notices, warn=print_warning)
    shown = load_matrix(plan.folder, tested=False)  # the tests: eval show
    for part in matrix_view(shown):
        console.print(part)
    if as_json:
        print_json(matrix_json(shown))
    else:
        print(plain(str(plan.folder / MATRIX)))
    error = matrix_error(result, plan)
    if error is not None:
        raise error


def matrix_error(result: MatrixResult, plan: MatrixPlan) -> ReactCliError | None:
    """The error a matrix that did not answer every question of every cell exits with: a cell's
    configuration error first (exit 2), then an interruption, then a spent budget, then the
    cells' failures."""
    from react_cli.core.wording import plural
    from react_cli.eval.summary import EvalStatus

    again, folder = plan.resume_hint, plan.folder
    for outcome in result.results:
        if outcome.config_error is not None:
            return outcome.config_error
    kept = plural(sum(outcome.summary.figures.n for outcome in result.results), "result")
    if result.status is EvalStatus.INTERRUPTED:
        from react_cli.infra.interrupts import interrupted

        return InterruptError(f"{interrupted()}; {kept} kept in {folder}; continue with: {again}")
    if result.status is EvalStatus.BUDGET:
        return EvalIncompleteError(
            f"stopped: the matrix spent its --max-total-cost; {kept} kept in {folder}; "
            f"continue with: {again}"
        )
    unfinished = [
        cell.label
        for cell, outcome in zip(plan.cells, result.results, strict=False)
        if outcome.status is not EvalStatus.FINISHED or outcome.summary.figures.failed
    ]
    if unfinished:
        cells = plural(len(unfinished), "cell")
        return EvalIncompleteError(
            f"{cells} did not answer every question ({unfinished[0]}"
            f"{', …' if len(unfinished) > 1 else ''}); continue with: {again}"
        )
    return None
