"""Paired comparison of two evals of the same golden rows (`librarian eval --rows FILE`).

Per style and framework: the rows whose first suggestion became right (up) or wrong
(down), and the exact McNemar p-value (a two-sided binomial test on the discordant rows).
A total can hide a group unlike the rest, so every group is tested on its own, and the
groups whose sections map (nearly) one to one, where linking a source as a whole matters
most, are named apart. Pure: it reads records, never a model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from librarian.schemas.evaluation import GoldenRow
from librarian.training.golden import framework_of

# A group loses when its down rows beat its up rows at this McNemar p-value.
LOSS_P = 0.05
# A framework maps one to one when at least this share of its sections share none of
# their answers with another section (owasp_ai_exchange 0.97, wstg 0.88; nist_800_53 0.08).
ONE_TO_ONE = 0.85
ALL = "(all)"


@dataclass(frozen=True)
class PairedGroup:
    name: str
    rows: int
    before: int
    after: int
    up: int
    down: int
    changed_first: int  # rows whose first suggestion changed (right or wrong)
    p: float
    one_to_one: bool

    @property
    def loses(self) -> bool:
        return self.down > self.up and self.p < LOSS_P


def mcnemar(up: int, down: int) -> float:
    """The exact two-sided McNemar p-value of `up` against `down` discordant rows."""
    from scipy.stats import binomtest

    return float(binomtest(up, up + down).pvalue) if up + down else 1.0


def one_to_one_frameworks(rows: Sequence[GoldenRow]) -> set[str]:
    """Frameworks whose linked sections nearly all have answers of their own: at least
    ONE_TO_ONE of their sections (a section's prose and title are one) share no answer CRE
    with another section."""
    answers: dict[str, dict[str, set[str]]] = {}  # framework: section: its answers
    for row in rows:
        cres = row.expected.cre_ids or []
        if row.expected.decision != "linked" or not cres:
            continue
        path = row.provenance.section_path if row.provenance is not None else None
        answers.setdefault(framework_of(row), {}).setdefault(path or row.id, set()).update(cres)
    out: set[str] = set()
    for framework, sections in answers.items():
        uses: dict[str, int] = {}
        for answer in sections.values():
            for cre in answer:
                uses[cre] = uses.get(cre, 0) + 1
        alone = sum(all(uses[c] == 1 for c in answer) for answer in sections.values())
        if len(sections) >= 8 and alone >= ONE_TO_ONE * len(sections):
            out.add(framework)
    return out


def paired_groups(
    before: Mapping[str, Mapping[str, object]],
    after: Mapping[str, Mapping[str, object]],
    one_to_one: set[str],
) -> list[PairedGroup]:
    """Each group's paired counts over the ranked rows both evals scored, the total first
    and then the one-to-one groups together."""
    pairs: dict[str, list[tuple[bool, bool, bool]]] = {}
    for rid, row in after.items():
        old = before.get(rid)
        if old is None or not row.get("ranked") or not old.get("ranked"):
            continue
        group = str(row["group"])
        changed = "first" in old and "first" in row and old["first"] != row["first"]
        pair = (bool(old["top1"]), bool(row["top1"]), changed)
        names = [ALL, group]
        if group.split(" ", 1)[-1] in one_to_one:
            names.append("(one to one)")
        for name in names:
            pairs.setdefault(name, []).append(pair)
    out = []
    for name in sorted(pairs, key=lambda n: (not n.startswith("("), n)):
        rows = pairs[name]
        up = sum(1 for x, y, _ in rows if y and not x)
        down = sum(1 for x, y, _ in rows if x and not y)
        out.append(
            PairedGroup(
                name,
                len(rows),
                sum(x for x, _, _ in rows),
                sum(y for _, y, _ in rows),
                up,
                down,
                sum(c for _, _, c in rows),
                mcnemar(up, down),
                name == "(one to one)" or name.split(" ", 1)[-1] in one_to_one,
            )
        )
    return out


def table(groups: Sequence[PairedGroup]) -> str:
    head = f"{'group':34s} {'rows':>5s} {'before':>6s} {'after':>6s} {'up':>4s} {'down':>4s}"
    lines = [head + f" {'changed':>7s}  McNemar p"]
    for g in groups:
        mark = "  LOSES" if g.loses else ""
        name = g.name + (" [1:1]" if g.one_to_one and not g.name.startswith("(") else "")
        lines.append(
            f"{name:34s} {g.rows:5d} {g.before:6d} {g.after:6d} {g.up:4d} {g.down:4d} "
            f"{g.changed_first:7d}  {g.p:.3g}{mark}"
        )
    return "\n".join(lines)
