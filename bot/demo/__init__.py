"""``steward demo``: the runner (``run``), the stage every scene plays on (``stage``), the scenes, the texts
the demo's people write (``texts``), Steward's parts run in threads (``threads``, also used by the
end-to-end tests) and a Redis database of one's own for a throwaway run (``scratch_redis``).
"""
