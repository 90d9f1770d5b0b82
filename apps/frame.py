"""The site frame's template library (`{% load frame %}`): navigation state, vendored chart
code, charts with their text alternative, and how pages spell a slug or a price tier.

Site-level, below every app (registered in settings.TEMPLATES as the "frame" library): every
app's templates load it, so it imports no app. It lived in the board's app before, which made
every other app's pages depend on the board (issue 41; tests/test_module_layout.py reads the
`{% load %}` lines).
"""

from django import template
from django.templatetags.static import static
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from workers import accelerator_specs

register = template.Library()

# One place names the vendored Plotly bundle (static/vendor/plotly-basic/README.md).
PLOTLY = "vendor/plotly-basic/plotly-basic-4.1.1.min.js"

# How every page spells a price tier: the label the accelerators file gives each of its tiers
# (workers/accelerator_specs.py; apps.costs.formulas.Tier's values, a test keeps the keys
# equal to them). One vocabulary, where the board once said "owning hyperscaler" and the cost
# pages "owning (hyperscaler)". apps.costs.reference reads it from here.
TIER_LABELS: dict[str, str] = {
    name: tier["label"] for name, tier in accelerator_specs.reference()["tiers"].items()
}


@register.filter
def label(value):
    """A slug as people read it: owning_hyperscaler -> owning hyperscaler."""
    return str(value).replace("_", " ") if value else value


@register.filter
def tier_label(value):
    """A price tier as every page spells it (TIER_LABELS), else the slug as people read it."""
    return TIER_LABELS.get(str(value), label(value))


# Accuracy metrics as people read them (GSM8K's two answer extractions, as lm-eval names them).
METRIC_WORDS: dict[str, str] = {
    "em_strict": "exact match, strict (the answer after “####”, as asked)",
    "em_flexible": "exact match, flexible (the last number in the reply)",
}


@register.filter
def metric_words(value):
    """An accuracy metric's key in words (METRIC_WORDS), else the key as people read it."""
    return METRIC_WORDS.get(str(value), label(value))


@register.filter
def price_sheet_text(sheet, tier):
    """What priced a page, from its PriceSheet (apps.costs.prices) and reference tier."""
    return sheet.describe(tier_label(tier))


@register.simple_tag(takes_context=True)
def nav_link(context, target: str, text: str) -> str:
    """A nav link marked aria-current="page" on its section: exact for the home page, by path
    prefix for the others (so /runs/12/ marks "Runs")."""
    try:
        href = reverse(target)
    except NoReverseMatch:
        href = target
    request = context.get("request")
    path = request.path if request else ""
    current = path == href if href == "/" else path.startswith(href)
    if current:
        return format_html('<a href="{}" aria-current="page">{}</a>', href, text)
    return format_html('<a href="{}">{}</a>', href, text)


@register.simple_tag
def chart_scripts() -> str:
    """The chart code, for pages that draw charts only (deferred: it never blocks parsing)."""
    return format_html(
        '<script src="{}" defer></script><script src="{}" defer></script>',
        static(PLOTLY),
        static("js/charts.js"),
    )


@register.inclusion_tag("includes/chart.html")
def chart(figure: dict, chart_id: str, figure_id: str, embed: str = "") -> dict:
    """A chart with its text alternative: the plot (or, when there is nothing to draw, the
    reason in words) and a keyboard-reachable data table of every plotted point. `embed` is
    the /embed/ URL of this chart, for the "copy embed code" control."""
    from apps.charts import figure_table  # below every app, like this library

    title = (figure.get("layout", {}).get("title") or {}).get("text", "")
    return {
        "figure": figure,
        "chart_id": chart_id,
        "figure_id": figure_id,
        "title": title,
        "table": figure_table(figure),
        "empty": figure.get("empty"),
        "embed": embed,
    }


@register.filter
def get_item(mapping, key):
    return mapping.get(key) if mapping else None
