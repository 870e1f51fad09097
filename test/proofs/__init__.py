"""The proofs: whole ``run_tests.py`` runs showing that each deliberately faulty backend,
faulty tracing transform and faulty variant fails exactly the scenarios that cover what it
breaks, and that correct backends pass them. Minutes each, so a tier of their own beside the
self-tests (test/harness), run by CI:

    python -m unittest discover -s test/proofs -t .

The faulty backends themselves live in test/harness/faulty_backends (their specs,
``test.harness.faulty_backends:<name>``, are what the docs and users name).
"""

import os


def load_tests(loader, standard_tests, pattern):
    """``unittest discover``: every module's tests, each followed by its time budget
    (test/harness/budgets.py)."""
    from test.harness import budgets, shared_runs

    here = os.path.dirname(os.path.abspath(__file__))
    return budgets.with_budgets(loader, here, os.path.dirname(os.path.dirname(here)), pattern, shared_runs.finished)
