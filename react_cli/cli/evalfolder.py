"""``react-cli eval show|report|compare|export``: read finished (or running) eval folders."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from react_cli.cli.app import print_json
from react_cli.cli.evaluate import eval_app
from react_cli.cli.help import Panel, examples
from react_cli.core.errors import UsageError

FolderArg = Annotated[
    Path,
    typer.Argument(
        metavar="DIR",
        help="An eval folder (holding summary.json), a matrix's, or one of its cells: DIR@N.",
    ),
]
LISTS = ("flips", "modes")


@eval_app.command(
    "show",
    short_help="Print an eval's summary table again.",
    epilog=examples(
        "react-cli eval show runs/gpt",
        "react-cli eval show runs/all --wrong --method cot",
        "react-cli eval show runs/matrix --json",
    ),
)
def eval_show(
    directory: FolderArg,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the summary (a matrix's cells and tests) as one JSON object.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = False,
    wrong: Annotated[
        bool,
        typer.Option(
            "--wrong",
            help="Also list the questions it did not answer right.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = False,
    method: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="--wrong of this method, in an eval of several.",
            rich_help_panel=Panel.METHOD,
        ),
    ] = None,
) -> None:
    """Print the summary table of the eval in DIR (stdout); --wrong lists the questions it got
    wrong (question, gold, answer, stop reason). A matrix's DIR: every cell in one table and
    every pair tested (Holm-corrected); DIR@N one of its cells.

    Exit codes: 0 shown; 2 DIR is not a readable eval folder.
    """
    from react_cli.display.terminal import make_console
    from react_cli.eval.matrix.record import is_matrix
    from react_cli.share.cells import eval_folder

    console = make_console(stderr=False)
    if is_matrix(directory):
        from react_cli.share.matrix_show import load_matrix, matrix_json, matrix_view

        if wrong or method is not None:
            raise UsageError(f"--wrong and --method show one cell: {directory}@N")
        shown = load_matrix(directory)
        if as_json:
            print_json(matrix_json(shown), indent=2)
            return
        for part in matrix_view(shown):
            console.print(part)
        return
    from react_cli.core.method import parse_method
    from react_cli.share.show import show_eval

    directory = eval_folder(directory)
    chosen = None if method is None else str(parse_method(method))
    if as_json:
        from react_cli.share.evaldir import load_eval

        print_json(load_eval(directory, chosen).summary.to_json(), indent=2)
        return
    for part in show_eval(directory, wrong=wrong, method=chosen):
        console.print(part)


@eval_app.command(
    "report",
    short_help="Write an eval as one self-contained HTML page.",
    epilog=examples(
        "pip install 'react-cli[report]'", "react-cli eval report runs/gpt -o report.html"
    ),
)
def eval_report(
    directory: FolderArg,
    output: Annotated[
        Path,
        typer.Option(
            "-o",
            "--output",
            metavar="PATH",
            help="The HTML file to write.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ],
) -> None:
    """Write the eval in DIR as one HTML file: summary, charts (stop reasons, score by steps,
    latency) and every question with its trajectory. Needs the 'report' extra
    (pip install 'react-cli[report]') for the charts. A matrix's DIR: its table and
    significance matrices (no chart); DIR@N one of its cells.

    Exit codes: 0 written; 2 DIR is not an eval folder, PATH cannot be written, or the extra
    is missing.
    """
    from react_cli.display.terminal import plain
    from react_cli.eval.matrix.record import is_matrix
    from react_cli.share.cells import eval_folder
    from react_cli.share.export import write_output

    if is_matrix(directory):
        from react_cli.share.matrix_report import matrix_report
        from react_cli.share.matrix_show import load_matrix

        write_output(output, matrix_report(load_matrix(directory)))
    else:
        from react_cli.share.report import eval_report as build_report

        write_output(output, build_report(eval_folder(directory)))
    print(plain(str(output)))


@eval_app.command(
    "compare",
    short_help="Compare two evals over the same questions.",
    epilog=examples(
        "react-cli eval compare runs/text runs/tools",
        "react-cli eval compare runs/text runs/tools --list flips",
        "react-cli eval compare runs/all runs/all --method react --method-b cot-sc",
        "react-cli eval compare runs/m@qwen,react,text runs/m@qwen,react,tools",
    ),
)
def eval_compare(
    first: Annotated[
        Path, typer.Argument(metavar="A", help="The baseline eval folder, or a cell: DIR@N.")
    ],
    second: Annotated[
        Path, typer.Argument(metavar="B", help="The eval folder (or cell) compared to A.")
    ],
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print one JSON object.", rich_help_panel=Panel.OUTPUT),
    ] = False,
    listing: Annotated[
        str | None,
        typer.Option(
            "--list",
            metavar="[flips|modes]",
            help="Also list the questions that flipped, or whose failure mode changed.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = None,
    seed: Annotated[
        int,
        typer.Option(
            metavar="N",
            help="Seed of the bootstrap confidence interval.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = 0,
    method: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Compare this method's results, in evals of several methods [their first].",
            rich_help_panel=Panel.METHOD,
        ),
    ] = None,
    method_b: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="B's method, if not --method (A and B may be one eval).",
            rich_help_panel=Panel.METHOD,
        ),
    ] = None,
) -> None:
    """Compare evals A and B question by question (paired by dataset index and question text):
    scores side by side with B − A, questions that flipped, an exact McNemar test for EM (or
    accuracy), a paired bootstrap 95 % interval for the F1 difference, tokens, calls and time
    per question, and each failure mode's count with the questions whose mode changed (--list
    modes lists them). Works across models, prompts and methods: --method picks one of an eval
    of several (--method-b another for B, e.g. two methods of the same eval). A cell of a
    matrix is DIR@N (its number in 'eval show DIR'), DIR@NAME (its folder's name) or
    DIR@MODEL,METHOD,PROTOCOL.

    Exit codes: 0 compared; 2 a folder is not an eval, or the two share no question.
    """
    from react_cli.core.wording import quoted
    from react_cli.display.terminal import make_console
    from react_cli.share.compare import compare_evals, comparison_view, flips_view

    if listing is not None and listing not in LISTS:
        raise UsageError(f"--list must be one of {', '.join(LISTS)}, not {quoted(listing)}")
    from react_cli.core.method import parse_method

    names = [
        None if name is None else str(parse_method(name, option))
        for name, option in ((method, "--method"), (method_b, "--method-b"))
    ]
    from react_cli.share.cells import eval_folder

    a, b = eval_folder(first), eval_folder(second)
    comparison = compare_evals(a, b, seed=seed, method=names[0], method_b=names[1])
    if as_json:
        print_json(comparison.to_json(), indent=2)
        return
    console = make_console(stderr=False)
    for part in comparison_view(comparison):
        console.print(part)
    if listing == "flips":
        console.print(flips_view(comparison))
    elif listing == "modes":
        from react_cli.share.failures import changes_table

        console.print(changes_table(comparison.mode_changes))


EXPORT_FORMATS = ("inspect",)


@eval_app.command(
    "export",
    short_help="Write an eval as Inspect AI logs (inspect view).",
    epilog=examples(
        "react-cli eval export runs/gpt --format inspect -o logs/",
        "inspect view start --log-dir logs/",
    ),
)
def eval_export(
    directory: FolderArg,
    output: Annotated[
        Path,
        typer.Option(
            "-o",
            "--output",
            metavar="PATH",
            help="The log file to write; a folder for an eval of several methods.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ],
    export_format: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="[inspect]",
            help="The log format [inspect].",
            show_default=False,
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = "inspect",
) -> None:
    """Write the eval in DIR as an Inspect AI eval log (JSON) that 'inspect view' shows: one
    sample per question with its trajectory as messages, its scores, usage and time, and the
    summary's figures. An eval of several methods gives one log per method, written in the
    folder PATH under the names 'inspect view' lists. Prints each path written.

    Exit codes: 0 written; 2 DIR is not an eval folder, or PATH cannot be written.
    """
    from react_cli.core.wording import quoted
    from react_cli.display.terminal import plain
    from react_cli.share.inspect_log import export_inspect, viewer_lists

    if export_format not in EXPORT_FORMATS:
        formats = ", ".join(EXPORT_FORMATS)
        raise UsageError(f"--format must be one of {formats}, not {quoted(export_format)}")
    from react_cli.share.cells import eval_folder

    written = export_inspect(eval_folder(directory), output)
    for path in written:
        print(plain(str(path)))
    if not all(viewer_lists(path) for path in written):
        print(
            "hint: 'inspect view' lists a .json log only when its name starts with a time "
            "(2026-12-01T15-00-00+00-00_task_id.json); give -o a folder to get such a name",
            file=sys.stderr,
        )
