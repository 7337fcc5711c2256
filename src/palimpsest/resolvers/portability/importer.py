"""Import of an export (``resolvers/portability/export.py``) into the person's empty scopes.

Operator tooling (``palimpsest import FILE``), never an API field. The file is read twice: a
first pass checks every line, the header, the trailer's count and each record's shape
(``import_check``), so a truncated, foreign or damaged file changes nothing; the second
writes, in batches, into the tenant and user the header names. The person's USER scope and
SQL database must be empty; tenant facts are shared and are matched by natural key.
Embeddings are computed again (chunks, embedded entries, facts). Ids, times and provenance
are kept, so exporting again gives the same records; single-valued facts are then closed as a
write closes them (``resolvers.closure``), which changes only facts the export held open.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from palimpsest.cypher import erasure as eq
from palimpsest.cypher import export as q
from palimpsest.cypher import facts as fq
from palimpsest.cypher import memory as mq
from palimpsest.cypher import quotas as qq
from palimpsest.cypher.driver.executor import ScopedTx, Statement
from palimpsest.errors import Conflict, InvalidArgument
from palimpsest.identity.principal import console_operator
from palimpsest.identity.scopes import PersonRefs, person_refs
from palimpsest.resolvers import term_index
from palimpsest.resolvers.documents import passages
from palimpsest.resolvers.facts import closure
from palimpsest.resolvers.facts.inputs import type_label
from palimpsest.resolvers.portability.checks import check_record
from palimpsest.resolvers.portability.export import FORMAT, VERSION, loads
from palimpsest.resolvers.services import Services
from palimpsest.sqlmem.core import dump

BATCH = 200
Record = dict[str, Any]
Lines = Callable[[], Iterable[str]]


@dataclass
class Imported:
    tenant: str
    user: str
    counts: dict[str, int] = field(default_factory=dict)


async def import_file(svc: Services, lines: Lines) -> Imported:
    """Check the whole export, then load it; ``lines`` gives a fresh iterator per pass."""
    header = check_export(lines())
    refs = person_refs(console_operator(header["tenant"]), header["user"])
    await _require_empty(svc, refs)
    loader = _Loader(svc, refs, Imported(header["tenant"], header["user"]))
    batch: list[Record] = []
    kind = "header"
    for record in (loads(line) for line in lines() if line.strip()):
        if record["kind"] != kind or len(batch) == BATCH:
            await loader.write(kind, batch)
            batch, kind = [], record["kind"]
        batch.append(record)
    await loader.write(kind, batch)
    await loader.flush_edges()
    await loader.reconcile()
    return loader.done


def check_export(lines: Iterable[str]) -> Record:
    """Every line parses, the header is ours, the trailer counts the records: the header."""
    header: Record | None = None
    count = 0
    ended = False
    for number, line in enumerate((x for x in lines if x.strip()), start=1):
        try:
            record = loads(line)
        except ValueError as e:
            raise InvalidArgument(f"line {number} is not a JSON object") from e
        if ended:
            raise InvalidArgument(f"line {number} follows the end record")
        kind = record.get("kind")
        if number == 1:
            if kind != "header" or record.get("format") != FORMAT:
                raise InvalidArgument(f"the first line must be a {FORMAT} header")
            if record.get("version") != VERSION:
                raise InvalidArgument(
                    f"export version {record.get('version')}; this reads {VERSION}"
                )
            header = record
        elif kind == "end":
            if record.get("records") != count:
                raise InvalidArgument(f"the end record counts {record.get('records')}, not {count}")
            ended = True
        elif kind in KINDS:
            check_record(number, record)
            count += 1
        else:
            raise InvalidArgument(f"line {number}: unknown record kind {kind!r}")
    if header is None or not ended:
        raise InvalidArgument("the export is truncated: no header or no end record")
    if not isinstance(header.get("tenant"), str) or not isinstance(header.get("user"), str):
        raise InvalidArgument("the header must name the tenant and the user")
    return header


def _label_of(props: Record) -> str:
    """An entity's type label; a hand-edited record without a type gets ``Type_Other``."""
    kind = props.get("type")
    return type_label(kind if isinstance(kind, str) else "")


async def _require_empty(svc: Services, refs: PersonRefs) -> None:
    [left] = await svc.db.scoped(refs.person).read(eq.PERSON_LEFT)
    on_disk = any(d.key == refs.person.scope_key for d in await svc.sql.databases())
    if left["left"] or on_disk:
        raise Conflict(
            "this user already has data in the tenant; import only into an empty scope "
            "(erase the user first to restore an export)"
        )


class _Loader:
    """Writes batches of one kind; chunk edges wait until every chunk exists."""

    def __init__(self, svc: Services, refs: PersonRefs, done: Imported) -> None:
        self.svc = svc
        self.refs = refs
        self.done = done
        self.person = svc.db.scoped(refs.person)
        self.edges: list[Record] = []
        # The facts written, per scope: single-valued ones are closed once all are in.
        self.fact_ids: dict[str, list[str]] = {"person": [], "tenant": []}
        self.fact_set: set[str] = set()  # the person's, for the pairs (``fact_pairs``)
        # A writer answers how many of its records it wrote, or None for all of them.
        self.writers: dict[str, Callable[[list[Record]], Awaitable[int | None]]] = {
            "memory": self.memory,
            "memory_version": self.memory_versions,
            "document": self.documents,
            "chunk": self.chunks,
            "chunk_version": self.chunk_versions,
            "document_revision": self.document_revisions,
            "entity": self.entities,
            "merged_entity": self.merged_entities,
            "entity_merge": self.entity_merges,
            "fact": self.facts,
            "fact_pair": self.fact_pairs,
            "span": self.spans,
            "tenant_fact": self.tenant_facts,
            "sql_schema": self.sql,
            "sql_row": self.sql,
        }

    async def write(self, kind: str, batch: list[Record]) -> None:
        if not batch or kind in ("header", "end"):
            return
        if kind != "chunk":
            await self.flush_edges()
        written = await self.writers[kind](batch)
        n = len(batch) if written is None else written
        self.done.counts[kind] = self.done.counts.get(kind, 0) + n

    async def reconcile(self) -> None:
        """Close the single-valued facts the file brought (docs/reference/facts.md,
        Reconciliation) as their writes would have: the closure depends on the set of facts,
        not on their order in the file, and a tenant fact may close or be closed by one
        another member wrote."""
        rules = await closure.load_rules(self.svc, console_operator(self.refs.person.tenant_id))
        for name, ref in (("person", self.refs.person), ("tenant", self.refs.tenant)):
            ids = self.fact_ids[name]
            for i in range(0, len(ids), BATCH):
                part = ids[i : i + BATCH]

                async def work(tx: ScopedTx, part: list[str] = part) -> None:
                    [lock] = await tx.run(fq.LOCK_SCOPE_FACTS, {"now": self.svc.clock()})
                    await closure.close_stored(tx, rules, part, lock["now"])

                await self.svc.db.scoped(ref).write_tx(work)

    async def flush_edges(self) -> None:
        for i in range(0, len(self.edges), BATCH):
            await self.person.write(q.IMPORT_CHUNK_EDGES, {"rows": self.edges[i : i + BATCH]})
        self.edges = []

    async def _embedded(
        self, batch: list[Record], text: Callable[[Record], str | None]
    ) -> list[Any]:
        """Each record's vector of ``text`` (None where it has none)."""
        wanted = [(i, t) for i, r in enumerate(batch) if (t := text(r))]
        vectors = await self.svc.embed([t for _, t in wanted])
        found: list[Any] = [None] * len(batch)
        for (i, _), vector in zip(wanted, vectors, strict=True):
            found[i] = vector
        return found

    async def _rows(
        self,
        statement: Statement,
        rows: list[Record],
        kind: str | None,
        then: Statement | None = None,
        after: Callable[[ScopedTx], Awaitable[object]] | None = None,
    ) -> None:
        """Write rows into the person's scope and add the indexed ones to its statistics
        (``then``: a statement the same transaction runs after the rows)."""
        indexed = [r["props"] for r in rows if r["props"].get("ft_len") is not None]

        async def work(tx: ScopedTx) -> None:
            await tx.run(statement, {"rows": rows})
            await tx.run(qq.FORGET_COUNTERS, {})  # uncounted rows: the quotas count again
            if then is not None:
                await tx.run(then, {})
            if kind is not None:
                await term_index.apply(tx, self.svc.settings, kind, term_index.added(indexed))
            if after is not None:
                await after(tx)

        await self.person.write_tx(work)

    async def memory(self, batch: list[Record]) -> None:
        def text(r: Record) -> str | None:
            props = r["props"]
            return props.get("text") if props.get("embed_mode") else None

        vectors = await self._embedded(batch, text)
        rows = [{"props": r["props"], "embedding": v} for r, v in zip(batch, vectors, strict=True)]
        await self._rows(q.IMPORT_MEMORY, rows, "memory", then=mq.FORGET_MEMORY_BYTES)

    async def memory_versions(self, batch: list[Record]) -> None:
        """Past versions keep their vectors (recomputed) but stay out of the indexes and the
        term statistics; the scope's version count is recounted at the next write."""

        def text(r: Record) -> str | None:
            props = r["props"]
            return props.get("text") if props.get("embed_mode") else None

        vectors = await self._embedded(batch, text)
        rows = [{"props": r["props"], "embedding": v} for r, v in zip(batch, vectors, strict=True)]
        await self._rows(q.IMPORT_MEMORY_VERSIONS, rows, None, then=mq.FORGET_MEMORY_BYTES)

    async def documents(self, batch: list[Record]) -> None:
        await self.person.write(
            q.IMPORT_DOCUMENTS, {"rows": [{"props": r["props"]} for r in batch]}
        )

    async def chunks(self, batch: list[Record]) -> None:
        def text(r: Record) -> str | None:
            props = r["props"]
            return props.get("text") if props.get("index") is not None else None

        vectors = await self._embedded(batch, text)
        rows = [{"props": r["props"], "embedding": v} for r, v in zip(batch, vectors, strict=True)]
        # Passages are not exported: derived from the text, they are made again here.
        long_ = [(str(r["props"]["id"]), t) for r in batch if (t := text(r))]
        embedded = await passages.embed(self.svc, [t for _, t in long_])

        async def after(tx: ScopedTx) -> int:
            return await passages.write(tx, self.svc, long_, embedded)

        await self._rows(q.IMPORT_CHUNKS, rows, "chunk", after=after)
        self.edges += [
            {"id": r["props"]["id"], "parent_id": r["parent_id"], "next_id": r["next_id"]}
            for r in batch
        ]

    async def chunk_versions(self, batch: list[Record]) -> None:
        """Closed chunk versions keep their vectors (recomputed) and stay out of the indexes
        and the term statistics."""
        vectors = await self._embedded(batch, lambda r: r["props"].get("text"))
        rows = [{"props": r["props"], "embedding": v} for r, v in zip(batch, vectors, strict=True)]
        await self._rows(q.IMPORT_CHUNK_VERSIONS, rows, None)

    async def document_revisions(self, batch: list[Record]) -> None:
        rows = [{"props": r["props"]} for r in batch]
        await self.person.write(q.IMPORT_DOCUMENT_REVISIONS, {"rows": rows})

    async def entities(self, batch: list[Record]) -> None:
        rows = [
            {
                "props": r["props"],
                "mentions": r["mentions"],
                "version_mentions": r.get("version_mentions", []),
                "label": _label_of(r["props"]),
            }
            for r in batch
        ]
        await self.person.write(q.IMPORT_ENTITIES, {"rows": rows})

    async def merged_entities(self, batch: list[Record]) -> None:
        rows = [{"props": r["props"], "label": _label_of(r["props"])} for r in batch]
        await self.person.write(q.IMPORT_MERGED_ENTITIES, {"rows": rows})

    async def entity_merges(self, batch: list[Record]) -> None:
        rows = [{"props": r["props"]} for r in batch]
        await self.person.write(q.IMPORT_ENTITY_MERGES, {"rows": rows})

    async def facts(self, batch: list[Record]) -> None:
        vectors = await self._embedded(batch, lambda r: r["props"]["text"])
        rows = [
            {
                "props": r["props"],
                "subject_id": r["subject_id"],
                "object_id": r["object_id"],
                "sources": r["sources"],
                "embedding": v,
            }
            for r, v in zip(batch, vectors, strict=True)
        ]
        await self._rows(q.IMPORT_FACTS, rows, "fact")
        self.fact_ids["person"].extend(r["props"]["id"] for r in batch)
        self.fact_set.update(r["props"]["id"] for r in batch)

    async def fact_pairs(self, batch: list[Record]) -> int:
        """The pairs whose two facts the file brought (they come before it); a pair naming a
        fact the file lacks (a hand-edited or damaged file) is dropped and counted
        (``fact_pair_dropped``): it could be neither judged nor listed."""
        kept = [
            {"props": r["props"]}
            for r in batch
            if {r["props"]["older_id"], r["props"]["newer_id"]} <= self.fact_set
        ]
        if dropped := len(batch) - len(kept):
            counts = self.done.counts
            counts["fact_pair_dropped"] = counts.get("fact_pair_dropped", 0) + dropped
        if kept:
            await self.person.write(q.IMPORT_FACT_PAIRS, {"rows": kept})
        return len(kept)

    async def spans(self, batch: list[Record]) -> None:
        await self.person.write(q.IMPORT_SPANS, {"rows": [{"props": r["props"]} for r in batch]})

    async def tenant_facts(self, batch: list[Record]) -> None:
        vectors = await self._embedded(batch, lambda r: r["props"]["text"])
        key = self.refs.person.scope_key
        rows = [
            {
                "props": r["props"],
                "subject": r["subject"],
                "object": r["object"],
                "subject_label": _label_of(r["subject"]),
                "object_label": _label_of(r["object"]),
                "sources": r["sources"],
                "writer_key": key if r["written"] else None,
                "writer_id": self.refs.user_id if r["written"] else None,
                "embedding": v,
            }
            for r, v in zip(batch, vectors, strict=True)
        ]
        params = {"rows": rows, "person_key": key}

        async def work(tx: ScopedTx) -> None:
            written = await tx.run(q.IMPORT_TENANT_FACTS, params)
            await tx.run(qq.FORGET_COUNTERS, {})
            fresh = {w["natural_key"] for w in written if w["fresh"]}
            new = [
                r["props"]
                for r in rows
                if r["props"]["natural_key"] in fresh and r["props"].get("ft_len") is not None
            ]
            await term_index.apply(tx, self.svc.settings, "fact", term_index.added(new))

        await self.svc.db.scoped(self.refs.tenant).write_tx(work)
        self.fact_ids["tenant"].extend(r["props"]["id"] for r in batch)

    async def sql(self, batch: list[Record]) -> None:
        for statements in dump.load_statements(batch):
            await self.svc.sql.execute(self.refs.person, statements)


KINDS = frozenset(
    {
        "memory",
        "memory_version",
        "document",
        "chunk",
        "chunk_version",
        "document_revision",
        "entity",
        "merged_entity",
        "entity_merge",
        "fact",
        "fact_pair",
        "span",
        "tenant_fact",
        "sql_schema",
        "sql_row",
    }
)
