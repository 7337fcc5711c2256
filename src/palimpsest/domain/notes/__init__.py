"""Notes: note values, namespaced keys and memory-file paths."""
