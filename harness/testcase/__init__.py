"""The test case every scenario builds on (``base``: ``DynamoTestCase``, ``BackendTestCase``,
``for_each_backend``) and what it decides around each test: expected failures kept as data
(``expectations``), tiers (``tiers``, ``smoke``), the time a test has left (``deadline``)
and a perf test's figures (``perf``). Only ``base`` imports torch when it is imported, so the
runner can read the rest.
"""
