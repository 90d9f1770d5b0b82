"""`manage.py importresults FILE`: import a peer tool's result file into the database."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.accounts.services import organization_get_or_create
from apps.imports.services import import_ingest
from apps.runs.services import IdempotencyConflict
from workers.importers import ImportFailure
from workers.importers.cli import add_import_arguments
from workers.importers.facts import facts_from_arguments


class Command(BaseCommand):
    help = (
        "Import a result file from a peer tool (vLLM bench serve, sglang bench_serving, "
        "aiperf, guidellm, inference-perf, lm-eval, InferenceX) as imported runs. The format "
        "is sniffed unless --format is given; deployment facts the file does not state come "
        "from --deployment YAML or flags. Re-importing the same file stores nothing new."
    )

    def add_arguments(self, parser) -> None:
        add_import_arguments(parser)
        parser.add_argument("--org", metavar="ORG", help="organization slug (created if needed)")
        parser.add_argument("--private", action="store_true", help="visible to ORG only")

    def handle(self, *args, **options) -> None:
        if options["private"] and not options["org"]:
            raise CommandError("--private needs --org: a private run belongs to an organization")
        try:
            org = organization_get_or_create(slug=options["org"]) if options["org"] else None
            outcome = import_ingest(
                **self._inputs(options), org=org, is_public=not options["private"]
            )
        except (ImportFailure, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        except IdempotencyConflict as exc:
            raise CommandError(
                "this file was already imported by another organization; nothing stored"
            ) from exc
        for result in outcome.results:
            if result.created:
                self.stdout.write(f"stored: run {result.run.pk} ({result.run.idempotency_key})")
            else:
                self.stdout.write(
                    f"already imported as run {result.run.pk} ({result.run.idempotency_key})"
                )
        if outcome.records_added:
            self.stdout.write(f"{outcome.records_added} per-request record(s) added")
        present = len(outcome.results) - outcome.created
        self.stdout.write(f"{outcome.created} new run(s), {present} already present")
        if present:
            # The file's hash is the key: other facts for the same bytes do not make a new run.
            self.stdout.write("runs already present keep the facts they were first imported with")

    def _inputs(self, options: dict) -> dict:
        path = Path(options["file"])
        deployment = Path(options["deployment"]) if options["deployment"] else None
        return {
            "data": _read(path),
            "filename": path.name,
            "facts": facts_from_arguments(
                options, _read(deployment).decode("utf-8") if deployment else None
            ),
            "format_name": options["format_name"],
            "companions": [(_read(Path(p)), Path(p).name) for p in options["records"]],
        }


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ImportFailure(f"{path}: {exc.strerror or exc}") from None
