"""The tally's `ranked` counts the runs the default board ranks: a leaderboard point and the
board's rules passed. The board opens on the model and scenario with the most ranked
accelerators (leaderboard.selectors.widest_views); counting runs that fail the rules opened it
on a view with nothing to show."""

from django.db import migrations, models

KEY = "deployment_id, scenario_id, org_id, is_public, provenance"
RANKED_OLD = "(OLD.best_point_id IS NOT NULL AND OLD.rules_passed)"
RANKED_NEW = "(NEW.best_point_id IS NOT NULL AND NEW.rules_passed)"


def _function(old: str, new: str) -> str:
    return f"""
CREATE OR REPLACE FUNCTION runs_tally_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE runs_runtally SET runs = runs - 1
     WHERE deployment_id = OLD.deployment_id
       AND scenario_id IS NOT DISTINCT FROM OLD.scenario_id
       AND org_id IS NOT DISTINCT FROM OLD.org_id
       AND is_public = OLD.is_public AND provenance = OLD.provenance
       AND ranked = {old};
    DELETE FROM runs_runtally WHERE runs <= 0;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO runs_runtally ({KEY}, ranked, runs)
    VALUES (NEW.deployment_id, NEW.scenario_id, NEW.org_id, NEW.is_public, NEW.provenance,
            {new}, 1)
    ON CONFLICT ({KEY}, ranked) DO UPDATE SET runs = runs_runtally.runs + 1;
  END IF;
  RETURN NULL;
END $$;
DROP TRIGGER runs_tally_update ON runs_run;
CREATE TRIGGER runs_tally_update AFTER UPDATE ON runs_run FOR EACH ROW
  WHEN ((OLD.deployment_id, OLD.scenario_id, OLD.org_id, OLD.is_public, OLD.provenance, {old})
        IS DISTINCT FROM
        (NEW.deployment_id, NEW.scenario_id, NEW.org_id, NEW.is_public, NEW.provenance, {new}))
  EXECUTE FUNCTION runs_tally_change();
DELETE FROM runs_runtally;
INSERT INTO runs_runtally ({KEY}, ranked, runs)
  SELECT {KEY}, {new.replace("NEW.", "")}, count(*) FROM runs_run
  GROUP BY {KEY}, {new.replace("NEW.", "")};
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_function(RANKED_OLD, RANKED_NEW))


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            _function("(OLD.best_point_id IS NOT NULL)", "(NEW.best_point_id IS NOT NULL)")
        )


class Migration(migrations.Migration):
    dependencies = [("runs", "0012_run_tally")]

    operations = [
        migrations.AlterField(
            model_name="runtally",
            name="ranked",
            field=models.BooleanField(
                help_text="the runs have a leaderboard point and pass the board's rules "
                "(migration 0013)"
            ),
        ),
        migrations.RunPython(forwards, backwards),
    ]
