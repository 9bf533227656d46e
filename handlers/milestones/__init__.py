"""The milestone gate and dashboards: a milestone stays closed only when its work is complete and
functional, and one dashboard issue per milestone shows why.

The pure rules live in ``gate`` (the two legs), ``state`` (what a dashboard's data block remembers),
``plan`` (when a closure's gate is due, what to do with it, what the periodic job schedules, `/gate`'s
arguments) and ``render`` (the dashboard, the reopen notice, the `/gate` reply); ``effects`` holds the forge
effects (``sync_milestone``) and ``bot`` registers the events, the command, the periodic job and the
reconciler.
"""
