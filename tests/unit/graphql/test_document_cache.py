"""The cache of validated GraphQL documents: bounded, per tenant, least recently used out."""

from __future__ import annotations

from graphql import parse

from palimpsest.graphql.document_cache import MAX_QUERY_CHARS, DocumentCache, cost_errors
from palimpsest.graphql.limits import EdgeLimits
from palimpsest.graphql.schema import build_schema

SCHEMA = build_schema()._schema
DOC = parse("{ health }")


def test_entries_are_per_tenant_and_bounded() -> None:
    cache = DocumentCache(2)
    a, b = DocumentCache.key("acme", "{ health }"), DocumentCache.key("other", "{ health }")
    assert a is not None
    assert b is not None
    cache.put(a, DOC)
    assert cache.get(a) is DOC
    assert cache.get(b) is None  # the same text from another tenant is parsed on its own
    cache.put(b, DOC)
    assert cache.get(a) is DOC  # a is now the most recent
    c = DocumentCache.key("acme", "{ __typename }")
    assert c is not None
    cache.put(c, DOC)
    assert len(cache) == 2
    assert cache.get(b) is None  # the least recently used went out
    assert cache.get(a) is DOC


def test_long_texts_and_a_zero_size_keep_nothing() -> None:
    assert DocumentCache.key("acme", "#" * (MAX_QUERY_CHARS + 1)) is None
    off = DocumentCache(0)
    key = DocumentCache.key("acme", "{ health }")
    assert key is not None
    off.put(key, DOC)
    assert off.get(key) is None


def test_the_cost_of_a_kept_document_reads_the_variables() -> None:
    search = 'search(scope: USER, query: "q", alsoScopes: $also) { scopes }'
    doc = parse("query($also: [Scope!]) { " + " ".join(f"a{i}: {search}" for i in range(3)) + " }")
    limits = EdgeLimits()
    assert cost_errors(SCHEMA, doc, {"also": []}, limits) == []
    [error] = cost_errors(SCHEMA, doc, {"also": ["TENANT", "AGENT", "GLOBAL"]}, limits)
    assert "index calls" in error.message
