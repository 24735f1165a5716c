"""rulesvm.analysis: what many games say about a design (pipeline: running game -> agents
-> **statistics**).

    simulate.py   batch simulation with bots, summarised as the games stream in
    stats.py      confidence intervals, significance tests, streaming distributions
    report.py     the summary's tables, the HTML report and the variant comparison
    plots.py      the plots of a simulation (matplotlib, optional)
    extras.py     optional dependencies and how to install them
    diff.py       what a variant changes: options, cards and rule parts

It builds on the public API (`rulesvm.api`); the command line shows its results.
"""
