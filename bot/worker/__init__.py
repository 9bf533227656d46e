"""The worker process: the jobs it runs and its arq settings (``jobs``), its claim loop (``claims``), how it
waits out a Redis outage (``redis_watch``), its clock for periodic jobs (``cron``) and its own health port
(``health``).
"""
