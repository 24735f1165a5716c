"""rulesvm.analysis: what many games say about a design (pipeline: running game -> agents
-> **statistics**).

    simulate.py   batch simulation with bots, summarised as the games stream in
    stats.py      confidence intervals, significance tests, streaming distributions
    report.py     the PNG plot, the HTML report and the variant comparison
    diff.py       what a variant changes: options, cards and rule parts

It builds on the public API (`rulesvm.api`); the command line shows its results.
"""
