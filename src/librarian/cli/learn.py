"""`librarian train`, `quantize` and `eval`: build the models a run reads, and score them."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from librarian.cli import render
from librarian.cli.common import (
    engine_of,
    err,
    home_of,
    linker_settings,
    linker_urls,
    out,
    readable_input,
    redacted,
    writable_output,
)
from librarian.cli.options import (
    CacheOpt,
    EmbedderOutOpt,
    EmbeddingOpt,
    EncoderOpt,
    ExcludeOpt,
    ForceOpt,
    HoldoutDevOpt,
    HomeOpt,
    HubOpt,
    JsonOpt,
    LinkerOptions,
    LinksOpt,
    ModelDirOpt,
    ModelsOutOpt,
    PlotOpt,
    ReplaceLinksOpt,
    ReportOpt,
    ReviewOrder,
    RowsOpt,
    SectionTextsOpt,
    SeedOpt,
    SkipInvalidOpt,
    WarmOptions,
    with_linker_options,
    with_warm_options,
)
from librarian.errors import InputError, RunError, UsageError
from librarian.models.encoders import ENCODER_DIRECTORIES, Encoder
from librarian.paths import DEFAULT_HUB, DEFAULT_LINKS, DEFAULT_SECTION_TEXTS, Home
from librarian.schemas.evaluation import GoldenRow
from librarian.settings import DEFAULT_SEED
from librarian.text import visible
from librarian.training.links import DEV_FRAMEWORKS, TrainingLink

if TYPE_CHECKING:
    from librarian.pipeline.pipeline import Pipeline
    from librarian.schemas.evaluation import Draw, EvalReport
    from librarian.training.evaluate import GoldenRun, RowOutcome
    from librarian.training.train import TrainRequest


@contextmanager
def progress_bar() -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress bar on stderr when it is a terminal, else a line a phase (a cron job or
    CI log sees what it is waiting for); (stage, done, total), total -1 = add."""
    if not sys.stderr.isatty():
        yield phase_lines()
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    bars: dict[str, Any] = {}
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
    ) as progress:

        def update(stage: str, done: int, total: int) -> None:
            if stage not in bars:
                bars[stage] = progress.add_task(stage, total=None if total < 0 else total)
            if total < 0:
                progress.advance(bars[stage], done)
            else:
                progress.update(bars[stage], completed=done, total=total)

        yield update


def phase_lines() -> Callable[[str, int, int], None]:
    """One line when a phase starts and one when it ends, with its count and seconds."""
    started: dict[str, float] = {}
    finished: set[str] = set()

    def update(stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if stage not in started:
            started[stage] = now
            size = f" ({total})" if total > 0 else ""
            err.print(f"{stage}{size} ...", markup=False)
        if 0 < total <= done and stage not in finished:
            finished.add(stage)
            err.print(f"{stage}: done in {now - started[stage]:.0f} s", markup=False)

    return update


def train(
    links: LinksOpt = None,
    section_texts: SectionTextsOpt = None,
    hub: HubOpt = None,
    exclude_framework: ExcludeOpt = None,
    holdout_dev: HoldoutDevOpt = False,
    out_dir: ModelsOutOpt = None,
    embedding_model: EmbeddingOpt = None,
    cache_dir: CacheOpt = None,
    seed: SeedOpt = DEFAULT_SEED,
    force: ForceOpt = False,
    replace_links: ReplaceLinksOpt = False,
    skip_invalid: SkipInvalidOpt = False,
    home: HomeOpt = None,
    encoder: EncoderOpt = "int8",
) -> None:
    """Build everything a run needs into the model directory (skipped when up to date).

    The embedder (int8 unless --encoder or --embedding-model names another), then the
    calibrator, the auto-link threshold and the branch classifier, fitted on the links."""
    where = home_of(home)
    target = out_dir or where.models
    if target.exists() and not target.is_dir():
        raise UsageError(f"--out {target} exists and is not a directory")
    hub_path = hub or DEFAULT_HUB
    sources = [*([] if replace_links else [str(DEFAULT_LINKS)]), *(links or [])]
    if not sources:
        raise UsageError("--replace-links needs --links: there is nothing else to learn from")
    loaded = load_links(sources, where, _hub_ids(hub_path), skip_invalid)
    excluded = [*(exclude_framework or ()), *(DEV_FRAMEWORKS if holdout_dev else ())]
    embedder_dir = embedder_to_train(target, hub_path, embedding_model, encoder)
    from librarian.training.train import TrainRequest, train_directory

    request = TrainRequest(
        out_dir=target,
        links=tuple(loaded),
        links_sources=tuple(redacted(s) if "://" in s else s for s in sources),
        section_texts=section_texts or DEFAULT_SECTION_TEXTS,
        hub_path=hub_path,
        embedding_model=embedder_dir,
        cache_dir=cache_dir or where.cache,
        exclude_frameworks=tuple(dict.fromkeys(excluded)),
        seed=seed,
        force=force,
    )
    with progress_bar() as progress:
        card, trained_now = train_directory(request, progress)
    if not trained_now:
        out.print(
            f"models in {target} are up to date (trained {card.trained_at} from the same "
            "links, hub and embedder); --force trains again",
            markup=False,
        )
        return
    render.trained(card, target)
    databases = [s for s in dict.fromkeys(sources) if s == REVIEWS or "://" in s]
    for url in databases:
        show_changes(url, where, request)


def show_changes(source: str, where: Home, request: TrainRequest) -> None:
    """Per source with items open in the database the decisions came from: its cut, mean
    confidence and how many open items would now be linked automatically, before and
    after these models (nothing is stored: `librarian relink` or the next run does it)."""
    from librarian.factory import build_pipeline
    from librarian.review.relink import changes_for_open_items
    from librarian.settings import LinkerSettings
    from librarian.store.db import database_url

    url = database_url(None, where.database_url) if source == REVIEWS else source
    with engine_of(url) as engine:
        settings = LinkerSettings(
            models_dir=request.out_dir, cache_dir=request.cache_dir, hub_path=request.hub_path
        )
        changes, left = changes_for_open_items(engine, build_pipeline(settings))
    if not changes:
        out.print(f"open items in {redacted(url)}: none, nothing to re-score", markup=False)
        return
    out.print(f"what the new models change for the open items in {redacted(url)}:", markup=False)
    for change in changes:
        out.print(visible("  " + change.says()), markup=False)
    if left:
        out.print(f"  ... and {left} more sources", markup=False)


def _hub_ids(hub_path: Path) -> frozenset[str]:
    from librarian.catalogue.hub import load_hub

    return frozenset(load_hub(hub_path).ids)


def embedder_to_train(
    target: Path, hub_path: Path, embedding_model: Path | None, encoder: Encoder
) -> Path:
    """--embedding-model as given, else the `encoder` build among the models."""
    if embedding_model is not None and encoder != "int8":
        raise UsageError("--encoder builds the embedder; --embedding-model names one: not both")
    return embedding_model or ensure_built(target / ENCODER_DIRECTORIES[encoder], hub_path, encoder)


def ensure_built(target: Path, hub_path: Path, encoder: Encoder) -> Path:
    """The embedder `encoder` names, built once (~15 s) and reused while its card checks
    out."""
    from librarian.models.built_card import read_card
    from librarian.models.seams import ModelError

    try:
        read_card(target)
        return target
    except ModelError:
        pass
    err.print(f"building the {encoder} embedder into {target} ...", markup=False)
    render.quantized(build_embedder(target, hub_path, None, encoder), target)
    return target


def build_embedder(
    target: Path, hub_path: Path, source: Path | None, encoder: Encoder
) -> dict[str, Any]:
    from librarian.catalogue.hub import load_hub
    from librarian.models.quantize import quantize as build

    hub_nodes = load_hub(hub_path)
    probe = [*hub_nodes.name_texts(), *hub_nodes.path_texts()]
    err.print(f"exporting and building; checking on {len(probe)} hub texts ...", markup=False)
    return build(target, probe, source, encoder=encoder)


def quantize(
    out_dir: EmbedderOutOpt = None,
    source: ModelDirOpt = None,
    encoder: EncoderOpt = "int8",
    hub: HubOpt = None,
    home: HomeOpt = None,
) -> None:
    """Build an int8 ONNX (or OpenVINO) copy of the embedding model (`train` does this
    itself).

    Faster on CPU; refused unless its vectors of the hub's texts agree with the source
    model's."""
    if source is not None and not (source / "config.json").is_file():
        raise UsageError(f"--model-dir {source} is not a model directory (no config.json)")
    target = out_dir or home_of(home).models / ENCODER_DIRECTORIES[encoder]
    writable_output(target)
    render.quantized(build_embedder(target, hub or DEFAULT_HUB, source, encoder), target)


def load_links(
    sources: list[str],
    home: Home,
    hub_ids: Collection[str] | None = None,
    skip_invalid: bool = False,
) -> list[TrainingLink]:
    """Links from every source, in order, each (section, CRE) once: curated links files,
    the reviewers' decisions in a database (`reviews`: the home's, or LIBRARIAN_DB; or a
    URL), a filled review sheet, a HumanDecision export (its texts read from that
    database where the file does not carry them)."""
    from librarian.store.db import database_url

    found: list[TrainingLink] = []
    for source in sources:
        if source == REVIEWS or "://" in source:
            url = database_url(None, home.database_url) if source == REVIEWS else source
            found.extend(_database_links(url))
        elif _is_decisions_file(Path(source)):
            url = database_url(None, home.database_url)
            found.extend(_decision_file_links(Path(source), url, hub_ids, skip_invalid))
        else:
            from librarian.training.links import load_links as read_file

            found.extend(read_file(Path(source)))
    return _each_decision_once(found)


def _each_decision_once(links: list[TrainingLink]) -> list[TrainingLink]:
    """A reviewer's link once, though the database and its export both hold it (curated
    files are taken as they are)."""
    from librarian.training.reviewers import REVIEWERS_FRAMEWORK

    seen: set[tuple[str, str]] = set()
    kept = []
    for link in links:
        key = (link.section_id, link.cre_id)
        if link.framework_id == REVIEWERS_FRAMEWORK:
            if key in seen:
                continue
            seen.add(key)
        kept.append(link)
    return kept


# `--links reviews`: the reviewers' decisions in this home's database (or LIBRARIAN_DB).
REVIEWS = "reviews"


def _database_links(url: str) -> list[TrainingLink]:
    from librarian.store.db import check_database
    from librarian.training.reviewers import reviewer_links

    check_database(url, create=False)
    with engine_of(url) as engine:
        found = reviewer_links(engine)
    err.print(f"{redacted(url)}: {found.says()}", markup=False)
    return found.links


def _is_decisions_file(path: Path) -> bool:
    """A review sheet (CSV, or JSONL with a `decision` column) or a HumanDecision export."""
    if path.suffix.lower() == ".csv":
        return True
    if path.suffix.lower() != ".jsonl" or not path.is_file():
        return False
    with path.open(encoding="utf-8-sig", errors="replace") as handle:
        first = next((line for line in handle if line.strip()), "")
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and bool({"decision_id", "decision"} & set(record))


def _decision_file_links(
    path: Path, url: str, hub_ids: Collection[str] | None, skip_invalid: bool
) -> list[TrainingLink]:
    """A sheet's or a HumanDecision file's decisions, checked against the store they came
    from as `review import` checks them (`review.decisions.learnable`): what the store
    refuses or records as undone is not learned."""
    from sqlalchemy.orm import Session

    from librarian.catalogue.hub import load_hub
    from librarian.review.decisions import learnable
    from librarian.review.sheets import read_decisions
    from librarian.store.db import check_database
    from librarian.training.reviewers import REVIEWERS_FRAMEWORK

    readable_input(path, "--links")
    read = read_decisions(path, "train")
    check_database(url, create=False)
    with engine_of(url) as engine, Session(engine) as session:
        known = hub_ids if hub_ids is not None else load_hub(DEFAULT_HUB).ids
        found = learnable(session, read.incoming, known)
    refused = read.errors + found.refused
    for line in refused[:20]:
        err.print(visible(f"refused: --links {path} {line}"), markup=False)
    if refused and not skip_invalid:
        raise InputError(
            f"--links {path}: {len(refused)} decisions refused (against {redacted(url)}); "
            "nothing was trained (--skip-invalid learns from the rest)"
        )
    if found.undone or found.bulk or found.superseded or found.contradicted:
        err.print(
            f"--links {path}: not learned: {found.undone} decisions the store records as "
            f"undone, {found.superseded} it records as changed since, {found.contradicted} "
            f"that disagree with the decision it holds standing, {found.bulk} bulk approvals",
            markup=False,
        )
    return [
        TrainingLink(REVIEWERS_FRAMEWORK, review_id, text, cre, True)
        for review_id, text, cres in found.links
        for cre in cres
    ]


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def write_jsonl(path: Path, records: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def golden_run(pipeline: Pipeline, rows: list[GoldenRow], reviewed: list[GoldenRow]) -> GoldenRun:
    """`run_golden` under the progress bar."""
    from librarian.training.evaluate import run_golden

    with progress_bar() as progress:

        def step(n: int) -> None:
            if progress is not None:
                progress("eval rows", n, -1)

        return run_golden(pipeline, rows, reviewed, progress=step)


def reviewed_and_scored(
    pipeline: Pipeline, rows: list[GoldenRow], k: int | None, order: ReviewOrder, seed: int
) -> tuple[list[GoldenRow], list[GoldenRow], dict[str, int | None]]:
    """The rows standing for reviewers' decisions (none cold), the rows scored, and (the
    plan's order) after how many decisions each source's cut was first certified; the
    product's and the plan's order under the progress bar."""
    from librarian.training.evaluate import product_reviewed, random_reviewed
    from librarian.training.following import plan_reviewed
    from librarian.training.golden import reviewed_first

    if k is None:
        return [], rows, {}
    if order == "file":
        return *reviewed_first(rows, k), {}
    if order == "random":
        return *random_reviewed(rows, k, seed), {}
    with progress_bar() as progress:

        def step(n: int) -> None:
            if progress is not None:
                progress("choosing what to review", n, -1)

        if order == "product":
            return *product_reviewed(pipeline, rows, k, progress=step), {}
        return plan_reviewed(pipeline, rows, k, step, salt=f"draw {seed}")


def warm_draws(
    pipeline: Pipeline, rows: list[GoldenRow], k: int, order: ReviewOrder, seed: int, draws: int
) -> tuple[GoldenRun, list[Draw]]:
    """Each draw's run (the first one's kept for the report) and what it did and said."""
    from librarian.training.evaluate import draw_of

    first: GoldenRun | None = None
    found: list[Draw] = []
    for d in range(draws if order in ("random", "plan") else 1):
        reviewed, scored, until = reviewed_and_scored(pipeline, rows, k, order, seed + d)
        golden = golden_run(pipeline, scored, reviewed)
        first = first or golden
        found.append(draw_of(seed + d, golden, until))
        if draws > 1:
            err.print(f"draw {d + 1} of {draws}: {found[-1].model_dump_json()}", markup=False)
    assert first is not None
    return first, found


def scored_report(
    built: Pipeline,
    rows: list[GoldenRow],
    k: int | None,
    order: ReviewOrder,
    seed: int,
    draws: int,
    top_k: int,
) -> tuple[EvalReport, list[RowOutcome]]:
    """The report (warm: with each draw's) and the outcomes of the rows it scored (warm
    with several draws: the first draw's)."""
    from librarian.training.evaluate import score, summarise_draws

    if k is None:
        golden, found = golden_run(built, rows, []), None
    else:
        golden, found = warm_draws(built, rows, k, order, seed, draws)
    warm = golden.reviewed if k is not None else None
    report = score(golden.outcomes, built.policy.alone_cut, top_k, warm, golden.sources)
    if found is not None:
        summary = summarise_draws(found, built.policy)
        report = report.model_copy(update={"draws": found, "draws_summary": summary})
    return report, golden.outcomes


def warm_protocol(warm: WarmOptions) -> tuple[int | None, ReviewOrder]:
    """K and the review order, from the options; refused when they disagree."""
    if warm.reviewed_first is not None and warm.reviewed_k is not None:
        raise UsageError("give --reviewed K or --reviewed-first K, not both")
    k = warm.reviewed_first if warm.reviewed_first is not None else warm.reviewed_k
    order: ReviewOrder = "file" if warm.reviewed_first is not None else warm.review_order
    if warm.draws > 1 and (k is None or order not in ("random", "plan")):
        raise UsageError("--draws N needs --reviewed K --review-order random or plan")
    return k, order


@with_warm_options
@with_linker_options
def eval_golden(
    dataset: Annotated[Path, typer.Argument(help="golden set (JSON list of rows)")],
    report_out: ReportOpt = None,
    as_json: JsonOpt = False,
    plot: PlotOpt = None,
    rows_out: RowsOpt = None,
    *,
    linker: LinkerOptions,
    warm: WarmOptions,
) -> None:
    """Score the pipeline on a golden set with the trained models as they are (fits nothing
    on the rows it scores). Each source is linked as a whole. Warm (--reviewed K), each
    draw's report says what the run said of its largest source's risk and what came true.

    Exits 1 when a gate fails: the explicit fast path below 100%, or ECE >= 0.10.
    """
    from librarian.factory import build_pipeline
    from librarian.training.evaluate import gate_failures, reliability_by_style
    from librarian.training.golden import load_golden

    k, order = warm_protocol(warm)
    golden_rows = load_golden(dataset)  # a malformed golden set is refused before models load
    settings = linker_settings(linker)
    built = build_pipeline(settings, linker_urls(linker))
    report, outcomes = scored_report(
        built, golden_rows, k, order, warm.seed, warm.draws, settings.top_k
    )
    if report_out is not None:
        write_json(report_out, report.model_dump(mode="json"))
    if rows_out is not None:
        from librarian.training.evaluate import row_records

        write_jsonl(rows_out, row_records(outcomes))
    if as_json:
        sys.stdout.write(report.model_dump_json(indent=1) + "\n")
    else:
        render.eval_report(report, built.description(priors_read=True))
    if plot is not None:
        from librarian.training.plot import reliability_diagram

        reliability_diagram(reliability_by_style(outcomes), plot, title=dataset.name)
        out.print(f"reliability diagram: {plot}", markup=False)
    failures = gate_failures(report)
    if failures:
        raise RunError("gate failed: " + "; ".join(failures))
