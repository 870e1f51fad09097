"""What runs inside each pytest-xdist worker, and the protocol the controller reads it by.

``pytest_plugin`` is the module each worker loads (``-p harness.worker.pytest_plugin``): it
keeps the runner's selection in its order and registers the rest: the worker's output log
and watchdogs (``worker_log``), the canary that shows a worker is still healthy after a
failure (``health``), and each test's classification (``classify``, which reads stacks with
``frames``). ``protocol`` is what the worker and the controller (``harness.run.engine``)
both name: the report property, the log's start marks, the deferred outcome, the watchdog's
slack; ``crash_reports`` reads a dead worker's log for the controller. Where it is safe the
workers are forks of the process that collected the tests (``forkserver``), each started by
``fork_client``, which stands in for its interpreter.

Layering: above the reports (``harness.report``), below the runner (``harness.run``), which
it never imports (``test/harness/test_layout.py`` checks). Only the workers import torch
here; what the controller imports (``protocol``, ``crash_reports``, ``frames``,
``forkserver``) does not on import.
"""
