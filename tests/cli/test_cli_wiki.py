"""`react-cli wiki ...` and the language options, in-process as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import Runner, actions
from zim_fixtures import zh_archive

from react_cli.cli.run_options import lang_prompt, wiki_flags
from react_cli.core.errors import UsageError
from react_cli.settings.resolve import resolve

REAL_ZIM = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "zim"
    / "wikipedia_en_ray_charles_2015-06.zim"
)
ZIM = f"zim:{REAL_ZIM}"


def test_wiki_search_prints_the_observation(cli: Runner) -> None:
    result = cli(["wiki", "search", "ray c. robinson", "--wiki", ZIM])
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("Ray Charles Robinson (September 23, 1930")
    assert result.stdout.count("\n") == 1 and result.stderr == ""


def test_wiki_search_json_and_env_backend(cli: Runner) -> None:
    result = cli(["wiki", "search", "Ray", "--json"], REACT_CLI_WIKI=ZIM)
    data = json.loads(result.stdout)
    assert data["observation"].startswith("Could not find [Ray]. Similar: ['Ray (film)'")
    assert data["details"]["similar"][0] == "Ray (film)"


def test_wiki_lookup_prints_n_results(cli: Runner) -> None:
    args = ["wiki", "lookup", "Ray Charles", "blind", "-n", "2", "--wiki", ZIM]
    result = cli(args)
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == [
        "(Result 1 / 4) Charles was blind from the age of seven.",
        "(Result 2 / 4) Charles started to lose his sight at the age of four or five, and was "
        "completely blind by the age of seven, apparently as a result of glaucoma.",
    ]


def test_wiki_lookup_without_a_page_exits_1(cli: Runner) -> None:
    result = cli(["wiki", "lookup", "Qwxyz", "born", "--wiki", ZIM])
    assert result.code == 1
    assert result.stdout == ""
    assert result.stderr == "Error: no page to look in: Could not find [Qwxyz]. Similar: [].\n"


def test_wiki_search_on_a_live_host_failure_exits_1(cli: Runner) -> None:
    fake = FakeMediaWiki({}).start()
    url = fake.url
    fake.stop()
    cli.config(retries=0)
    result = cli(["wiki", "search", "Chess", "--wiki", url])
    assert result.code == 1
    assert result.stderr.startswith("Error: Wikipedia request failed: cannot reach 127.0.0.1")


def test_wiki_search_passes_the_variant(cli: Runner) -> None:
    with FakeMediaWiki.from_fixtures() as wiki:
        args = ["wiki", "search", "Chess", "--wiki", wiki.url, "--variant", "zh-tw"]
        result = cli(args)
        assert result.code == 0, result.stderr
        assert {r["params"]["variant"] for r in wiki.requests} == {"zh-tw"}


def test_wiki_commands_log_http_with_debug(cli: Runner) -> None:
    with FakeMediaWiki.from_fixtures() as wiki:
        plain = cli(["wiki", "search", "Chess", "--wiki", wiki.url])
        logged = cli(["wiki", "search", "Chess", "--wiki", wiki.url, "--debug"])
        args = ["wiki", "lookup", "Chess", "chess", "--wiki", wiki.url]
        lookup = cli(args, REACT_CLI_DEBUG="1")
    assert plain.stderr == "" and logged.stdout == plain.stdout
    lines = logged.stderr.splitlines()
    assert lines and lines[0].startswith(f"debug: GET {wiki.url}/w/api.php?action=query")
    assert all(line.startswith("debug: ") for line in lines)
    assert lookup.code == 0 and lookup.stderr.startswith("debug: GET ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["wiki", "search", "x", "--wiki", "zim:missing.zim"], "ZIM file not found"),
        (["wiki", "search", "x", "--lang", "zh", "--wiki", ZIM], "--lang and --wiki contradict"),
        (["wiki", "search", "x", "--lang", "Chinese!"], "is not a Wikipedia language"),
        (["wiki", "search", "x", "--lang", "xx"], "--lang xx is not a Wikipedia language"),
        (["wiki", "search", "x", "--wiki", ZIM, "--variant", "zh_CN"], "--variant must look"),
        (["wiki", "lookup", "x", "y", "-n", "0", "--wiki", ZIM], "-n must be at least 1"),
        (["wiki", "build-zim", "missing.jsonl", "out.zim"], "corpus not found"),
        (["ask", "q", "--wiki", "zim:missing.zim"], "ZIM file not found: '/"),  # made absolute
    ],
)
def test_usage_errors_exit_2(cli: Runner, args: list[str], message: str) -> None:
    result = cli(args, REACT_CLI_MODEL="m", OPENAI_API_KEY="sk-test")
    assert result.code == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0]


def test_build_zim_then_ask_offline(cli: Runner, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    articles = [
        {"title": "Arthur's Magazine", "text": "Arthur's Magazine was a literary periodical."},
        {
            "title": "First for Women",
            "text": "First for Women is a woman's magazine. It began in 1989.",
        },
    ]
    corpus.write_text("".join(json.dumps(a) + "\n" for a in articles), encoding="utf-8")
    out = tmp_path / "mags.zim"
    built = cli(["wiki", "build-zim", str(corpus), str(out)])
    assert built.code == 0, built.stderr
    assert built.stdout == f"{out}: 2 articles; use --wiki zim:{out}\n"
    script = scripted(
        ' Search it.\nAction 1: Search["first for women"]', " 1989.\nAction 2: Finish[1989]"
    )
    with FakeOpenAI(script) as llm:
        args = ["ask", "When did First for Women start?", "--wiki", f"zim:{out}"]
        result = cli(args, OPENAI_BASE_URL=llm.url, REACT_CLI_MODEL="m")
    assert result.code == 0, result.stderr
    assert result.stdout == "1989\n"
    trace = cli.trace()
    assert trace["config"]["wiki"] == f"zim:{out}"
    step = actions(trace)[0]
    assert step["observation"] == "First for Women is a woman's magazine. It began in 1989."
    assert step["details"]["resolved_title"] == "First for Women"


def test_chinese_end_to_end_with_the_chinese_prompt(cli: Runner, tmp_path: Path) -> None:
    pytest.importorskip("opencc")
    archive = zh_archive(tmp_path / "zh.zim")
    script = scripted(" 我需要搜索猫。\nAction 1: Search[猫]", " 找到了。\nAction 2: Finish[家猫]")
    with FakeOpenAI(script) as llm:
        args = ["ask", "猫的学名是什么？", "--prompt", "hotpotqa-zh"]
        args += ["--wiki", f"zim:{archive}", "--variant", "zh-cn"]
        result = cli(args, OPENAI_BASE_URL=llm.url, REACT_CLI_MODEL="m")
    assert result.code == 0, result.stderr
    assert result.stdout == "家猫\n"
    trace = cli.trace()
    assert trace["config"]["variant"] == "zh-cn"
    observation = trace["steps"][0]["actions"][0]["observation"]
    assert observation.startswith("猫（英语：Cat）通常指家猫（学名：Felis catus")
    assert "貓" not in observation
    assert "Observation 1: 猫（英语：Cat）" in llm.requests[1].json["messages"][0]["content"]


def test_lang_shorthand_and_default_variant() -> None:
    assert wiki_flags(None, "zh") == "https://zh.wikipedia.org"
    assert wiki_flags("zim:x.zim", None) == "zim:x.zim"
    with pytest.raises(UsageError, match="contradict"):
        wiki_flags("https://en.wikipedia.org", "zh")
    assert lang_prompt("zh", None) == "hotpotqa-zh"
    assert lang_prompt("zh", "fever") == "fever"
    assert lang_prompt("de", None) is None
    empty = Path("/nonexistent/config.toml")
    zh = resolve({"wiki": "https://zh.wikipedia.org"}, env={}, config_path=empty)
    assert zh.variant == "zh-cn"
    tw = resolve({"wiki": "https://zh.wikipedia.org", "variant": "zh-tw"}, {}, empty)
    assert tw.variant == "zh-tw"
    assert resolve({}, env={}, config_path=empty).variant is None
    assert resolve({}, env={"REACT_CLI_VARIANT": "zh-hk"}, config_path=empty).variant == "zh-hk"


def test_ctrl_c_in_a_wiki_command_says_interrupted(
    cli: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """typer turns a Ctrl-C outside a run into a silent exit 130; the user still gets a line."""
    import react_cli.cli.wiki as wiki_cli

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(wiki_cli, "_wikipedia", interrupted)
    result = cli(["wiki", "search", "x"])
    assert (result.code, result.stdout, result.stderr) == (130, "", "Error: interrupted\n")


def test_chinese_archive_prints_no_libzim_warnings(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """libzim writes "No stemming for language 'zh'" to stderr each time it opens an index
    of a Chinese archive: once on opening, then on every new title suggestion search. It writes
    to file descriptor 2, so this runner captures the descriptors, not only ``sys.stderr``."""
    cli = Runner(home, monkeypatch, capfd)
    archive = zh_archive(tmp_path / "zh.zim")
    for entity in ["貓", "狗", "完全没有"]:  # a hit, then misses that use the title index
        result = cli(["wiki", "search", entity, "--wiki", f"zim:{archive}"])
        assert result.code == 0 and result.stderr == "", result.stderr
    result = cli(["wiki", "lookup", "貓", "貓", "--wiki", f"zim:{archive}"])
    assert result.code == 0 and result.stderr == "", result.stderr
