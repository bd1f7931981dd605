"""The invariants I1-I8 and where they are enforced: `memstack check` (staged, range, push, receive, all),
the rules per kind of file, the derived-file registry and the guard on a remote's refs."""
