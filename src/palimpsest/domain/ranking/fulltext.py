"""Scope-local full-text ranking, the pure parts: the analyzer, a row's full-text
representation, term statistics deltas, BM25 and the MaxScore plan.

Lucene is used only as an inverted index of pre-analyzed terms (the ``whitespace``
analyzer over the ``ft`` property): it answers "which rows of this scope contain term t",
never "how well". Scores come from BM25 computed here with the scope's own statistics
(document count, total length, document frequency per term), kept at write time in
``:TermStats`` nodes of the same scope. So a scope's scores, ranks and even which rows enter
the pool depend only on that scope's rows, never on what other tenants store.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from py_rust_stemmers import SnowballStemmer

# Lucene's English stop set (what the previous Lucene analyzer dropped).
STOP_WORDS = frozenset(
    (
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
    )
)  # fmt: skip
# Question words, auxiliaries and pronouns: dropped from the full-text query only (lever 4).
QUESTION_WORDS = frozenset(
    (
    "what", "when", "where", "which", "who", "whom", "whose", "why", "how", "did", "do", "does",
    "is", "are", "was", "were", "has", "have", "had", "will", "would", "can", "could", "i",
    "me", "my", "mine", "you", "your", "yours", "he", "him", "his", "she", "her", "hers", "we",
    "us", "our", "ours", "them", "its",
    )
)  # fmt: skip
_TOKEN = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*", re.UNICODE)
_STEMMER = SnowballStemmer("english")
MAX_QUERY_TERMS = 64
# A longer run of letters and digits (a hash, a base64 blob pasted into a message) is no word
# anyone searches for, and as a :TermStats key it overflows the range index's key size (about
# 8 kB), which failed the whole write: such runs are not terms (Lucene's standard tokenizer
# stops a token at the same length).
MAX_TERM_CHARS = 255
# Term kinds of the statistics: one per kind of row, and the speakers of conversation turns.
KINDS = ("memory", "chunk", "fact")
SPEAKER_KIND = "speaker"
TOTALS = ""  # the statistics row of a kind that holds its row count and total length


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return str(_STEMMER.stem_word(word))


def analyze(text: str) -> list[str]:
    """Terms of ``text``: words lowercased, possessive 's and apostrophes removed, stop words
    and words over ``MAX_TERM_CHARS`` out, Snowball English stems. Terms are ``[^\\W_]+`` runs,
    so never Lucene syntax."""
    out: list[str] = []
    for raw in _TOKEN.findall(text.lower()):
        word = raw[:-2] if raw.endswith(("'s", "\u2019s")) else raw
        word = word.replace("'", "").replace("\u2019", "")
        if word and word not in STOP_WORDS and len(word) <= MAX_TERM_CHARS:
            out.append(_stem(word))
    return out


def query_terms(text: str, drop_question_words: bool) -> list[str]:
    """Distinct terms of a query, in order (a repeated word counts once)."""
    words = [
        raw
        for raw in _TOKEN.findall(text.lower())
        if not (drop_question_words and raw in QUESTION_WORDS)
    ]
    return list(dict.fromkeys(analyze(" ".join(words))))[:MAX_QUERY_TERMS]


def bag(text: str) -> Counter[str]:
    return Counter(analyze(text))


def neighbourhood(
    own: Counter[str],
    prev: Counter[str] | None,
    nxt: Counter[str] | None,
    on: bool,
    context: Counter[str] | None = None,
    max_terms: int = 0,
) -> Counter[str]:
    """A chunk's full-text representation (lever 2): its own text twice, the previous and the
    next chunk of its document once each; while there is no next chunk (the last turn of a
    conversation so far), its own text a third time, so appending a turn only swaps that
    third copy for the new turn. Off: the chunk's own text alone. ``context`` (the terms of
    its document's title and the headings above it, ``context_bag``) is added as it is.

    With ``max_terms`` above 0 the neighbourhood is for short chunks only (``short``): a
    chunk of more terms is its own text alone, and a longer neighbour is left out (the next
    one as if there were none). A chat line borrows the words of the lines around it; a long
    message has its own, and a short turn beside a long answer would otherwise hold the
    answer's words, and its length, as much as its own."""
    if on and max_terms > 0:
        if not short(own, max_terms):
            on = False
        if prev is not None and not short(prev, max_terms):
            prev = None
        if nxt is not None and not short(nxt, max_terms):
            nxt = None
    rep = own + own + (nxt if nxt is not None else own) if on else Counter(own)
    if on and prev is not None:
        rep += prev
    return rep + context if context else rep


def short(bag_: Counter[str], max_terms: int) -> bool:
    """Whether a chunk's terms (repeats included) are few enough for the neighbourhood."""
    return max_terms <= 0 or sum(n for n in bag_.values() if n > 0) <= max_terms


def context_bag(texts: Iterable[str | None]) -> Counter[str]:
    """The title-and-headings context of a chunk: every distinct term of ``texts`` once."""
    return Counter(dict.fromkeys(analyze(" ".join(t for t in texts if t)), 1))


def sequence_bags(
    texts: Sequence[str],
    on: bool,
    contexts: Sequence[Counter[str] | None] | None = None,
    max_terms: int = 0,
) -> list[Counter[str]]:
    """Representations of chunks in reading order (one document, or one conversation)."""
    own = [bag(t) for t in texts]
    return [
        neighbourhood(
            own[i],
            own[i - 1] if i > 0 else None,
            own[i + 1] if i + 1 < len(own) else None,
            on,
            contexts[i] if contexts is not None else None,
            max_terms,
        )
        for i in range(len(own))
    ]


@dataclass(frozen=True, slots=True)
class Stored:
    """A representation as stored on the row: distinct terms in order, their frequencies,
    and the length (number of terms, repeats included)."""

    ft: str
    tf: list[int]
    length: int

    @classmethod
    def of(cls, rep: Counter[str]) -> Stored:
        terms = sorted(t for t, n in rep.items() if n > 0)
        return cls(" ".join(terms), [rep[t] for t in terms], sum(rep[t] for t in terms))

    def params(self) -> dict[str, object]:
        return {"ft": self.ft, "ft_tf": self.tf, "ft_len": self.length}


def stored_bag(ft: str | None, tf: Sequence[int] | None) -> Counter[str]:
    """The representation a row holds (empty for a row written before it had one)."""
    if not ft or tf is None:
        return Counter()
    return Counter(dict(zip(ft.split(" "), tf, strict=True)))


@dataclass(slots=True)
class StatsDelta:
    """Changes to one kind's statistics in one scope, applied in one statement at the end of
    the write transaction, in term order (so two writers lock shared rows in one order)."""

    rows: int = 0
    length: int = 0
    df: Counter[str] = field(default_factory=Counter)
    speakers: Counter[str] = field(default_factory=Counter)
    # Per term, the largest frequency and frequency-to-length ratio of the rows written: the
    # statistics keep the largest ever seen, which bound what the term adds to any row's score.
    peaks: dict[str, tuple[int, float]] = field(default_factory=dict)

    def add(
        self,
        rep: Counter[str],
        sign: int = 1,
        speaker: str | None = None,
        since: Counter[str] | None = None,
    ) -> None:
        """A row added (``sign`` 1; ``since``: the representation it replaces, removed with
        ``sign`` -1) or removed (``sign`` -1)."""
        self.rows += sign
        self.length += sign * sum(rep.values())
        for term, n in rep.items():
            if n > 0:
                self.df[term] += sign
        if speaker:
            self.speakers[speaker] += sign
        if sign > 0:
            self._peak(rep, since)

    def replace(self, old: Counter[str] | None, new: Counter[str]) -> None:
        """A row whose representation changed (``old`` None: a new row)."""
        if old is None:
            self.add(new)
            return
        self.length += sum(new.values()) - sum(old.values())
        for term in old.keys() | new.keys():
            change = (new[term] > 0) - (old[term] > 0)
            if change:
                self.df[term] += change
        self._peak(new, old)

    def _peak(self, rep: Counter[str], since: Counter[str] | None = None) -> None:
        """Keep ``rep``'s peaks; where it replaces ``since``, only those above its own, as the
        statistics already hold the replaced row's (or never had peaks for the term)."""
        length = sum(n for n in rep.values() if n > 0)
        before = sum(n for n in since.values() if n > 0) if since else 0
        for term, n in rep.items():
            if n <= 0:
                continue
            if since and since[term] >= n and since[term] / before >= n / length:
                continue
            tf, ratio = self.peaks.get(term, (0, 0.0))
            self.peaks[term] = (max(tf, n), max(ratio, n / length))

    def changes(self, kind: str) -> list[dict[str, object]]:
        """One entry per statistics row to change: the kind's totals, every term whose count
        or peaks changed, and the speakers."""
        out: list[dict[str, object]] = []
        if self.rows or self.length:
            out.append(_change(kind, TOTALS, self.rows, self.length))
        for t in sorted({t for t, n in self.df.items() if n} | self.peaks.keys()):
            out.append(_change(kind, t, self.df[t], 0, *self.peaks.get(t, (0, 0.0))))
        out += [_change(SPEAKER_KIND, s, n, 0) for s, n in sorted(self.speakers.items()) if n]
        out.sort(key=lambda c: (str(c["kind"]), str(c["term"])))
        return out


def _change(
    kind: str, term: str, df: int, length: int, max_tf: int = 0, max_ratio: float = 0.0
) -> dict[str, object]:
    return {
        "kind": kind,
        "term": term,
        "df": df,
        "len": length,
        "max_tf": max_tf,
        "max_ratio": max_ratio,
    }


# -- scoring -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KindStats:
    """One kind's statistics in one scope, as read for one query."""

    rows: int
    length: int
    df: Mapping[str, int]
    # Per term, the largest frequency and frequency-to-length ratio any row of the scope has
    # had (terms whose statistics predate them are missing: their bound is the loose one).
    peaks: Mapping[str, tuple[int, float]] = field(default_factory=dict)

    @property
    def avg_length(self) -> float:
        return self.length / self.rows if self.rows > 0 else 1.0


def idf(rows: int, df: int) -> float:
    """BM25's idf (Lucene's form, never negative)."""
    return math.log(1.0 + (rows - df + 0.5) / (df + 0.5))


@dataclass(frozen=True, slots=True)
class Scorer:
    """Scope-local BM25 of the rows of one leg, with the per-term parts computed once: a leg
    scores every scope row holding its rarest terms (a thousand or more at 100k rows), and
    per-row dictionaries and idf calls were most of its Python time. A term's frequency is
    found in the stored text itself (splitting every row cost more than the scoring).
    ``tests/unit/domain/ranking/test_fulltext.py`` holds it to the textbook formula, float for
    float."""

    terms: tuple[tuple[str, float], ...]  # (" term ", idf) in term order, df > 0 only
    k1: float
    b: float
    avg_length: float

    @classmethod
    def of(cls, terms: Iterable[str], stats: KindStats, k1: float, b: float) -> Scorer:
        known = sorted({t for t in terms if stats.df.get(t, 0) > 0})
        parts = tuple((f" {t} ", idf(stats.rows, stats.df[t])) for t in known)
        return cls(parts, k1, b, stats.avg_length)

    def score(self, ft: str | None, tf: Sequence[int] | None, length: int) -> float:
        if not ft or tf is None:
            return 0.0
        padded = f" {ft} "  # a term's index in ``tf`` is the number of spaces before it
        norm = self.k1 * (1.0 - self.b + self.b * length / self.avg_length)
        k1 = self.k1 + 1.0
        total = 0.0
        for needle, weight in self.terms:
            at = padded.find(needle)
            if at >= 0:
                n = int(tf[padded.count(" ", 0, at)])
                if n > 0:
                    total += weight * n * k1 / (n + norm)
        return total


def upper_bound(term: str, stats: KindStats, k1: float, b: float) -> float:
    """The most one term can add to any row's score. A term adds
    ``idf * (k1 + 1) / (1 + k1 (1 - b) / tf + k1 b / (ratio * avg_length))`` to a row where it
    has frequency ``tf`` and makes up ``ratio = tf / length`` of the row, which grows with
    both: the scope's peaks of the two bound it (``idf * (k1 + 1)`` without them)."""
    df = stats.df.get(term, 0)
    if df <= 0:
        return 0.0
    bound = idf(stats.rows, df) * (k1 + 1.0)
    tf, ratio = stats.peaks.get(term, (0, 0.0))
    if tf > 0 and ratio > 0.0:
        bound /= 1.0 + k1 * (1.0 - b) / tf + k1 * b / (ratio * stats.avg_length)
    return bound * (1.0 + 1e-9)  # a hair above: the scorer's floats round differently


def first_terms(terms: Iterable[str], stats: KindStats, pool: int, spare: int = 0) -> list[str]:
    """The rarest terms whose rows together could fill the pool: enumerated first. Then the
    next rarest too, while all their rows together stay within ``spare``: MaxScore would
    mostly ask for them next, and a round trip costs more than that many rows. Which rows
    can enter the pool does not change (``missing_terms`` still reads what it must)."""
    present = sorted((t for t in terms if stats.df.get(t, 0) > 0), key=lambda t: (stats.df[t], t))
    chosen: list[str] = []
    total = 0
    for term in present:
        if total >= pool and total + stats.df[term] > spare:
            break
        chosen.append(term)
        total += stats.df[term]
    return chosen


def missing_terms(
    terms: Iterable[str],
    done: set[str],
    stats: KindStats,
    k1: float,
    b: float,
    threshold: float | None,
) -> list[str]:
    """MaxScore: the terms still to enumerate so that a row holding only the others cannot
    reach ``threshold`` (the pool's last score; None when the pool is not full yet)."""
    rest = sorted(
        (t for t in terms if t not in done and stats.df.get(t, 0) > 0),
        key=lambda t: (-upper_bound(t, stats, k1, b), t),
    )
    if threshold is None:
        return rest
    chosen: list[str] = []
    while rest and sum(upper_bound(t, stats, k1, b) for t in rest) >= threshold:
        chosen.append(rest.pop(0))
    return chosen


# The covering read asks Lucene for rows holding whole sets of the query's terms: for up to
# this many terms, and this many sets (past them, the rarest-terms-first read is used).
MAX_COVER_TERMS = 8
MAX_COVER_SETS = 32


def covering_sets(
    terms: Iterable[str], stats: KindStats, k1: float, b: float, threshold: float
) -> list[list[str]] | None:
    """The minimal sets of query terms whose bounds together reach ``threshold`` (a score
    some live rows of the scope have): each term adds at most its bound, so a row holding
    none of these sets whole scores below it and cannot enter the pool. Each set is sorted;
    None when there are too many terms or sets to ask for at once."""
    bounds = sorted(
        ((upper_bound(t, stats, k1, b), t) for t in set(terms) if stats.df.get(t, 0) > 0),
        key=lambda b: (-b[0], b[1]),
    )
    if not bounds or len(bounds) > MAX_COVER_TERMS:
        return None
    # A hair below the threshold: a float sum of parts may round past the sum of bounds.
    reach = threshold * (1.0 - 1e-9)
    rest = [sum(b for b, _ in bounds[i:]) for i in range(len(bounds) + 1)]
    found: list[list[str]] = []

    def extend(start: int, chosen: list[str], total: float) -> None:
        for i in range(start, len(bounds)):
            if total + rest[i] < reach:
                return  # even every remaining term together falls short
            bound, term = bounds[i]
            if total + bound >= reach:
                found.append(sorted([*chosen, term]))  # minimal: every member is needed
            else:
                extend(i + 1, [*chosen, term], total + bound)

    extend(0, [], 0.0)
    return found if len(found) <= MAX_COVER_SETS else None


def lucene_terms(scope_key: str, terms: Sequence[str]) -> str:
    """The Lucene query for rows of one scope holding any of ``terms`` (analyzed terms are
    ``[^\\W_]+`` runs, quoted all the same); the scope clause is required."""
    _check(scope_key, [terms])
    ors = " OR ".join(f'ft:"{t}"' for t in terms)
    return f'scope_key:"{scope_key}" AND ({ors})'


def lucene_sets(scope_key: str, sets: Sequence[Sequence[str]], unless: Sequence[str] = ()) -> str:
    """The Lucene query for rows of one scope holding every term of at least one of ``sets``,
    and not every term of ``unless`` (rows already read)."""
    _check(scope_key, [*sets, *([unless] if unless else [])])
    groups = " OR ".join(_all_of(ts) for ts in sets)
    query = f'scope_key:"{scope_key}" AND ({groups})'
    return f"{query} AND NOT {_all_of(unless)}" if unless else query


def _all_of(terms: Sequence[str]) -> str:
    return "(" + " AND ".join(f'ft:"{t}"' for t in terms) + ")"


def _check(scope_key: str, groups: Sequence[Sequence[str]]) -> None:
    if not re.fullmatch(r"[0-9a-f]{8,64}", scope_key):
        raise ValueError("scope keys are hex")
    if not groups or not all(ts and all(re.fullmatch(r"[^\W_]+", t) for t in ts) for ts in groups):
        raise ValueError("terms must be analyzed words")
