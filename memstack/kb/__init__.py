"""L3 knowledge base: bi-temporal facts (record, files, index, store), the Binder, disputes, edges,
documents, routing, the derived views and their patches, the merge driver, export and the ferrox import."""
