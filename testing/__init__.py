"""rulesvm.testing: scenario tests for games (a concrete situation, scripted decisions,
expectations written in the rules language).

    scenario.py        load and run `*.scenario.yaml` files (`rulesvm test`)
    pytest_plugin.py   the pytest plugin (entry point `pytest11`): scenario files are tests

It drives games through the public API (`rulesvm.api`).
"""
