"""The test case every scenario builds on (``base``: ``DynamoTestCase``, ``BackendTestCase``,
``for_each_backend``) and what it decides around each test: expected failures kept as data
(``expectations``), tiers (``tiers``, ``smoke``) and the time a test has left
(``deadline``). Torch is imported by ``base`` alone, so the runner can read the rest.
"""
