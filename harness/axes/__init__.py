"""The axes a scenario runs along: the backend under test (``backends``), the variant of
Dynamo's configuration (``variants``, with the dynamic variants' replays in
``second_size``), torch's default dtype (``dtypes``) and the device (``device``).

Each axis is declared once (``axis``); class generation, collection, results, reports,
expectations, accept and repros iterate over the declarations instead of naming them.
"""
