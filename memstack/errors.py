"""The one error type memstack raises; `main` turns it into a message and an exit code."""


class MemstackError(Exception):
    """Bad usage or bad input: exit 2 unless told otherwise, nothing written."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
