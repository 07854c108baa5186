"""A namespace's memory pages: the explorer (list, filters, search), bulk changes, purges and
their jobs; a memory's detail, edit, actions, deletion and feedback.

Who sees what: a namespace the user is not a member of is a 404 on every URL here (as in the
API); a member whose role is too low for a write gets 403. `viewer` reads; `editor` edits,
approves, archives, restores, rolls back and deletes single memories; `owner` also purges
and bulk-deletes. Superusers are owners everywhere. Every page that shows decrypted content
records that read in the audit log (ids, never text). One view and one template serve a page
and its htmx fragment.
"""

from apps.dashboard.memories.views.explorer import bulk, explorer, job, namespace_pick, purge
from apps.dashboard.memories.views.memory import (
    memory_action,
    memory_detail,
    memory_edit,
    memory_feedback,
    memory_remove,
)

__all__ = [
    "bulk",
    "explorer",
    "job",
    "memory_action",
    "memory_detail",
    "memory_edit",
    "memory_feedback",
    "memory_remove",
    "namespace_pick",
    "purge",
]
