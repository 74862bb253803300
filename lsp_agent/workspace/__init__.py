"""The session's view of files: editor buffers first, the disk second (:mod:`.workspace`), the
journal of applied changes verification reads (:mod:`.journal`), the byte-exact text codec and
atomic writes (:mod:`.textfile`), and ``DiskHost``, a Host over the local disk for the headless
door and tests.

Layering: may import ``permissions`` (the write guard), ``model`` and ``protocol``; never
``config`` (a sibling layer), anything above, or a door.
"""
