"""Every root field of the schema as an ``Operation``: its arguments as the schema declares
them and its typed result. ``tests/unit/client/test_schema_sync.py`` fails when the schema has
a field, an argument or a type that is not here; ``Client.call(OP, **args)`` runs any of them,
and the named methods are the common ones."""

from __future__ import annotations

from palimpsest.client.erasure_results import ErasurePolicy, RetentionPolicy
from palimpsest.client.recall_results import (
    ContextBlock,
    Entity,
    EntityDuplicatePage,
    EntityMerge,
    EntityPage,
    Fact,
    FactAssertion,
    FactPage,
    GraphRecallResult,
    HarvestReceipt,
    OntologyInfo,
    PlacementResult,
    RecallResult,
    SupersedeResult,
)
from palimpsest.client.results import (
    AppendResult,
    BoundedListResult,
    Chunk,
    DeadLetterPage,
    DeletedDocument,
    DeleteResult,
    Document,
    DocumentRevisionPage,
    DocumentSummaryPage,
    EmbeddingStatus,
    ErasureReceipt,
    ErasureReceiptPage,
    Me,
    MemoryEntry,
    MemoryEntryPage,
    MemoryFileAnswer,
    MemoryVersionPage,
    PendingWork,
    PersonalExport,
    SqlDatabasePage,
    SqlEraseResult,
    SqlExecResult,
    SqlQueryResult,
    StoreItem,
    StoreNamespace,
    Usage,
)
from palimpsest.client.wire import Operation

# Query

HEALTH = Operation[str]("query", "health", "", str)
ME = Operation[Me]("query", "me", "", Me)
MEMORY = Operation[MemoryEntry | None](
    "query",
    "memory",
    "scope: Scope!, key: String!, asOf: Instant, knownAt: Instant",
    MemoryEntry | None,
)
MEMORIES = Operation[MemoryEntryPage](
    "query",
    "memories",
    "scope: Scope!, prefix: String!, asOf: Instant, knownAt: Instant, limit: Int!, after: String",
    MemoryEntryPage,
)
MEMORY_HISTORY = Operation[MemoryVersionPage](
    "query",
    "memoryHistory",
    "scope: Scope!, key: String!, limit: Int!, after: String",
    MemoryVersionPage,
)
STORE_SEARCH = Operation[list[StoreItem]](
    "query",
    "storeSearch",
    "scope: Scope!, namespacePrefix: [String!]!, filter: JSON, query: String, limit: Int!, "
    "offset: Int!",
    list[StoreItem],
)
STORE_NAMESPACES = Operation[list[StoreNamespace]](
    "query",
    "storeNamespaces",
    "scope: Scope!, prefix: [String!], suffix: [String!], maxDepth: Int, limit: Int!, offset: Int!",
    list[StoreNamespace],
)
DOCUMENTS = Operation[DocumentSummaryPage](
    "query",
    "documents",
    "scope: Scope!, pathPrefix: String!, limit: Int!, after: String",
    DocumentSummaryPage,
)
DOCUMENT = Operation[Document | None](
    "query",
    "document",
    "scope: Scope!, id: ID!, revision: Int, knownAt: Instant",
    Document | None,
)
CHUNK = Operation[Chunk | None]("query", "chunk", "scope: Scope!, id: ID!", Chunk | None)
DOCUMENT_HISTORY = Operation[DocumentRevisionPage](
    "query",
    "documentHistory",
    "scope: Scope!, id: ID!, limit: Int!, after: String",
    DocumentRevisionPage,
)
DOCUMENT_DIFF = Operation[str](
    "query",
    "documentDiff",
    "scope: Scope!, id: ID!, fromRevision: Int!, toRevision: Int!",
    str,
)
FACTS = Operation[FactPage](
    "query",
    "facts",
    "scope: Scope!, subject: EntityInput, predicate: String, asOf: Instant, "
    "knownAt: Instant, includeRetired: Boolean!, includeRefuted: Boolean!, limit: Int!, "
    "after: String",
    FactPage,
)
FACT = Operation[Fact | None]("query", "fact", "scope: Scope!, id: ID!", Fact | None)
FACT_HISTORY = Operation[FactPage | None](
    "query",
    "factHistory",
    "scope: Scope!, id: ID!, limit: Int!, after: String",
    FactPage | None,
)
ENTITIES = Operation[EntityPage](
    "query",
    "entities",
    "scope: Scope!, type: String, name: String, contains: String, limit: Int!, after: String",
    EntityPage,
)
ENTITY_DUPLICATES = Operation[EntityDuplicatePage](
    "query",
    "entityDuplicates",
    "scope: Scope!, limit: Int!, after: String",
    EntityDuplicatePage,
)
ENTITY_MERGES = Operation[list[EntityMerge]](
    "query",
    "entityMerges",
    "scope: Scope!, entityId: ID!, limit: Int!",
    list[EntityMerge],
)
GRAPH_RECALL = Operation[GraphRecallResult](
    "query",
    "graphRecall",
    "scope: Scope!, query: String, seedIds: [ID!], hops: Int!, asOf: Instant, "
    "knownAt: Instant, includeRetired: Boolean!, includeRefuted: Boolean!, limit: Int!",
    GraphRecallResult,
)
ONTOLOGY = Operation[OntologyInfo | None]("query", "ontology", "", OntologyInfo | None)
PLACEMENT = Operation[list[PlacementResult]](
    "query",
    "placement",
    "scope: Scope!, items: [PlacementItemInput!]!",
    list[PlacementResult],
)
RECALL = Operation[RecallResult](
    "query",
    "recall",
    "scope: Scope!, query: String!, topK: Int!, sources: [Source!], when: WhenInput, "
    "prefix: String!, alsoScopes: [Scope!], dedup: Float, minScore: Float, "
    "recencyHalfLife: String, weights: LegWeightsInput, maxPerDocument: Int",
    RecallResult,
)
SEARCH = Operation[RecallResult](
    "query",
    "search",
    "scope: Scope!, query: String!, topK: Int!, sources: [Source!], when: WhenInput, "
    "prefix: String!, alsoScopes: [Scope!], dedup: Float, minScore: Float, "
    "recencyHalfLife: String, weights: LegWeightsInput, maxPerDocument: Int",
    RecallResult,
)
CONTEXT = Operation[ContextBlock](
    "query",
    "context",
    "scope: Scope!, query: String!, budgetTokens: Int!, alsoScopes: [Scope!], asOf: Instant, "
    "knownAt: Instant, minScore: Float",
    ContextBlock,
)
MEMORY_FILE = Operation[MemoryFileAnswer](
    "query",
    "memoryFile",
    "scope: Scope!, path: String!, viewRange: [Int!]",
    MemoryFileAnswer,
)
SQL_QUERY = Operation[SqlQueryResult](
    "query",
    "sqlQuery",
    "scope: Scope!, statement: String!, args: JSON",
    SqlQueryResult,
)
SQL_DATABASES = Operation[SqlDatabasePage](
    "query",
    "sqlDatabases",
    "scope: Scope!, limit: Int!, after: String",
    SqlDatabasePage,
)
EXPORT_ME = Operation[PersonalExport]("query", "exportMe", "", PersonalExport)
ERASURES = Operation[ErasureReceiptPage](
    "query",
    "erasures",
    "limit: Int!, after: String",
    ErasureReceiptPage,
)
PENDING_WORK = Operation[PendingWork]("query", "pendingWork", "scope: Scope!", PendingWork)
USAGE = Operation[Usage]("query", "usage", "scope: Scope!", Usage)
EMBEDDING_STATUS = Operation[EmbeddingStatus]("query", "embeddingStatus", "", EmbeddingStatus)
DEAD_LETTERS = Operation[DeadLetterPage](
    "query",
    "deadLetters",
    "limit: Int!, after: String",
    DeadLetterPage,
)

# Mutation

MEMORY_SET = Operation[MemoryEntry](
    "mutation",
    "memorySet",
    "scope: Scope!, key: String!, value: JSON!, ttlSeconds: Int, embed: Boolean!, "
    "embedText: String, observedAt: Instant, validAt: Instant, invalidAt: Instant, "
    "pinned: Boolean",
    MemoryEntry,
)
MEMORY_DELETE = Operation[DeleteResult](
    "mutation",
    "memoryDelete",
    "scope: Scope!, key: String!",
    DeleteResult,
)
MEMORY_INCREMENT = Operation[MemoryEntry](
    "mutation",
    "memoryIncrement",
    "scope: Scope!, key: String!, delta: Float!",
    MemoryEntry,
)
MEMORY_MERGE = Operation[MemoryEntry](
    "mutation",
    "memoryMerge",
    "scope: Scope!, key: String!, value: JSON!",
    MemoryEntry,
)
MEMORY_APPEND_DEDUPE = Operation[AppendResult](
    "mutation",
    "memoryAppendDedupe",
    "scope: Scope!, key: String!, value: JSON!",
    AppendResult,
)
MEMORY_BOUNDED_LIST = Operation[BoundedListResult](
    "mutation",
    "memoryBoundedList",
    "scope: Scope!, key: String!, value: JSON!, limit: Int!",
    BoundedListResult,
)
IMPORT_DOCUMENT = Operation[Document](
    "mutation",
    "importDocument",
    "scope: Scope!, markdown: String!, title: String, path: String, observedAt: Instant, "
    "newDocument: Boolean!",
    Document,
)
IMPORT_DOCUMENTS = Operation[list[Document]](
    "mutation",
    "importDocuments",
    "scope: Scope!, documents: [DocumentInput!]!",
    list[Document],
)
UPDATE_CHUNK = Operation[Chunk](
    "mutation",
    "updateChunk",
    "scope: Scope!, id: ID!, text: String!, revision: Int!",
    Chunk,
)
DELETE_DOCUMENT = Operation[DeletedDocument](
    "mutation",
    "deleteDocument",
    "scope: Scope!, id: ID!",
    DeletedDocument,
)
RESTORE_DOCUMENT = Operation[Document](
    "mutation",
    "restoreDocument",
    "scope: Scope!, id: ID!, revision: Int!",
    Document,
)
UPDATE_MEMORY_FILE = Operation[MemoryFileAnswer](
    "mutation",
    "updateMemoryFile",
    "scope: Scope!, command: MemoryFileCommandInput!",
    MemoryFileAnswer,
)
SUPERSEDE_FACT = Operation[SupersedeResult](
    "mutation",
    "supersedeFact",
    "scope: Scope!, id: ID!, byId: ID!",
    SupersedeResult,
)
RETRACT_FACT = Operation[Fact](
    "mutation",
    "retractFact",
    "scope: Scope!, id: ID!, invalidAt: Instant",
    Fact,
)
SET_ENTITY_ALIASES = Operation[Entity](
    "mutation",
    "setEntityAliases",
    "scope: Scope!, id: ID!, aliases: [String!]!",
    Entity,
)
MERGE_ENTITIES = Operation[Entity](
    "mutation",
    "mergeEntities",
    "scope: Scope!, keepId: ID!, mergeIds: [ID!]!",
    Entity,
)
UNMERGE_ENTITIES = Operation[list[Entity]](
    "mutation",
    "unmergeEntities",
    "scope: Scope!, mergeId: ID!",
    list[Entity],
)
JUDGE_FACT = Operation[Fact](
    "mutation",
    "judgeFact",
    "scope: Scope!, id: ID!, verdict: Verdict!, reason: String!",
    Fact,
)
SET_ONTOLOGY = Operation[OntologyInfo]("mutation", "setOntology", "markdown: String!", OntologyInfo)
ASSERT_FACTS = Operation[list[FactAssertion]](
    "mutation",
    "assertFacts",
    "scope: Scope!, facts: [FactInput!]!, place: Boolean!",
    list[FactAssertion],
)
SQL_EXEC = Operation[SqlExecResult](
    "mutation",
    "sqlExec",
    "scope: Scope!, statements: [SqlStatementInput!]!",
    SqlExecResult,
)
SQL_ERASE = Operation[SqlEraseResult](
    "mutation",
    "sqlErase",
    "id: ID!, scope: Scope!",
    SqlEraseResult,
)
ERASE_ME = Operation[ErasureReceipt]("mutation", "eraseMe", "", ErasureReceipt)
ERASE_SUBJECT = Operation[ErasureReceipt](
    "mutation",
    "eraseSubject",
    "scope: Scope!, subject: EntityInput!",
    ErasureReceipt,
)
ERASE_USER = Operation[ErasureReceipt]("mutation", "eraseUser", "userId: ID!", ErasureReceipt)
ERASURE_POLICY = Operation[ErasurePolicy]("query", "erasurePolicy", "", ErasurePolicy)
SET_ERASURE_POLICY = Operation[ErasurePolicy](
    "mutation", "setErasurePolicy", "authored: AuthoredPolicy!", ErasurePolicy
)
RETENTION_POLICY = Operation[RetentionPolicy]("query", "retentionPolicy", "", RetentionPolicy)
SET_RETENTION_POLICY = Operation[RetentionPolicy](
    "mutation",
    "setRetentionPolicy",
    "versionsSeconds: Int, tombstonesSeconds: Int, doneSpansSeconds: Int",
    RetentionPolicy,
)
REQUEUE_DEAD_LETTERS = Operation[list[str]](
    "mutation",
    "requeueDeadLetters",
    "spanIds: [ID!]!",
    list[str],
)
HARVEST = Operation[HarvestReceipt](
    "mutation",
    "harvest",
    "spans: [SpanInput!]!, compactionGeneration: Int!",
    HarvestReceipt,
)
