"""A projection answers for the model asked, with that model's architecture, or says why it
has none: never another model's figures."""

import pytest
from django.core.management import call_command

from apps.projections import reference, selectors

pytestmark = pytest.mark.django_db

SEED_SHAPE = {"input_tokens": 20000, "output_tokens": 1000, "cache_hit_rate": 0.6}


def _publish(model: str, single_stream_tok_s: float = 150.0) -> None:
    """A published MI355X single stream of `model` on the seed's workload."""
    from apps.catalog.models import PublishedFigure

    PublishedFigure.objects.create(
        key=f"test-{model}",
        source_key="test",
        citation="a test's own figure",
        payload={
            "model": model,
            "accelerator": "MI355X",
            "gpus": 8,
            "scenario": {
                "input_tokens": 20000,
                "output_tokens": 1000,
                "prefix_cache_hit_rate": 0.6,
            },
            "single_stream_tok_s": single_stream_tok_s,
        },
    )


def test_a_model_whose_architecture_is_not_shipped_gets_no_architecture_never_glms():
    call_command("loadreference", no_inferencex=True, verbosity=0)
    _publish("Mystery-1T")  # even with a published run of its own
    found = selectors.projection_for_shape(model="Mystery-1T", **SEED_SHAPE)
    assert found == selectors.NoProjection("no architecture for this model")


def test_no_model_asked_reaches_no_models_architecture():
    call_command("loadreference", no_inferencex=True, verbosity=0)
    for model in (None, ""):
        found = selectors.projection_for_shape(model=model, **SEED_SHAPE)
        assert found == selectors.NoProjection(selectors.NO_MODEL)


def test_a_shipped_architecture_without_a_published_run_says_so():
    call_command("loadreference", no_inferencex=True, verbosity=0)
    found = selectors.projection_for_shape(model="Llama 3.1 70B", **SEED_SHAPE)
    assert found == selectors.NoProjection(selectors.NO_PUBLISHED_RUN)


def test_each_model_is_projected_with_its_own_architecture():
    call_command("loadreference", no_inferencex=True, verbosity=0)
    _publish("Llama 3.1 70B")
    llama = selectors.projection_for_shape(model="llama70b", **SEED_SHAPE)  # an alias
    glm = selectors.projection_for_shape(model="GLM 5.2", **SEED_SHAPE)
    assert isinstance(llama, dict) and isinstance(glm, dict)
    assert llama["model"] == "Llama 3.1 70B" and glm["model"] == "GLM 5.2"
    # Llama's dense 70B reads all its weights every step: nothing like GLM's curve
    llama_b200 = [p["output_tput_per_gpu"] for p in llama["series"]["B200"]["points"]]
    glm_b200 = [p["output_tput_per_gpu"] for p in glm["series"]["B200"]["points"]]
    assert llama_b200 != glm_b200
    # and the MI355X model passes through that model's own published stream
    assert llama["series"]["MI355X"]["points"][0]["interactivity"] == pytest.approx(150.0)
    assert glm["series"]["MI355X"]["points"][0]["interactivity"] == pytest.approx(213.0)
    arch = reference.architectures()["llama70b"]
    assert arch.name == "Llama 3.1 70B" and not arch.is_moe
