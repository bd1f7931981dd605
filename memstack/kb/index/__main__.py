"""`python -m memstack.kb.index STORE`: catch the store's fact index up (what build.start_build runs)."""

from memstack.kb.index.build import main

raise SystemExit(main())
