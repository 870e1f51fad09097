"""A run's results in the formats people and dashboards read: junit.xml (``junit``),
report.html (``html_report``), summary.md (``markdown``) and the model tests as
benchmarks/dynamo accuracy CSVs (``accuracy_csv``); a run's problems as issues for the backends'
trackers (``upstream``). What a format is, and the reports they
render, are in ``format``; the HTML pages, the scoreboard's too, are built from ``templates/`` by
``pages``, the reports' one HTML escape. Each renders text from a report;
``harness.report.writer`` declares and writes them."""
