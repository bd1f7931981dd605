"""L1 boot context, derived: `session_anchor_<agent>.json` and `willow.md` (`context`)."""
