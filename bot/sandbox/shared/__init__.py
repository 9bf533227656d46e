"""What both emulated forges share: the forge-neutral state (``state``) and git model (``gitmodel``), the
operations each API calls (``*_ops``), who is asking (``caller``), webhook delivery (``hooks``), the HTTP
plumbing (``plumbing``) and what a running sandbox holds besides its state (``runtime``).
"""
