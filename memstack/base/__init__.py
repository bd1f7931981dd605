"""The ground floor: errors, files, JSON, times, ids, names, schemas, config, layout, secrets, pages, output.

Nothing here knows a layer of memory; every other package may import it.
"""
