"""The axes a scenario runs along: the backend under test (``backends``), the variant of
Dynamo's configuration (``variants``, with the dynamic variants' replays in ``second_size``
and ``automatic_dynamic``, the ways callers call in ``callers`` and the export variants' runner in
``export``), torch's default
dtype (``dtypes``), the device (``device``) and the compile options (``compile_options``).

Each axis is declared once (``axis``); ``registry`` holds the axes in use, in the order of
test ids and report columns, and ``variant_checks`` what the variant axis does to a test.
Class generation, collection, results, reports, expectations, accept and repros iterate over
the declarations instead of naming them.
"""
