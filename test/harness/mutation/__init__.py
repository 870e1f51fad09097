"""Faulty backends made by rule, not by hand, for the suite's own measure of what it would
catch that nobody named: conditional mutants (``mutants``), each a fault (``faults``) that fires
only where a feature of harness.features.catalogue holds; the probes that tell an
equivalent mutant from one that counts (``probes``); and the worker process that runs the
suite's tests once per mutant (``worker``) for scripts/mutation_score.py.
"""
