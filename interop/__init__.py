"""rulesvm games as research environments (pipeline: running game -> agents): any game loaded
as an OpenSpiel game (`rulesvm.interop.openspiel.load`) or a PettingZoo environment
(`rulesvm.interop.pettingzoo.env`). The modules import OpenSpiel, PettingZoo and NumPy, from
the `rl` extra (`pip install 'rulesvm[rl]'`); importing this package alone imports none of them.
See docs/research.md.
"""
