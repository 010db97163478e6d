"""``react-cli distill``: a prompt (or fine-tuning records) made of your own best runs."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from react_cli.cli.app import app, print_note
from react_cli.cli.help import Panel, examples
from react_cli.cli.options import DebugOpt
from react_cli.cli.run_options import NO_RUN_OPTIONS, RunOptions, with_options
from react_cli.core.errors import UsageError

if TYPE_CHECKING:
    from react_cli.core.records import ProtocolName
    from react_cli.distill.finetune import RecordFormat
    from react_cli.distill.select import Candidate, Pool, Rules

DEFAULT_EXAMPLES = 6
MAX_EXAMPLES = 50
MAX_CANDIDATES = 20
_SLICE = re.compile(r"^(\d*):(\d*)$")


@app.command(
    "distill",
    short_help="Write a prompt (or fine-tuning records) made of your own best runs.",
    epilog=examples(
        "react-cli distill runs/train --out my-prompt.txt",
        "react-cli eval dev.json --prompt my-prompt.txt -m gpt-4o-mini",
        "# four candidate sets, each scored on rows 0 to 20 of dev.json, the best kept",
        "react-cli distill runs/train --candidates 4 --dev dev.json@0:20 \\",
        "    -m gpt-4o-mini --out best.txt",
        "react-cli distill runs/train --format openai-chat --split 0.9 --out ft.jsonl",
    ),
)
@with_options(RunOptions)
def distill_command(
    folders: Annotated[
        list[Path],
        typer.Argument(
            metavar="EVAL_DIR...",
            help="Eval folders whose runs are the exemplars (a matrix: its cells; DIR@N: one).",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            metavar="FILE",
            help="The prompt file (use it with --prompt FILE), or the records' .jsonl.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ],
    record_format: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="[prompt|openai-chat|sharegpt]",
            help="A prompt file, or fine-tuning records in OpenAI's chat or ShareGPT's "
            "format [prompt].",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = "prompt",
    count: Annotated[
        int | None,
        typer.Option(
            "--examples",
            metavar="K",
            help=f"Exemplars, chosen for variety [{DEFAULT_EXAMPLES}; records: every run kept].",
            rich_help_panel=Panel.METHOD,
        ),
    ] = None,
    min_sentence_recall: Annotated[
        float,
        typer.Option(
            metavar="X",
            help="Keep only runs shown at least this share of the gold sentences (page "
            "recall must be 1) [0].",
            rich_help_panel=Panel.METHOD,
        ),
    ] = 0.0,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Say on stderr why each run was kept or left.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = False,
    candidates: Annotated[
        int,
        typer.Option(
            metavar="N",
            help="Build N candidate sets, score each on --dev, keep the best by EM [1].",
            rich_help_panel=Panel.METHOD,
        ),
    ] = 1,
    dev: Annotated[
        str | None,
        typer.Option(
            metavar="DATASET[@START:END]",
            help="The dataset (a file or a name; rows START to END) candidates are scored on.",
            rich_help_panel=Panel.DATASET,
        ),
    ] = None,
    split_share: Annotated[
        float | None,
        typer.Option(
            "--split",
            metavar="SHARE",
            help="Records: write this share to FILE-train.jsonl, the rest to "
            "FILE-validation.jsonl.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = None,
    options: RunOptions = NO_RUN_OPTIONS,
    debug: DebugOpt = False,
) -> None:
    """Write a prompt file whose exemplars are your own runs: right (EM 1), every gold page
    found, finished by Finish with no parse error, invalid or repeated action or tool error;
    the shortest run of each question; K of them chosen for variety. Its front matter records
    the questions used (eval refuses a dataset holding them) and where each came from."""
    from react_cli.distill.finetune import FORMATS, RecordFormat
    from react_cli.distill.select import Rules, choose, judge

    if record_format not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not {record_format!r}")
    form = RecordFormat(record_format)
    _check(form, count, min_sentence_recall, candidates, dev, split_share)
    rules = Rules(min_sentence_recall)
    folders = [found.absolute() for folder in folders for found in _eval_folders(folder)]
    pool = judge(folders, rules, _row_types(folders))
    kept = pool.kept
    k = count or (DEFAULT_EXAMPLES if form is RecordFormat.PROMPT else len(kept))
    sets = [choose(kept, k, seed) for seed in range(candidates)]
    if explain:
        _explain(pool, sets[0])
    if not kept:
        raise UsageError(
            f"no run passes the rules ({len(pool.verdicts)} judged; --explain says why each "
            "was left)"
        )
    if form is not RecordFormat.PROMPT:
        _write_records(sets[0], form, out, split_share, options)
        return
    if candidates == 1:
        _write_prompt(sets[0], out, rules, pool, options)
        return
    assert dev is not None
    _search(sets, out, rules, pool, options, dev)


def _check(
    form: RecordFormat,
    count: int | None,
    recall: float,
    candidates: int,
    dev: str | None,
    split_share: float | None,
) -> None:
    from react_cli.distill.finetune import RecordFormat

    if count is not None and not 1 <= count <= MAX_EXAMPLES:
        raise UsageError(f"--examples must be from 1 to {MAX_EXAMPLES}")
    if not 0 <= recall <= 1:
        raise UsageError("--min-sentence-recall must be from 0 to 1")
    if not 1 <= candidates <= MAX_CANDIDATES:
        raise UsageError(f"--candidates must be from 1 to {MAX_CANDIDATES}")
    if candidates > 1 and dev is None:
        raise UsageError("--candidates N scores each set on a dev slice: give --dev DATASET")
    if form is RecordFormat.PROMPT and split_share is not None:
        raise UsageError("--split is for records: give --format openai-chat or sharegpt")
    if form is not RecordFormat.PROMPT and candidates > 1:
        raise UsageError("--candidates is for prompt files, not records")


def _row_types(folders: list[Path]) -> dict[Path, list[str | None]]:
    """Each folder's dataset rows' HotpotQA ``type`` (comparison, bridge), where its dataset
    file is still there to read (else the question's words are read for it)."""
    from react_cli.eval.files import SUMMARY, read_summary
    from react_cli.infra.untrusted import BadInput, json_records, read_text

    types: dict[Path, list[str | None]] = {}
    for folder in folders:
        summary = read_summary(folder / SUMMARY)
        if summary is None:
            continue
        path = Path(summary.dataset.path)
        try:
            text = read_text(path, 1 << 28)
            rows = [record for _, record in json_records(text, str(path))]
        except (OSError, BadInput):
            continue
        kinds = [row.get("type") if isinstance(row, dict) else None for row in rows]
        types[folder] = [kind if isinstance(kind, str) else None for kind in kinds]
    return types


def _explain(pool: Pool, chosen: list[Candidate]) -> None:
    """A line on stderr for each row judged: ``left``, or ``kept`` and whether it was chosen
    (the first candidate set's), with why."""
    from react_cli.display.terminal import plain

    for verdict in pool.verdicts:
        question = plain(" ".join(verdict.question.split()))[:80]
        reason = verdict.reason
        if verdict.candidate is None:
            mark = "left"
        elif any(verdict.candidate is c for c in chosen):
            mark, reason = "kept (chosen)", reason.removeprefix("kept")
        else:
            mark = "kept (not chosen)"
            reason = f"{len(chosen)} others chosen for variety" + reason.removeprefix("kept")
        line = f"{mark}: {plain(str(verdict.folder))} row {verdict.index}: {question}"
        typer.echo(f"{line} — {plain(reason.strip())}" if reason.strip() else line, err=True)


def _redactor(options: RunOptions) -> Callable[[str], str]:
    from react_cli.infra.redaction import Redactor
    from react_cli.settings.resolve import resolve
    from react_cli.settings.secrets import known_secrets

    return Redactor(known_secrets(resolve(options.flags()), os.environ))


def _protocol(options: RunOptions, chosen: list[Candidate]) -> ProtocolName:
    from react_cli.core.records import ProtocolName

    if options.protocol is not None:
        return ProtocolName(options.protocol)
    return chosen[0].trace.protocol


def _prompt_text(chosen: list[Candidate], rules: Rules, pool: Pool, options: RunOptions) -> str:
    from react_cli import __version__
    from react_cli.distill.render import Provenance, prompt_file
    from react_cli.traces.trace import now_utc

    config = chosen[0].summary.config
    api = config.run.get("api")
    model = f"{config.model} ({api}); method {chosen[0].method}"
    stamp = now_utc().strftime("%Y-%m-%dT%H:%M:%SZ")
    folders = len({verdict.folder for verdict in pool.verdicts})
    distilled = (
        f"react-cli {__version__} at {stamp} from {folders} eval folder(s): "
        f"{len(pool.verdicts)} runs judged, {len(pool.kept)} kept, {len(chosen)} chosen"
    )
    selection = f"{rules.text()}; {len(chosen)} examples chosen for variety"
    redactor = _redactor(options)
    provenance = Provenance(model, distilled, selection)
    protocol = _protocol(options, chosen)
    return prompt_file(chosen, protocol, provenance, redactor)


def _write_prompt(
    chosen: list[Candidate], out: Path, rules: Rules, pool: Pool, options: RunOptions
) -> None:
    from react_cli.infra.files import write_atomic
    from react_cli.loop.prompts import load_prompt

    text = _prompt_text(chosen, rules, pool, options)
    try:
        write_atomic(out, text)
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    load_prompt(str(out))  # what --prompt will read: it must load
    print_note(f"{len(chosen)} exemplars of {len(pool.kept)} runs kept")
    print(out)


def _write_records(
    chosen: list[Candidate],
    form: RecordFormat,
    out: Path,
    split_share: float | None,
    options: RunOptions,
) -> None:
    import json

    from react_cli.distill.finetune import records, split
    from react_cli.infra.files import write_atomic

    redactor = _redactor(options)
    made = records(chosen, form, _protocol(options, chosen), redactor)

    def lines(rows: list[Any]) -> str:
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)

    if split_share is None:
        targets = [(out, made)]
    else:
        train, valid = split(made, split_share)
        stem = out.with_suffix("") if out.suffix == ".jsonl" else out
        targets = [
            (stem.with_name(f"{stem.name}-train.jsonl"), train),
            (stem.with_name(f"{stem.name}-validation.jsonl"), valid),
        ]
    for path, rows in targets:
        try:
            write_atomic(path, lines(rows))
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
        print(path)
    print_note(f"{len(made)} records ({form})")


def parse_slice(text: str) -> tuple[str, int | None, int | None]:
    """``DATASET@START:END`` as (dataset, offset, limit); no ``@``: the whole dataset."""
    name, at, rows = text.rpartition("@")
    match = _SLICE.match(rows) if at else None
    if match is None:
        return text, None, None
    start = int(match[1]) if match[1] else 0
    end = int(match[2]) if match[2] else None
    if end is not None and end <= start:
        raise UsageError(f"--dev {text!r}: END must be after START")
    return name, start, None if end is None else end - start


def _search(
    sets: list[list[Candidate]],
    out: Path,
    rules: Rules,
    pool: Pool,
    options: RunOptions,
    dev: str,
) -> None:
    """Each candidate set written, scored on the dev slice, the best copied to ``out``."""
    from react_cli.infra.files import write_atomic

    folder = out.with_name(f"{out.name}.candidates")
    folder.mkdir(parents=True, exist_ok=True)
    scores: list[tuple[float, int]] = []
    seen: dict[tuple[str, ...], int] = {}
    texts = []
    for number, chosen in enumerate(sets, start=1):
        text = _prompt_text(chosen, rules, pool, options)
        texts.append(text)
        path = folder / f"candidate-{number}.txt"
        write_atomic(path, text)
        keys = tuple(c.where() for c in chosen)
        if keys in seen:
            scores.append(scores[seen[keys]])
            print_note(f"candidate {number}: the same exemplars as candidate {seen[keys] + 1}")
            continue
        seen[keys] = number - 1
        em = _score(path, folder / f"candidate-{number}", dev, options)
        scores.append((em, number))
        print_note(f"candidate {number}: EM {em:.3f} on {dev} ({path})")
    best = max(range(len(sets)), key=lambda i: (scores[i][0], -i))
    write_atomic(out, texts[best])
    print_note(f"kept candidate {best + 1} (EM {scores[best][0]:.3f})")
    print(out)


def _score(prompt: Path, folder: Path, dev: str, options: RunOptions) -> float:
    """The EM of the prompt ``prompt`` on the dev slice, evaluated into ``folder`` (resumed
    if it is there: the cache and the folder make a repeat free)."""
    from react_cli.cli.notices import told
    from react_cli.eval.files import SUMMARY
    from react_cli.eval.plan import EvalRequest, plan_eval
    from react_cli.eval.runner import claimed, evaluate, shared_limits
    from react_cli.session import open_session

    name, offset, limit = parse_slice(dev)
    flags = {"cache": True, **options.flags(), "prompt": str(prompt)}
    resume = folder if (folder / SUMMARY).is_file() else None
    request = EvalRequest(
        dataset=Path(name), offset=offset, limit=limit, out=folder, resume=resume, flags=flags
    )
    plan = plan_eval(request)
    shared, used = shared_limits(plan)
    session = open_session(
        plan.settings, plan.prompts, methods=plan.methods, told=told(False), shared=shared
    )
    with claimed(plan) as lock, session as opened:
        result = evaluate(plan, lock, opened, concurrency=used)
    return result.summary.figures.em or 0.0


def _eval_folders(given: Path) -> list[Path]:
    """The eval folders ``given`` names: itself, one cell of a matrix (``DIR@N``), or every
    cell of a matrix that has started."""
    from react_cli.eval.files import SUMMARY
    from react_cli.eval.matrix.record import is_matrix, read_matrix
    from react_cli.share.cells import eval_folder

    path = given.expanduser()
    if not is_matrix(path):
        return [eval_folder(path)]
    cells = [cell.folder(path) for cell in read_matrix(path).cells]
    return [cell for cell in cells if (cell / SUMMARY).is_file()]
