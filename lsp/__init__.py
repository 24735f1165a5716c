"""The language server (`rulesvm lsp`): the rules language and the game YAML files in an editor.

A Language Server Protocol server over stdio, built on pygls: diagnostics as you type (the
checker's, with the same codes, messages, hints and ranges as `rulesvm validate`), hover,
go to definition, completion, formatting and the outline of a rules file. It builds on the
front end (`rulesvm.dsl`), the public API and the formatter (`rulesvm.tooling`); like them it
knows no particular game. See docs/editors.md.
"""
