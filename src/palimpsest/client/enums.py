"""The schema's enums, by value (a plain string of the same value is accepted too)."""

from __future__ import annotations

from enum import StrEnum


class ChunkType(StrEnum):
    """What kind of Markdown block a chunk is."""

    HEADING = "HEADING"
    PARAGRAPH = "PARAGRAPH"
    LIST_ITEM = "LIST_ITEM"
    CODE = "CODE"
    TABLE = "TABLE"
    QUOTE = "QUOTE"
    HTML = "HTML"
    THEMATIC_BREAK = "THEMATIC_BREAK"
    DEFINITION = "DEFINITION"
    TURN = "TURN"


class ClosureReason(StrEnum):
    """Why a write closed a fact. SINGLE_VALUED: the ontology declares the predicate single-valued
    for the subject's type, and a fact with another object starts where this one now ends.
    """

    SINGLE_VALUED = "SINGLE_VALUED"


class ContextKind(StrEnum):
    """What a piece of a context block is: a pinned note, a fact about a named entity, a hit."""

    PINNED = "PINNED"
    FACT = "FACT"
    HIT = "HIT"


class ErasureKind(StrEnum):
    """A whole person (USER) or one SUBJECT."""

    USER = "USER"
    SUBJECT = "SUBJECT"


class RetentionWindow(StrEnum):
    """A retention window a tenant may set (``RetentionPolicy.overridden``)."""

    VERSIONS = "VERSIONS"
    TOMBSTONES = "TOMBSTONES"
    DONE_SPANS = "DONE_SPANS"


class AuthoredPolicy(StrEnum):
    """What erasing a person does to the rows they wrote in TENANT, AGENT and GLOBAL scopes."""

    DELETE = "DELETE"
    ANONYMISE = "ANONYMISE"


class ErasureStatus(StrEnum):
    """DONE, or RUNNING for an interrupted job: call it again to finish it."""

    RUNNING = "RUNNING"
    DONE = "DONE"


class MemoryFileEdit(StrEnum):
    """A memory file command that changes the tree (view is the memoryFile query)."""

    CREATE = "CREATE"
    STR_REPLACE = "STR_REPLACE"
    INSERT = "INSERT"
    DELETE = "DELETE"
    RENAME = "RENAME"


class MissingDates(StrEnum):
    """What a time window does with undated rows: PREFER ranks them after in-window rows, REQUIRE
    drops them.
    """

    PREFER = "PREFER"
    REQUIRE = "REQUIRE"


class OntologyStatus(StrEnum):
    """Only CONFIRMED moves facts."""

    CONFIRMED = "CONFIRMED"
    DRAFT = "DRAFT"


class Origin(StrEnum):
    """What kind of writer wrote a row."""

    AGENT = "AGENT"
    CONSOLIDATOR = "CONSOLIDATOR"
    COMPACTION = "COMPACTION"
    OPERATOR = "OPERATOR"
    IMPORT = "IMPORT"


class PlacementReason(StrEnum):
    """Why a fact went where."""

    NO_ONTOLOGY = "NO_ONTOLOGY"
    DRAFT_ONTOLOGY = "DRAFT_ONTOLOGY"
    TYPE_MISSING = "TYPE_MISSING"
    SUBJECT_MISSING = "SUBJECT_MISSING"
    TYPE_UNDECLARED = "TYPE_UNDECLARED"
    NO_SCOPE_DECLARED = "NO_SCOPE_DECLARED"
    SUBJECT_IS_SELF = "SUBJECT_IS_SELF"
    CONFLICTING_TYPES = "CONFLICTING_TYPES"
    SCOPE_NOT_GRANTED = "SCOPE_NOT_GRANTED"
    ISOLATED = "ISOLATED"
    NO_TENANT_ACCESS = "NO_TENANT_ACCESS"
    OWNER_MISSING = "OWNER_MISSING"
    SAME_SCOPE = "SAME_SCOPE"
    PLACED = "PLACED"


class Role(StrEnum):
    """A role a run token carries."""

    ADMIN = "ADMIN"
    OPERATOR = "OPERATOR"
    CONSOLIDATOR = "CONSOLIDATOR"


class Scope(StrEnum):
    """Whose data an operation reaches; the owner always comes from the run token."""

    AGENT = "AGENT"
    USER = "USER"
    TENANT = "TENANT"
    GLOBAL = "GLOBAL"


class Source(StrEnum):
    """Kinds of rows recall may return."""

    FACTS = "FACTS"
    NOTES = "NOTES"
    DOCUMENTS = "DOCUMENTS"


class TemporalFilter(StrEnum):
    """A temporal filter recall can apply to a kind of row."""

    WINDOW = "WINDOW"
    AS_OF = "AS_OF"
    KNOWN_AT = "KNOWN_AT"


class TimeFilterMode(StrEnum):
    """Which time filter a recall applied."""

    PREFER = "PREFER"
    REQUIRE = "REQUIRE"
    AS_OF = "AS_OF"


class PairVerdict(StrEnum):
    """What a judge made of a pair of close facts; a report, it changes no fact."""

    SAME = "SAME"
    CONFLICT = "CONFLICT"
    COMPATIBLE = "COMPATIBLE"


class Verdict(StrEnum):
    """A judge's verdict; it sets the fact's confidence."""

    SUPPORTED = "SUPPORTED"
    UNCLEAR = "UNCLEAR"
    MISTYPED = "MISTYPED"
    UNSUPPORTED = "UNSUPPORTED"
