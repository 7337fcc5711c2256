"""The pure rules of each plane: no I/O, no driver, no core.

A module here imports only ``errors``, ``config``, ``identity``, other ``domain`` modules, the
standard library and third-party packages (``tests/unit/test_layers.py`` holds it). By plane:

- ``time``: wire timestamps (``timeparse``), time expressions in text (``timerefs``) and the
  day ranges they resolve to (``dateranges``);
- ``ranking``: what recall returns and in what order: fusion and levers (``fusion``), BM25
  (``fulltext``), query cues (``cues``), near-duplicates (``dedup``) and the token budget
  (``packing``);
- ``documents``: Markdown chunking (``markdown``), revisions (``revisions``), where mentions
  land after an edit (``mention_places``) and conversation documents (``conversation``);
- ``notes``: note values (``values``), namespaced keys (``namespaces``) and memory-file paths
  (``memory_paths``);
- ``names``: the identity of an entity, type or predicate name.
"""
