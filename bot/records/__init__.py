"""What Steward keeps in the forge and reads back: sticky comments (``sticky``) signed with Steward's key
(``signing``), the index of which record cites which comment (``citations``), and the one neutraliser
through which every quote of someone else's text passes (``neutralise``).
"""
