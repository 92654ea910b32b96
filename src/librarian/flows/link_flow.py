"""The linking flow: where work runs, nothing more. The job (`librarian/job.py`) says what
a run reads and where its decisions go; this module hands it Prefect tasks for the model
steps (prepare, complete, a source's reviewed items: on the task runner, a Dask worker say,
`in_flight` at once), models loaded by a task, and Prefect's logger. A Prefect task per
model step (Prefect costs ~30 ms a task).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from prefect.context import FlowRunContext
from prefect.futures import PrefectFuture
from prefect.task_runners import ThreadPoolTaskRunner

from librarian.factory import pipeline_for
from librarian.job import HandOff, LinkJob, Where, run_job
from librarian.pipeline.accounting import summary_markdown
from librarian.pipeline.pipeline import Pipeline
from librarian.pipeline.run import PHASES, Pending, Phase
from librarian.schemas.records import RunSummary
from librarian.settings import LinkerSettings

T = TypeVar("T")


@task(name="load-models", cache_policy=NONE)
def load_pipeline(settings: LinkerSettings) -> Pipeline:
    return pipeline_for(settings)


class Parcel(Generic[T]):
    """A task's parameter or result, opaque to Prefect. Prefect walks every parameter of a
    task, element by element, looking for futures (`visit_collection`, on the flow's side
    and again on the worker's): a batch of prepared rows is tens of thousands of objects,
    and on Dask that walk cost a worker as much as the model (py-spy, a 100,000-row run).
    An object of a plain class is not walked. (`quote` is walked neither, but reaches a Dask
    worker still wrapped.)"""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value

    def __reduce__(self) -> tuple[type[Parcel[T]], tuple[T]]:
        return (Parcel, (self.value,))


def models(settings: LinkerSettings, preloaded: Parcel[Pipeline] | None) -> Pipeline:
    """A task's models: those the run was handed, where the task runs in its process;
    else (a Dask worker) the ones its process loaded once."""
    return preloaded.value if preloaded is not None else pipeline_for(settings)


@task(name="model-step", cache_policy=NONE)
def model_step(
    settings: LinkerSettings,
    phase: Phase[T],
    args: Parcel[tuple[Any, ...]],
    preloaded: Parcel[Pipeline] | None = None,
) -> Parcel[T]:
    """One phase of the runner's (`pipeline.run.PHASES`), wherever the task runner puts
    it, on that process's models."""
    return Parcel(phase.run(models(settings, preloaded), *args.value))


# One task a phase, named as the phase says (what the Prefect UI and logs show).
TASKS = {phase: model_step.with_options(name=phase.task) for phase in PHASES}


@dataclass(frozen=True)
class Unwrapped(Generic[T]):
    """A task's future, its result out of its parcel."""

    future: PrefectFuture[Parcel[T]]

    def result(self) -> T:
        return self.future.result().value


class PrefectTasks:
    """The runner's executor: each model step a Prefect task on the flow's task runner,
    its batch in a `Parcel`; `preloaded`: the models its tasks use (None: each worker
    process loads its own)."""

    def __init__(self, settings: LinkerSettings, preloaded: Pipeline | None = None) -> None:
        self.settings = settings
        self.preloaded = Parcel(preloaded) if preloaded is not None else None

    def submit(self, phase: Phase[T], *args: Any) -> Pending[T]:
        submitted = TASKS[phase].submit(self.settings, phase, Parcel(args), self.preloaded)
        return Unwrapped(submitted)


def in_this_process() -> bool:
    """Whether the flow's tasks run in its own process (Prefect's thread pool), where the
    models it was handed serve them; a Dask worker loads its own."""
    context = FlowRunContext.get()
    return context is not None and isinstance(context.task_runner, ThreadPoolTaskRunner)


@flow(name="librarian-link", validate_parameters=False)
def link_queue(job: LinkJob, hand_off: Parcel[HandOff] | None = None) -> Parcel[RunSummary]:
    """The `job`, its model steps Prefect tasks (the job's database a reference, no
    password: Prefect stores a flow's parameters). `hand_off`: what the starting command
    has read already and who watches (kept out of the parameters Prefect stores: a
    `Parcel` is stored as its type's name). Its summary comes back in a `Parcel` too:
    Prefect walks a flow's return value for futures, and the summary of a run of 4,800
    one-row sources took that walk 0.5 s."""
    settings, run_id, out_dir = job.settings, job.run_id, job.out_dir
    logger = get_run_logger()
    given = hand_off.value if hand_off is not None else HandOff()
    tasks = PrefectTasks(settings, given.pipeline if in_this_process() else None)
    summary = run_job(job, Where(tasks, load_pipeline, logger.info), given)
    create_markdown_artifact(
        summary_markdown(summary),
        key="librarian-run-summary",
        description=f"librarian run {run_id}: counts, timings, models, where the outputs went",
    )
    s = summary
    logger.info(
        f"run {run_id}: read {s.read}, linked {s.linked}, review {s.review}, rejected "
        f"{s.rejected}, skipped {s.skipped} -> {out_dir}"
    )
    return Parcel(summary)
