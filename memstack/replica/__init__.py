"""The PostgreSQL replica: committed memory copied into schema `memstack` for fleets and SQL.

Git stays the source of truth; the replica is derived and can always be rebuilt.
`tables` says what each table holds (the DDL and how a file's line becomes a
row), `sync` copies HEAD into it incrementally, `reads` answers the fact read
verbs from it, `db` connects (psycopg 3, the optional `pg` extra) and turns the
driver's errors into memstack's one error type.
"""
