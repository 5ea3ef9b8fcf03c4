"""The PostgreSQL store (psycopg 3, the `postgres` extra): the folder's parts in a database.

`_connection` pools connections and brings the schema (`_migrations`) up to
date; `_store` is `PgStore`, whose history (`_changes`) and conversations
(`_transcripts`) keep the folder's rows column for column.
"""
