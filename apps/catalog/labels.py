"""How a deployment is named where people read it: a board row, a picker, a column heading.

One home for the naming rules, so that every list names a deployment the same way and no two
entries of one list read alike."""

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apps.catalog.models import Deployment

# A shell variable left in a recipe's command line ("-tp $TP", "--ep_size=${EP_SIZE}").
RECIPE_VARIABLE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")


def readable_flags(flags: Iterable[str]) -> list[str]:
    """The engine flags a label may show: those a reader can read as written.

    InferenceX's recipes keep the shell variables of their launch scripts ($TP, $EP_SIZE,
    $MAX_MODEL_LEN ...) and the source does not state most of their values. A flag still
    holding one tells a reader nothing: the ones whose value the row does state ($TP, $EP)
    repeat the parallelism the label already names, the rest are unknown. So labels leave
    them out; the run and deployment pages list every flag as written."""
    return [flag for flag in flags if flag and not RECIPE_VARIABLE.search(flag)]


def unique_labels[K](
    labels: Mapping[K, str], details: Mapping[K, Sequence[str]] | None = None
) -> dict[K, str]:
    """Each entry's label, made unique within the list: entries that read alike gain the first
    of their details (engine flags, most often) that tells them apart, and the ones still
    alike their id ("#12"), so that no picker or table offers two identical lines."""
    details = details or {}
    named = dict(labels)
    for keys in _alike(named):
        for depth in range(max((len(details.get(k, ())) for k in keys), default=0)):
            told = {k: _detail(details, k, depth) for k in keys}
            if len(set(told.values())) > 1:
                named.update({k: f"{named[k]} · {told[k]}" for k in keys if told[k]})
                break
    for keys in _alike(named):
        named.update({k: f"{named[k]} (#{k})" for k in keys})
    return named


def _alike[K](named: Mapping[K, str]) -> list[list[K]]:
    by_label: dict[str, list[K]] = defaultdict(list)
    for key, label in named.items():
        by_label[label].append(key)
    return [keys for keys in by_label.values() if len(keys) > 1]


def _detail[K](details: Mapping[K, Sequence[str]], key: K, depth: int) -> str:
    own = details.get(key, ())
    return own[depth] if depth < len(own) else ""


def deployment_names(deployments: Iterable["Deployment"]) -> dict[int, str]:
    """Deployment id -> its line in a picker (/compare/'s, the endpoint form's): model, GPUs,
    accelerator, engine and version, precision and parallelism, made unique within the list
    by its readable engine flags, else its id. Pass deployments with their model,
    accelerator and engine selected."""
    from apps.catalog.models import short_flag

    listed = list(deployments)
    return unique_labels(
        {
            d.pk: f"{d.model.name}: {d.gpus}×{d.accelerator.sku} {d.engine.name} "
            f"{d.engine_version or ''} {d.quant_weights} {d.parallelism_label or ''}".replace(
                "  ", " "
            ).strip()
            for d in listed
        },
        {d.pk: [short_flag(f) for f in readable_flags(d.engine_flags or [])] for d in listed},
    )
