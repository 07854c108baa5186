"""Finding memories: hybrid ranking (`ranking`, pure), the recall statements (`statements`)
and their orchestration (`search`), subject indexes, the recall log, and the recall API.
Reads the store; above it."""
