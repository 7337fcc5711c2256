"""A LangGraph ``BaseStore`` over a Palimpsest server (docs/reference/langgraph.md).

``PalimpsestStore(url=..., token=..., scope="USER")`` keeps every item as a note of the
scope under ``namespaces.note_key(namespace, key)``: get, put and delete are ``memory``,
``memorySet`` and ``memoryDelete``; search and namespace listing are ``storeSearch`` and
``storeNamespaces``, which filter and rank on the server. A batch runs in order, in as few
requests as the server's operation limits allow (consecutive reads share one query,
consecutive writes one mutation, at most ``_CHUNK`` fields each), over the typed client's
transport (``palimpsest.client.transport``: the token, bounded retries of ``UNAVAILABLE`` and
``429`` honouring ``Retry-After``, read-your-writes bookmarks, errors as the error tree's
classes).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypedDict

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)
from langgraph.store.base.batch import AsyncBatchedBaseStore
from langgraph.store.base.embed import get_text_at_path

from palimpsest.client.transport import AsyncTransport, RetryPolicy, Transport
from palimpsest.domain.notes import namespaces
from palimpsest.domain.notes.values import MAX_EMBED_TEXT_CHARS
from palimpsest.errors import InvalidArgument

_CHUNK = 8  # under the server's default root-field, alias and embedding limits per request
_ENTRY = "fragment E on MemoryEntry { key value createdAt updatedAt }"


class StoreIndex(TypedDict, total=False):
    """Which parts of a value the server embeds for semantic search (LangGraph paths such
    as ``"text"``, ``"tags[*]"``, ``"$"`` for the whole value); the model is the server's."""

    fields: list[str]


class InvalidStoreArgument(InvalidArgument, ValueError):
    """The server refused the arguments (``INVALID_ARGUMENT``, e.g. a bad filter key): also a
    ``ValueError``, as LangGraph's own stores raise. Other refusals are the client's classes."""


class _Request:
    """One GraphQL request for a run of ops of one kind, and how to read its answer."""

    def __init__(self, scope: str, index: StoreIndex | None, ops: Sequence[Op]) -> None:
        self.ops = ops
        self.mutation = isinstance(ops[0], PutOp)
        self.variables: dict[str, Any] = {"scope": scope}
        decls, fields = ["$scope: Scope!"], []
        for i, op in enumerate(ops):
            d, f = self._field(i, op, index)
            decls += d
            fields.append(f)
        kind = "mutation" if self.mutation else "query"
        body = f"{kind} Store({', '.join(decls)}) {{ {' '.join(fields)} }}"
        uses_entry = any(isinstance(op, GetOp | SearchOp) for op in ops)
        self.document = f"{body} {_ENTRY}" if uses_entry else body

    def _var(self, name: str, value: Any) -> str:
        self.variables[name] = value
        return f"${name}"

    def _field(self, i: int, op: Op, index: StoreIndex | None) -> tuple[list[str], str]:
        v = self._var
        if isinstance(op, GetOp):
            key = v(f"k{i}", namespaces.note_key(op.namespace, op.key))
            return [f"$k{i}: String!"], f"a{i}: memory(scope: $scope, key: {key}) {{ ...E }}"
        if isinstance(op, PutOp):
            key = v(f"k{i}", namespaces.note_key(op.namespace, op.key))
            if op.value is None:
                delete = f"a{i}: memoryDelete(scope: $scope, key: {key}) {{ deleted }}"
                return [f"$k{i}: String!"], delete
            text = _embed_text(op, index)
            args = (
                f"scope: $scope, key: {key}, value: {v(f'v{i}', op.value)}, "
                f"ttlSeconds: {v(f't{i}', _ttl_seconds(op.ttl))}, "
                f"embed: {v(f'e{i}', text is not None)}, embedText: {v(f'x{i}', text)}"
            )
            decls = [f"$k{i}: String!", f"$v{i}: JSON!", f"$t{i}: Int", f"$e{i}: Boolean!"]
            return [*decls, f"$x{i}: String"], f"a{i}: memorySet({args}) {{ key }}"
        if isinstance(op, SearchOp):
            args = (
                f"scope: $scope, namespacePrefix: {v(f'p{i}', list(op.namespace_prefix))}, "
                f"filter: {v(f'f{i}', _wire_filter(op.filter))}, query: {v(f'q{i}', op.query)}, "
                f"limit: {v(f'l{i}', op.limit)}, offset: {v(f'o{i}', op.offset)}"
            )
            decls = [f"$p{i}: [String!]!", f"$f{i}: JSON", f"$q{i}: String"]
            decls += [f"$l{i}: Int!", f"$o{i}: Int!"]
            field = f"a{i}: storeSearch({args}) {{ namespace key score entry {{ ...E }} }}"
            return decls, field
        if isinstance(op, ListNamespacesOp):
            prefix = [c.path for c in op.match_conditions or () if c.match_type == "prefix"]
            suffix = [c.path for c in op.match_conditions or () if c.match_type == "suffix"]
            args = (
                f"scope: $scope, prefix: {v(f'p{i}', list(prefix[0]) if prefix else None)}, "
                f"suffix: {v(f's{i}', list(suffix[0]) if suffix else None)}, "
                f"maxDepth: {v(f'd{i}', op.max_depth)}, limit: {v(f'l{i}', op.limit)}, "
                f"offset: {v(f'o{i}', op.offset)}"
            )
            decls = [f"$p{i}: [String!]", f"$s{i}: [String!]", f"$d{i}: Int"]
            decls += [f"$l{i}: Int!", f"$o{i}: Int!"]
            return decls, f"a{i}: storeNamespaces({args}) {{ labels }}"
        raise ValueError(f"unknown store operation {type(op).__name__}")

    def results(self, data: dict[str, Any]) -> list[Result]:
        out: list[Result] = []
        for i, op in enumerate(self.ops):
            got = data[f"a{i}"]
            if isinstance(op, GetOp):
                out.append(_item(op.namespace, op.key, got) if got else None)
            elif isinstance(op, SearchOp):
                out.append([_search_item(hit) for hit in got])
            elif isinstance(op, ListNamespacesOp):
                out.append([tuple(n["labels"]) for n in got])
            else:
                out.append(None)
        return out


def _plan(scope: str, index: StoreIndex | None, ops: Iterable[Op]) -> list[_Request]:
    runs: list[list[Op]] = []
    for op in ops:
        validate_op_namespace(op)
        if isinstance(op, GetOp | PutOp) and not op.namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        same = runs and isinstance(op, PutOp) == isinstance(runs[-1][0], PutOp)
        if same and len(runs[-1]) < _CHUNK:
            runs[-1].append(op)
        else:
            runs.append([op])
    return [_Request(scope, index, run) for run in runs]


def _ttl_seconds(minutes: float | None) -> int | None:
    return None if minutes is None else max(1, math.ceil(minutes * 60))


def _embed_text(op: PutOp, index: StoreIndex | None) -> str | None:
    if op.index is False or (op.index is None and index is None):
        return None
    fields = op.index if isinstance(op.index, list) else (index or {}).get("fields", ["$"])
    texts = [t for path in fields for t in get_text_at_path(op.value, path) if t.strip()]
    return "\n".join(texts)[:MAX_EMBED_TEXT_CHARS] if texts else None


def _wire_filter(filter_: dict[str, Any] | None) -> Any:
    """JSON cannot carry non-finite numbers: send them as ``Infinity``, ``-Infinity``, ``NaN``
    (the server reads these in ``$gt $gte $lt $lte``; in equality they match no number)."""

    def wire(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        if isinstance(value, dict):
            return {k: wire(v) for k, v in value.items()}
        if isinstance(value, list):
            return [wire(v) for v in value]
        return value

    return wire(filter_) if filter_ else None


def _item(namespace: tuple[str, ...], key: str, entry: dict[str, Any]) -> Item:
    return Item(
        value=entry["value"],
        key=key,
        namespace=namespace,
        created_at=datetime.fromisoformat(entry["createdAt"]),
        updated_at=datetime.fromisoformat(entry["updatedAt"]),
    )


def _search_item(hit: dict[str, Any]) -> SearchItem:
    entry = hit["entry"]
    return SearchItem(
        namespace=tuple(hit["namespace"]),
        key=hit["key"],
        value=entry["value"],
        created_at=datetime.fromisoformat(entry["createdAt"]),
        updated_at=datetime.fromisoformat(entry["updatedAt"]),
        score=hit["score"],
    )


class PalimpsestStore(BaseStore):
    """LangGraph's ``BaseStore`` over Palimpsest's GraphQL, synchronous.

    ``index`` names the value fields the server embeds on put (default: none, so ``query``
    ranks only what was put with ``index=[...]``); TTLs are minutes, as in LangGraph, rounded
    up to whole seconds; reads do not refresh them.
    """

    supports_ttl = True

    def __init__(
        self,
        url: str,
        token: str,
        scope: str = "USER",
        *,
        index: StoreIndex | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.scope = scope
        self.index = index
        self.transport = Transport(url, token, policy=retry, timeout=timeout)

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> PalimpsestStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        out: list[Result] = []
        for request in _plan(self.scope, self.index, ops):
            with _as_value_error():
                out += request.results(self.transport.post(request.document, request.variables))
        return out

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The blocking batch in a worker thread (``AsyncPalimpsestStore`` needs none)."""
        return await asyncio.to_thread(self.batch, list(ops))


class AsyncPalimpsestStore(AsyncBatchedBaseStore):
    """LangGraph's ``BaseStore`` over Palimpsest's GraphQL, asynchronous: calls made in one
    event-loop tick are batched into as few requests as the limits allow. Construct it inside
    the event loop it serves; its synchronous methods work from other threads only."""

    supports_ttl = True

    def __init__(
        self,
        url: str,
        token: str,
        scope: str = "USER",
        *,
        index: StoreIndex | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
    ) -> None:
        super().__init__()
        self.scope = scope
        self.index = index
        self.transport = AsyncTransport(url, token, policy=retry, timeout=timeout)

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def __aenter__(self) -> AsyncPalimpsestStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        out: list[Result] = []
        for request in _plan(self.scope, self.index, ops):
            with _as_value_error():
                data = await self.transport.post(request.document, request.variables)
            out += request.results(data)
        return out


@contextmanager
def _as_value_error() -> Iterator[None]:
    try:
        yield
    except InvalidArgument as e:
        if isinstance(e, ValueError):
            raise
        raise InvalidStoreArgument(e.message, **e.details) from e
