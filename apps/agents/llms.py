"""/llms.txt (llmstxt.org): the product, its questions and its rules in a few paragraphs with
links, generated from what the site itself serves: the questions are the MCP server's tools
(their docstrings), the rules are docs/methodology.md's sections (the file /methodology/
renders), so neither can say something the server or the methodology page does not."""

from __future__ import annotations

import re
from dataclasses import dataclass

from apps.agents.server import RESOURCES, TOOLS  # imported there: every one registered
from apps.leaderboard.methodology import SOURCE

SUMMARY = (
    "inferboard measures LLM inference deployments like for like (throughput, latency, "
    "accuracy and $/Mtok) and answers which accelerator serves a model cheaper at a stated "
    "SLO, with the origin of every figure."
)
# "## Title {#anchor}", the methodology's sections (the page's anchors are these).
HEADING = re.compile(r"^##\s+(?P<title>.+?)\s*\{#(?P<anchor>[\w-]+)\}\s*$")


@dataclass(frozen=True)
class Section:
    title: str
    anchor: str
    gist: str  # its first sentence


def methodology_sections(text: str) -> list[Section]:
    """The methodology's top-level sections, each with its first sentence."""
    sections: list[Section] = []
    heading: re.Match[str] | None = None
    lines: list[str] = []
    for line in [*text.splitlines(), "## end {#end}"]:
        found = HEADING.match(line)
        if found is None:
            lines.append(line)
            continue
        if heading is not None:
            sections.append(Section(heading["title"], heading["anchor"], _first_sentence(lines)))
        heading, lines = found, []
    return sections


def _first_sentence(lines: list[str]) -> str:
    """The first sentence of the first paragraph (a list's items read as one), unmarked."""
    paragraph: list[str] = []
    for line in lines:
        if not line.strip():
            if paragraph:
                break
            continue
        if not line.startswith("#"):
            paragraph.append(line.strip().removeprefix("- "))
    text = " ".join(paragraph).replace("**", "")
    return re.split(r"(?<=[.?!])\s+(?=[A-Z`(\"])", text, maxsplit=1)[0].strip()


def _gist(doc: str | None) -> str:
    """A docstring's first sentence, on one line."""
    return _first_sentence((doc or "").splitlines())


def llms_txt(*, base_url: str) -> str:
    text = SOURCE.read_text(encoding="utf-8")
    questions = [f"- `{t.name}` ({t.title}): {_gist(t.function.__doc__)}" for t in TOOLS]
    resources = [f"- `{spec.uri}`: {_gist(spec.function.__doc__)}" for spec in RESOURCES]
    rules = [
        f"- [{s.title}]({base_url}/methodology/#{s.anchor}): {s.gist}"
        for s in methodology_sections(text)
    ]
    return "\n".join(
        [
            "# inferboard",
            "",
            f"> {SUMMARY}",
            "",
            "Ask it through its MCP server (streamable HTTP, stateless, JSON responses) at "
            f"{base_url}/mcp/, or its REST API at {base_url}/api/v1/ (OpenAPI: "
            f"{base_url}/api/v1/openapi.json). Without a token you see public data; with an "
            "API token (Authorization: Bearer) your organization's private runs too. Every "
            "tool result carries a citation: the page showing the same figures, and each "
            "figure's origin and date. Quote them with the figures.",
            "",
            "Every figure is defined once, in the methodology, and computed by one function "
            f"everywhere. Pages: the [leaderboard]({base_url}/), [the answer]({base_url}/answer/"
            f"), [costs]({base_url}/costs/), [runs]({base_url}/runs/) and the [methodology]("
            f"{base_url}/methodology/).",
            "",
            "## Questions (MCP tools)",
            "",
            *questions,
            "",
            "## Resources (MCP)",
            "",
            *resources,
            "",
            "## Rules (the methodology)",
            "",
            *rules,
            "",
            "## Data",
            "",
            f"- [Every public run's document]({base_url}/data/runs.jsonl): JSON lines",
            f"- [Every public point]({base_url}/data/points.csv): CSV (also points.parquet)",
            "",
        ]
    )
