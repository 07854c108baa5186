"""Token counting for every app that counts (the store at write time, context assembly, the
evaluation): exact OpenAI encodings offline, Hugging Face tokenizers, the model table. The
lowest package under apps: it imports no app."""
