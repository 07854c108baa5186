"""Adapters for LLM frameworks, each an optional extra of memoryhub-client:

- `memoryhub_client.integrations.langchain` (`pip install 'memoryhub-client[langchain]'`):
  `MemoryHubChatMessageHistory` and `MemoryHubRetriever`;
- `memoryhub_client.integrations.llama_index` (`pip install 'memoryhub-client[llama-index]'`):
  `MemoryHubRetriever` and `MemoryHubMemoryBlock`.

Each adapter takes a `Namespace` (from `MemoryHub`) or an `AsyncNamespace` (from
`AsyncMemoryHub`). With a `Namespace`, the framework's synchronous calls work, and its async
ones run the SDK's calls in a worker thread; with an `AsyncNamespace`, only the async ones
work (a synchronous call raises TypeError).

This package imports no framework: importing one of its modules without its extra raises an
ImportError that names the extra.
"""
