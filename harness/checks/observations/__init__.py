"""What every scenario's compiled calls are watched for, whatever the scenario compares itself:
each call of a function compiled through ``BackendTestCase.compile`` told to the observations
(``watched_calls``); the Python world the call reaches changed as eager changes it
(``python_world``); results kept from earlier calls and backward passes left as they were
(``kept_results``).
"""
