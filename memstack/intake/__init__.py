"""L2 intake: the append-only staging log, `intake/<agent>/YYYY-MM-DD.jsonl` (`log`)."""
