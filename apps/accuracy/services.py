from apps.accuracy.models import AccuracyItem, AccuracyResult
from workers import results as doc


def accuracy_store(*, run, results: list[doc.AccuracyResult]) -> None:
    for result in results:
        stored = AccuracyResult.objects.create(
            run=run,
            protocol=result.protocol,
            protocol_hash=result.protocol_hash or "",
            task=result.task,
            metric=result.metric,
            n=result.n,
            correct=result.correct,
            score=result.score,
            stderr=result.stderr,
            ci_low=result.ci_low,
            ci_high=result.ci_high,
            failures=result.failures,
            data_hash=result.data_hash or "",
        )
        AccuracyItem.objects.bulk_create(
            [
                AccuracyItem(
                    result=stored,
                    item_id=item.item_id,
                    correct=item.correct,
                    extracted=item.extracted or "",
                    gold=item.gold or "",
                    finish_reason=item.finish_reason or "",
                    output_tokens=item.output_tokens,
                    failure=item.failure or "",
                    response=item.response or "",
                )
                for item in result.items or []
            ],
            batch_size=2_000,
        )
