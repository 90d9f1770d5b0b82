"""/llms.txt is generated from what the site serves: the MCP server's tools and resources and
the methodology file the /methodology/ page renders, with links a model can follow."""

import re

from apps.agents import llms
from apps.agents.server import RESOURCES, TOOLS
from apps.leaderboard.methodology import SOURCE


def test_it_names_every_question_resource_and_rule_with_absolute_links(client):
    answered = client.get("/llms.txt")
    assert answered.status_code == 200
    assert answered["Content-Type"].startswith("text/plain")
    text = answered.content.decode()
    assert text.startswith("# inferboard\n\n> ")
    for spec in TOOLS:
        assert f"- `{spec.name}` ({spec.title}): " in text
    for found in RESOURCES:
        assert f"- `{found.uri}`: " in text
    anchors = re.findall(r"^## .+\{#([\w-]+)\}$", SOURCE.read_text(), flags=re.MULTILINE)
    assert anchors and all(f"(http://testserver/methodology/#{a})" in text for a in anchors)
    assert "http://testserver/mcp/" in text


def test_a_section_added_to_the_methodology_is_in_it(tmp_path, monkeypatch):
    source = tmp_path / "methodology.md"
    source.write_text(
        SOURCE.read_text() + "\n## Something new {#something-new}\n\nIt is defined here. More.\n"
    )
    monkeypatch.setattr(llms, "SOURCE", source)
    text = llms.llms_txt(base_url="https://example.org")
    assert (
        "- [Something new](https://example.org/methodology/#something-new): It is defined here."
        in text
    )
