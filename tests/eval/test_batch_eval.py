"""``eval --batch`` against a scripted Batch API (``support/batch_server.py``): the same rows as
the same eval run live, in waves (each question's next call, CoT-SC's samples each a line);
batches that poll through their states, expire, fail, or fail some lines; a process killed
between waves and resumed with ``--resume`` (never paying twice); budgets per wave; the batch
price; files deleted after reading; no secret in the folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from batch_server import BatchServer
from eval_fakes import HOTPOT, HOTPOT_SCRIPTS, PerQuestion, Q, rows_of, summary_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI
from inproc import FAST_CONFIG, HANG_S, Runner, servers_env, toml_value
from method_fakes import SCRIPTS, MethodsEndpoint
from tool_fakes import ProtocolsEndpoint, tools_script

KEY = "sk-test-batch-secret-0123456789"
PRICES = '[prices]\n"test-model" = { input = 100.0, output = 100.0 }\n'
STEPS = ["--max-steps", "3"]
SAME = ("answer", "em", "f1", "stop_reason", "error", "steps", "tokens", "usage", "calls")


def configure(cli: Runner, **values: object) -> None:
    settings = {**FAST_CONFIG, **values}
    cli.config_text("".join(f"{k} = {toml_value(v)}\n" for k, v in settings.items()) + PRICES)


def live_eval(cli: Runner, wiki: FakeMediaWiki, out: Path, *args: str) -> list[dict[str, Any]]:
    with FakeOpenAI(PerQuestion(HOTPOT_SCRIPTS)) as llm:
        result = cli(
            ["eval", str(HOTPOT), "--out", str(out), *STEPS, *args], **servers_env(llm, wiki)
        )
    assert result.code == 0, result.stderr
    return rows_of(out)


def batch_env(server: BatchServer, wiki: FakeMediaWiki) -> dict[str, str]:
    return {**servers_env(server, wiki), "OPENAI_API_KEY": KEY}


def batch_eval(cli: Runner, server: BatchServer, wiki: FakeMediaWiki, out: Path, *args: str):  # type: ignore[no-untyped-def]
    command = ["eval", str(HOTPOT), "--out", str(out), *STEPS, "--batch", "--batch-poll", "0.01"]
    return cli([*command, *args], **batch_env(server, wiki))


def same(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [tuple(row.get(name) for name in SAME) for row in rows]


def steps_of(out: Path, row: dict[str, Any]) -> list[Any]:
    trace = json.loads((out / row["trace"]).read_text(encoding="utf-8"))
    return [(s["thought"], [a["observation"] for a in s["actions"]]) for s in trace["steps"]]


def test_a_batch_eval_gives_the_live_eval_s_rows_in_waves(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    configure(cli)
    live = live_eval(cli, wiki, tmp_path / "live")
    out = tmp_path / "batch"
    with BatchServer(PerQuestion(HOTPOT_SCRIPTS), polls=2) as server:
        result = batch_eval(cli, server, wiki, out)
    assert result.code == 0, result.stderr
    rows = rows_of(out)
    assert same(rows) == same(live)
    assert [steps_of(out, r) for r in rows] == [steps_of(tmp_path / "live", r) for r in live]
    longest = max(row["steps"] for row in live)
    assert server.created == longest  # one wave a step of the longest run
    assert server.lines == sum(row["steps"] for row in live)  # every call once
    assert [r["cost"] for r in rows] == [pytest.approx(r["cost"] / 2) for r in live]
    assert summary_of(out)["total_cost"] == pytest.approx(
        summary_of(tmp_path / "live")["total_cost"] / 2
    )
    assert "batch wave 1: in_progress" in result.stderr and "questions finished" in result.stderr
    assert server.files == {}  # every file deleted once read
    assert server.auth == {f"Bearer {KEY}"}
    for path in out.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(encoding="utf-8", errors="replace")
    shown = cli(["eval", "show", str(out)])
    assert shown.code == 0 and "EM" in shown.stdout
    compared = cli(["eval", "compare", str(tmp_path / "live"), str(out), "--json"])
    assert compared.code == 0 and json.loads(compared.stdout)["paired"] == len(Q)
    exported = cli(["eval", "export", str(out), "-o", str(tmp_path / "inspect.json")])
    assert exported.code == 0, exported.stderr


def test_keep_batch_files_keeps_them(cli: Runner, wiki: FakeMediaWiki, tmp_path: Path) -> None:
    configure(cli)
    with BatchServer(PerQuestion(HOTPOT_SCRIPTS), polls=0) as server:
        result = batch_eval(cli, server, wiki, tmp_path / "kept", "--keep-batch-files")
    assert result.code == 0, result.stderr
    assert server.deleted == [] and len(server.files) >= 2 * server.created


def test_methods_and_samples_in_batches_give_the_live_rows(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    configure(cli)
    args = ["--methods", "all", "--samples", "5"]
    with FakeOpenAI(MethodsEndpoint(SCRIPTS)) as llm:
        command = ["eval", str(HOTPOT), "--out", str(tmp_path / "live"), *STEPS, *args]
        assert cli(command, **servers_env(llm, wiki)).code == 0
    live = rows_of(tmp_path / "live")
    endpoint = MethodsEndpoint(SCRIPTS)
    with BatchServer(endpoint, polls=0) as server:
        result = batch_eval(cli, server, wiki, tmp_path / "batch", *args)
    assert result.code == 0, result.stderr
    rows = rows_of(tmp_path / "batch")
    for one, other in zip(rows, live, strict=True):
        for method, found in one["methods"].items():
            expected = other["methods"][method]
            assert (found["answer"], found["em"], found["steps"]) == (
                expected["answer"],
                expected["em"],
                expected["steps"],
            ), method
    assert endpoint.kinds["sample"] >= 5 * len(Q)  # each sample a line


def test_expired_batches_and_failed_lines_are_sent_again(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    configure(cli)
    live = live_eval(cli, wiki, tmp_path / "live")
    with BatchServer(PerQuestion(HOTPOT_SCRIPTS), polls=1) as server:
        server.faults = ["expire", "fail_batch"]
        server.expire_keep = 2
        result = batch_eval(cli, server, wiki, tmp_path / "batch")
    assert result.code == 0, result.stderr
    assert same(rows_of(tmp_path / "batch")) == same(live)
    assert server.created == max(r["steps"] for r in live) + 2  # two waves sent again
    assert "batch wave 1: expired" in result.stderr and "batch wave 2: failed" in result.stderr


def test_a_line_that_keeps_failing_fails_its_question_with_the_reason(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    configure(cli)
    with BatchServer(PerQuestion(HOTPOT_SCRIPTS), polls=0) as server:
        server.fail_line = lambda custom_id: custom_id.startswith("q00001-")
        result = batch_eval(cli, server, wiki, tmp_path / "batch", "--batch-retries", "1")
    assert result.code == 1
    rows = rows_of(tmp_path / "batch")
    failed = [row for row in rows if row["stop_reason"] == "llm_error"]
    assert [row["index"] for row in failed] == [1]
    assert failed[0]["error"] == (
        "the Batch API gave no answer in 2 waves: HTTP 500: The server had an error"
    )
    assert len(rows) == len(Q)


def test_no_wave_starts_that_the_budget_cannot_pay_and_resume_goes_on(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    configure(cli)
    live = live_eval(cli, wiki, tmp_path / "live")
    out = tmp_path / "batch"
    with BatchServer(PerQuestion(HOTPOT_SCRIPTS), polls=0) as server:
        result = batch_eval(
            cli, server, wiki, out, "--max-total-cost", "0.7"
        )  # wave 2 does not fit
        assert result.code == 1, result.stderr
        assert "Error: stopped: the eval spent its --max-total-cost;" in result.stderr
        assert summary_of(out)["status"] == "budget"
        first = server.created
        assert 1 <= first < max(r["steps"] for r in live)
        resumed = cli(
            ["eval", "--resume", str(out), "--batch-poll", "0.01"], **batch_env(server, wiki)
        )
    assert resumed.code == 0, resumed.stderr
    assert same(rows_of(out)) == same(live)
    assert server.lines == sum(row["steps"] for row in live)  # nothing asked twice


def test_a_killed_batch_eval_resumed_polls_its_batches_and_never_pays_twice(
    wiki: FakeMediaWiki, tmp_path: Path, cli: Runner
) -> None:
    configure(cli)
    live = live_eval(cli, wiki, tmp_path / "live")
    out = tmp_path / "batch"
    with BatchServer(PerQuestion(HOTPOT_SCRIPTS), polls=0) as server:
        server.hold_from = 2  # wave 2 stays in progress: killed while it is polled
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REACT_CLI_"))}
        env.update(batch_env(server, wiki), REACT_CLI_HOME=str(cli.home))
        command = [sys.executable, "-m", "react_cli", "eval", str(HOTPOT), "--out", str(out)]
        command += [*STEPS, "--batch", "--batch-poll", "0.01"]
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not (
                server.created == 2 and list(server.batches.values())[-1].status == "in_progress"
            ):
                time.sleep(0.01)
            assert server.created == 2
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(10)
        list(server.batches.values())[-1].polls_left = 0
        server.hold_from = None
        resumed = cli(
            ["eval", "--resume", str(out), "--batch-poll", "0.01"], **batch_env(server, wiki)
        )
    assert resumed.code == 0, resumed.stderr
    assert same(rows_of(out)) == same(live)
    assert server.lines == sum(row["steps"] for row in live)  # every call answered once
    assert server.created == max(r["steps"] for r in live)  # wave 2 polled again, not re-sent


def test_an_endpoint_without_the_batch_api_is_one_error(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    configure(cli)
    with FakeOpenAI(PerQuestion(HOTPOT_SCRIPTS)) as llm:  # chat completions, no /v1/files
        command = ["eval", str(HOTPOT), "--out", str(tmp_path / "b"), *STEPS, "--batch"]
        result = cli(command, **servers_env(llm, wiki), OPENAI_API_KEY=KEY)
    assert result.code == 2, result.stderr
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("Error: ") and error.endswith("does the endpoint have the Batch API?")
    assert "/v1/files answered HTTP 404" in error and "Traceback" not in result.stderr
    assert cli.elapsed_s < HANG_S  # no question left waiting for a wave (5 s each)
    assert KEY not in result.stderr
    assert rows_of(tmp_path / "b") == []


def test_the_tools_protocol_in_batches_gives_the_live_rows(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    configure(cli)
    tools = {question: tools_script(script) for question, script in SCRIPTS.items()}
    args = ["--protocol", "tools"]
    with FakeOpenAI(ProtocolsEndpoint(MethodsEndpoint(SCRIPTS), tools)) as llm:
        command = ["eval", str(HOTPOT), "--out", str(tmp_path / "live"), *STEPS, *args]
        assert cli(command, **servers_env(llm, wiki)).code == 0
    with BatchServer(ProtocolsEndpoint(MethodsEndpoint(SCRIPTS), tools), polls=0) as server:
        result = batch_eval(cli, server, wiki, tmp_path / "batch", *args)
    assert result.code == 0, result.stderr
    live, rows = rows_of(tmp_path / "live"), rows_of(tmp_path / "batch")
    assert same(rows) == same(live)
    trace = json.loads((tmp_path / "batch" / rows[1]["trace"]).read_text(encoding="utf-8"))
    assert trace["steps"][0]["actions"][0]["call"]["name"] == "Search"


def test_lines_that_answer_nothing_are_skipped(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    configure(cli)
    live = live_eval(cli, wiki, tmp_path / "live")
    with BatchServer(PerQuestion(HOTPOT_SCRIPTS), polls=0) as server:
        server.junk = True
        server.empty = {"q00005-step-1-s0"}  # the longest run answered without choices once
        result = batch_eval(cli, server, wiki, tmp_path / "batch")
    assert result.code == 0, result.stderr
    assert same(rows_of(tmp_path / "batch")) == same(live)
    assert server.created == max(r["steps"] for r in live) + 1


def test_what_a_batch_answer_echoes_of_the_key_is_masked(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    configure(cli)
    echoing = PerQuestion({}, default=[f" My key is {KEY}.\nAction 1: Finish[{KEY}]"])
    out = tmp_path / "echo"
    with BatchServer(echoing, polls=0) as server:
        result = batch_eval(cli, server, wiki, out)
    assert result.code == 0, result.stderr
    assert KEY not in result.stdout + result.stderr
    assert {row["answer"] for row in rows_of(out)} == {"***"}
    for path in out.rglob("*"):
        if path.is_file():  # the kept answers too
            assert KEY not in path.read_text(encoding="utf-8", errors="replace"), path


@pytest.mark.parametrize(
    ("more", "said"),
    [
        (["-m", "a", "-m", "b"], "--batch runs one eval, not a matrix"),
        (["--protocol", "text,tools"], "--batch runs one eval, not a matrix"),
        (
            ["--base-url", "http://127.0.0.1:9/v1", "--base-url", "http://127.0.0.1:8/v1"],
            "one --base-url",
        ),
    ],
)
def test_a_batch_eval_is_one_eval_at_one_endpoint(
    cli: Runner, tmp_path: Path, more: list[str], said: str
) -> None:
    """A matrix runs its cells live and replicas share questions live: neither meets the
    waves, so --batch says so before anything is sent."""
    command = ["eval", str(HOTPOT), "--out", str(tmp_path / "b"), "--batch", *more]
    result = cli(command, OPENAI_API_KEY=KEY, REACT_CLI_MODEL="m")
    assert result.code == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("Error: ") and said in line


def test_shards_in_batches_merge_into_the_live_eval(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    """Each machine's shard may run in batches: merged, they are the live eval, row for row
    (and every row keeps the reason it failed)."""
    configure(cli)
    live = live_eval(cli, wiki, tmp_path / "live")
    parts = [tmp_path / f"part-{i}" for i in (1, 2)]
    for i, part in enumerate(parts, 1):
        with BatchServer(PerQuestion(HOTPOT_SCRIPTS), polls=1) as server:
            result = batch_eval(cli, server, wiki, part, "--shard", f"{i}/2")
        assert result.code == 0, result.stderr
    assert sum(len(rows_of(part)) for part in parts) == len(live)
    merged = cli(["eval", "merge", *map(str, parts), "--out", str(tmp_path / "all")])
    assert merged.code == 0, merged.stderr
    rows = sorted(rows_of(tmp_path / "all"), key=lambda row: row["index"])
    assert same(rows) == same(live)
    assert [r["failure"]["mode"] for r in rows] == [r["failure"]["mode"] for r in live]
