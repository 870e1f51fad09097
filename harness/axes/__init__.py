"""The axes a scenario runs along: the backend under test (``backends``), the variant of
Dynamo's configuration (``variants``, with the dynamic variants' replays in ``second_size``
and ``automatic_dynamic`` and the export variants' runner in ``export``), torch's default
dtype (``dtypes``), the device (``device``) and the compile options (``compile_options``).

Each axis is declared once (``axis``); class generation, collection, results, reports,
expectations, accept and repros iterate over the declarations instead of naming them.
"""
