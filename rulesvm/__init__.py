"""rulesvm: a rules language and a generic interpreter for card and board games.

The pipeline: source text -> AST -> checked model (`rulesvm.dsl`) -> compiled program ->
running game -> agents (`rulesvm.interpreter`) -> statistics (`rulesvm.analysis`). The
public API is `rulesvm.api` (load, start and play games, seat bots, validate) and
`rulesvm.saves` (save files); `rulesvm.tooling`, `rulesvm.testing` and `rulesvm.web` build
on it, and `rulesvm.cli` is the command line.

Every subpackage `rulesvm.X` is the repository's top-level folder `X/`, linked here as
`rulesvm/X`; this folder holds only the API and those links (tests/test_structure.py).
"""
