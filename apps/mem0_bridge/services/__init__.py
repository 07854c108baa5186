"""Writes of the Mem0 bridge: `add` as Mem0's client sends it, and the importer."""

from apps.mem0_bridge.services.adding import Mem0Add, mem0_memories_add
from apps.mem0_bridge.services.importing import ImportReport, mem0_records_import

__all__ = ["ImportReport", "Mem0Add", "mem0_memories_add", "mem0_records_import"]
