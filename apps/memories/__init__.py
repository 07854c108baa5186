"""The encrypted store: subjects and their data keys, memories and their versions; envelope
encryption (`crypto`, pure) and row encryption (`row_encryption`), the keyed-hash keyword
index, embeddings, and a memory's derived search fields; the store's services and selectors;
the memories, export and erase API. Above accounts; below recall and the pipeline."""
