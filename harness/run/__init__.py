"""The machinery behind ``run_tests.py``: the command line (``cli``), finding the tests in a
short-lived process (``collection``), ordering and sharding them (``shards``), running them
in pytest-xdist workers with crash and hang containment (``engine`` in the controller,
``pytest_plugin`` in each worker), progress lines (``progress``) and ``--accept``
(``accept``).

Layering: this package may import the scenario library (``harness``) and the reports
(``harness.report``); neither imports it (``test/harness/test_layout.py`` checks). The
controller never imports torch: only the collection child and the workers do.
"""
