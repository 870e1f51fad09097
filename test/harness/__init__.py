"""The harness's own tests (the self-tests), the faulty backends the proofs use, and the
helpers both share: the command run in-process (cli.py), runs several modules read
(shared_runs.py) and each module's time budget (budgets.py)."""

import os

# The self-tests and the proofs check the runner and whole scenario families, not which tests
# the default tier chose (test_default_tier.py does, with data of its own): their runs, and
# the processes those start, take the default tier without a choice, whatever the measured
# data says now.
os.environ.setdefault("DYNAMO_SUITE_TIER_DATA", "none")


def load_tests(loader, standard_tests, pattern):
    """``unittest discover``: every module's tests, each followed by its time budget."""
    from test.harness import budgets, shared_runs

    here = os.path.dirname(os.path.abspath(__file__))
    return budgets.with_budgets(loader, here, os.path.dirname(os.path.dirname(here)), pattern, shared_runs.finished)
