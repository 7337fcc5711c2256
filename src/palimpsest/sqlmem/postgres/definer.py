"""The admin schema's SECURITY DEFINER functions, the only way a scope role reaches past its
schema (``admin.py`` installs them and grants ``CALLABLE`` to every role).

- ``begin_write()``: one writer per scope across replicas (an advisory lock on the role), and
  the schema's size;
- ``schema_bytes()``: the caller's schema's size, for the quota;
- ``touch()``: the registry's modified time;
- ``too_big(n)``: raises SQLSTATE ``PA001`` (``admin.TOO_BIG``), the value guard's refusal.
"""

from __future__ import annotations

CALLABLE = ("begin_write()", "schema_bytes()", "touch()", "too_big(bigint)")

ADMIN_FUNCTIONS = """
CREATE OR REPLACE FUNCTION sqlmem_admin.caller_schema() RETURNS name
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
  IF session_user !~ '^sqlmem_r_[0-9a-f]{32}$' THEN
    RAISE EXCEPTION 'not a scope role';
  END IF;
  RETURN ('sqlmem_s_' || substr(session_user, 10))::name;
END $f$;

CREATE OR REPLACE FUNCTION sqlmem_admin.bytes_of(s name) RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
  SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = s AND c.relkind IN ('r', 'm', 'S')
$f$;

CREATE OR REPLACE FUNCTION sqlmem_admin.schema_bytes() RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
  SELECT sqlmem_admin.bytes_of(sqlmem_admin.caller_schema())
$f$;

CREATE OR REPLACE FUNCTION sqlmem_admin.begin_write() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(session_user, 7317));
  RETURN sqlmem_admin.schema_bytes();
END $f$;

CREATE OR REPLACE FUNCTION sqlmem_admin.touch() RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
  UPDATE sqlmem_admin.databases SET modified_at = now()
  WHERE name = substr(session_user, 10)
$f$;

CREATE OR REPLACE FUNCTION sqlmem_admin.too_big(n bigint) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
  RAISE EXCEPTION 'value too big' USING ERRCODE = 'PA001', DETAIL = n::text;
END $f$;
"""
