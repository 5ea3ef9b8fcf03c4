"""The folder store's state: `.toolnexus/state.db` (SQLite, WAL) and what it holds.

`_state` opens the database (created on the first write that needs it, never
by a read) and runs `_migrations`; `_changes` keeps the memory history,
`_transcripts` the saved conversations, `_search` their FTS5 indexes.
"""
