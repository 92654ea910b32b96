"""Golden-set rows (what `librarian eval` reads) and the report it writes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from librarian.schemas.envelopes import CreId

Slice = Literal["positive", "hard_negative", "explicit", "update", "ambiguous"]
SLICES: tuple[Slice, ...] = ("positive", "hard_negative", "explicit", "update", "ambiguous")


# The upstream harness names these standards; any other is "OTHER" there. We also read
# our own framework ids (e.g. "nist_800_53") in their place.
UPSTREAM_STANDARDS = ("ASVS", "WSTG", "NIST_800_53", "PCI_DSS", "OWASP_CHEATSHEET", "OTHER")
GOLDEN_SCHEMA_VERSION = "0.1.0"
TextStyle = Literal["prose", "title"]


class GoldenInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    title_hint: str | None = None
    explicit_cre_ref: CreId | None = None
    prior_text: str | None = None
    source_standard: str | None = None


class GoldenExpected(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: Literal["linked", "review"]
    cre_ids: list[CreId] | None = None
    is_update: bool | None = None
    reason_code: str | None = None

    @model_validator(mode="after")
    def _linked_names_a_cre(self) -> GoldenExpected:
        if self.decision == "linked" and not self.cre_ids:
            raise ValueError("an expected decision of 'linked' needs cre_ids")
        return self


class GoldenProvenance(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ground_truth_source: str
    standard_version: str | None = None
    section_path: str | None = None


class GoldenRow(BaseModel):
    """One row of a golden set, in the upstream harness's format
    (`schemas/rfc/golden-dataset.schema.json`); `schema_version` and `provenance`, which
    that format requires, are optional here so older sets still read."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    schema_version: str | None = Field(default=None, pattern=r"^0\.\d+\.\d+$")
    slice: Slice
    input: GoldenInput
    expected: GoldenExpected
    provenance: GoldenProvenance | None = None
    notes: str | None = None


class Correct(BaseModel):
    correct: int
    total: int


class RecallAtK(BaseModel):
    k: int
    any_hit: int
    all_hit: int
    total: int


class Top1(BaseModel):
    retriever: Correct
    final: Correct


class Calibration(BaseModel):
    ece: float
    bins: int


class AutoLink(BaseModel):
    correct: int
    wrong: int
    expected_linked: int


class Routed(BaseModel):
    routed: int
    expected_review: int


class DecisionReport(BaseModel):
    threshold: float
    auto_link: AutoLink
    review: Routed


class SliceReport(BaseModel):
    top1_correct: int
    total: int
    auto_linked: int
    reviewed: int


class GroupReport(BaseModel):
    """The linkable rows of one text style, or of one style and framework."""

    rows: int
    top1: int
    recall_at_k: int
    ece: float
    mean_confidence: float
    auto_linked: int
    auto_link_wrong: int


class Draw(BaseModel):
    """One draw of `eval --reviewed K --draws N`: K reviewed rows per source, the rest scored."""

    model_config = ConfigDict(extra="forbid")

    seed: int
    auto_linked_share: float = Field(description="auto-linked, of the scored expected-linked rows")
    wrong_share: float | None = Field(description="realised share wrong of its auto-links")
    largest_source: str
    source_auto_linked: int = Field(description="the largest source's auto-links")
    source_wrong_share: float | None = Field(description="... and their realised share wrong")
    stated_estimate: float | None = Field(description="what the run said for the largest source")
    stated_bound: float | None
    guarantee: str | None = Field(
        default=None,
        description="which guarantee the run stated for the largest source: 'bound' (its "
        "auto-links) or 'links' (its links, reviewed and automatic)",
    )
    realised_share: float | None = Field(
        default=None,
        description="the share that guarantee bounds, measured against the answers",
    )
    certified_after: int | None = Field(
        default=None,
        description="--review-order plan: decisions after which the largest source's cut "
        "was first certified (None: not within K)",
    )


class DrawsSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    draws: int
    risk: str
    budget: float
    confidence: float
    mean_auto_linked: float
    mean_wrong: float = Field(description="mean realised share wrong, over draws that auto-linked")
    share_over_budget: float = Field(description="draws whose realised share wrong > budget")
    share_over_bound: float = Field(
        description="draws whose largest source's realised share wrong > its stated bound"
    )


class EvalReport(BaseModel):
    """Exactly the keys `librarian eval --json` writes."""

    model_config = ConfigDict(extra="forbid")

    rows: int
    slices: dict[str, int]
    explicit: Correct
    recall_at_k: RecallAtK
    top1: Top1
    calibration: Calibration
    decision: DecisionReport
    per_slice: dict[str, SliceReport]
    update_detection: Correct | None = Field(
        default=None,
        description="rows whose expected is_update is given: how many the safety stage got right",
    )
    per_style: dict[str, GroupReport] = {}
    per_framework: dict[str, GroupReport] = Field(
        default_factory=dict, description='keyed "style framework"'
    )
    reviewed: dict[str, int] | None = Field(
        default=None,
        description="--reviewed-first K: by source, the rows that stood for its reviewers' "
        "decisions (not scored); None: cold",
    )
    sources: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="by source: how it was linked (items, priors, decisions, threshold)",
    )
    draws: list[Draw] | None = Field(
        default=None, description="--draws N: one entry per random review sample"
    )
    draws_summary: DrawsSummary | None = None
