# Turns end with every fact they stated (apps/memories/services/validity.py): a turn that
# also stated a fact that still holds ends too, and a disputed fact's turns end until a
# reviewer confirms it. Stored data follows: each current turn whose message made an ended
# fact (one not replaced by a fact of that same message) ends with it, and each current turn
# whose message made a disputed fact ends at the dispute. `manage.py relink_history` applies
# the same rules again.

from django.db import migrations

END_WITH_ENDED_FACTS = """
UPDATE memories_memory AS turn
SET valid_to = fact.valid_to,
    superseded_by_id = fact.superseded_by_id,
    metadata = turn.metadata || jsonb_build_object('ended_with', fact.id::text)
FROM (
    SELECT DISTINCT ON (f.namespace_id, f.subject_id, f.source ->> 'message')
           f.id, f.namespace_id, f.subject_id, f.source ->> 'message' AS message, f.valid_to,
           f.superseded_by_id
    FROM memories_memory AS f
    WHERE f.kind = 'semantic' AND f.valid_to IS NOT NULL AND f.source ? 'message'
      AND f.status <> 'archived'
      AND NOT EXISTS (
          SELECT 1 FROM memories_memory AS successor
          WHERE successor.id = f.superseded_by_id
            AND successor.namespace_id = f.namespace_id
            AND successor.source ->> 'message' = f.source ->> 'message'
      )
    ORDER BY f.namespace_id, f.subject_id, f.source ->> 'message', f.valid_to DESC
) AS fact
WHERE turn.kind = 'episodic'
  AND turn.valid_to IS NULL
  AND fact.namespace_id = turn.namespace_id
  AND fact.subject_id = turn.subject_id
  AND fact.message = turn.source ->> 'message'
"""

END_WITH_DISPUTED_FACTS = """
UPDATE memories_memory AS turn
SET valid_to = COALESCE((fact.metadata ->> 'disputed_at')::timestamptz, fact.updated_at),
    metadata = turn.metadata || jsonb_build_object('ended_with', fact.id::text)
FROM memories_memory AS fact
WHERE turn.kind = 'episodic'
  AND turn.valid_to IS NULL
  AND fact.kind = 'semantic'
  AND fact.status = 'disputed'
  AND fact.valid_to IS NULL
  AND fact.source ? 'message'
  AND fact.namespace_id = turn.namespace_id
  AND fact.subject_id = turn.subject_id
  AND fact.source ->> 'message' = turn.source ->> 'message'
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0024_history_links"),
    ]

    operations = [
        migrations.RunSQL(END_WITH_ENDED_FACTS, migrations.RunSQL.noop),
        migrations.RunSQL(END_WITH_DISPUTED_FACTS, migrations.RunSQL.noop),
    ]
