"""Testing helpers shipped with rulesvm (the pytest plugin for scenario files)."""
