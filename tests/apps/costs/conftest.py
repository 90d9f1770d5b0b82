import pytest


@pytest.fixture
def costs_site(settings):
    """The project's own settings and URLs: the cost app and its router are mounted there."""
    return settings
