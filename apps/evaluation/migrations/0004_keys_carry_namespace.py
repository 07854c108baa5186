# Unique keys carry the namespace, as a distributed table's must; last, so that each still
# serves the lookups by its first columns.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('evaluation', '0003_case_language'),
        ('memories', '0019_version_namespace_required'),
        ('namespaces', '0006_recall_config'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='caseresult',
            name='one_result_per_case',
        ),
        migrations.RemoveConstraint(
            model_name='evalcase',
            name='eval_case_position',
        ),
        migrations.AddConstraint(
            model_name='caseresult',
            constraint=models.UniqueConstraint(fields=('run', 'case', 'namespace'), name='one_result_per_case'),
        ),
        migrations.AddConstraint(
            model_name='evalcase',
            constraint=models.UniqueConstraint(fields=('eval_set', 'position', 'namespace'), name='eval_case_position'),
        ),
    ]
