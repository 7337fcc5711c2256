"""The suites that attack the product as a whole: the attack matrix and its probes
(``attack``), schema-driven fuzzing (``fuzz``), SIGKILLs during writes (``faults``), killed
consolidation workers (``crash``), and what they share (an API in its own process, a raw
HTTP/1.1 client, percentiles).

The product's tests run them small on every run; ``palimpsest bench attack``, ``fuzz``,
``faults`` and ``consolidate-crash`` run them large. Neither the product nor these suites
import the bench.
"""
