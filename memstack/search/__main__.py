"""`python -m memstack.search STORE`: catch the store's search index up (what build.opened starts)."""

from memstack.search.build import main

raise SystemExit(main())
