# The history links that lived in metadata become the column:
# - a fact's "superseded_by" (its successor's id) is the superseded_by column;
# - a turn marked "outdated_by" (its fact was corrected) ends with that fact: the fact's
#   valid_to and successor, and "ended_with" naming it (apps/memories/services/validity.py).
# Both keys leave the metadata. `manage.py relink_history` applies the full rules again.

from django.db import migrations

LINK_SUCCESSORS = """
UPDATE memories_memory AS old
SET superseded_by_id = successor.id,
    metadata = old.metadata - 'superseded_by'
FROM memories_memory AS successor
WHERE old.metadata ? 'superseded_by'
  AND old.superseded_by_id IS NULL
  AND successor.namespace_id = old.namespace_id
  AND successor.id::text = old.metadata ->> 'superseded_by'
"""

DROP_DANGLING = """
UPDATE memories_memory SET metadata = metadata - 'superseded_by' WHERE metadata ? 'superseded_by'
"""

END_OUTDATED_TURNS = """
UPDATE memories_memory AS turn
SET valid_to = fact.valid_to,
    superseded_by_id = fact.superseded_by_id,
    metadata = (turn.metadata - 'outdated_by') || jsonb_build_object('ended_with', fact.id::text)
FROM (
    SELECT DISTINCT ON (namespace_id, subject_id, source ->> 'message')
           id, namespace_id, subject_id, source ->> 'message' AS message, valid_to,
           superseded_by_id
    FROM memories_memory
    WHERE kind = 'semantic' AND valid_to IS NOT NULL AND source ? 'message'
    ORDER BY namespace_id, subject_id, source ->> 'message', valid_to DESC
) AS fact
WHERE turn.kind = 'episodic'
  AND turn.metadata ? 'outdated_by'
  AND turn.valid_to IS NULL
  AND fact.namespace_id = turn.namespace_id
  AND fact.subject_id = turn.subject_id
  AND fact.message = turn.source ->> 'message'
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0023_superseded_by"),
    ]

    operations = [
        migrations.RunSQL(LINK_SUCCESSORS, migrations.RunSQL.noop),
        migrations.RunSQL(DROP_DANGLING, migrations.RunSQL.noop),
        migrations.RunSQL(END_OUTDATED_TURNS, migrations.RunSQL.noop),
    ]
