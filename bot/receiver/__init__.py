"""The webhook receiver (DESIGN §1): the Starlette app (``app``) that verifies a delivery's signature
(``signatures``), limits its size, parses and normalises it, and enqueues it; and the description of its
own API (``openapi``). It never calls the forge and never imports the worker.
"""
