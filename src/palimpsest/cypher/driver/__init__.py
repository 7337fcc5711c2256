"""The driver machinery under the statement modules: the executor every statement runs
through, the connection, the driver's errors, records and temporal values on the wire, causal
bookmarks, quiet vector parameters and the exact cosine re-scoring."""
