"""The state database's schema, as migrations: `MIGRATIONS[k]` takes version k to k+1.

Append only: a released migration never changes (a database made by it must be
brought forward by the next one). `_state` runs them, one transaction each.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS"]

#: Version k → k+1. Append only: a released migration never changes.
MIGRATIONS: tuple[str, ...] = (
    # 1: memory history.
    """
    CREATE TABLE memory_changes (
        id       INTEGER PRIMARY KEY AUTOINCREMENT,
        time     TEXT NOT NULL,
        target   TEXT NOT NULL CHECK (target IN ('self', 'user')),
        action   TEXT NOT NULL CHECK (action IN
                     ('add', 'replace', 'remove', 'outside-edit', 'undo', 'restore')),
        before   TEXT,
        after    TEXT,
        source   TEXT NOT NULL,
        -- how undo inverts it: one entry ('entry'), an entry merged into its twin
        -- ('merge'), or the whole file ('file')
        shape    TEXT NOT NULL CHECK (shape IN ('entry', 'merge', 'file')),
        -- sha256 of the file's bytes right after the change; '' when there is no file
        digest   TEXT NOT NULL,
        redacted INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX memory_changes_by_target ON memory_changes (target, id);
    -- The file's bytes after a change, zlib-compressed, shared by every record
    -- that left the file so (restore reads them).
    CREATE TABLE memory_states (
        digest TEXT PRIMARY KEY,
        body   BLOB NOT NULL
    ) WITHOUT ROWID;
    """,
    # 2: saved conversations, and full-text search over them and the memory history.
    """
    CREATE TABLE sessions (
        id      TEXT PRIMARY KEY,
        started TEXT NOT NULL,
        -- the time of its last saved message
        ended   TEXT NOT NULL,
        model   TEXT,
        -- the digest of the soul it last ran with; '' for an imported conversation
        soul    TEXT NOT NULL,
        title   TEXT NOT NULL,
        -- 'live' (a session saved as it went) or 'import'
        origin  TEXT NOT NULL CHECK (origin IN ('live', 'import')),
        -- an imported conversation: sha256 of its messages (the same file is imported once)
        digest  TEXT
    ) WITHOUT ROWID;
    CREATE INDEX sessions_by_start ON sessions (started, id);
    CREATE INDEX sessions_by_digest ON sessions (digest);
    CREATE TABLE messages (
        id       INTEGER PRIMARY KEY AUTOINCREMENT,
        session  TEXT NOT NULL,
        seq      INTEGER NOT NULL,
        time     TEXT NOT NULL,
        role     TEXT NOT NULL,
        -- the tool a result answers ('' otherwise)
        name     TEXT NOT NULL,
        -- the message in the OpenAI chat format, exported as it is
        data     TEXT NOT NULL,
        -- what recall searches: the text, and a call's argument values
        text     TEXT NOT NULL,
        is_error INTEGER NOT NULL DEFAULT 0,
        input_tokens       INTEGER,
        output_tokens      INTEGER,
        cache_read_tokens  INTEGER,
        cache_write_tokens INTEGER,
        UNIQUE (session, seq)
    );
    CREATE VIRTUAL TABLE messages_fts USING fts5(
        text, content='messages', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    );
    -- merge index segments 8 at a time, not 4: a large import is quicker, a search the same
    INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 8);
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END;
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
    END;
    CREATE VIRTUAL TABLE memory_changes_fts USING fts5(
        before, after, content='memory_changes', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    );
    -- A whole-file change is indexed by the file after it (its before is the previous
    -- change's after: indexed there). Every trigger passes the same values, as an
    -- external-content index needs.
    CREATE TRIGGER memory_changes_fts_insert AFTER INSERT ON memory_changes BEGIN
        INSERT INTO memory_changes_fts (rowid, before, after) VALUES
        (new.id, CASE WHEN new.shape = 'file' THEN NULL ELSE new.before END, new.after);
    END;
    CREATE TRIGGER memory_changes_fts_delete AFTER DELETE ON memory_changes BEGIN
        INSERT INTO memory_changes_fts (memory_changes_fts, rowid, before, after) VALUES
        ('delete', old.id, CASE WHEN old.shape = 'file' THEN NULL ELSE old.before END,
         old.after);
    END;
    CREATE TRIGGER memory_changes_fts_update AFTER UPDATE OF before, after ON memory_changes
    BEGIN
        INSERT INTO memory_changes_fts (memory_changes_fts, rowid, before, after) VALUES
        ('delete', old.id, CASE WHEN old.shape = 'file' THEN NULL ELSE old.before END,
         old.after);
        INSERT INTO memory_changes_fts (rowid, before, after) VALUES
        (new.id, CASE WHEN new.shape = 'file' THEN NULL ELSE new.before END, new.after);
    END;
    INSERT INTO memory_changes_fts (rowid, before, after)
    SELECT id, CASE WHEN shape = 'file' THEN NULL ELSE before END, after FROM memory_changes;
    """,
    # 3: a memory write no longer indexes its change (a write stays at the disk's pace):
    # a search first indexes the changes after `upto` (`_search.index_history`), and the
    # delete / update triggers touch the index only for changes already in it.
    """
    DROP TRIGGER memory_changes_fts_insert;
    DROP TRIGGER memory_changes_fts_delete;
    DROP TRIGGER memory_changes_fts_update;
    CREATE TABLE memory_changes_indexed (upto INTEGER NOT NULL);
    INSERT INTO memory_changes_indexed (upto) SELECT COALESCE(MAX(id), 0) FROM memory_changes;
    CREATE TRIGGER memory_changes_fts_delete AFTER DELETE ON memory_changes
    WHEN old.id <= (SELECT upto FROM memory_changes_indexed) BEGIN
        INSERT INTO memory_changes_fts (memory_changes_fts, rowid, before, after) VALUES
        ('delete', old.id, CASE WHEN old.shape = 'file' THEN NULL ELSE old.before END,
         old.after);
    END;
    CREATE TRIGGER memory_changes_fts_update AFTER UPDATE OF before, after ON memory_changes
    WHEN old.id <= (SELECT upto FROM memory_changes_indexed) BEGIN
        INSERT INTO memory_changes_fts (memory_changes_fts, rowid, before, after) VALUES
        ('delete', old.id, CASE WHEN old.shape = 'file' THEN NULL ELSE old.before END,
         old.after);
        INSERT INTO memory_changes_fts (rowid, before, after) VALUES
        (new.id, CASE WHEN new.shape = 'file' THEN NULL ELSE new.before END, new.after);
    END;
    """,
    # 4: memory writes held for a person's review (SPEC §3): each kept whole, never applied
    # until approved. `operations` is a JSON list of [action, text, with]; `batch` says the
    # model sent them as one batch.
    """
    CREATE TABLE held_writes (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        time       TEXT NOT NULL,
        target     TEXT NOT NULL CHECK (target IN ('self', 'user')),
        operations TEXT NOT NULL,
        batch      INTEGER NOT NULL DEFAULT 0,
        source     TEXT NOT NULL
    );
    """,
    # 5: skills the persona writes (SPEC §15): their history, and their writes held for
    # review beside memory's. `files` is a JSON list of [path, before, after] (a path in
    # the skill's folder; the digests of its bytes before and after, '' for no file);
    # each distinct version is kept once in `skill_states`. `held_writes` is made again
    # to take the target 'skill' (SQLite cannot change a CHECK), its ids kept going.
    """
    CREATE TABLE skill_changes (
        id     INTEGER PRIMARY KEY AUTOINCREMENT,
        time   TEXT NOT NULL,
        skill  TEXT NOT NULL,
        action TEXT NOT NULL CHECK (action IN
                   ('create', 'patch', 'write_file', 'remove', 'outside-edit', 'undo',
                    'restore')),
        files  TEXT NOT NULL,
        source TEXT NOT NULL
    );
    CREATE INDEX skill_changes_by_skill ON skill_changes (skill, id);
    CREATE TABLE skill_states (
        digest TEXT PRIMARY KEY,
        body   BLOB NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE held_writes_v5 (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        time       TEXT NOT NULL,
        target     TEXT NOT NULL CHECK (target IN ('self', 'user', 'skill')),
        operations TEXT NOT NULL,
        batch      INTEGER NOT NULL DEFAULT 0,
        source     TEXT NOT NULL
    );
    INSERT INTO sqlite_sequence (name, seq)
    SELECT 'held_writes_v5', seq FROM sqlite_sequence WHERE name = 'held_writes';
    INSERT INTO held_writes_v5 (id, time, target, operations, batch, source)
    SELECT id, time, target, operations, batch, source FROM held_writes;
    DROP TABLE held_writes;
    ALTER TABLE held_writes_v5 RENAME TO held_writes;
    """,
    # 6: the optional semantic index of recall (`conversations/_semantic.py`): each message's
    # embedding by one model, as float32 bytes; it goes with its message.
    """
    CREATE TABLE message_vectors (
        message INTEGER NOT NULL,
        model   TEXT NOT NULL,
        vector  BLOB NOT NULL,
        PRIMARY KEY (message, model)
    ) WITHOUT ROWID;
    CREATE TRIGGER message_vectors_delete AFTER DELETE ON messages BEGIN
        DELETE FROM message_vectors WHERE message = old.id;
    END;
    """,
)
