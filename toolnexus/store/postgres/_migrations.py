"""The PostgreSQL store's schema, as migrations: `MIGRATIONS[k]` takes version k to k+1.

Append only, as the folder's (`_migrations`). Every table is keyed by the
persona's store key first, so one database holds many personas. The tables
mirror the folder's state database column for column (a push / pull copies
rows as they are); search uses a stored `tsvector` with a GIN index instead of
FTS5.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS", "VERSION_TABLE"]

#: The one-row table that holds the schema's version.
VERSION_TABLE = "toolnexus_schema"

#: Version k → k+1. Append only: a released migration never changes.
MIGRATIONS: tuple[str, ...] = (
    # 1: personas, memory files, history, conversations, and their search.
    """
    CREATE TABLE toolnexus_personas (
        key         text PRIMARY KEY,
        name        text NOT NULL,
        -- sha256 of the IDENTITY.md that claimed the key: another identity is refused
        identity    text NOT NULL,
        -- the next history id: ids count per persona, as in a folder
        next_change bigint NOT NULL DEFAULT 1
    );
    CREATE TABLE toolnexus_memory (
        key    text NOT NULL REFERENCES toolnexus_personas ON DELETE CASCADE,
        target text NOT NULL CHECK (target IN ('self', 'user')),
        -- the file's whole text, prose and entries, byte for byte
        body   bytea NOT NULL,
        PRIMARY KEY (key, target)
    );
    CREATE TABLE toolnexus_changes (
        key      text NOT NULL REFERENCES toolnexus_personas ON DELETE CASCADE,
        id       bigint NOT NULL,
        time     text NOT NULL,
        target   text NOT NULL CHECK (target IN ('self', 'user')),
        action   text NOT NULL CHECK (action IN
                     ('add', 'replace', 'remove', 'outside-edit', 'undo', 'restore')),
        before   text,
        after    text,
        source   text NOT NULL,
        shape    text NOT NULL CHECK (shape IN ('entry', 'merge', 'file')),
        digest   text NOT NULL,
        redacted boolean NOT NULL DEFAULT false,
        -- a whole-file change is searched by the file after it, as in the folder
        words    tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig,
                     coalesce(CASE WHEN shape = 'file' THEN NULL ELSE before END, '')
                     || ' ' || coalesce(after, ''))) STORED,
        PRIMARY KEY (key, id)
    );
    CREATE INDEX toolnexus_changes_by_target ON toolnexus_changes (key, target, id);
    CREATE INDEX toolnexus_changes_words ON toolnexus_changes USING gin (words);
    CREATE TABLE toolnexus_states (
        key    text NOT NULL REFERENCES toolnexus_personas ON DELETE CASCADE,
        digest text NOT NULL,
        -- the file's bytes after a change, uncompressed (the server compresses)
        body   bytea NOT NULL,
        PRIMARY KEY (key, digest)
    );
    CREATE TABLE toolnexus_sessions (
        key     text NOT NULL REFERENCES toolnexus_personas ON DELETE CASCADE,
        id      text NOT NULL,
        started text NOT NULL,
        ended   text NOT NULL,
        model   text,
        soul    text NOT NULL,
        title   text NOT NULL,
        origin  text NOT NULL CHECK (origin IN ('live', 'import')),
        digest  text,
        PRIMARY KEY (key, id)
    );
    CREATE INDEX toolnexus_sessions_by_start ON toolnexus_sessions (key, started, id);
    CREATE TABLE toolnexus_messages (
        key      text NOT NULL,
        session  text NOT NULL,
        seq      integer NOT NULL,
        time     text NOT NULL,
        role     text NOT NULL,
        name     text NOT NULL,
        data     text NOT NULL,
        text     text NOT NULL,
        is_error boolean NOT NULL DEFAULT false,
        input_tokens       integer,
        output_tokens      integer,
        cache_read_tokens  integer,
        cache_write_tokens integer,
        words    tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED,
        PRIMARY KEY (key, session, seq),
        FOREIGN KEY (key, session) REFERENCES toolnexus_sessions ON DELETE CASCADE
    );
    CREATE INDEX toolnexus_messages_words ON toolnexus_messages USING gin (words);
    """,
)
