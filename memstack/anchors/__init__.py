"""Code anchors: the lines of the code repository a record is about (`--anchor PATH[:START[-END]]`), taken
when the record is written (`take`), and whether they still say what they said (`status`, `survey`).

The record keeps, per anchor, `path` (from the code repository's top), `start`/`end` (1-based, inclusive;
both null for the whole file), `commit` (HEAD of the code repository when taken), `blob` (git's blob id
of the file's content the lines were read from: the work tree's, which the next commit normally holds)
and `lines_sha256` (the lines, whitespace-normalised, hashed). docs/anchors.md says it for users.
"""
