from pathlib import Path

import pytest

from tests.apps.imports.files import H200_FACTS


@pytest.fixture
def facts_file(tmp_path) -> Path:
    path = tmp_path / "deployment.yaml"
    path.write_text(H200_FACTS)
    return path
