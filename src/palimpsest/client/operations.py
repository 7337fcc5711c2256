"""Every root field of the schema as an ``Operation``: its arguments as the schema declares
them and its typed result. ``tests/unit/client/test_schema_sync.py`` fails when the schema has
a field, an argument or a type that is not here; ``Client.call(OP, **args)`` runs any of them,
and the named methods are the common ones.

Each result is named by text (the annotation says the same to type checkers): the result
dataclasses are built when an operation first runs, so importing the client, as a quick look
at the command line does, costs none of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from palimpsest.client.wire import Operation

if TYPE_CHECKING:  # results are named by text, built when an operation first runs
    from palimpsest.client.erasure_results import ErasurePolicy, RetentionPolicy
    from palimpsest.client.recall_results import (
        ContextBlock,
        Entity,
        EntityDuplicatePage,
        EntityMerge,
        EntityPage,
        Fact,
        FactAssertion,
        FactConflictPage,
        FactPage,
        GraphRecallResult,
        HarvestReceipt,
        JudgeConflictsResult,
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

# Query

HEALTH: Operation[str] = Operation("query", "health", "", "str")
ME: Operation[Me] = Operation("query", "me", "", "Me")
MEMORY: Operation[MemoryEntry | None] = Operation(
    "query",
    "memory",
    "scope: Scope!, key: String!, asOf: Instant, knownAt: Instant",
    "MemoryEntry | None",
)
MEMORIES: Operation[MemoryEntryPage] = Operation(
    "query",
    "memories",
    "scope: Scope!, prefix: String!, asOf: Instant, knownAt: Instant, limit: Int!, after: String",
    "MemoryEntryPage",
)
MEMORY_HISTORY: Operation[MemoryVersionPage] = Operation(
    "query",
    "memoryHistory",
    "scope: Scope!, key: String!, limit: Int!, after: String",
    "MemoryVersionPage",
)
STORE_SEARCH: Operation[list[StoreItem]] = Operation(
    "query",
    "storeSearch",
    "scope: Scope!, namespacePrefix: [String!]!, filter: JSON, query: String, limit: Int!, "
    "offset: Int!",
    "list[StoreItem]",
)
STORE_NAMESPACES: Operation[list[StoreNamespace]] = Operation(
    "query",
    "storeNamespaces",
    "scope: Scope!, prefix: [String!], suffix: [String!], maxDepth: Int, limit: Int!, offset: Int!",
    "list[StoreNamespace]",
)
DOCUMENTS: Operation[DocumentSummaryPage] = Operation(
    "query",
    "documents",
    "scope: Scope!, pathPrefix: String!, limit: Int!, after: String",
    "DocumentSummaryPage",
)
DOCUMENT: Operation[Document | None] = Operation(
    "query",
    "document",
    "scope: Scope!, id: ID!, revision: Int, knownAt: Instant",
    "Document | None",
)
CHUNK: Operation[Chunk | None] = Operation(
    "query", "chunk", "scope: Scope!, id: ID!", "Chunk | None"
)
DOCUMENT_HISTORY: Operation[DocumentRevisionPage] = Operation(
    "query",
    "documentHistory",
    "scope: Scope!, id: ID!, limit: Int!, after: String",
    "DocumentRevisionPage",
)
DOCUMENT_DIFF: Operation[str] = Operation(
    "query", "documentDiff", "scope: Scope!, id: ID!, fromRevision: Int!, toRevision: Int!", "str"
)
FACTS: Operation[FactPage] = Operation(
    "query",
    "facts",
    "scope: Scope!, subject: EntityInput, predicate: String, asOf: Instant, "
    "knownAt: Instant, includeRetired: Boolean!, includeRefuted: Boolean!, limit: Int!, "
    "after: String",
    "FactPage",
)
FACT: Operation[Fact | None] = Operation("query", "fact", "scope: Scope!, id: ID!", "Fact | None")
FACT_HISTORY: Operation[FactPage | None] = Operation(
    "query", "factHistory", "scope: Scope!, id: ID!, limit: Int!, after: String", "FactPage | None"
)
FACT_CONFLICTS: Operation[FactConflictPage] = Operation(
    "query",
    "factConflicts",
    "scope: Scope!, verdicts: [PairVerdict!], pending: Boolean!, limit: Int!, after: String",
    "FactConflictPage",
)
JUDGE_CONFLICTS: Operation[JudgeConflictsResult] = Operation(
    "mutation", "judgeConflicts", "scope: Scope!, limit: Int", "JudgeConflictsResult"
)
ENTITIES: Operation[EntityPage] = Operation(
    "query",
    "entities",
    "scope: Scope!, type: String, name: String, contains: String, limit: Int!, after: String",
    "EntityPage",
)
ENTITY_DUPLICATES: Operation[EntityDuplicatePage] = Operation(
    "query", "entityDuplicates", "scope: Scope!, limit: Int!, after: String", "EntityDuplicatePage"
)
ENTITY_MERGES: Operation[list[EntityMerge]] = Operation(
    "query", "entityMerges", "scope: Scope!, entityId: ID!, limit: Int!", "list[EntityMerge]"
)
GRAPH_RECALL: Operation[GraphRecallResult] = Operation(
    "query",
    "graphRecall",
    "scope: Scope!, query: String, seedIds: [ID!], hops: Int!, asOf: Instant, "
    "knownAt: Instant, includeRetired: Boolean!, includeRefuted: Boolean!, limit: Int!",
    "GraphRecallResult",
)
ONTOLOGY: Operation[OntologyInfo | None] = Operation("query", "ontology", "", "OntologyInfo | None")
PLACEMENT: Operation[list[PlacementResult]] = Operation(
    "query", "placement", "scope: Scope!, items: [PlacementItemInput!]!", "list[PlacementResult]"
)
RECALL: Operation[RecallResult] = Operation(
    "query",
    "recall",
    "scope: Scope!, query: String!, topK: Int!, sources: [Source!], when: WhenInput, "
    "prefix: String!, alsoScopes: [Scope!], dedup: Float, minScore: Float, "
    "recencyHalfLife: String, weights: LegWeightsInput, maxPerDocument: Int",
    "RecallResult",
)
SEARCH: Operation[RecallResult] = Operation(
    "query",
    "search",
    "scope: Scope!, query: String!, topK: Int!, sources: [Source!], when: WhenInput, "
    "prefix: String!, alsoScopes: [Scope!], dedup: Float, minScore: Float, "
    "recencyHalfLife: String, weights: LegWeightsInput, maxPerDocument: Int",
    "RecallResult",
)
CONTEXT: Operation[ContextBlock] = Operation(
    "query",
    "context",
    "scope: Scope!, query: String!, budgetTokens: Int!, alsoScopes: [Scope!], asOf: Instant, "
    "knownAt: Instant, minScore: Float",
    "ContextBlock",
)
MEMORY_FILE: Operation[MemoryFileAnswer] = Operation(
    "query", "memoryFile", "scope: Scope!, path: String!, viewRange: [Int!]", "MemoryFileAnswer"
)
SQL_QUERY: Operation[SqlQueryResult] = Operation(
    "query", "sqlQuery", "scope: Scope!, statement: String!, args: JSON", "SqlQueryResult"
)
SQL_DATABASES: Operation[SqlDatabasePage] = Operation(
    "query", "sqlDatabases", "scope: Scope!, limit: Int!, after: String", "SqlDatabasePage"
)
EXPORT_ME: Operation[PersonalExport] = Operation("query", "exportMe", "", "PersonalExport")
ERASURES: Operation[ErasureReceiptPage] = Operation(
    "query", "erasures", "limit: Int!, after: String", "ErasureReceiptPage"
)
PENDING_WORK: Operation[PendingWork] = Operation(
    "query", "pendingWork", "scope: Scope!", "PendingWork"
)
USAGE: Operation[Usage] = Operation("query", "usage", "scope: Scope!", "Usage")
EMBEDDING_STATUS: Operation[EmbeddingStatus] = Operation(
    "query", "embeddingStatus", "", "EmbeddingStatus"
)
DEAD_LETTERS: Operation[DeadLetterPage] = Operation(
    "query", "deadLetters", "limit: Int!, after: String", "DeadLetterPage"
)

# Mutation

MEMORY_SET: Operation[MemoryEntry] = Operation(
    "mutation",
    "memorySet",
    "scope: Scope!, key: String!, value: JSON!, ttlSeconds: Int, embed: Boolean!, "
    "embedText: String, observedAt: Instant, validAt: Instant, invalidAt: Instant, "
    "pinned: Boolean",
    "MemoryEntry",
)
MEMORY_DELETE: Operation[DeleteResult] = Operation(
    "mutation", "memoryDelete", "scope: Scope!, key: String!", "DeleteResult"
)
MEMORY_INCREMENT: Operation[MemoryEntry] = Operation(
    "mutation", "memoryIncrement", "scope: Scope!, key: String!, delta: Float!", "MemoryEntry"
)
MEMORY_MERGE: Operation[MemoryEntry] = Operation(
    "mutation", "memoryMerge", "scope: Scope!, key: String!, value: JSON!", "MemoryEntry"
)
MEMORY_APPEND_DEDUPE: Operation[AppendResult] = Operation(
    "mutation", "memoryAppendDedupe", "scope: Scope!, key: String!, value: JSON!", "AppendResult"
)
MEMORY_BOUNDED_LIST: Operation[BoundedListResult] = Operation(
    "mutation",
    "memoryBoundedList",
    "scope: Scope!, key: String!, value: JSON!, limit: Int!",
    "BoundedListResult",
)
IMPORT_DOCUMENT: Operation[Document] = Operation(
    "mutation",
    "importDocument",
    "scope: Scope!, markdown: String!, title: String, path: String, observedAt: Instant, "
    "newDocument: Boolean!",
    "Document",
)
IMPORT_DOCUMENTS: Operation[list[Document]] = Operation(
    "mutation", "importDocuments", "scope: Scope!, documents: [DocumentInput!]!", "list[Document]"
)
UPDATE_CHUNK: Operation[Chunk] = Operation(
    "mutation", "updateChunk", "scope: Scope!, id: ID!, text: String!, revision: Int!", "Chunk"
)
DELETE_DOCUMENT: Operation[DeletedDocument] = Operation(
    "mutation", "deleteDocument", "scope: Scope!, id: ID!", "DeletedDocument"
)
RESTORE_DOCUMENT: Operation[Document] = Operation(
    "mutation", "restoreDocument", "scope: Scope!, id: ID!, revision: Int!", "Document"
)
UPDATE_MEMORY_FILE: Operation[MemoryFileAnswer] = Operation(
    "mutation",
    "updateMemoryFile",
    "scope: Scope!, command: MemoryFileCommandInput!",
    "MemoryFileAnswer",
)
SUPERSEDE_FACT: Operation[SupersedeResult] = Operation(
    "mutation", "supersedeFact", "scope: Scope!, id: ID!, byId: ID!", "SupersedeResult"
)
RETRACT_FACT: Operation[Fact] = Operation(
    "mutation", "retractFact", "scope: Scope!, id: ID!, invalidAt: Instant", "Fact"
)
SET_ENTITY_ALIASES: Operation[Entity] = Operation(
    "mutation", "setEntityAliases", "scope: Scope!, id: ID!, aliases: [String!]!", "Entity"
)
MERGE_ENTITIES: Operation[Entity] = Operation(
    "mutation", "mergeEntities", "scope: Scope!, keepId: ID!, mergeIds: [ID!]!", "Entity"
)
UNMERGE_ENTITIES: Operation[list[Entity]] = Operation(
    "mutation", "unmergeEntities", "scope: Scope!, mergeId: ID!", "list[Entity]"
)
JUDGE_FACT: Operation[Fact] = Operation(
    "mutation", "judgeFact", "scope: Scope!, id: ID!, verdict: Verdict!, reason: String!", "Fact"
)
SET_ONTOLOGY: Operation[OntologyInfo] = Operation(
    "mutation", "setOntology", "markdown: String!", "OntologyInfo"
)
ASSERT_FACTS: Operation[list[FactAssertion]] = Operation(
    "mutation",
    "assertFacts",
    "scope: Scope!, facts: [FactInput!]!, place: Boolean!",
    "list[FactAssertion]",
)
SQL_EXEC: Operation[SqlExecResult] = Operation(
    "mutation", "sqlExec", "scope: Scope!, statements: [SqlStatementInput!]!", "SqlExecResult"
)
SQL_ERASE: Operation[SqlEraseResult] = Operation(
    "mutation", "sqlErase", "id: ID!, scope: Scope!", "SqlEraseResult"
)
ERASE_ME: Operation[ErasureReceipt] = Operation("mutation", "eraseMe", "", "ErasureReceipt")
ERASE_SUBJECT: Operation[ErasureReceipt] = Operation(
    "mutation", "eraseSubject", "scope: Scope!, subject: EntityInput!", "ErasureReceipt"
)
ERASE_USER: Operation[ErasureReceipt] = Operation(
    "mutation", "eraseUser", "userId: ID!", "ErasureReceipt"
)
ERASURE_POLICY: Operation[ErasurePolicy] = Operation("query", "erasurePolicy", "", "ErasurePolicy")
SET_ERASURE_POLICY: Operation[ErasurePolicy] = Operation(
    "mutation", "setErasurePolicy", "authored: AuthoredPolicy!", "ErasurePolicy"
)
RETENTION_POLICY: Operation[RetentionPolicy] = Operation(
    "query", "retentionPolicy", "", "RetentionPolicy"
)
SET_RETENTION_POLICY: Operation[RetentionPolicy] = Operation(
    "mutation",
    "setRetentionPolicy",
    "versionsSeconds: Int, tombstonesSeconds: Int, doneSpansSeconds: Int",
    "RetentionPolicy",
)
REQUEUE_DEAD_LETTERS: Operation[list[str]] = Operation(
    "mutation", "requeueDeadLetters", "spanIds: [ID!]!", "list[str]"
)
HARVEST: Operation[HarvestReceipt] = Operation(
    "mutation", "harvest", "spans: [SpanInput!]!, compactionGeneration: Int!", "HarvestReceipt"
)
