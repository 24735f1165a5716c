"""rulesvm.tooling: tools for people who write games, around the pipeline rather than in it.

    formatter.py  `rulesvm fmt`: a rules file laid out canonically, comments kept
    schemas.py    the JSON Schemas of the YAML files, for editors (`rulesvm schema`)
    replay.py     re-run a logged game against the current game files (`rulesvm replay`)
    docgen.py     the built-in reference of docs/language.md, generated from the registry

It builds on the front end (`rulesvm.dsl`) and the public API (`rulesvm.api`).
"""
