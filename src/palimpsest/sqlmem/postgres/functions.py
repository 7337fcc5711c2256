"""The functions agent SQL may call on PostgreSQL, shared by both layers.

Layer 1 (``validator.py``) refuses a call to any other name; layer 2 (``admin.py``) revokes
EXECUTE on every function of ``pg_catalog`` from PUBLIC in the SQL Memory database and grants
back only these names, the functions behind operators and casts, and what
``information_schema`` needs. Absent on purpose: anything that reads files, settings or other
sessions (``pg_read_file``, ``current_setting``, ``set_config``, ``pg_stat_*``, ``version``),
large objects (``lo_*``: database-wide, outside the schema quota), advisory locks and
``pg_notify`` (database-wide: one scope could reach another), ``query_to_xml`` and friends
(they run SQL text), ``pg_sleep``, sizes and definitions of other relations
(``pg_relation_size``, ``pg_get_viewdef``), and ``dblink``/extensions (never installed).
"""

from __future__ import annotations

ALLOWED_PG_FUNCTIONS = frozenset(
    {
        # strings
        "length", "char_length", "character_length", "octet_length", "bit_length", "lower",
        "upper", "initcap", "substr", "substring", "position", "strpos", "replace", "translate",
        "trim", "btrim", "ltrim", "rtrim", "left", "right", "lpad", "rpad", "repeat", "concat",
        "concat_ws", "format", "split_part", "starts_with", "reverse", "ascii", "chr", "md5",
        "encode", "decode", "to_hex", "quote_ident", "quote_literal", "quote_nullable",
        "regexp_replace", "regexp_match", "regexp_matches", "regexp_split_to_array",
        "regexp_split_to_table", "regexp_count", "regexp_instr", "regexp_like",
        "regexp_substr", "string_to_array", "array_to_string", "overlay",
        # numbers
        "abs", "ceil", "ceiling", "floor", "round", "trunc", "sign", "sqrt", "cbrt", "power",
        "pow", "exp", "ln", "log", "log10", "mod", "div", "pi", "degrees", "radians", "sin",
        "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
        "atanh", "random", "gcd", "lcm", "width_bucket", "scale", "factorial",
        # aggregates and window functions
        "count", "sum", "avg", "min", "max", "bool_and", "bool_or", "every", "string_agg",
        "array_agg", "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg", "stddev",
        "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp", "percentile_cont",
        "percentile_disc", "mode", "row_number", "rank", "dense_rank", "percent_rank",
        "cume_dist", "ntile", "lag", "lead", "first_value", "last_value", "nth_value",
        # date and time
        "now", "clock_timestamp", "statement_timestamp", "transaction_timestamp", "date_trunc",
        "date_part", "extract", "age", "make_date", "make_time", "make_timestamp",
        "make_timestamptz", "make_interval", "to_timestamp", "to_date", "to_char", "to_number",
        "justify_days", "justify_hours", "justify_interval", "isfinite", "date_bin", "timezone",
        # JSON
        "to_json", "to_jsonb", "json_build_object", "jsonb_build_object", "json_build_array",
        "jsonb_build_array", "json_object", "jsonb_object", "json_array_length",
        "jsonb_array_length", "json_extract_path", "jsonb_extract_path",
        "json_extract_path_text", "jsonb_extract_path_text", "json_typeof", "jsonb_typeof",
        "jsonb_set", "jsonb_insert", "jsonb_strip_nulls", "json_strip_nulls", "jsonb_pretty",
        "json_each", "jsonb_each", "json_each_text", "jsonb_each_text", "json_array_elements",
        "jsonb_array_elements", "json_array_elements_text", "jsonb_array_elements_text",
        "json_object_keys", "jsonb_object_keys", "jsonb_path_query", "jsonb_path_exists",
        "jsonb_path_match", "jsonb_path_query_array", "jsonb_path_query_first", "row_to_json",
        "array_to_json",
        # arrays and series
        "array_length", "array_lower", "array_upper", "cardinality", "array_append",
        "array_prepend", "array_cat", "array_position", "array_positions", "array_remove",
        "array_replace", "unnest", "generate_series",
        # misc
        "gen_random_uuid", "num_nulls", "num_nonnulls", "nextval", "currval", "setval",
    }
)  # fmt: skip

# Not callable by agents (layer 1 refuses them), but granted at layer 2 because the
# information_schema views (the agent's way to list its own tables) call them. They answer
# only about privileges, of objects the caller names by id; catalogs stay unreadable.
INFORMATION_SCHEMA_HELPERS = frozenset(
    {
        "pg_has_role", "has_table_privilege", "has_column_privilege",
        "has_any_column_privilege", "has_sequence_privilege", "has_schema_privilege",
        "has_type_privilege", "format_type", "pg_get_expr", "pg_get_userbyid",
        "pg_char_to_encoding", "pg_encoding_to_char",
        "pg_column_is_updatable", "pg_relation_is_updatable", "pg_is_other_temp_schema",
    }
)  # fmt: skip
