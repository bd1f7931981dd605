"""L4 SOIL: session-scoped structured records, `store/<collection>/<key>.json` (`records`)."""
