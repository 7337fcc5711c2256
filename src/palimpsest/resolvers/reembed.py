"""Model migration (``palimpsest reembed``, ``embeddingStatus``): a second model's vectors
built beside the first, a cutover, and the old vectors dropped (``cypher/slots.py``).

Progress lives in the database: a row's new vector is written with a fingerprint of the
active vector it was made beside, so a killed run resumes where it stopped and a row
rewritten meanwhile is embedded again. Recall keeps the active model until ``cutover``,
which refuses while any row lacks a fresh new vector.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread

from palimpsest.config import Settings
from palimpsest.cypher import embedding_slots as q
from palimpsest.cypher.driver.executor import Database, Neo4jExecutor
from palimpsest.cypher.indexes import vector_options
from palimpsest.cypher.shards import ShardedDatabase
from palimpsest.cypher.slots import Slot, other
from palimpsest.embedding import Embedder, load_embedder
from palimpsest.embedding.models import ActiveEmbedder
from palimpsest.errors import Conflict, InvalidArgument, PalimpsestError
from palimpsest.identity import permissions
from palimpsest.identity.principal import Principal, Scope
from palimpsest.identity.scopes import resolve_scope
from palimpsest.resolvers.services import Services
from palimpsest.schema.embedding_state import EmbeddingState, ModelSlot, decode_state

log = logging.getLogger(__name__)
Say = Callable[[str], None]
AWAIT_INDEXES_SECONDS = 300
LEFTOVER_BATCH = 1000


@dataclass(frozen=True, slots=True)
class PlaneCount:
    plane: str
    active: int  # rows with a vector of the active model
    target: int  # of those, rows with a fresh vector of the target model (building)
    old: int  # rows still holding the old model's vector (cutover) or the aborted one's
    missing: int  # active - target while building (what a cutover waits for), else 0


@dataclass(frozen=True, slots=True)
class EmbeddingStatus:
    state: EmbeddingState
    planes: tuple[PlaneCount, ...]


@dataclass(slots=True)
class Progress:
    """What one run did, for its JSON summary."""

    model: str
    planes: dict[str, int] = field(default_factory=dict)
    cleared: int = 0
    removed: int = 0
    aborted: str | None = None  # the model a ``--abort`` gave up
    target_removed: int = 0
    embed_seconds: float = 0.0
    started: float = field(default_factory=time.monotonic)

    @property
    def rows(self) -> int:
        return sum(self.planes.values())

    def summary(self, state: EmbeddingState, status: EmbeddingStatus) -> dict[str, Any]:
        seconds = time.monotonic() - self.started
        out: dict[str, Any] = {
            "model": self.model,
            "state": state.state,
            "embedded": dict(self.planes),
            "rows": self.rows,
            "strayCleared": self.cleared,
            "oldRemoved": self.removed,
            "seconds": round(seconds, 3),
            "rowsPerSecond": round(self.rows / seconds, 1) if seconds > 0 else None,
            "embedSeconds": round(self.embed_seconds, 3),
            "missing": {p.plane: p.missing for p in status.planes},
        }
        if self.aborted:
            out |= {"aborted": self.aborted, "targetRemoved": self.target_removed}
        return out


async def read_state(db: Database) -> EmbeddingState:
    return decode_state((await db.read(q.READ_STATE, {"info": q.INFO_ID}))[0])


async def counts(db: Database, state: EmbeddingState) -> tuple[PlaneCount, ...]:
    """Rows per plane with each slot's vector (a label scan per plane: an operator's read)."""
    found = []
    a_active = state.active.slot == "a"
    for plane, statement in q.COUNTS.items():
        rows = await db.read(statement)
        row = rows[0] if rows else {"a": 0, "b": 0, "b_beside_a": 0, "a_beside_b": 0}
        active, other = (row["a"], row["b"]) if a_active else (row["b"], row["a"])
        target = (row["b_beside_a"] if a_active else row["a_beside_b"]) if state.target else 0
        old = other if state.old or state.aborted else 0
        missing = active - target if state.target else 0
        found.append(PlaneCount(plane, active=active, target=target, old=old, missing=missing))
    return tuple(found)


async def status(svc: Services, who: Principal) -> EmbeddingStatus:
    """``embeddingStatus``: the platform operator's view of the models and their counts.

    The counts span every tenant, so they take what any GLOBAL read takes: besides the role,
    a token neither isolated nor granted less than GLOBAL (fail closed, as ``resolve_scope``)."""
    permissions.require(
        permissions.platform_operator(who), "only the platform operator reads embedding status"
    )
    resolve_scope(who, Scope.GLOBAL)
    state = await read_state(svc.db)
    return EmbeddingStatus(state, await counts(svc.db, state))


async def start(svc: Services, name: str, dims: int) -> EmbeddingState:
    """Record the migration to ``name`` (or find it recorded: a resumed run) and make the
    target slot's indexes for its dimension. Another migration in progress is refused."""
    before = await read_state(svc.db)
    if before.state == "steady":  # what a late write left after an abort is no new vector
        await empty_slot(svc.db, other(before.active.slot), LEFTOVER_BATCH)
    state = decode_state(
        (await svc.db.write(q.START, {"info": q.INFO_ID, "model": name, "dimensions": dims}))[0]
    )
    if state.active.model == name and state.target is None:
        raise InvalidArgument(f"the database already serves {name}", field="model")
    if state.old is not None:
        raise Conflict(
            f"the old model {state.old.model} is still kept: run `palimpsest reembed "
            "--drop-old` before another migration",
            state=state.state,
        )
    if state.aborted is not None:
        raise Conflict(
            f"the aborted migration to {state.aborted.model} is still being removed: run "
            "`palimpsest reembed --abort` to finish it first",
            state=state.state,
        )
    if state.target is None or state.target.model != name or state.target.dimensions != dims:
        held = state.target.model if state.target else None
        raise Conflict(f"a migration to {held} is in progress", state=state.state)
    for statement in q.CREATE_INDEXES[state.target.slot]:
        await svc.db.write(statement, {"options": vector_options(dims)})
    return state


async def fill(
    svc: Services, dst: Slot, embedder: Embedder, batch: int, say: Say, progress: Progress
) -> None:
    """Give every row with a vector in the other slot a fresh one in ``dst``, a batch at a
    time; clear ``dst`` vectors of rows that have no source vector any more."""
    total = sum(p.missing for p in await _pending_counts(svc, dst))
    for plane in q.PLANES:
        while True:
            cleared = await svc.db.write(q.STRAY[(plane, dst)], {"batch": batch})
            progress.cleared += cleared[0]["cleared"] if cleared else 0
            if not cleared or cleared[0]["cleared"] < batch:
                break
        while rows := await svc.db.read(q.PENDING[(plane, dst)], {"batch": batch}):
            began = time.monotonic()
            vectors = await anyio.to_thread.run_sync(embedder.embed, [r["text"] for r in rows])
            progress.embed_seconds += time.monotonic() - began
            pairs = [
                {"id": r["id"], "of": r["of"], "vector": v}
                for r, v in zip(rows, vectors, strict=True)
            ]
            written = (await svc.db.write(q.FILL[(plane, dst)], {"rows": pairs}))[0]["written"]
            progress.planes[plane] = progress.planes.get(plane, 0) + written
            _report(say, plane, progress, total)


async def _pending_counts(svc: Services, dst: Slot) -> tuple[PlaneCount, ...]:
    state = await read_state(svc.db)
    planes = await counts(svc.db, state)
    if state.target is not None and state.target.slot == dst:
        return planes
    return tuple(PlaneCount(p.plane, p.old, 0, p.old, p.old) for p in planes)


def _report(say: Say, plane: str, progress: Progress, total: int) -> None:
    seconds = time.monotonic() - progress.started
    rate = progress.rows / seconds if seconds > 0 else 0.0
    left = max(0, total - progress.rows)
    eta = f"{left / rate:.0f}s" if rate > 0 else "?"
    say(f"reembed {plane}: {progress.rows}/{total} rows, {rate:.1f} rows/s, eta {eta}")


async def cutover(svc: Services) -> EmbeddingState:
    """Switch recall to the target model, once every row has a fresh vector of it."""
    state = await read_state(svc.db)
    if state.target is None:
        raise Conflict("no migration is in progress", state=state.state)
    for plane in q.PLANES:  # a note unembedded since its new vector was made
        while (await svc.db.write(q.STRAY[(plane, state.target.slot)], {"batch": 1000}))[0][
            "cleared"
        ]:
            pass
    missing = {p.plane: p.missing for p in await counts(svc.db, state) if p.missing}
    if missing:
        raise Conflict(
            f"{sum(missing.values())} rows lack a vector of {state.target.model}: "
            "run `palimpsest reembed --model` to finish first",
            missing=missing,
        )
    await svc.db.write(q.AWAIT_INDEXES, {"seconds": AWAIT_INDEXES_SECONDS})
    params = {"info": q.INFO_ID, "model": state.target.model, "slot": state.target.slot}
    after = decode_state((await svc.db.write(q.CUTOVER, params))[0])
    use_slot(svc.db, after.active.slot, dual=True)
    return after


async def drop_old(svc: Services, batch: int, say: Say, progress: Progress) -> EmbeddingState:
    """Embed what a server that had not yet seen the cutover wrote, then remove the old
    model's vectors and indexes."""
    state = await read_state(svc.db)
    if state.old is None:
        raise Conflict("there is no old model to drop", state=state.state)
    await fill(svc, state.active.slot, svc.embedder, batch, say, progress)
    progress.removed += await empty_slot(svc.db, state.old.slot, batch)
    return decode_state(
        (await svc.db.write(q.FORGET_OLD, {"info": q.INFO_ID, "model": state.old.model}))[0]
    )


async def abort(svc: Services, batch: int, progress: Progress) -> EmbeddingState:
    """Give up a migration that is building: the record first (writes stop embedding with
    the target model once each server has read it), then the target slot's vectors and
    indexes. A killed run leaves the state ``aborting``, and running it again finishes."""
    state = await read_state(svc.db)
    if state.target is not None:
        params = {"info": q.INFO_ID, "model": state.target.model}
        rows = await svc.db.write(q.ABORT, params)
        state = decode_state(rows[0]) if rows else await read_state(svc.db)
    if state.old is not None:  # recall reads the new model: there is no way back from here
        raise Conflict(
            f"the migration from {state.old.model} is cut over and cannot be aborted: "
            "finish it with `palimpsest reembed --drop-old`",
            state=state.state,
        )
    if state.aborted is None:
        raise Conflict("no migration is building: there is nothing to abort", state=state.state)
    # A server that has not yet read the abort still writes target vectors: let every
    # follow task see it before the slot is emptied behind them.
    await asyncio.sleep(svc.settings.embedding.follow_seconds)
    progress.aborted = state.aborted.model
    progress.target_removed += await empty_slot(svc.db, state.aborted.slot, batch)
    params = {"info": q.INFO_ID, "model": state.aborted.model}
    return decode_state((await svc.db.write(q.FORGET_ABORTED, params))[0])


async def empty_slot(db: Database, slot: Slot, batch: int) -> int:
    """Remove ``slot``'s vectors (and every fingerprint), a batch at a time, then its vector
    indexes; answers the rows changed. Resumable: a second run finds what the first left."""
    removed = 0
    for plane in q.PLANES:
        while done := (await db.write(q.DROP[(plane, slot)], {"batch": batch}))[0]["removed"]:
            removed += done
    for statement in q.DROP_INDEXES[slot]:
        await db.write(statement)
    return removed


def use_slot(db: Database, slot: Slot, dual: bool = False) -> None:
    """Run this process's scoped statements on ``slot`` from now on; ``dual`` while a
    migration is under way (writes' ``DualVector``s are split between the slots)."""
    if isinstance(db.executor, Neo4jExecutor):
        db.executor.slot = slot
        db.executor.dual = dual
    elif isinstance(db, ShardedDatabase):  # every shard follows the designated one's record
        db.router.use_slot(slot, dual)


# A write that embeds reads the state first when this process last read it longer ago than
# this, so a write made after a migration started carries the target model's vector too,
# whatever ``embedding_follow_seconds`` is (``Follower.fresh``).
STATE_FRESH_SECONDS = 1.0


class Follower:
    """This process's view of the database's embedding state: its active model and slot (a
    cutover made by another process), and (``dual``: a process that writes rows) while a
    migration builds its target model, loaded once, so writes embed with both; after an abort
    (or a drop) they embed with the active model alone again and the model no longer held is
    let go. ``run`` reads it at once and then every ``embedding_follow_seconds``; ``fresh``
    before a write that embeds."""

    def __init__(
        self, db: Database, active: ActiveEmbedder, settings: Settings, dual: bool = True
    ) -> None:
        self.db, self.active, self.settings, self.dual = db, active, settings, dual
        self.loaded: dict[str, Embedder] = {active.model_name: active.current}
        self.read_at = float("-inf")  # monotonic time of the last state read that worked
        self._lock = asyncio.Lock()

    async def _load(self, model: ModelSlot) -> Embedder:
        if model.model not in self.loaded:
            self.loaded[model.model] = await anyio.to_thread.run_sync(
                load_embedder,
                model.model,
                model.dimensions,
                self.settings.model_dir,
                self.settings.embedding.threads,
            )
        return self.loaded[model.model]

    async def refresh(self) -> None:
        """Read the state and take it up (one reader at a time: a model loads once)."""
        async with self._lock:
            await self._read()

    async def _read(self) -> None:
        """``refresh``'s work; the caller holds the lock."""
        began = time.monotonic()
        try:
            state = await read_state(self.db)
            active = self.active
            if state.active.model != active.model_name:
                active.switch(await self._load(state.active))
                log.info("embedding model switched to %s", state.active.model)
            target = state.target
            active.target = (
                (target.slot, await self._load(target)) if target and self.dual else None
            )
            held = {m.model for m in state.models} | {active.model_name}
            for name in [n for n in self.loaded if n not in held]:
                del self.loaded[name]  # an aborted or dropped model: its memory back
            use_slot(self.db, state.active.slot, dual=state.state in ("building", "cutover"))
            self.read_at = began
        except PalimpsestError as e:
            log.warning("embedding state not read: %s", e.code)

    async def fresh(self, max_age: float = STATE_FRESH_SECONDS) -> None:
        """Read the state unless it was read within ``max_age`` seconds."""
        if time.monotonic() - self.read_at <= max_age:
            return
        async with self._lock:
            # Checked again: a burst of writes queues here behind one read, and those after
            # it find the state it read.
            if time.monotonic() - self.read_at > max_age:
                await self._read()

    async def run(self) -> None:
        """Until cancelled."""
        while True:
            await self.refresh()
            await asyncio.sleep(self.settings.embedding.follow_seconds)


async def follow(
    db: Database, active: ActiveEmbedder, settings: Settings, dual: bool = True
) -> None:
    """``Follower.run``: take up the database's embedding state until cancelled."""
    await Follower(db, active, settings, dual).run()
