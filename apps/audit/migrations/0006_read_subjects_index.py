"""Dashboard reads of several people's memories, found by each person: a partial GIN index on
`details -> 'subjects'` (only the events that have it), built without locking the appends."""

import django.contrib.postgres.indexes
import django.db.models.fields.json
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("audit", "0005_viewer_indexes")]

    operations = [
        AddIndexConcurrently(
            model_name="auditevent",
            index=django.contrib.postgres.indexes.GinIndex(
                django.db.models.fields.json.KeyTransform("subjects", "details"),
                condition=models.Q(("details__has_key", "subjects")),
                name="audit_read_subjects",
            ),
        ),
    ]
