"""Excel semantics in Python: values and errors, table layout, and formula expressions."""
