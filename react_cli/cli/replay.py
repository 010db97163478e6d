"""``react-cli replay``: a saved run shown again, exported, or run again against today's tools."""

from __future__ import annotations

import functools
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from react_cli.cli.app import app, print_json
from react_cli.cli.help import Panel, examples
from react_cli.cli.options import AllowToolOpt, DenyToolOpt, McpOpt, ToolsFromOpt, WikiOpt
from react_cli.cli.run_options import run_settings
from react_cli.core.errors import InterruptError, RerunDiffersError, UsageError
from react_cli.infra import interrupts

if TYPE_CHECKING:
    from react_cli.core.method import Method
    from react_cli.settings.settings import Settings
    from react_cli.share.export import ExportFormat
    from react_cli.traces.diffs import RevisionChange
    from react_cli.traces.trace import Trace


MAX_STEP_DELAY_S = 60

TraceArg = Annotated[
    list[Path] | None,
    typer.Argument(
        metavar="TRACE", help="Trace files, shown in turn; omitted = the most recent run's."
    ),
]


NthOpt = Annotated[
    int | None,
    typer.Option(
        "-n",
        metavar="N",
        help="Use the N-th most recent trace (1 = newest).",
        rich_help_panel=Panel.REPLAY,
    ),
]


@app.command(
    short_help="Show saved runs as 'ask -v' did, or re-run one and diff.",
    epilog=examples(
        "react-cli replay examples/traces/arthurs-magazine.json",
        "react-cli replay -n 2 --rerun",
        "react-cli replay --live-tools --wiki zim:hotpot.zim -v",
        "react-cli replay -n 1 --format html -o run.html",
    ),
)
def replay(
    trace: TraceArg = None,
    nth: NthOpt = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the trace normalised (or the re-run's result).",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = False,
    step_delay: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            help="Pause this long after each step while rendering.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = 0.0,
    rerun: Annotated[
        bool,
        typer.Option(
            help="Re-run offline with today's code on the recorded outputs; diff.",
            rich_help_panel=Panel.REPLAY,
        ),
    ] = False,
    live_tools: Annotated[
        bool,
        typer.Option(
            help="Re-run on the recorded model outputs but live tools: Wikipedia, and those of "
            "--tools-from and --mcp (or the config file).",
            rich_help_panel=Panel.REPLAY,
        ),
    ] = False,
    wiki: WikiOpt = None,
    tools_from: ToolsFromOpt = None,
    mcp: McpOpt = None,
    allow_tool: AllowToolOpt = None,
    deny_tool: DenyToolOpt = None,
    method: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="With --rerun: answer by this method from what the trace recorded "
            "(e.g. react+cot-sc from a ReAct run with samples) [the trace's].",
            rich_help_panel=Panel.METHOD,
        ),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "-v",
            "--verbose",
            help="Show the re-run's trajectory on stderr.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = False,
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="[terminal|markdown|html]",
            help="terminal (as 'ask -v'), GitHub Markdown, or one self-contained HTML page.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = "terminal",
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            metavar="PATH",
            help="Write the export here, not stdout.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = None,
    conversation: Annotated[
        bool,
        typer.Option(
            "--conversation",
            help="Show the whole conversation the trace is a turn of, in turn.",
            rich_help_panel=Panel.CONVERSATION,
        ),
    ] = False,
) -> None:
    """Show saved runs as 'ask -v' showed them (stdout), export them (--format), or re-run one
    and diff (--rerun).

    Several TRACE files are shown one after another (--json: a list; Markdown: one document).
    Exit codes: 0 shown, or re-run reproduced the recording; 1 the re-run differs, or a trace
    is missing or unreadable; 2 usage error; 130 interrupted (Ctrl-C), 143 by SIGTERM, 129 by
    SIGHUP.
    """
    from react_cli.settings.resolve import home_dir
    from react_cli.traces.store import select_trace
    from react_cli.traces.trace import Trace

    if not 0 <= step_delay <= MAX_STEP_DELAY_S:
        raise UsageError(f"--step-delay must be between 0 and {MAX_STEP_DELAY_S} seconds")
    rerunning = rerun or live_tools
    if verbose and not rerunning:
        raise UsageError("-v applies to --rerun / --live-tools only")
    if wiki is not None and not live_tools:
        raise UsageError("--wiki applies to --live-tools only")
    if (tools_from or mcp) and not live_tools:
        raise UsageError("--tools-from and --mcp apply to --live-tools only")
    if (allow_tool or deny_tool) and not live_tools:
        raise UsageError("--allow-tool and --deny-tool apply to --live-tools only")
    if method is not None and not rerunning:
        raise UsageError("--method applies to --rerun / --live-tools only")
    if step_delay and (as_json or rerunning):
        raise UsageError("--step-delay applies to rendering only, not to --json or --rerun")
    if trace and len(trace) > 1 and rerunning:
        raise UsageError("--rerun takes one TRACE at a time")
    if conversation and (rerunning or (trace and len(trace) > 1)):
        raise UsageError("--conversation shows the conversation of one TRACE; not with --rerun")
    export = _export_format(output_format, output, as_json or rerunning or bool(step_delay))
    chosen: list[Path | None] = list(trace) if trace else [None]
    paths = [select_trace(home_dir(), path, nth) for path in chosen]
    if conversation:
        paths = _conversation_traces(paths[0])
    if export is not None:
        _export(paths, export, output)
        return
    runs = [Trace.read(path) for path in paths]  # every file readable before anything is shown
    if rerunning:
        from react_cli.core.method import parse_method

        chosen_method = None if method is None else parse_method(method)
        live = None
        if live_tools:
            tools = {"tools_from": tools_from, "tool_allow": allow_tool, "tool_deny": deny_tool}
            live = run_settings(wiki=wiki, mcp=mcp, **tools)
        _rerun(runs[0], method=chosen_method, live=live, verbose=verbose, as_json=as_json)
    elif as_json:
        documents = [run.to_json() for run in runs]
        print_json(documents if len(runs) > 1 else documents[0], indent=2)
    else:
        from react_cli.display.replay import PacedRenderer, replay_trace
        from react_cli.display.sources import answer_sources
        from react_cli.display.terminal import make_console, plain

        for number, run in enumerate(runs):
            if len(runs) > 1:
                print(("\n" if number else "") + f"== {plain(str(run.path))}")
            replay_trace(PacedRenderer(make_console(stderr=False), step_delay), run)
            sys.stdout.write("".join(line + "\n" for line in answer_sources(run)))


def _conversation_traces(path: Path) -> list[Path]:
    """The traces of the conversation ``path`` is a turn of, in turn (the home directory's
    record of it); a turn without a trace, or whose trace is gone, is said on stderr."""
    from react_cli.conversation.store import ConversationStore
    from react_cli.display.terminal import plain
    from react_cli.settings.resolve import home_dir
    from react_cli.traces.trace import Trace

    record = Trace.read(path).conversation
    if record is None:
        raise UsageError(f"{path} is no turn of a conversation (a trace from before them)")
    store = ConversationStore(home_dir())
    if not store.path(record.id).exists():
        print(
            plain(
                f"note: conversation {record.id} is not kept in {store.folder}: turn "
                f"{record.turn} alone is shown"
            ),
            file=sys.stderr,
        )
        return [path]
    paths = []
    for number, turn in enumerate(store.load(record.id).turns, start=1):
        kept = None if turn.trace is None else Path(turn.trace)
        if kept is not None and kept.is_file():
            paths.append(kept)
        else:
            gone = "wrote no trace" if kept is None else f"its trace {kept} is gone"
            print(plain(f"note: turn {number} of conversation {record.id} {gone}"), file=sys.stderr)
    return paths or [path]


def _export_format(name: str, output: Path | None, other_mode: bool) -> ExportFormat | None:
    """The export ``--format`` asks for (None: the terminal rendering); UsageError for a
    format that does not exist or options that do not go with it."""
    from react_cli.core.wording import quoted
    from react_cli.share.export import ExportFormat

    if name == "terminal":
        if output is not None:
            raise UsageError("-o/--output applies to --format markdown or html")
        return None
    try:
        export = ExportFormat(name)
    except ValueError:
        shown = quoted(name)
        raise UsageError(f"--format must be terminal, markdown or html, not {shown}") from None
    if other_mode:
        raise UsageError("--format markdown/html goes with none of --json, --rerun, --step-delay")
    return export


def _export(paths: list[Path], export: ExportFormat, output: Path | None) -> None:
    """Print (or write to ``output``) the traces as one Markdown document or one HTML page."""
    from react_cli.share.export import ExportFormat, export_trace, write_output

    if export is ExportFormat.HTML and len(paths) > 1:
        raise UsageError("--format html takes one TRACE at a time")
    documents = [export_trace(path, export) for path in paths]  # all readable before output
    text = "\n---\n\n".join(documents)
    if output is None:
        sys.stdout.write(text)
    else:
        write_output(output, text)


def _rerun(
    recorded: Trace, *, method: Method | None, live: Settings | None, verbose: bool, as_json: bool
) -> None:
    """Re-run a recorded run (on the live tools of the ``live`` settings, if given); exit 1
    with a step-by-step diff when it does not reproduce. With another ``method`` than the
    recorded one, print what that method answers."""
    from react_cli.cli.app import print_warning
    from react_cli.cli.consent import terminal_question
    from react_cli.cli.notices import told
    from react_cli.core.wording import plural
    from react_cli.display.render import Renderer
    from react_cli.display.terminal import make_console, plain
    from react_cli.session import Uses, open_session
    from react_cli.traces.diffs import compare, compare_records, revision_changes
    from react_cli.traces.recorded import live_tools_for
    from react_cli.traces.replay import rerun

    observer = Renderer(make_console()) if verbose else None
    session = (
        nullcontext(None)
        if live is None
        else open_session(
            live,
            uses=Uses.TOOLS,
            told=told(False, observer, hint=False),
            question=terminal_question(live, observer),
        )
    )
    with session as opened, interrupts.guard():
        tools = None
        if opened is not None:
            made = functools.partial(opened.tools, keep_denied=True)
            tools = live_tools_for(recorded, made, print_warning)
        outcome, now = rerun(recorded, method=method, tools=tools, observer=observer)
        if interrupts.pressed():  # the run stopped there, not where it was recorded to
            raise InterruptError(interrupts.interrupted())
    derived = method is not None and method != recorded.record.method
    differences = [] if derived else compare(recorded.run, now)
    if not derived:
        differences += compare_records(recorded.record, outcome.record())
    changed = revision_changes(recorded.run, now)
    if not as_json:
        _revisions_changed(changed)  # first: the likely reason for a difference
    if as_json:
        report: dict[str, Any] = {
            "method": outcome.method,
            "reproduced": not derived and not differences,
            "answer": now.answer,
            "branch": outcome.branch,
            "stop_reason": now.stop_reason,
            "votes": None if outcome.vote is None else outcome.vote.counts(),
            "differences": [d.to_json() for d in differences],
            "revisions_changed": [change.to_json() for change in changed],
        }
        print_json(report)
    elif not differences:
        if now.answer is not None:
            print(" ".join(plain(now.answer).split()))
        else:  # nothing on stdout, as for a run without an answer: say what was reproduced
            steps, reason = plural(len(now.steps), "step"), plain(str(now.stop_reason))
            done = f"{outcome.method} from the recording" if derived else "the recorded run"
            print(f"reproduced {done}: no answer ({reason}) after {steps}", file=sys.stderr)
    else:
        print(f"The re-run differs from {plain(str(recorded.path))}:")
        for difference in differences:
            print(f"{plain(difference.where)}:")
            print(f"  - {plain(difference.recorded)}")
            print(f"  + {plain(difference.now)}")
    if differences:
        first = differences[0].where
        raise RerunDiffersError(f"the re-run differs from the recorded run ({first} first)")


def _revisions_changed(changes: list[RevisionChange]) -> None:
    """Say on stderr which pages the live tools showed at another revision than recorded."""
    from react_cli.display.terminal import plain

    for change in changes:
        revisions = f"revision {change.recorded} → {change.now}"
        print(
            plain(
                f"note: {change.title} ({change.wiki}) changed since the recording ({revisions})"
            ),
            file=sys.stderr,
        )
