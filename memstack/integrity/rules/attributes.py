"""I7 on the store's .gitattributes: memstack's lines stay.

Those lines make git store memory files with LF line endings (`text eol=lf`), keep a filed document's
bytes (`-text !eol`) and name memstack's merge and diff drivers. Without them a CRLF line reaches a
commit (refused as I7 now, but sealed by I1 once in) and a merge of logs falls back to git's own. A
change may add lines of its own; each memstack line of the base must still be there, as it was.
"""


from memstack.base.patterns import lazy
from memstack.integrity.rules.text import lines
from memstack.integrity.violations import Violation

# An attribute line memstack wrote: one naming its drivers, or a line ending of memory files.
MEMSTACK_LINE = lazy(r"(?:^|\s)(?:(?:merge|diff)=memstack|eol=lf|!eol)(?=\s|$)")


def memstack_lines(data: bytes) -> list[tuple[int, str]]:
    """The (line number, text) of each memstack line of a .gitattributes (not a comment)."""
    found = []
    for number, raw in enumerate(lines(data), 1):
        text = raw.decode("utf-8", "replace").strip()
        if text and not text.startswith("#") and MEMSTACK_LINE.search(text):
            found.append((number, text))
    return found


def attributes(path: str, old: bytes | None, new: bytes | None, restore: str) -> list[Violation]:
    """Each memstack line of the base's .gitattributes (`old`) is a line of the new one."""
    kept = memstack_lines(old) if old is not None else []
    if not kept:
        return []
    if new is None:
        return [Violation(path, 0, "I7", ".gitattributes deleted: its lines keep memory files' line endings LF and"
                                         " name memstack's merge driver", f"restore it ({restore})")]
    now = {raw.decode("utf-8", "replace").strip() for raw in lines(new)}
    return [Violation(path, number, "I7", f"memstack's line `{text}` was removed or changed: it keeps memory files'"
                                          " line endings LF and names memstack's merge driver",
                      f"restore the line ({restore}); add lines of your own beside it")
            for number, text in kept if text not in now]
