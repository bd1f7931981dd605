"""Git and the store: the one way to run git and read blobs, finding a store, the pre-commit configuration,
the sources derived files are built from, and `git diff` text for memory files."""
