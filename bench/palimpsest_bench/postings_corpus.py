"""The growth bench's scopes in memory, for ``bench postings-sim``: every chunk's stored
full-text representation and the scope's term statistics, built exactly as
``import_documents`` builds them (``recall_load.documents_for``'s Markdown, parsed, with the
title-and-headings context and the neighbourhood, ``fulltext.Stored``, ``StatsDelta``), and
the product's own full-text leg run over them with a stand-in for Lucene that counts the
rows each of the leg's reads returns.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from palimpsest.cypher import recall as q
from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.domain.documents import markdown
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking.fulltext import KindStats, StatsDelta, Stored
from palimpsest.domain.ranking.fusion import Source
from palimpsest.identity import ScopeRef
from palimpsest.resolvers import term_index
from palimpsest.resolvers.recall import legs, text
from palimpsest_bench.recall_load import ScopePlan, TextGen, documents_for

Ids = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Corpus:
    """One scope's chunks as the leg reads them (row ``i`` has id ``ids[i]``: zero-padded
    load order, so ties by id fall as the rows were written), its postings per term (rows
    ascending, with the term's frequency in each) and its statistics."""

    ids: list[str]
    ft: list[str]
    tf: list[bytes]
    lengths: npt.NDArray[np.int64]
    postings: dict[str, tuple[Ids, npt.NDArray[np.int64]]]
    stats: KindStats

    @classmethod
    def of(cls, reps: Sequence[Stored]) -> Corpus:
        """A scope of rows with these stored representations, in load order."""
        delta = StatsDelta()
        rows: dict[str, array[int]] = {}
        tfs: dict[str, array[int]] = {}
        for i, s in enumerate(reps):
            delta.add(fulltext.stored_bag(s.ft, s.tf))
            for term, n in zip(s.ft.split(" ") if s.ft else [], s.tf, strict=True):
                rows.setdefault(term, array("q")).append(i)
                tfs.setdefault(term, array("q")).append(n)
        stats = KindStats(delta.rows, delta.length, dict(delta.df), dict(delta.peaks))
        width = len(str(max(len(reps) - 1, 0)))
        return cls(
            [f"r{i:0{width}d}" for i in range(len(reps))],
            [s.ft for s in reps],
            [bytes(s.tf) for s in reps],  # frequencies above 255 would raise here
            np.array([s.length for s in reps], dtype=np.int64),
            {t: (np.array(rows[t]), np.array(tfs[t])) for t in rows},  # "q" arrays: int64
            stats,
        )

    def holding(self, term: str) -> Ids:
        return self.postings[term][0] if term in self.postings else np.empty(0, np.int64)

    def holding_any(self, terms: Sequence[str]) -> Ids:
        parts = [self.holding(t) for t in terms]
        return np.unique(np.concatenate(parts)) if parts else np.empty(0, np.int64)

    def holding_all(self, terms: Sequence[str]) -> Ids:
        found = self.holding(terms[0])
        for t in terms[1:]:
            found = np.intersect1d(found, self.holding(t), assume_unique=True)
        return found

    def record(self, rows: Ids) -> Row:
        """The rows as ``TERMS_CHUNKS`` returns them: one record of parallel lists."""
        at = rows.tolist()
        return {
            "ids": [self.ids[i] for i in at],
            "lens": [int(self.lengths[i]) for i in at],
            "live": [True] * len(at),
            "ft": [self.ft[i] for i in at],
            "tf": [self.tf[i] for i in at],
            "cues": [None] * len(at),
        }


def scope_reps(plan: ScopePlan) -> list[Stored]:
    """The stored representation of every chunk of the growth bench's scope, in load order:
    ``document_import._plan`` with the default levers (neighbours and context on)."""
    out: list[Stored] = []
    for doc, size in documents_for(plan):
        parsed = markdown.parse(doc)
        chunks = parsed.chunks
        if len(chunks) != size:
            raise AssertionError("a generated document parsed into another number of chunks")
        tree = [(c.type.value, c.text, c.parent) for c in chunks]
        contexts = term_index.heading_contexts(parsed.title, tree)
        reps = fulltext.sequence_bags([c.text for c in chunks], True, contexts)
        out += [Stored.of(r) for r in reps]
    return out


def growth_queries(size: int, queries: int, warmup: int) -> list[str]:
    """The measured queries of ``bench recall-latency --growth`` for a scope of ``size`` rows
    (``recall_growth.picks_for``, less its ``warmup`` first ones)."""
    gen = TextGen(f"growth-queries-{size}")
    return [gen.query() for _ in range(warmup + queries)][warmup:]


_QUERY = re.compile(r'scope_key:"(\w+)" AND \((.*)\)')
_TERM = re.compile(r'ft:"(\w+)"')


class Lucene:
    """Lucene's part in the leg: the rows of the corpus matching the leg's query (``ft:"t"``
    clauses, AND inside parentheses, OR between groups, AND NOT a last group), counted."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.reads: list[int] = []

    async def __call__(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement is q.CUES_CHUNKS:
            ids = list(params["ids"])
            return [{"ids": ids, "cues": [None] * len(ids)}]
        if statement is not q.TERMS_CHUNKS:
            raise AssertionError(f"the leg ran {statement.name}")
        found = self.match(params["lucene"], params["scope_key"])
        if len(found) >= params["k"]:
            raise AssertionError("the scope's own counts are exact here: no read is cut")
        self.reads.append(len(found))
        return [self.corpus.record(found)]

    def match(self, lucene: str, scope_key: str) -> Ids:
        query, _, unless = lucene.partition(" AND NOT ")
        parsed = _QUERY.fullmatch(query)
        if parsed is None or parsed[1] != scope_key:
            raise AssertionError("a read without its scope clause")
        groups = [_TERM.findall(g) for g in parsed[2].split(" OR ")]
        found = np.unique(np.concatenate([self.corpus.holding_all(g) for g in groups]))
        if unless:
            found = np.setdiff1d(found, self.corpus.holding_all(_TERM.findall(unless)), True)
        return found


@dataclass(frozen=True, slots=True)
class LegRead:
    """What the product's leg read for one query, and the pool it returned."""

    rows: int  # rows its reads returned (the text side's held rows included)
    reads: int  # its full-text reads (the text side's counted as one)
    held: bool  # answered from the rows read with the statistics
    ids: list[str]
    scores: list[float]


async def product_leg(
    corpus: Corpus, ref: ScopeRef, terms: Sequence[str], pool: int, k1: float, b: float
) -> LegRead:
    """``recall_legs.fulltext_leg`` as the resolver calls it for the chunks of one scope,
    after ``read_text_side``: held when the terms are counted on fewer than
    ``HELD_MAX_ROWS`` rows together (``READ_TEXT_SIDE``'s condition)."""
    lucene = Lucene(corpus)
    held = None
    rows = reads = 0
    if 0 < text.most_holding(terms, corpus.stats) < text.HELD_MAX_ROWS:
        found = corpus.holding_any(terms)
        held = text.Held.of(corpus.record(found))
        rows, reads = len(found), 1
    tx = ScopedTx(lucene, ref)
    ranked = await legs.fulltext_leg(
        tx, Source.DOCUMENTS, terms, corpus.stats, pool, {}, k1, b, held=held
    )
    return LegRead(
        rows + sum(lucene.reads),
        reads + len(lucene.reads),
        held is not None,
        ranked.ids,
        [ranked.scores[i] for i in ranked.ids],
    )
