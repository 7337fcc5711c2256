"""The domain's types: models, fact rows, drafts, turns, the embedding state. No I/O and
nothing of ``cypher/`` (the constraints and indexes are ``cypher/schema.py``'s, applied at
start-up by ``cypher/indexes.py``)."""
