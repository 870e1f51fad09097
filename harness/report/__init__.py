"""What a run leaves behind: the results model and its file (``results``), and the views of
it: the files dashboards and people read (``formats``: ``junit``, ``html_report`` with its
``templates/``, ``markdown`` for a CI job summary, ``accuracy_csv``), the console summary with
rerun commands (``console``), the declared scope and what the tests needed (``scope``), the
differences from a baseline run (``baseline``), and ``writer``, which writes the report files
atomically.

Layering: this package works on results alone; it may import the scenario library
(``harness``) for plain data such as the expectations file's path, never the runner
(``harness.run``), and never torch, so ``--merge`` and the scripts run without either.
"""
