"""Checkpoints and rewind: what each prompt's turn changed, kept in a separate git object store,
and putting it back.

- :mod:`.objects`: the shadow store, a bare git repository under the user data folder per
  project folder (pygit2); incremental snapshots of the folder's tree (stat cache in its own
  index, ``.gitignore`` respected, files over a size cap skipped), blobs, checkpoint commits.
  It never opens the project's own ``.git`` and never runs ``git clean``.
- :mod:`.records`: the plain data of a checkpoint (per file: state before and after the turn,
  editor versions of unsaved buffers).
- :mod:`.recorder`: what the executor calls around every tool that may change files (Edit,
  Write, Bash): the state before the prompt's first change, and what each shell command
  changed (trees compared before and after).
- :mod:`.rewind`: undo the turns from a prompt on, newest first, by three-way merge so that
  changes the user made since are kept; open buffers through the door (one versioned edit),
  closed files atomically on disk.

Layering: may import ``workspace``, ``permissions``, ``model`` and ``protocol``; never the
tools, the loop, sessions or a door.
"""
