"""Training over the stub embedder: the card, the files, verification on load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from librarian.artifacts.card import ModelDirError, has_models, load_trained, recorded_embedder
from librarian.factory import assemble
from librarian.pipeline import components as ids
from librarian.pipeline import one_shot
from librarian.pipeline.components import stage_ids
from librarian.retrieval.index import build_index
from librarian.schemas.envelopes import AdversarialFlag, LinkProposal, ReviewItem
from librarian.schemas.records import Section
from librarian.settings import LinkerSettings
from librarian.training.links import links_digest, load_links
from librarian.training.train import TrainingError, TrainOptions, save, train
from tests.stubs import StubEmbedder, small_hub

TEXTS = {
    "200-001": ["rotate session token after login", "session token rotation at login"],
    "300-001": ["parameterized queries against sql injection", "sql injection queries"],
    "400-000": ["cryptography", "strong cryptography everywhere"],
}


def links_file(tmp_path: Path) -> Path:
    rows = []
    for fw in ("alpha", "beta", "gamma", "delta"):
        for n, (cre, texts) in enumerate(TEXTS.items()):
            for m, text in enumerate(texts):
                text = f"{text} {fw}"
                rows.append(
                    {
                        "framework_id": fw,
                        "section_id": f"{n}.{m}",
                        "text": text,
                        "cre_id": cre,
                        "link_type": "LinkedTo",
                    }
                )
        # A link the retriever gets wrong, so every fold has both outcomes.
        rows.append(
            {
                "framework_id": fw,
                "section_id": "w",
                "text": f"session management {fw}",
                "cre_id": "400-000",
                "link_type": "LinkedTo",
            }
        )
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "links.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# The prose of a few linked sections (framework, section id): more evidence, other style.
PROSE = {
    (fw, "0.0"): f"each time a user logs in the session token is rotated ({fw})"
    for fw in ("alpha", "beta", "gamma", "delta")
}


def trained(tmp_path: Path, exclude: tuple[str, ...] = ()) -> Path:
    hub, embedder = small_hub(), StubEmbedder()
    links = load_links(links_file(tmp_path))
    options = TrainOptions(
        tuple(links), ("links.jsonl",), links_digest(links), PROSE, exclude_frameworks=exclude
    )
    result = train(options, hub, embedder, build_index(hub, embedder, None))
    save(result, tmp_path / "models")
    return tmp_path / "models"


def test_card_says_what_data_was_seen(tmp_path: Path) -> None:
    models = trained(tmp_path, exclude=("gamma",))
    card = json.loads((models / "card.json").read_text())
    assert card["data"]["frameworks_seen"] == {"alpha": 8, "beta": 8, "delta": 8}
    assert card["data"]["sections_by_style"] == {"prose": 3, "title": 21}
    assert card["data"]["frameworks_excluded"] == ["gamma"]
    assert len(card["data"]["links_sha256"]) == 64
    assert card["data"]["links_sources"] == ["links.jsonl"]
    assert 0.0 <= card["threshold"] <= 1.0
    assert card["out_of_fold"]["rows"] == 24
    assert card["out_of_fold_by_style"]["prose"]["rows"] == 3
    assert card["files"].keys() == {"calibrator.json", "evidence.npz", "source.json"}
    # Every linked section describes its hubs, gamma's excluded: 6 titles and 1 prose each.
    from librarian.retrieval.evidence import EvidenceIndex

    evidence = EvidenceIndex.load(models / "evidence.npz", small_hub().ids, 1024)
    assert sorted(set(evidence.frameworks)) == ["alpha", "beta", "delta"]
    assert evidence.size == 24
    # One root branch: nothing to route between, so no branch classifier is written.
    assert card["router"]["trained"] is False
    assert not (models / "router.json").exists()


def test_training_is_reproducible(tmp_path: Path) -> None:
    first = (trained(tmp_path / "a") / "calibrator.json").read_text()
    second = (trained(tmp_path / "b") / "calibrator.json").read_text()
    assert first == second


def test_unknown_excluded_framework_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TrainingError, match="nist_800_999"):
        trained(tmp_path, exclude=("nist_800_999",))


def test_one_framework_left_cannot_be_calibrated_out_of_fold(tmp_path: Path) -> None:
    with pytest.raises(TrainingError, match="at least two frameworks"):
        trained(tmp_path, exclude=("alpha", "beta", "gamma"))


def test_too_little_data_is_a_training_error(tmp_path: Path) -> None:
    with pytest.raises(TrainingError, match="right and wrong"):
        trained(tmp_path, exclude=("alpha", "beta"))


def test_changed_file_is_refused_on_load(tmp_path: Path) -> None:
    models = trained(tmp_path)
    assert load_trained(models).calibrator.fitted_on == 32  # 28 titles, 4 prose
    (models / "calibrator.json").write_text((models / "calibrator.json").read_text() + " ")
    with pytest.raises(ModelDirError, match="does not match its card"):
        load_trained(models)


def test_models_read_with_another_hub_say_so(tmp_path: Path) -> None:
    models = trained(tmp_path)
    same = load_trained(models, small_hub().content_hash, StubEmbedder.fingerprint)
    assert same.same_hub and ", trained on" not in same.description
    other = load_trained(models, "another-hub", StubEmbedder.fingerprint)
    assert not other.same_hub
    assert "trained on another hub catalogue" in other.description


def test_models_calibrated_on_another_embedder_are_refused(tmp_path: Path) -> None:
    models = trained(tmp_path)
    with pytest.raises(ModelDirError, match="calibrated on the scores of embedder"):
        load_trained(models, small_hub().content_hash, "another-embedder")


def test_the_card_records_a_non_default_embedder_relative_to_it(tmp_path: Path) -> None:
    hub, embedder = small_hub(), StubEmbedder()
    links = load_links(links_file(tmp_path))
    options = TrainOptions(tuple(links), ("links.jsonl",), links_digest(links), PROSE)
    result = train(options, hub, embedder, build_index(hub, embedder, None))
    save(result, tmp_path / "plain")
    assert recorded_embedder(tmp_path / "plain") is None  # the packaged MiniLM
    int8 = tmp_path / "embedders" / "int8"
    int8.mkdir(parents=True)
    save(result, tmp_path / "models", int8)
    card = json.loads((tmp_path / "models" / "card.json").read_text())
    assert card["models"]["embedding_model"] == "../embedders/int8"
    assert recorded_embedder(tmp_path / "models") == int8.resolve()
    int8.rmdir()
    with pytest.raises(ModelDirError, match="which is missing"):
        recorded_embedder(tmp_path / "models")


def test_directory_without_card_holds_no_models(tmp_path: Path) -> None:
    assert not has_models(tmp_path)
    with pytest.raises(ModelDirError, match="librarian train"):
        load_trained(tmp_path)


def section(text: str) -> Section:
    from librarian.pipeline.ingest import section_from_text

    return section_from_text(text)


def test_linker_uses_the_calibrator_and_its_threshold(tmp_path: Path) -> None:
    hub, embedder = small_hub(), StubEmbedder()
    models = load_trained(trained(tmp_path), hub.content_hash)
    linker = assemble(
        LinkerSettings(cache_dir=None, top_k=4),
        hub,
        embedder,
        build_index(hub, embedder, None),
        trained=models,
    )
    assert linker.policy.global_cut == models.threshold
    assert stage_ids(linker.description())["score"] == ids.SCORE_JOINT
    assert stage_ids(linker.description())["source-level"] == ids.SOURCE_LEVEL_JOINT
    env = one_shot.link(linker, [section("rotate session token after login")], "r").envelopes[0]
    confidence = (
        env.links[0].confidence
        if isinstance(env, LinkProposal)
        else (env.suggested_links or [])[0].confidence
    )
    scores = [c.score_vector for c in env.retrieval.candidates]
    assert confidence == pytest.approx(models.calibrator.probabilities(scores)[0], abs=1e-6)


def test_negated_section_above_threshold_goes_to_review() -> None:
    hub, embedder = small_hub(), StubEmbedder()
    settings = LinkerSettings(cache_dir=None, threshold=0.1, top_k=4)
    linker = assemble(settings, hub, embedder, build_index(hub, embedder, None))
    plain, negated = one_shot.link(
        linker,
        [
            section("rotate session token after login"),
            section("never rotate session token after login"),
        ],
        "r",
    ).envelopes
    assert isinstance(plain, LinkProposal)
    assert isinstance(negated, ReviewItem)
    assert negated.update_detection.adversarial_flags == [AdversarialFlag.NEGATION_MISMATCH]
    assert negated.suggested_links and negated.suggested_links[0].cre_id == "200-001"


def test_an_edited_card_threshold_is_refused(tmp_path: Path) -> None:
    models = trained(tmp_path)
    card = models / "card.json"
    data = json.loads(card.read_text())
    data["threshold"] = 0.01
    card.write_text(json.dumps(data))
    with pytest.raises(ModelDirError, match="changed after training"):
        load_trained(models)
