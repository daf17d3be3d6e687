"""NE4xx: imports that follow the user's edit — an import no longer used (NE401), a name used but
not imported (NE402), the uses of a name whose import went (NE403 renamed, NE404 unwrapped or
deleted; ``stale`` finds them), the imports of a definition moved to another module (NE405).
The import statements come from the language's query file (``symbols``); ``import_lists``
reads them as lists of names."""
