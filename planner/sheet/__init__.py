"""Spreadsheet function declarations, one module per family (demand, limits, memory, latency, cost, decision, ...).

Each module turns spreadsheet arguments (names, numbers, fractions) into calls of the pure core modules and declares
the function with :func:`planner.registry.sheet_function`. No formula lives here: only argument handling.
"""
