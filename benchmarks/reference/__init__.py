"""Hand-written reference games: the same rules as games/*.rules, written directly in Python.

tests/test_differential.py plays them side by side with the interpreter (a correctness
oracle); benchmarks/run.py times them against it (a speed yardstick).
"""
