"""The measures, one module each (formula and edge cases in its docstring), and the registry."""
