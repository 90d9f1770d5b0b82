"""Writes for accuracy: a document's accuracy results and items stored with its run."""

from django.db import models

from apps.accuracy.models import AccuracyItem, AccuracyResult
from workers import results as doc

TEXT_FIELDS = (models.CharField, models.TextField)


def _row[M: models.Model](model: type[M], source: object, **given: object) -> M:
    """A row whose columns are read from the document's fields of the same names (the
    models mirror workers/results.py); a text field the document leaves out is stored blank."""
    values = {}
    for column in model._meta.concrete_fields:
        if column.primary_key or column.name in given or not hasattr(source, column.name):
            continue
        value = getattr(source, column.name)
        values[column.attname] = "" if value is None and isinstance(column, TEXT_FIELDS) else value
    return model(**given, **values)


def accuracy_store(*, run, results: list[doc.AccuracyResult]) -> None:
    for result in results:
        stored = _row(AccuracyResult, result, run=run, deployment_id=run.deployment_id)
        stored.save()
        AccuracyItem.objects.bulk_create(
            [_row(AccuracyItem, item, result=stored) for item in result.items or []],
            batch_size=2_000,
        )


def accuracy_store_for_run(
    sender: object, *, run, document: doc.ResultDocument, **_: object
) -> None:
    """apps.runs.signals.run_stored: a landed document's accuracy results, with its run."""
    accuracy_store(run=run, results=document.accuracy)
