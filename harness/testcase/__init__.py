"""The test case every scenario builds on (``base``: ``DynamoTestCase``, ``BackendTestCase``,
``for_each_backend``) and what it decides around each test: expected failures kept as data
(``expectations``), tiers (``tiers``, ``smoke``, and the default tier chosen by what each test catches:
``default_tier``), the time a test has left (``deadline``),
a perf test's figures (``perf``), and the processes a test starts (``processes``), such as
the two ranks of a distributed training run (``distributed``). Only ``base`` and
``distributed`` import torch when imported, so the runner can read the rest.
"""
