"""A run's results in the formats people and dashboards read: junit.xml (``junit``),
report.html (``html_report``, from ``templates/``), summary.md (``markdown``) and the model
tests as benchmarks/dynamo accuracy CSVs (``accuracy_csv``). Each renders text from
``harness.report.results``; ``harness.report.writer`` writes them."""
