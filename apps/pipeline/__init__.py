"""The write pipeline: sessions with their turns and summaries, documents, jobs, extraction,
consolidation and its log, lifecycle sweeps, the LLM client, the Celery tasks, and the
messages, documents and jobs API. Writes through the store; above recall."""
