"""``eval export --format inspect``: the test evals read back with Inspect AI's own reader, and
shown by Inspect's own viewer in a real browser.

``inspect_ai`` (the ``test`` extra only: react-cli never imports it) takes about two seconds to
import, so it is imported once for the module; each export is a millisecond run of the real CLI
in-process. The viewer is the server app ``inspect view start`` serves, run in a thread of this
process (a process of its own would import Inspect again: two more seconds of CPU), on a
folder holding the logs of a test eval and of the hostile eval; Debian's ``chromium`` driven by
Playwright opens it. The viewer is served offline (nothing but the server is fetched), lists
the logs by their names, and shows a trajectory with hostile text as plain text: no markup
rendered, no script run, no image or link fetched. The browser test is skipped when chromium
or Playwright is missing, unless ``REACT_CLI_REQUIRE_BROWSER=1`` (set by ``.ci/run``).
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from eval_fakes import HOTPOT, PerQuestion, Q, rows_of, summary_of
from fake_openai import Reply
from inproc import Runner, one_error_line
from share_data import ESCAPES, hostile_trace, write_json
from tool_fakes import tool_call

from react_cli.infra.untrusted import parse_json
from react_cli.share.inspect_log import export_inspect

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytest_plugins = ["share_evals", "browsers"]  # browsers: the ``browser`` fixture

Reader = Callable[..., Any]
LISTED = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\+00-00_[^_]+_[0-9a-f]{22}\.json$")


@pytest.fixture(scope="module")
def read_eval_log() -> Reader:
    """Inspect AI's reader, imported once (about two seconds of CPU)."""
    from inspect_ai.log import read_eval_log

    return read_eval_log


def export(cli: Runner, folder: Path, output: Path, *args: str) -> list[Path]:
    result = cli(["eval", "export", str(folder), "-o", str(output), *args])
    assert result.code == 0, result.stderr
    return [Path(line) for line in result.stdout.splitlines()]


def test_an_eval_reads_back_with_inspects_reader_sample_by_sample(
    cli: Runner, eval_a: Path, tmp_path: Path, read_eval_log: Reader
) -> None:
    (path,) = export(cli, eval_a, tmp_path / "a.json")
    log = read_eval_log(str(path))
    rows, summary = rows_of(eval_a), summary_of(eval_a)
    assert (log.status, log.eval.task, log.eval.model) == (
        "success",
        "hotpotqa_dev_first6-react-text",
        "openai/m",
    )
    assert len(log.samples) == summary["n"] == 6 and log.eval.dataset.samples == 6
    assert [s.input for s in log.samples] == [row["question"] for row in rows]
    assert [s.target for s in log.samples] == [row["gold"] for row in rows]
    for sample, row in zip(log.samples, rows, strict=True):
        assert {k: v.value for k, v in sample.scores.items()} == {"em": row["em"], "f1": row["f1"]}
        assert sample.output.completion == (row["answer"] or "")
        assert sample.output.usage.input_tokens == row["usage"]["prompt_tokens"]
        assert sample.output.usage.total_tokens == row["tokens"]
        assert sample.metadata["stop_reason"] == row["stop_reason"]
        assert sample.total_time == row["latency_s"]
    assert [(s.name, s.metrics["mean"].value) for s in log.results.scores] == [
        ("em", summary["em"]),
        ("f1", summary["f1"]),
    ]
    assert log.results.metadata["react_cli"]["avg_steps"] == summary["avg_steps"]
    # question 1: Search, its observation, then Finish; the call and its answer share an id
    searched = log.samples[1]
    roles = [m.role for m in searched.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert searched.messages[0].text.startswith("Solve a question answering task")
    call = searched.messages[2].tool_calls[0]
    assert (call.function, call.arguments) == ("Search", {"entity": "Kiss and Tell"})
    assert searched.messages[3].tool_call_id == call.id
    assert searched.messages[3].text.startswith("Could not find [Kiss and Tell]")
    finish = searched.messages[4].tool_calls[0]
    assert (finish.function, finish.arguments) == (
        "Finish",
        {"answer": "Chief of Protocol of the United States"},
    )
    unfinished = log.samples[5]  # three Searches, then the step limit
    assert [m.role for m in unfinished.messages].count("tool") == 3
    assert unfinished.metadata["stop_reason"] == "max_steps"
    assert read_eval_log(str(path), header_only=True).samples is None
    again = tmp_path / "again.json"
    export(cli, eval_a, again)
    assert again.read_bytes() == path.read_bytes()  # the same export twice, the same ids


def test_an_eval_of_several_methods_gives_one_log_each_named_for_the_viewer(
    cli: Runner, eval_methods: Path, tmp_path: Path, read_eval_log: Reader
) -> None:
    written = export(cli, eval_methods, tmp_path / "logs")
    assert [path.parent for path in written] == [tmp_path / "logs"] * 2
    assert all(LISTED.match(path.name) for path in written), written
    react, voted = (read_eval_log(str(path)) for path in written)
    summary, rows = summary_of(eval_methods), rows_of(eval_methods)
    assert react.eval.run_id == voted.eval.run_id and react.eval.task_id != voted.eval.task_id
    for log, task in ((react, "react-text"), (voted, "cot-sc")):  # CoT-SC runs no loop
        method = task.removesuffix("-text")
        assert log.eval.task == f"hotpotqa_dev_first6-{task}"
        assert [s.scores["em"].value for s in log.samples] == [
            row["methods"][method]["em"] for row in rows
        ]
        assert log.results.scores[0].metrics["mean"].value == summary["methods"][method]["em"]
    sampled = voted.samples[0]  # 21 samples of one request: each an assistant message
    assert [m.role for m in sampled.messages] == ["system", "user"] + ["assistant"] * 21
    assert sampled.metadata["calls"] == 1 and sampled.metadata["branch"] == "cot-sc"


def test_a_call_refused_for_want_of_consent_is_an_approval_error_of_its_tool_message(
    cli: Runner, tmp_path: Path, read_eval_log: Reader
) -> None:
    from share_evals import run_eval  # the plugin pytest loaded (imported here: not rewritten)

    tools = tmp_path / "notes_tools.py"
    tools.write_text(
        "from react_cli import tool\n\n@tool(needs_consent=True)\n"
        "def remember(text: str) -> str:\n    'Write the text down.'\n    return 'kept'\n",
        encoding="utf-8",
    )
    scripts: dict[str, list[str | Reply]] = {
        Q[0]: [" Keep it.\nAction 1: Remember[yes]", " Done.\nAction 2: Finish[yes]"],
        Q[1]: [" Done.\nAction 1: Finish[no]"],
    }
    folder = run_eval(
        tmp_path / "refused",
        PerQuestion(scripts),
        HOTPOT,
        "--limit",
        "2",
        "--tools-from",
        str(tools),
    )
    (path,) = export(cli, folder, tmp_path / "refused.json")
    refused, answered = read_eval_log(str(path)).samples
    (message,) = (m for m in refused.messages if m.role == "tool")
    assert message.function == "Remember" and message.content.startswith("The user did not allow")
    assert (message.error.type, message.error.message) == (
        "approval",
        "refused: no terminal to ask",
    )
    assert refused.metadata["refused_calls"] == 1 and "refused_calls" not in answered.metadata


def test_a_fever_eval_is_scored_by_accuracy(
    cli: Runner, eval_fever: Path, tmp_path: Path, read_eval_log: Reader
) -> None:
    (path,) = export(cli, eval_fever, tmp_path / "fever.json")
    log = read_eval_log(str(path))
    rows = rows_of(eval_fever)
    assert [list(s.scores) for s in log.samples] == [["accuracy"]] * 3
    assert [s.id for s in log.samples] == [row["id"] for row in rows] == [91198, 194462, 137334]
    assert [s.scores["accuracy"].value for s in log.samples] == [row["em"] for row in rows]
    assert [s.scores["accuracy"].answer for s in log.samples] == [row["label"] for row in rows]
    assert log.results.scores[0].metrics["mean"].value == summary_of(eval_fever)["accuracy"]


def test_a_hostile_folder_gives_a_strict_plain_log_inspect_reads(
    cli: Runner, eval_hostile: Path, tmp_path: Path, read_eval_log: Reader
) -> None:
    folder = tmp_path / "hostile"
    shutil.copytree(eval_hostile, folder)
    first = json.loads((folder / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    write_json(folder / first["trace"], hostile_trace())  # hostile in every field of a trace
    (path,) = export(cli, folder, tmp_path / "hostile.json")
    text = path.read_text(encoding="utf-8")
    parse_json(text)  # strict JSON: no NaN, no lone surrogate
    assert not any(escape in text for escape in ESCAPES)
    assert json.loads(text)["eval"]["viewer"] == {"trust_content": False}
    log = read_eval_log(str(path))
    samples = {s.metadata["index"]: s for s in log.samples}
    assert sorted(samples) == [0, 1, 20, 21, 22, 23]  # the valid rows, each question's last
    assert log.eval.metadata["react_cli"]["skipped_lines"] == 5
    said = samples[0].messages  # a trace of hostile text only, its call as recorded
    assert [m.role for m in said] == ["system", "user", "assistant", "tool", *["assistant"] * 3]
    assert "<script>alert(1)</script>" in said[1].text and "\x1b" not in said[1].text
    call = said[2].tool_calls[0]
    assert call.function.startswith("<script>") and call.function.endswith("`code`")
    assert said[3].tool_call_id == call.id
    (tool,) = (e for e in samples[0].events if e.event == "tool")  # the transcript, as hostile
    assert (tool.function, tool.id, tool.result) == (call.function, call.id, said[3].text)
    assert [e.event for e in samples[20].events].count("model") == 0  # no trace: no call
    assert samples[20].error.message == "HTTP 401 from the endpoint"  # a failed question
    assert samples[20].metadata["trajectory"] == "no trace available for this question"
    assert samples[21].metadata["trajectory"] == "no trace available for this question"
    assert samples[22].metadata["trajectory"] == "traces/broken.json: truncated JSON"
    assert samples[23].output.completion == "bad \ufffd text"
    assert str(tmp_path) not in text  # no local path


def test_usage_errors_are_one_line_each(cli: Runner, eval_methods: Path, tmp_path: Path) -> None:
    taken = tmp_path / "taken.json"
    taken.write_text("", encoding="utf-8")
    cases = {
        ("eval", "export", str(tmp_path), "-o", "x.json"): "not an eval folder",
        ("eval", "export", str(eval_methods), "-o", str(taken)): "-o names a folder",
        ("eval", "export", str(eval_methods), "-o", "x", "--format", "csv"): "--format must be",
    }
    for args, words in cases.items():
        result = cli(list(args))
        assert result.code == 2 and words in one_error_line(result.stderr), result.stderr
    assert taken.read_text(encoding="utf-8") == ""


def test_a_file_name_the_viewer_would_not_list_gets_a_hint(
    cli: Runner, eval_a: Path, tmp_path: Path
) -> None:
    result = cli(["eval", "export", str(eval_a), "-o", str(tmp_path / "a.json")])
    assert result.code == 0 and result.stderr.startswith("hint: 'inspect view' lists")
    (tmp_path / "logs").mkdir()
    result = cli(["eval", "export", str(eval_a), "-o", str(tmp_path / "logs")])
    (written,) = (Path(line) for line in result.stdout.splitlines())
    assert result.code == 0 and result.stderr == "" and LISTED.match(written.name)


def test_a_reply_of_several_native_calls_is_one_message_inspect_reads(
    cli: Runner, eval_a: Path, tmp_path: Path, read_eval_log: Reader
) -> None:
    """A step of two native calls: the assistant's one message with both, each answered by
    its tool message, as Inspect's reader reads them; a step without a valid call, the
    model's text and what it was told."""
    folder = tmp_path / "tools"
    shutil.copytree(eval_a, folder)
    first = json.loads((folder / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "now" / "tools.json"
    shutil.copyfile(fixture, folder / first["trace"])
    (path,) = export(cli, folder, tmp_path / "tools.json")
    # rows are written as questions finish, samples in dataset order: find the one replaced
    samples = read_eval_log(str(path)).samples
    (sample,) = [s for s in samples if s.input == first["question"]]
    said = sample.messages
    assert [m.role for m in said] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert [(c.id, c.function) for c in said[2].tool_calls] == [("c1", "Search"), ("c2", "Lookup")]
    assert [m.tool_call_id for m in said[3:5]] == ["c1", "c2"]
    assert said[6].text.startswith("Invalid call: search needs") and said[5].text == "Oops."


# --- the transcript's events, the task's name and arguments ----------------------------------


def test_a_sample_s_transcript_holds_its_model_tool_and_score_events(
    cli: Runner, eval_a: Path, tmp_path: Path, read_eval_log: Reader
) -> None:
    """The events Inspect's Transcript tab shows, as Inspect's reader reads them back: the
    model calls with their input (the messages before each reply, resolved from the pool)
    and output, the tool calls with their arguments and results, the scores."""
    (path,) = export(cli, eval_a, tmp_path / "a.json")
    searched = read_eval_log(str(path)).samples[1]  # Search, its observation, then Finish
    assert [e.event for e in searched.events] == [
        *("span_begin", "sample_init", "span_end"),  # init
        *("span_begin", "span_begin", "model", "tool", "model", "span_end", "span_end"),
        *("span_begin", "span_begin", "score", "span_end", "span_begin", "score", "span_end"),
        "span_end",
    ]
    (init,) = (e for e in searched.events if e.event == "sample_init")
    assert (init.sample.input, init.sample.target) == (searched.input, searched.target)
    solver = next(e for e in searched.events if e.event == "span_begin" and e.type == "solver")
    assert solver.name == "react"
    models = [e for e in searched.events if e.event == "model"]
    assert all(e.span_id == solver.id for e in models)
    messages = searched.messages
    assert (
        [[m.text for m in e.input] for e in models]
        == [
            [m.text for m in messages[:2]],  # the prompt and the question
            [m.text for m in messages[:4]],  # and the Search with its observation
        ]
    )
    assert [e.output.message.tool_calls[0].function for e in models] == ["Search", "Finish"]
    assert [e.output.choices[0].stop_reason for e in models] == ["tool_calls", "tool_calls"]
    trace = json.loads((eval_a / rows_of(eval_a)[1]["trace"]).read_text(encoding="utf-8"))
    assert [e.output.usage.input_tokens for e in models] == [
        step["usage"]["prompt_tokens"] for step in trace["steps"]
    ]
    (tool,) = (e for e in searched.events if e.event == "tool")
    assert (tool.function, tool.arguments) == ("Search", {"entity": "Kiss and Tell"})
    assert tool.result == messages[3].text and tool.id == messages[3].tool_call_id
    scores = [e for e in searched.events if e.event == "score"]
    assert [(e.scorer, e.score.value) for e in scores] == [
        (name, score.value) for name, score in searched.scores.items()
    ]
    times = [e.timestamp for e in searched.events]
    assert times == sorted(times)


TOOLS_REPLIES = [
    Reply(text="I search.", tool_calls=[tool_call("search", entity="Kiss and Tell")]),
    Reply(text="Done.", tool_calls=[tool_call("finish", answer="Shirley Temple")]),
]


def test_a_tools_eval_s_task_is_named_and_its_arguments_say_what_ran(
    cli: Runner, eval_a: Path, tmp_path: Path, read_eval_log: Reader
) -> None:
    """A text eval and a tools eval of one dataset are two tasks; each log's arguments name
    its protocol, the prompt its loop was sent (the tools protocol's own) and the tools."""
    from share_evals import run_eval  # the plugin pytest loaded (imported here: not rewritten)

    folder = run_eval(
        tmp_path / "tools", TOOLS_REPLIES, HOTPOT, "--limit", "1", "--protocol", "tools"
    )
    (tools_log,) = (read_eval_log(str(p)) for p in export(cli, folder, tmp_path / "t.json"))
    (text_log,) = (read_eval_log(str(p)) for p in export(cli, eval_a, tmp_path / "a.json"))
    assert (tools_log.eval.task, text_log.eval.task) == (
        "hotpotqa_dev_first6-react-tools",
        "hotpotqa_dev_first6-react-text",
    )
    ran = tools_log.eval.task_args
    assert (ran["method"], ran["protocol"], ran["prompt"]) == ("react", "tools", "hotpotqa-tools")
    assert ran["tools"] == ["Search", "Lookup", "Finish"] and ran["wiki_tools"] is True
    assert tools_log.eval.metadata["react_cli"]["prompt"]["name"] == "hotpotqa-tools"
    said = text_log.eval.task_args
    assert (said["protocol"], said["prompt"]) == ("text", "hotpotqa")
    (sample,) = tools_log.samples
    (tool,) = (e for e in sample.events if e.event == "tool")
    assert (tool.function, tool.arguments) == ("Search", {"entity": "Kiss and Tell"})


# --- the viewer (last in the file: the browser stays open for test_share_browser.py's tests) ---


@pytest.fixture(scope="module")
def viewer(
    read_eval_log: Reader,
    tmp_path_factory: pytest.TempPathFactory,
    eval_a: Path,
    eval_hostile: Path,
) -> Iterator[str]:
    """Inspect's viewer on a folder of two logs, as ``inspect view start`` serves it."""
    import uvicorn
    from inspect_ai._util.asyncfiles import AsyncFilesystem
    from inspect_ai._view.fastapi_server import AsyncFilesystemMiddleware, standalone_view_app
    from inspect_ai._view.network import resolve_viewer_network_policy

    logs = tmp_path_factory.mktemp("inspect-logs")
    export_inspect(eval_a, logs)
    export_inspect(eval_hostile, logs)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    policy = resolve_viewer_network_policy(bind_host="127.0.0.1", port=port)
    app = standalone_view_app(log_dir=str(logs), network_policy=policy)
    config = uvicorn.Config(
        AsyncFilesystemMiddleware(app, fs=AsyncFilesystem()),
        host="127.0.0.1",
        port=port,
        log_config=None,
        log_level="warning",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True, name="inspect-view")
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "inspect view did not start"
        time.sleep(0.01)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def listed(viewer: str) -> dict[str, str]:
    """The logs the viewer lists: task by file name."""
    with urllib.request.urlopen(f"{viewer}/api/log-files", timeout=5) as answer:
        files = json.load(answer)["files"]
    return {Path(urllib.parse.urlsplit(f["name"]).path).name: f["task"] for f in files}


def test_the_viewer_lists_each_log_by_its_name(viewer: str) -> None:
    names = listed(viewer)
    assert sorted(names.values()) == ["hostile-react-text", "hotpotqa-dev-first6-react-text"]
    assert all(LISTED.match(name) for name in names)


class Visit:
    """A page of the viewer that records every request elsewhere (aborted), dialog, page
    error and console error but the viewer's own probes for files a log may lack (404)."""

    def __init__(self, browser: Browser, base: str) -> None:
        self.base = base
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.context.set_default_timeout(20_000)  # the viewer parses logs in a web worker
        self.problems: list[str] = []
        self.context.route("**/*", self._route)
        self.page: Page = self.context.new_page()
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        self.page.on("console", self._console)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith((self.base + "/", "data:", "blob:")):
            route.continue_()
        else:
            self.problems.append(f"fetched {url}")
            route.abort()

    def _dialog(self, dialog: Any) -> None:
        self.problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def _console(self, message: Any) -> None:
        if message.type == "error" and "404" not in message.text:
            self.problems.append(f"console error: {message.text}")


@pytest.fixture(scope="module")
def visits() -> Iterator[list[Visit]]:
    """The viewer's pages opened in this module, closed with it."""
    opened: list[Visit] = []
    yield opened
    for visit in opened:
        visit.context.close()


@pytest.fixture
def visit(browser: Browser, viewer: str, visits: list[Visit]) -> Visit:
    """The viewer's page, opened once for the browser tests in turn, each going to its own
    address in it: the app loads and compiles once (about a second of Chromium's CPU a load).
    Each test starts with no problem recorded."""
    if not visits or visits[-1].context.browser is not browser:
        visits.append(Visit(browser, viewer))
    visits[-1].problems.clear()
    return visits[-1]


def test_the_viewer_shows_a_trajectory_hostile_text_as_plain_text(
    visit: Visit, viewer: str
) -> None:
    log = next(name for name, task in listed(viewer).items() if task == "hostile-react-text")
    name = urllib.parse.quote(log, safe="")
    page = visit.page  # the question whose Search reads the evil page, three times
    page.goto(f"{viewer}/#/logs/{name}/samples/sample/1/1/messages")
    question = page.locator("[data-message-id='msg-1']")  # the user's message: the question
    question.locator("[class*='untrustedText']").wait_for()  # the viewer's plain-text block
    assert "**bold** _em_ `code` [link](javascript:alert(3))" in question.inner_text()
    page.get_by_text('entity: "Evil page"').first.wait_for()  # the Search call, rendered
    # a log trusting its content renders each message as .markdown-content (<strong>, links)
    rendered = "strong, .markdown-content, img[src='x'], a[href*='evil.example'], a[href^='java']"
    assert page.locator("[data-message-id]").locator(rendered).count() == 0
    assert visit.problems == []


def test_the_viewer_s_transcript_tab_shows_the_run(visit: Visit, viewer: str) -> None:
    """The Transcript tab (the viewer's default) shows the events, not "Transcript events
    were removed": the method's solver, its model calls, the Search with its argument and
    observation, the scores."""
    log = next(name for name, task in listed(viewer).items() if task.startswith("hotpotqa"))
    name = urllib.parse.quote(log, safe="")
    page = visit.page  # question 1: a Search, then Finish
    page.goto(f"{viewer}/#/logs/{name}/samples/sample/1/1/transcript")
    page.get_by_text("SOLVER: REACT").first.wait_for()
    page.get_by_text("TOOL: SEARCH").first.wait_for()
    text = page.inner_text("body")
    assert text.count("MODEL CALL: OPENAI/M") == 2 and 'entity: "Kiss and Tell"' in text
    assert "Could not find [Kiss and Tell]" in text and "were removed" not in text
    assert visit.problems == []
