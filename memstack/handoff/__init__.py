"""L5 sealed session handoffs, `handoffs/<agent>/session_handoff-YYYY-MM-DD_<agent>.md` (`sealed`)."""
