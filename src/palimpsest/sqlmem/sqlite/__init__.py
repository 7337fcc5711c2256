"""SQL Memory on SQLite: a file per scope, worker processes, the authorizer (layer 2).

Kept light: the worker processes import this package, never the store."""
