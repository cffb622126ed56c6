"""A client of the real server over stdio, and the typing it replays (for ``try`` and ``bench``).

``tools`` and ``bench`` both import this package; it imports neither.
"""
