"""What a run leaves behind: the results model and its file (``results``), and the views of
it: the files dashboards and people read (``formats``: ``junit``, ``html_report`` with its
``templates/``, ``markdown`` for a CI job summary, ``accuracy_csv``; what a format is,
``format``, and the HTML pages with their one escape, ``pages``), the console summary with
rerun commands (``console``), the declared scope and what the tests needed (``scope_table``), the
differences from a baseline run (``baseline``) and the metrics that changed since it
(``metric_changes``), problems grouped by what went wrong, and what a repro must print to show
one (``problems``; their repros are ``harness.repros``), what a run covered (``coverage``), the eager share
(``eager_share_table``), the perf tier's figures (``perf_table``), the open upstream bugs its expected
failures showed (``upstream_bugs``), the scoreboard of backends side by side (``scoreboard``), and ``writer``, where every report format, the scoreboard's too, is
declared once and which writes them atomically.

Layering: this package works on results alone; it may import the scenario library
(``harness``) for plain data such as the expectations file's path, never the runner
(``harness.run``), and never torch, so ``--merge`` and the scripts run without either.
"""
