"""A plain BM25 over one conversation's messages (pure; ``eval beam --mode bm25``).

The baseline issue 42 compares ``search`` with: each message one document (its
``"<role>: <text>"`` line), lower-cased word tokens, English stop words out, no stemming,
Okapi BM25 with Lucene's idf. No database and no model: it runs in seconds.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from palimpsest_bench.recall_data import Dataset

K1 = 1.2
B = 0.75
_WORD = re.compile(r"\w+")
_STOP_TEXT = """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


def tokens(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


@dataclass(frozen=True, slots=True)
class Index:
    ids: tuple[str, ...]
    terms: tuple[Counter[str], ...]
    lengths: tuple[int, ...]
    df: Counter[str]

    @classmethod
    def of(cls, docs: Sequence[tuple[str, str]]) -> Index:
        """``docs``: (id, text) pairs."""
        terms = tuple(Counter(tokens(text)) for _, text in docs)
        df: Counter[str] = Counter()
        for t in terms:
            df.update(t.keys())
        return cls(tuple(i for i, _ in docs), terms, tuple(sum(t.values()) for t in terms), df)

    def search(self, query: str, k: int, k1: float = K1, b: float = B) -> list[str]:
        """The ids of the ``k`` best-scoring documents (ties by position); none scores 0."""
        n = len(self.ids)
        if not n:
            return []
        avg = sum(self.lengths) / n or 1.0
        words = set(tokens(query))
        idf = {w: math.log(1 + (n - self.df[w] + 0.5) / (self.df[w] + 0.5)) for w in words}
        scored: list[tuple[float, int]] = []
        for i, (tf, length) in enumerate(zip(self.terms, self.lengths, strict=True)):
            s = 0.0
            for w in words:
                f = tf.get(w, 0)
                if f:
                    s += idf[w] * f * (k1 + 1) / (f + k1 * (1 - b + b * length / avg))
            if s > 0:
                scored.append((-s, i))
        scored.sort()
        return [self.ids[i] for _, i in scored[:k]]


def rank_all(ds: Dataset, k: int) -> list[list[str]]:
    """One ranking per query of ``ds``, each over its owner's units only."""
    units: dict[str, list[tuple[str, str]]] = {}
    for d in ds.docs:
        units.setdefault(d.owner, []).extend(d.units)
    indexes = {owner: Index.of(docs) for owner, docs in units.items()}
    empty = Index.of([])
    return [indexes.get(q.owner, empty).search(q.text, k) for q in ds.queries]
