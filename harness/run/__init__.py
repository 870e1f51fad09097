"""The machinery behind ``run_tests.py``: the command line (``cli``, its options in
``options``, the run's checked plan in ``configure``), finding the tests in a process of
their own (``collection``, which then stays as the workers' fork server), choosing, ordering
and sharding them and their time limits (``selection``), running them in pytest-xdist
workers with crash and hang containment (``engine`` in the controller; what each worker
runs is ``harness.worker``), tests kept from failing because of each other
(``isolation``), inductor's toolchain warmed while collecting (``warmup``), progress lines
(``progress``), the record, reports and exit code (``finish``), ``--accept`` (``accept``) and
``--minify`` (``minify``).

Layering: this package may import the scenario library (``harness``), the reports
(``harness.report``) and the workers' side (``harness.worker``); none imports it
(``test/harness/test_layout.py`` checks). The controller never imports torch: only the
collection child and the workers do.
"""
