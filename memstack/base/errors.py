"""The one error type memstack raises; `main` turns it into a message and an exit code."""


class MemstackError(Exception):
    """Bad usage or bad input: exit 2 unless told otherwise, nothing written."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def os_problem(exc: OSError) -> str:
    """One line for an error the file system gave: the path, what it said, what to do."""
    where = " -> ".join(str(p) for p in (exc.filename, exc.filename2) if p is not None)
    what = exc.strerror or str(exc)
    hint = ""
    if isinstance(exc, PermissionError):
        hint = " — memstack needs to read and write the store's files as this user; fix the owner or mode"
    return f"{where}: {what}{hint}" if where else f"{what}{hint}"
