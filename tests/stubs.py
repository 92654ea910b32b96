"""Unit-test seams: a tiny hub and deterministic stand-ins for the models."""

from __future__ import annotations

import hashlib
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from librarian.artifacts.calibrator import Calibrator
from librarian.artifacts.card import CardData, CardModels, ModelCard, OutOfFold, TrainedModels
from librarian.artifacts.source_model import JOINT_FEATURES, SourceModel
from librarian.catalogue.hub import Hub, build_hub
from librarian.factory import assemble
from librarian.pipeline.pipeline import Pipeline
from librarian.pipeline.source_level import SlotRow, SourceLevelSlot
from librarian.policy import DecisionPolicy
from librarian.retrieval.collective import MIN_SHAPE_ITEMS, PriorRule
from librarian.retrieval.evidence import RETRIEVER_ID
from librarian.retrieval.flat import ScoredHub
from librarian.retrieval.index import build_index
from librarian.schemas.records import HubNode, PriorDecision, Section, Skip, SkipCode
from librarian.settings import LinkerSettings


def node(cre_id: str, name: str, parent: str | None, path: list[str], leaf: bool) -> HubNode:
    return HubNode(
        cre_id=cre_id,
        name=name,
        parent_id=parent,
        hierarchy_path=tuple(path),
        depth=len(path) - 1,
        is_leaf=leaf,
    )


def small_hub() -> Hub:
    root = ["Technical application security controls"]
    return build_hub(
        [
            node("100-000", root[0], None, root, False),
            node("200-000", "Session management", "100-000", [*root, "Session management"], False),
            node(
                "200-001",
                "Rotate session token after login",
                "200-000",
                [*root, "Session management", "Rotate session token after login"],
                True,
            ),
            node(
                "300-000", "Injection protection", "100-000", [*root, "Injection protection"], False
            ),
            node(
                "300-001",
                "Use parameterized queries against SQL injection",
                "300-000",
                [*root, "Injection protection", "Use parameterized queries against SQL injection"],
                True,
            ),
            node("400-000", "Cryptography", "100-000", [*root, "Cryptography"], True),
        ]
    )


def two_branch_hub() -> Hub:
    """Two roots, technical and governance, two leaves each."""
    tech = ["Technical application security controls"]
    gov = ["Governance processes for security"]

    def leaf(cre_id: str, name: str, parent: str, root: list[str]) -> HubNode:
        return node(cre_id, name, parent, [*root, name], True)

    return build_hub(
        [
            node("100-000", tech[0], None, tech, False),
            leaf("100-001", "Rotate session token", "100-000", tech),
            leaf("100-002", "Parameterized SQL queries", "100-000", tech),
            node("500-000", gov[0], None, gov, False),
            leaf("500-001", "Security policy review", "500-000", gov),
            leaf("500-002", "Session token policy", "500-000", gov),
        ]
    )


class StubEmbedder:
    """Bag of hashed words: texts sharing words are close, as with a real encoder."""

    name = "stub-bow"
    fingerprint = "stub" * 16

    def __init__(self, dimension: int = 1024) -> None:
        self.dimension = dimension
        self.calls = 0

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls += 1
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                h = int(hashlib.md5(word.encode()).hexdigest(), 16)
                out[row, h % self.dimension] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out

    def truncated(self, texts: Sequence[str]) -> list[int]:
        return [i for i, t in enumerate(texts) if len(t) > 1000]


class StubScorer:
    """Scores a pair by word overlap, in [0, 1]; can be told to fail on a word."""

    name = "stub-overlap"

    def __init__(self, fail_on: str | None = None) -> None:
        self.fail_on = fail_on
        self.queries: list[str] = []

    def predict(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        self.queries.extend(q for q, _ in pairs)
        scores = []
        for query, cand in pairs:
            if self.fail_on and self.fail_on in query:
                raise RuntimeError(f"scorer cannot handle {self.fail_on!r}")
            q = set(re.findall(r"[a-z]+", query.lower()))
            c = set(re.findall(r"[a-z]+", cand.lower()))
            scores.append(len(q & c) / max(1, len(q | c)))
        return np.asarray(scores, dtype=np.float32)


def stub_pipeline(
    threshold: float | None = 0.8,
    scorer: StubScorer | None = None,
    top_k: int = 4,
    top_n: int = 2,
    rerank_gap: float | None = None,
    trained: TrainedModels | None = None,
    unmappable_cut: float = 0.0,
) -> Pipeline:
    """The stages on the stub embedder. The unmappable gate is off unless asked for: its
    shipped cut is on the MiniLM's cosine scale, not on the stub's bag-of-words one."""
    hub = small_hub()
    embedder = StubEmbedder()
    settings = LinkerSettings(
        threshold=threshold,
        top_k=top_k,
        top_n=top_n,
        cache_dir=None,
        rerank_gap=rerank_gap,
        unmappable_cut=unmappable_cut,
    )
    return assemble(settings, hub, embedder, build_index(hub, embedder, None), scorer, trained)


def joint_pipeline() -> Pipeline:
    """The stub pipeline with a source-level model: a source's cut depends on all its rows,
    so a row linked without the rest of its source can get another decision."""
    pipeline = stub_pipeline(threshold=None)
    weights = tuple(10.0 if f == "score" else 0.0 for f in JOINT_FEATURES)
    model = SourceModel(
        PriorRule(0.5, 0.05, 0.5, 0.0), Calibrator(weights, -5.0, 1, JOINT_FEATURES), 0.5
    )
    pipeline.source_level = SourceLevelSlot(model, small_hub(), DecisionPolicy(global_cut=0.95))
    return pipeline


def example_card() -> ModelCard:
    """A model card as `librarian train` writes one, for models built by hand in a test."""
    oof = OutOfFold(how="test", top1=0.5, ece=0.0, auto_linked=0, auto_link_wrong=0, rows=1)
    return ModelCard(
        trained_at="2026-11-30T00:00:00+00:00",
        seconds=0.0,
        data=CardData(
            links_sources=["test"],
            links_sha256="0" * 64,
            hub_sha256=small_hub().content_hash,
            hub_nodes=6,
            sections=1,
            frameworks_seen={"alpha": 1},
            frameworks_excluded=[],
        ),
        models=CardModels(
            embedding=StubEmbedder.name,
            embedding_fingerprint=StubEmbedder.fingerprint,
            retriever=RETRIEVER_ID,
            calibrator="test",
        ),
        parameters={},
        threshold=0.5,
        out_of_fold=oof,
        router={},
        environment={},
    )


# A plug-in as a team would ship one: a module and its distribution's entry point. Its
# stage runs after C.9 and sends to review any row whose text says "DRAFT".
PLUGIN = """
from dataclasses import replace

from librarian.pipeline.components import Component
from librarian.pipeline.plugins import PluggedStage
from librarian.schemas.envelopes import ReasonCode


class DraftHold:
    name = "draft-hold"
    audited = True

    def components(self, priors_read):
        return [Component("draft-hold", "draft-hold@1", note="a DRAFT is never linked")]

    def run(self, batch):
        for row in batch.rows:
            if "DRAFT" in row.section.text and row.decision.linked:
                row.decision = replace(row.decision, linked=False,
                                       reason=ReasonCode.BELOW_THRESHOLD)


PLUGGED = PluggedStage("complete", "{after}", lambda settings, hub: DraftHold())
"""


def install_stage_plugin(root: Path, module: str, after: str = "decide") -> None:
    """`module` installed as a distribution on `root` (a folder on sys.path)."""
    (root / f"{module}.py").write_text(PLUGIN.replace("{after}", after))
    info = root / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        textwrap.dedent(f"""\
            [librarian.stages]
            draft-hold = {module}:PLUGGED
            """)
    )


class Priors:
    """A store that knows one span decided before and one row already decided as it is."""

    def __init__(self, done_chunk: str, prior: PriorDecision, span: str) -> None:
        self.done_chunk, self.prior, self.span = done_chunk, prior, span

    def unchanged(self, sections: Sequence[Section]) -> list[Skip]:
        return [
            Skip(line=s.line, chunk_id=s.chunk_id, reason=SkipCode.UNCHANGED, message="x")
            for s in sections
            if s.chunk_id == self.done_chunk
        ]

    def priors(self, sections: Sequence[Section]) -> dict[str, PriorDecision]:
        return {s.span_key: self.prior for s in sections if s.span_key == self.span}


def joint_slot() -> tuple[SourceLevelSlot, list[SlotRow]]:
    """A source-level slot whose calibrator reads the score alone, and rows of one source
    enough to link it as a whole."""
    hub = small_hub()
    cres = list(hub.ids)
    # A calibrator that reads the score alone: p = s(10 * (score - 0.5)).
    weights = tuple(10.0 if f == "score" else 0.0 for f in JOINT_FEATURES)
    model = SourceModel(
        PriorRule(0.5, 0.05, 0.5, 0.0), Calibrator(weights, -5.0, 1, JOINT_FEATURES), 0.9
    )
    rows = [
        SlotRow(
            "src",
            f"k{i}",
            f"text {i}",
            [ScoredHub(cres[i % len(cres)], 0.6), ScoredHub(cres[(i + 1) % len(cres)], 0.5)],
            None,
        )
        for i in range(MIN_SHAPE_ITEMS + 2)
    ]
    return SourceLevelSlot(model, hub, DecisionPolicy(global_cut=0.95)), rows


class Recorder:
    """Stages that say which of their methods ran (its dotted path), with what."""

    def __init__(self, path: str = "") -> None:
        self.path = path

    def __getattr__(self, name: str) -> Recorder:
        return Recorder(f"{self.path}.{name}".lstrip("."))

    def __call__(self, *args: Any) -> tuple[str, tuple[Any, ...]]:
        return self.path, args
