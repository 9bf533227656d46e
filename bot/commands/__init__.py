"""What a handler is given and how it is reached: the slash-command grammar (``grammar``), the registry of
commands, events and periodic jobs (``registry``, ``periodic``), the handler's context (``context``), who
may run what (``permissions``) and the routing of one event to its handlers (``dispatch``). Handlers import
this room, never the worker.
"""
