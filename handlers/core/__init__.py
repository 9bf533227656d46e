"""What every repository gets, invited or not: ``/steward help`` and ``ping`` (``bot``), the configuration
file as people meet it in the forge (``config``) and the one ``/refine`` for both refinement engines
(``refine``).
"""
